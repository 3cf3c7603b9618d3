/**
 * A fact's view over HTTP (`GET /v1/gb/facts/{id}`), on both databases: the fact as an entity's
 * story shows it, the artifact that created it and the others that restated it (each with what
 * it stated, texts cut to 280 characters), the decisions that closed it (Berlin 2020, then
 * Lisbon 2021 from a second text; one by hand); 400s naming the field, 404 across users and
 * datasets, 403 for another user's token; and the statements served by their indexes (SQLite).
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, Either, Layer, Option, Schema } from "effect"
import { describe, expect } from "vitest"
import { SqliteLive } from "../../layers/sql/index.js"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { Authentication } from "../../src/auth/Authentication.js"
import { tokenTable } from "../../src/auth/tokens.js"
import type { AuthToken } from "../../src/config/tables.js"
import { excerptOf, MAX_EXCERPT_CHARS } from "../../src/query/fact.js"
import { Reads } from "../../src/query/Reads.js"
import { EntityStory, FactView } from "../../src/query/responses.js"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { SearchRepo } from "../../src/services/SearchRepo.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, sqliteLayer, type StorageLayer } from "../support/databases.js"
import { expectError, get, postJson, serveTest, type TestResponse } from "../support/http.js"
import { planOf, sqlCapture } from "../support/sqlCapture.js"
import { getAs, postAs, SECRETS, USER_TOKENS } from "../support/tokens.js"

const withApp = <A, E>(
  storage: StorageLayer,
  program: Effect.Effect<A, E, any>,
  auth?: ReadonlyArray<AuthToken>
) => {
  const services = rememberLayer(storage, (r: LlmRequest) => ({ text: answer(r).text }))
  const layer = auth === undefined ? services : Layer.merge(services, Layer.succeed(Authentication, tokenTable(auth)))
  return program.pipe(Effect.provide(serveTest(layer) as Layer.Layer<any, any, never>)) as Effect.Effect<A, E, never>
}

const remember = (text: string, user = "alice") =>
  Effect.map(postJson("/v1/gb/remember", { user_id: user, text }), (res) => {
    expect(res.status, res.text).toBe(200)
    return res.json
  })

/** A 200's body read with the contract's schema: no field missing, none extra. */
const viewOf = (res: TestResponse): FactView => {
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  return Schema.decodeUnknownSync(FactView, { onExcessProperty: "error" })(res.json)
}

const storyOf = (res: TestResponse): EntityStory => {
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  return Schema.decodeUnknownSync(EntityStory)(res.json)
}

const entityId = (remembered: any, name: string): number => remembered.entities.find((e: any) => e.name === name).id

const year = (y: number) => `${y}-01-01T00:00:00.000Z`

/** An artifact of a remember response as a fact view shows it. */
const sourceOf = (remembered: any, text: string) => ({
  id: remembered.artifact_id,
  kind: "knowledge",
  valid_at: expect.any(String),
  created_at: expect.any(String),
  excerpt: text
})

