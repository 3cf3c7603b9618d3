/**
 * `DELETE /v1/gb/artifacts/{id}` (docs/FORGET.md) over HTTP, on both databases: what it answers
 * and removes, its validation and scoping (another user's artifact is a 404 like a missing one;
 * another user's token a 403), the full-text index in sync, vector deletes through the outbox
 * converging after a vector-store failure, and a forget racing a remember on the same dataset.
 */
import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { describe, expect } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { HashEmbeddingsLive } from "../../layers/testing/HashEmbeddings.js"
import { MemoryVectorStore, MemoryVectorStoreLive } from "../../layers/vectors/MemoryVectorStore.js"
import { Authentication } from "../../src/auth/Authentication.js"
import { tokenTable } from "../../src/auth/tokens.js"
import type { AuthToken } from "../../src/config/tables.js"
import { VectorWriteFailed } from "../../src/domain/Errors.js"
import { drainOutbox } from "../../src/pipeline/vectors.js"
import { Database } from "../../src/services/Database.js"
import type { Embeddings } from "../../src/services/Embeddings.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { VectorOutbox } from "../../src/services/VectorOutbox.js"
import { VectorStore } from "../../src/services/VectorStore.js"
import { rememberLayer, type RememberLayerOptions } from "../support/app.js"
import { forEachDialect, sqliteLayer, type StorageLayer } from "../support/databases.js"
import { expectFullTextConsistent } from "../support/fullText.js"
import { expectError, postJson, send, serveTest } from "../support/http.js"

const script = (r: LlmRequest) => ({ text: answer(r).text })

const withApp = <A, E>(
  storage: StorageLayer,
  program: Effect.Effect<A, E, any>,
  options: RememberLayerOptions & { readonly auth?: ReadonlyArray<AuthToken> } = {}
) => {
  const services = rememberLayer(storage, script, options)
  const layer = options.auth === undefined
    ? services
    : Layer.merge(services, Layer.succeed(Authentication, tokenTable(options.auth)))
  return program.pipe(Effect.provide(serveTest(layer) as Layer.Layer<any, any, never>)) as Effect.Effect<A, E, never>
}

const remember = (text: string, extra: Record<string, unknown> = {}) =>
  Effect.map(postJson("/v1/gb/remember", { user_id: "alice", text, ...extra }), (res) => {
    expect(res.status, res.text).toBe(200)
    return res.json
  })

const forget = (id: number | string, query = "user_id=alice&dataset=main") =>
  send(HttpClientRequest.del(`/v1/gb/artifacts/${id}?${query}`))

const rows = <A extends object>(query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(query)).pipe(Effect.orDie)

forEachDialect((dialect, makeLayer) => {
  describe("DELETE /v1/gb/artifacts/{id}", () => {
    it.live("forgets a text: its fact and place go, the fact it closed is open again, search no longer finds it", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const berlin = yield* remember("Alice Novak lives in Berlin in 2020.")
          const lisbon = yield* remember("Alice Novak lives in Lisbon in 2021.")
          expect(lisbon.invalidated_edges).toEqual([berlin.edges[0].id])
          const res = yield* forget(lisbon.artifact_id)
          expect(res.status, res.text).toBe(200)
          expect(res.json).toEqual({
            deleted: { artifacts: 1, entities: 1, facts: 1, vectors: 0 },
            reopened_facts: [berlin.edges[0].id],
            reanchored_facts: []
          })
          const live = yield* rows<any>("SELECT id, invalid_at, expired_at FROM gb_edges")
          expect(live).toEqual([{ id: berlin.edges[0].id, invalid_at: null, expired_at: null }])
          expect((yield* rows<any>("SELECT name FROM gb_entities ORDER BY name")).map((r) => r.name)).toEqual([
            "Alice Novak",
            "Berlin"
          ])
          expect(yield* rows<any>("SELECT id FROM gb_edge_closures")).toEqual([])
          const search = yield* postJson("/v1/gb/search", { user_id: "alice", query: "Lisbon" })
          expect(search.status, search.text).toBe(200)
          expect(JSON.stringify([search.json.facts, search.json.entities, search.json.chunks])).not.toContain("Lisbon")
          expect(search.json.facts).toEqual([])
          // forgotten: a second forget is a 404
          expectError(yield* forget(lisbon.artifact_id), 404, /artifact \d+ not found/)
          // the full-text index holds exactly the rows left (SQLite's tables per dataset)
          if (dialect === "sqlite") yield* expectFullTextConsistent
        })
      ))

    it.live("a repeat keeps the fact, re-anchored to the text that remains, with its words", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const first = yield* remember("Alice Novak works at Acme in 2019.")
          const again = yield* remember("Alice Novak works at Acme in 2021.")
          expect(again.edges[0].id).toBe(first.edges[0].id)
          const res = yield* forget(first.artifact_id)
          expect(res.json).toEqual({
            deleted: { artifacts: 1, entities: 0, facts: 0, vectors: 0 },
            reopened_facts: [],
            reanchored_facts: [first.edges[0].id]
          })
          expect(yield* rows<any>("SELECT artifact_id, valid_at, description FROM gb_edges")).toEqual([{
            artifact_id: again.artifact_id,
            valid_at: "2021-01-01T00:00:00.000Z",
            description: "Alice Novak works at Acme since 2021"
          }])
          if (dialect === "sqlite") yield* expectFullTextConsistent
        })
      ))

    it.live("bad input is a 400 naming the field; another dataset's or a missing artifact a 404; nothing is removed", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const kept = yield* remember("Alice Novak works at Acme in 2019.")
          expectError(yield* forget("abc"), 400, /^id /)
          expectError(yield* forget(kept.artifact_id, "dataset=main"), 400, /^user_id /)
          expectError(yield* forget(kept.artifact_id, "user_id=alice&dataset="), 400, /^dataset /)
          expectError(yield* forget(kept.artifact_id, "user_id=bob&dataset=main"), 404, /not found/)
          expectError(yield* forget(kept.artifact_id, "user_id=alice&dataset=other"), 404, /not found/)
          expectError(yield* forget(999999), 404, /not found/)
          expect(yield* rows<any>("SELECT COUNT(*) AS n FROM gb_artifacts")).toEqual([{ n: 1 }])
        })
      ))

    it.live("a forget racing a remember on the dataset waits for the lock; nothing is lost", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const doomed = yield* remember("Alice Novak lives in Berlin in 2020.")
          // the remember's resolve_edges (under the dataset's lock) answers late
          const racing = yield* Effect.fork(
            remember("Alice Novak lives in Lisbon in 2021. Bruno Diaz knows Alice Novak in 2015.")
          )
          yield* Effect.sleep("20 millis")
          const res = yield* forget(doomed.artifact_id)
          expect(res.status, res.text).toBe(200)
          yield* racing
          const facts = yield* rows<any>(
            `SELECT s.name AS source, e.relation, t.name AS target, e.expired_at IS NULL AS live
            FROM gb_edges e JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id ORDER BY e.id`
          )
          expect(facts.map((f) => [f.source, f.relation, f.target, Boolean(f.live)])).toEqual([
            ["Alice Novak", "lives_in", "Lisbon", true],
            ["Bruno Diaz", "knows", "Alice Novak", true]
          ])
        }),
        { llmDelayMs: (r) => (r.stage === "resolve_edges" ? 150 : 0) }
      ))
  })
})

