/**
 * Corrections by hand over HTTP (docs/FORGET.md), on both databases: delete a fact or an entity
 * (what it closed reopens), close a live fact and undo it, merge entities (repeats merge with
 * their provenance united); validation naming the field, 404 across users, 409 on a wrong state.
 */
import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { describe, expect } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { expectFullTextConsistent } from "../support/fullText.js"
import { expectError, postJson, postRaw, send, serveTest } from "../support/http.js"

const withApp = <A, E>(storage: StorageLayer, program: Effect.Effect<A, E, any>) =>
  program.pipe(
    Effect.provide(serveTest(rememberLayer(storage, (r: LlmRequest) => ({ text: answer(r).text }))) as Layer.Layer<
      any,
      any,
      never
    >)
  ) as Effect.Effect<A, E, never>

const remember = (text: string) =>
  Effect.map(postJson("/v1/gb/remember", { user_id: "alice", text }), (res) => {
    expect(res.status, res.text).toBe(200)
    return res.json
  })

const del = (path: string, query = "user_id=alice") => send(HttpClientRequest.del(`${path}?${query}`))

const rows = <A extends object>(query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(query)).pipe(Effect.orDie)

const facts = rows<any>(`SELECT e.id, s.name AS source, t.name AS target, e.invalid_at, e.expired_at IS NULL AS live
  FROM gb_edges e JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id ORDER BY e.id`)