forEachDialect((_dialect, makeLayer) => {
  describe("a fact's view", () => {
    it.live("the fact, its creator and restaters with their statements, what closed it", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const t1 = "Alice Novak lives in Berlin in 2020. Alice Novak works at Acme in 2019."
          const t2 = "Alice Novak lives in Lisbon in 2021. Alice Novak works at Acme in 2019."
          const a1 = yield* remember(t1)
          const a2 = yield* remember(t2)
          const alice = entityId(a1, "Alice Novak")
          const story = storyOf(yield* get(`/v1/gb/entities/${alice}?user_id=alice`))
          const fact = (target: string) => story.facts.find((f) => f.target === target)!
          const [berlin, lisbon, acme] = [fact("Berlin"), fact("Lisbon"), fact("Acme")]

          // Berlin: created by the first text, closed by Lisbon, which the second text brought
          const res = yield* get(`/v1/gb/facts/${berlin.id}?user_id=alice&dataset=main`)
          const closed = viewOf(res)
          expect(Object.keys(res.json)).toEqual(["fact", "created_by", "restated_by", "closed_by"])
          expect(closed.fact).toEqual(berlin)
          expect(closed.fact).toMatchObject({ valid_at: year(2020), invalid_at: year(2021) })
          expect(closed.created_by).toEqual({
            ...sourceOf(a1, t1),
            statement: { description: berlin.description, valid_at: year(2020) }
          })
          expect(closed.restated_by).toEqual([])
          expect(closed.closed_by).toEqual([{
            kind: "close",
            by_fact: { id: lisbon.id, description: lisbon.description },
            artifact: { id: a2.artifact_id },
            invalid_at: year(2021),
            at: berlin.expired_at
          }])

          // Lisbon holds: nothing closed it
          const live = viewOf(yield* get(`/v1/gb/facts/${lisbon.id}?user_id=alice`))
          expect(live.fact).toEqual(lisbon)
          expect(live.created_by).toMatchObject(sourceOf(a2, t2))
          expect(live).toMatchObject({ restated_by: [], closed_by: [] })

          // Acme: stated by both texts; the second one restated it, with its own statement
          const restated = viewOf(yield* get(`/v1/gb/facts/${acme.id}?user_id=alice`))
          expect(restated.fact.artifact_ids).toEqual([a1.artifact_id, a2.artifact_id])
          expect(restated.created_by).toMatchObject(sourceOf(a1, t1))
          expect(restated.restated_by).toEqual([{
            ...sourceOf(a2, t2),
            statement: { description: acme.description, valid_at: year(2019) }
          }])
          expect(restated.closed_by).toEqual([])

          // closed by hand: a decision without a fact or an artifact
          const invalidated = yield* postJson(`/v1/gb/facts/${acme.id}/invalidate`, {
            user_id: "alice",
            invalid_at: "2024-06-01T00:00:00Z"
          })
          expect(invalidated.status, invalidated.text).toBe(200)
          const byHand = viewOf(yield* get(`/v1/gb/facts/${acme.id}?user_id=alice`))
          expect(byHand.fact.invalid_at).toBe("2024-06-01T00:00:00.000Z")
          expect(byHand.closed_by).toEqual([{
            kind: "hand",
            invalid_at: "2024-06-01T00:00:00.000Z",
            at: byHand.fact.expired_at
          }])

          // of several decisions, the one that set the current end comes first, then as decided
          const sql = yield* SqlClient.SqlClient
          yield* sql`INSERT INTO gb_edge_closures ${
            sql.insert({
              edge_id: berlin.id,
              by_edge_id: null,
              artifact_id: null,
              kind: "hand",
              invalid_at: year(2030),
              expired_at: "2000-01-01T00:00:00.000Z",
              prev_invalid_at: null,
              created_at: "2000-01-01T00:00:00.000Z"
            })
          }`
          const two = viewOf(yield* get(`/v1/gb/facts/${berlin.id}?user_id=alice`))
          expect(two.closed_by.map((c) => [c.kind, c.invalid_at])).toEqual([
            ["close", year(2021)],
            ["hand", year(2030)]
          ])
        })
      ))

    it.live("a long text is cut to 280 characters; the excerpt counts code points", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const text = `Bruno Diaz knows Alice Novak in 2015. ${"and then the weather was fine 🌤 ".repeat(12)}`
          expect(Array.from(text).length).toBeGreaterThan(MAX_EXCERPT_CHARS)
          const a = yield* remember(text)
          const story = storyOf(yield* get(`/v1/gb/entities/${entityId(a, "Bruno Diaz")}?user_id=alice`))
          const view = viewOf(yield* get(`/v1/gb/facts/${story.facts[0]!.id}?user_id=alice`))
          const excerpt = view.created_by!.excerpt
          expect(excerpt).toBe(excerptOf(text))
          expect(Array.from(excerpt)).toHaveLength(MAX_EXCERPT_CHARS)
          expect(excerpt.endsWith("…")).toBe(true)
          expect(text.startsWith(excerpt.slice(0, -1))).toBe(true)
          expect(excerptOf("short")).toBe("short")
        })
      ))

    it.live("bad input is a 400 naming the field; another user's fact or dataset a 404", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const a = yield* remember("Alice Novak works at Acme in 2019.")
          yield* remember("Bruno Diaz works at Initech in 2018.", "bob")
          const id = storyOf(yield* get(`/v1/gb/entities/${entityId(a, "Alice Novak")}?user_id=alice`)).facts[0]!.id
          const cases: ReadonlyArray<readonly [string, RegExp]> = [
            ["/v1/gb/facts/0?user_id=alice", /^id must be a positive integer/],
            ["/v1/gb/facts/abc?user_id=alice", /^id must be a positive integer/],
            ["/v1/gb/facts/-1?user_id=alice", /^id must be a positive integer/],
            ["/v1/gb/facts/1.5?user_id=alice", /^id must be a positive integer/],
            [`/v1/gb/facts/${id}`, /^user_id is required/],
            [`/v1/gb/facts/${id}?user_id=%20`, /^user_id must not be empty/],
            [`/v1/gb/facts/${id}?user_id=alice&dataset=${"d".repeat(129)}`, /^dataset must be at most 128/]
          ]
          for (const [path, message] of cases) expectError(yield* get(path), 400, message)

          // bob has a dataset "main", but not this fact; eve has no dataset at all
          expectError(yield* get(`/v1/gb/facts/${id}?user_id=bob`), 404, new RegExp(`fact ${id} not found`))
          expectError(yield* get(`/v1/gb/facts/${id}?user_id=eve`), 404, /no dataset "main"/)
          expectError(yield* get(`/v1/gb/facts/${id}?user_id=alice&dataset=work`), 404, /no dataset "work"/)
          expectError(yield* get("/v1/gb/facts/999999?user_id=alice"), 404, /fact 999999 not found/)

          // the program itself refuses a request built without its schema
          const unchecked = yield* Effect.either((yield* Reads).factView({ user_id: "alice", dataset: "main", id: 0 }))
          expect(Either.isLeft(unchecked) && unchecked.left).toMatchObject({
            _tag: "InvalidRequest",
            message: "id must be a positive integer"
          })
        })
      ))
  })
})