// one database is enough for the vector store's side
const SECRETS = { alice: "alice-token-F3kd9", bob: "bob-token-X9sm2" }
const TOKENS: ReadonlyArray<AuthToken> = [
  { kind: "plain", secret: Redacted.make(SECRETS.alice), admin: false, userId: "alice" },
  { kind: "plain", secret: Redacted.make(SECRETS.bob), admin: false, userId: "bob" }
]

describe("DELETE /v1/gb/artifacts/{id}: tokens and vectors", () => {
  it.live("another user's token is a 403; the owner's forgets", () =>
    withApp(
      sqliteLayer(),
      Effect.gen(function*() {
        const res = yield* send(
          HttpClientRequest.post("/v1/gb/remember").pipe(
            HttpClientRequest.bearerToken(SECRETS.alice),
            HttpClientRequest.bodyUnsafeJson({ user_id: "alice", text: "Alice Novak works at Acme in 2019." })
          )
        )
        expect(res.status, res.text).toBe(200)
        const path = `/v1/gb/artifacts/${res.json.artifact_id}?user_id=alice`
        const asBob = yield* send(HttpClientRequest.del(path).pipe(HttpClientRequest.bearerToken(SECRETS.bob)))
        expectError(asBob, 403, /may not act for/)
        const asAlice = yield* send(HttpClientRequest.del(path).pipe(HttpClientRequest.bearerToken(SECRETS.alice)))
        expect(asAlice.status, asAlice.text).toBe(200)
      }),
      { auth: TOKENS }
    ))

  it.live("vector deletes go through the outbox: a failed delete answers vectors_pending and converges", () => {
    let failing = true
    const memory = MemoryVectorStoreLive({ dimensions: 32 })
    const flaky = Layer.effect(
      VectorStore,
      Effect.map(VectorStore, (store) =>
        VectorStore.of({
          ...store,
          delete: (index, ids) =>
            failing ? Effect.fail(new VectorWriteFailed({ message: "vector store down" })) : store.delete(index, ids)
        }))
    ).pipe(Layer.provideMerge(memory))
    const embeddings = HashEmbeddingsLive({ dimensions: 32 }) as unknown as Layer.Layer<Embeddings>
    return withApp(
      sqliteLayer(),
      Effect.gen(function*() {
        yield* remember("Alice Novak works at Acme in 2019.")
        const lisbon = yield* remember("Alice Novak lives in Lisbon in 2021.")
        const store = yield* MemoryVectorStore
        const edgeIndex = `dataset-${(yield* rows<any>("SELECT id FROM gb_datasets"))[0].id}-edges`
        expect(store.items(edgeIndex).map((i) => i.id)).toHaveLength(2)
        const res = yield* forget(lisbon.artifact_id)
        expect(res.status, res.text).toBe(200)
        expect(res.json.deleted).toMatchObject({ facts: 1, entities: 1 })
        expect(res.json.vectors_pending, res.text).toBeGreaterThan(0)
        expect(store.items(edgeIndex)).toHaveLength(2)
        failing = false
        const outbox = yield* VectorOutbox
        yield* drainOutbox({ database: yield* Database, outbox, vectors: yield* VectorStore })
        expect(yield* outbox.count()).toBe(0)
        expect(store.items(edgeIndex)).toHaveLength(1)
      }),
      { embeddings, vectors: flaky as unknown as Layer.Layer<VectorStore> }
    )
  })
})