forEachDialect((dialect, makeLayer) => {
  describe("corrections", () => {
    it.live("DELETE /v1/gb/facts/{id} and /v1/gb/entities/{id}: what they closed reopens", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const berlin = (yield* remember("Alice Novak lives in Berlin in 2020.")).edges[0].id
          const lisbon = (yield* remember("Alice Novak lives in Lisbon in 2021.")).edges[0].id
          const res = yield* del(`/v1/gb/facts/${lisbon}`)
          expect(res.status, res.text).toBe(200)
          expect(res.json).toEqual({
            // Lisbon stays: the text still names it
            deleted: { artifacts: 0, entities: 0, facts: 1, vectors: 0 },
            reopened_facts: [berlin],
            reanchored_facts: []
          })
          expect((yield* facts).map((f) => [f.target, Boolean(f.live)])).toEqual([["Berlin", true]])
          // the artifact stays: only the fact was wrong
          expect(yield* rows<any>("SELECT COUNT(*) AS n FROM gb_artifacts")).toEqual([{ n: 2 }])

          const osaka = (yield* remember("Alice Novak lives in Osaka in 2022.")).entities.find((e: any) =>
            e.name === "Osaka"
          ).id
          expect((yield* facts).map((f) => [f.target, Boolean(f.live)])).toEqual([["Berlin", false], ["Osaka", true]])
          const gone = yield* del(`/v1/gb/entities/${osaka}`)
          expect(gone.json).toMatchObject({ deleted: { facts: 1, entities: 1 }, reopened_facts: [berlin] })
          expect((yield* facts).map((f) => [f.target, Boolean(f.live)])).toEqual([["Berlin", true]])
          expectError(yield* del(`/v1/gb/entities/${osaka}`), 404, /entity \d+ not found/)
          expectError(yield* del(`/v1/gb/facts/${berlin}`, "user_id=bob"), 404, /not found/)
          expectError(yield* del("/v1/gb/facts/x"), 400, /^id /)
        })
      ))

    it.live("invalidate closes a live fact by hand; reopen undoes it; wrong states are 409s", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const id = (yield* remember("Alice Novak works at Acme in 2019.")).edges[0].id
          const path = `/v1/gb/facts/${id}`
          expectError(
            yield* postJson(`${path}/invalidate`, { user_id: "alice", invalid_at: "2018-01-01T00:00:00Z" }),
            400,
            /invalid_at must be after the fact's valid_at/
          )
          expectError(
            yield* postJson(`${path}/invalidate`, { user_id: "alice", invalid_at: "soon" }),
            400,
            /^invalid_at /
          )
          expectError(yield* postJson(`${path}/invalidate`, {}), 400, /^user_id /)
          expectError(yield* postJson(`${path}/reopen`, { user_id: "alice" }), 409, /not closed by hand/)
          const closed = yield* postJson(`${path}/invalidate`, { user_id: "alice", invalid_at: "2024-06-01T00:00:00Z" })
          expect(closed.status, closed.text).toBe(200)
          expect(closed.json.fact).toMatchObject({
            id,
            invalid_at: "2024-06-01T00:00:00.000Z",
            expired_at: expect.any(String)
          })
          expectError(yield* postJson(`${path}/invalidate`, { user_id: "alice" }), 409, /is not live/)
          const open = yield* postJson(`${path}/reopen`, { user_id: "alice" })
          expect(open.status, open.text).toBe(200)
          expect(open.json.fact.invalid_at).toBeUndefined()
          expect(open.json.fact.expired_at).toBeUndefined()
          expectError(yield* postJson(`${path}/reopen`, { user_id: "bob" }), 404, /not found/)
        })
      ))

    it.live("merge moves facts, links and sessions to `into`; repeats merge with their provenance", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const first = yield* remember("Alice Novak knows Bruno Diaz in 2015.")
          const second = yield* remember("Ali Novak knows Bruno Diaz in 2015. Ali Novak works at Acme in 2019.")
          const alice = first.entities.find((e: any) => e.name === "Alice Novak").id
          const ali = second.entities.find((e: any) => e.name === "Ali Novak").id
          expectError(
            yield* postJson("/v1/gb/entities/merge", { user_id: "alice", into: alice, from: [] }),
            400,
            /^from must not be empty/
          )
          expectError(
            yield* postJson("/v1/gb/entities/merge", { user_id: "alice", into: alice, from: [alice] }),
            400,
            /from must not contain into/
          )
          expectError(
            yield* postJson("/v1/gb/entities/merge", { user_id: "alice", into: alice, from: [999999] }),
            404,
            /entity 999999 not found/
          )
          const res = yield* postJson("/v1/gb/entities/merge", { user_id: "alice", into: alice, from: [ali] })
          expect(res.status, res.text).toBe(200)
          expect(res.json).toMatchObject({
            into: { id: alice, name: "Alice Novak" },
            merged: [ali],
            moved_facts: 2,
            merged_facts: [second.edges[0].id]
          })
          const after = yield* facts
          expect(after.map((f) => [f.source, f.target])).toEqual([["Alice Novak", "Bruno Diaz"], [
            "Alice Novak",
            "Acme"
          ]])
          const supporters = yield* rows<any>(`SELECT artifact_id FROM gb_edge_artifacts WHERE edge_id = ${after[0].id}
            ORDER BY artifact_id`)
          expect(supporters.map((s) => s.artifact_id)).toEqual([first.artifact_id, second.artifact_id])
          expect(yield* rows<any>(`SELECT id FROM gb_entities WHERE id = ${ali}`)).toEqual([])
          // the merged entity's words left the full-text index with it (SQLite's tables per dataset)
          if (dialect === "sqlite") yield* expectFullTextConsistent
        })
      ))

    it.live("a body that is not an object, or lacks a field, is a 400 naming what is wrong", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const fact = (yield* remember("Alice Novak lives in Berlin in 2020.")).edges[0].id
          for (
            const path of [`/v1/gb/facts/${fact}/invalidate`, `/v1/gb/facts/${fact}/reopen`, "/v1/gb/entities/merge"]
          ) {
            for (const body of ["null", "[]", "7", "\"x\""]) {
              const res = yield* postRaw(path, body)
              expect({ path, body, status: res.status, json: res.json }).toEqual({
                path,
                body,
                status: 400,
                json: { error: "the request body must be a JSON object" }
              })
            }
            expectError(yield* postJson(path, {}), 400, /user_id/)
          }
          expectError(yield* postJson("/v1/gb/entities/merge", { user_id: "alice", from: [1] }), 400, /into/)
          expectError(yield* postJson("/v1/gb/entities/merge", { user_id: "alice", into: 1 }), 400, /from/)
          expectError(
            yield* postJson(`/v1/gb/facts/${fact}/invalidate`, { user_id: "alice", invalid_at: 5 }),
            400,
            /invalid_at/
          )
        })
      ))

    it.live("merge names the result after `into`, also after a later forget; not after the oldest spelling", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          // "Bob J." is stated first, so the oldest spelling would name the merged entity
          const nick = yield* remember("Bob J knows Chen Wei in 2015.")
          const full = yield* remember("Robert Jones works at Acme in 2019.")
          const bob = nick.entities.find((e: any) => e.name === "Bob J").id
          const robert = full.entities.find((e: any) => e.name === "Robert Jones").id
          const res = yield* postJson("/v1/gb/entities/merge", { user_id: "alice", into: robert, from: [bob] })
          expect(res.status, res.text).toBe(200)
          expect(res.json.into).toMatchObject({ id: robert, name: "Robert Jones" })
          const names = rows<{ name: string }>(`SELECT name FROM gb_entities WHERE id = ${robert}`)
          expect(yield* names).toEqual([{ name: "Robert Jones" }])
          // forgetting the text that spelled it "Robert Jones" leaves the one that said "Bob J": the name stays
          const forgot = yield* del(`/v1/gb/artifacts/${full.artifact_id}`)
          expect(forgot.status, forgot.text).toBe(200)
          expect(yield* names).toEqual([{ name: "Robert Jones" }])
          expect((yield* facts).map((f) => [f.source, f.target])).toEqual([["Robert Jones", "Chen Wei"]])
        })
      ))
  })
})