describe("a fact's view: tokens", () => {
  it.live("a user's token reads that user's facts only", () =>
    withApp(
      sqliteLayer(),
      Effect.gen(function*() {
        const res = yield* postAs(
          "/v1/gb/remember",
          { user_id: "alice", text: "Alice Novak works at Acme in 2019." },
          SECRETS.alice
        )
        expect(res.status, res.text).toBe(200)
        const path = `/v1/gb/facts/${res.json.edges[0].id}?user_id=alice`
        expectError(yield* getAs(path), 401)
        expectError(yield* getAs(path, SECRETS.bob), 403, /may not act for/)
        expect(viewOf(yield* getAs(path, SECRETS.alice)).fact.id).toBe(res.json.edges[0].id)
      }),
      USER_TOKENS
    ))
})

describe("a fact's view: query plans", () => {
  const trace = sqlCapture()

  const capture = <A>(effect: Effect.Effect<A>) =>
    Effect.gen(function*() {
      trace.start()
      yield* effect
      trace.stop()
      return [...trace.captured]
    })

  it.effect("the fact, its sources and its closures read through indexes, never a scan", () =>
    Effect.gen(function*() {
      const dataset = yield* (yield* DatasetsRepo).getOrCreate("u", "main", "2026-01-01T00:00:00.000Z")
      const search = yield* SearchRepo
      const byId = yield* capture(
        Effect.map(search.factById(dataset.id, 1), (found) => expect(found).toEqual(Option.none()))
      )
      const sources = yield* capture(search.factSources(dataset.id, { id: 1, artifact_id: 1 }, 281))
      const closures = yield* capture(search.factClosures(1))
      expect(byId).toHaveLength(1)
      expect(sources).toHaveLength(1)
      expect(closures).toHaveLength(1)

      expect(yield* planOf(byId[0]!)).toMatch(/SEARCH e USING INTEGER PRIMARY KEY \(rowid=\?\)/)
      const sourcePlan = yield* planOf(sources[0]!)
      expect(sourcePlan).toMatch(/SEARCH ea USING (COVERING )?INDEX sqlite_autoindex_gb_edge_artifacts_1 \(edge_id=\?/)
      expect(sourcePlan).toMatch(/SEARCH a USING INTEGER PRIMARY KEY \(rowid=\?\)/)
      const closurePlan = yield* planOf(closures[0]!)
      expect(closurePlan).toMatch(/SEARCH c USING INDEX gb_edge_closures_edge \(edge_id=\?\)/)
      expect(closurePlan).toMatch(/SEARCH b USING INTEGER PRIMARY KEY \(rowid=\?\)/)
      for (const plan of [sourcePlan, closurePlan]) expect(plan).not.toMatch(/\bSCAN (e|a|ea|c|b)\b/)
    }).pipe(Effect.provide(SqliteLive(":memory:"))))
})
