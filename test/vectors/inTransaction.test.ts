/**
 * The stores that share the graph's transaction (vector_store = "postgres", and sqlite-vec in
 * the SQLite database itself): a remember or a forget writes its vectors in the store
 * transaction itself (no outbox row), a failure before the commit rolls them back with the
 * rows, and an older pending outbox row (a database migrated from another store) is settled
 * there, so a later drain cannot write an older vector back.
 */
import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { HashEmbeddingsLive } from "../../layers/testing/HashEmbeddings.js"
import { PostgresVectorStoreLive } from "../../layers/vectors/PostgresVectorStore.js"
import { SqliteVecStoreLive } from "../../layers/vectors/SqliteVecStore.js"
import { Forgets } from "../../src/forget/Forgets.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import { drainOutbox, recordVectors } from "../../src/pipeline/vectors.js"
import { beforeCommit, Database } from "../../src/services/Database.js"
import type { Embeddings } from "../../src/services/Embeddings.js"
import { GraphRepo } from "../../src/services/GraphRepo.js"
import { VectorOutbox } from "../../src/services/VectorOutbox.js"
import { VectorStore } from "../../src/services/VectorStore.js"
import { graph, rememberLayer, textBody, textRequest } from "../support/app.js"
import { type Dialect, forEachDialect, type StorageLayer } from "../support/databases.js"

const DIMS = 64

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: string }>(`SELECT COUNT(*) AS n FROM ${table}`)).pipe(
    Effect.map((rows) => Number(rows[0]!.n)),
    Effect.orDie
  )

const livesIn = graph(
  [{ name: "Alice", type: "person", description: "an engineer" }, { name: "Lisbon", type: "place" }],
  [{ source: "Alice", target: "Lisbon", relation: "lives in", valid_at: "2024-01-01" }]
)

/**
 * The remember machinery on a fresh PostgreSQL database with the postgres store; `during` runs
 * in the store transaction right after its vector writes (markEmbedded follows them), to look
 * at what the transaction holds or to break it.
 */
const app = (
  dialect: Dialect,
  makeLayer: () => StorageLayer,
  during: Effect.Effect<void, never, SqlClient.SqlClient> = Effect.void
) => {
  const storage = Layer.effect(
    GraphRepo,
    Effect.gen(function*() {
      const repo = yield* GraphRepo
      const sql = yield* SqlClient.SqlClient
      return GraphRepo.of({
        ...repo,
        markEmbedded: (entities, edges, at) =>
          Effect.zipRight(
            Effect.provideService(during, SqlClient.SqlClient, sql),
            repo.markEmbedded(entities, edges, at)
          )
      })
    })
  ).pipe(Layer.provideMerge(makeLayer()))
  return rememberLayer(storage, { extract_graph: [livesIn, livesIn, livesIn] }, {
    maxAttempts: 1,
    embeddings: HashEmbeddingsLive({ dimensions: DIMS }) as unknown as Layer.Layer<Embeddings>,
    vectors: (dialect === "pg" ? PostgresVectorStoreLive(DIMS) : SqliteVecStoreLive(DIMS)) as unknown as Layer.Layer<
      VectorStore
    >
  })
}

/** Every vector id of an index, as the store finds them. */
const idsIn = (index: string) =>
  Effect.flatMap(VectorStore, (store) => store.query(index, Array.from({ length: DIMS }, () => 1), 100, -1)).pipe(
    Effect.map((matches) => matches.map((m) => m.id).sort())
  )

/** Where the store keeps one row a vector: pg's table, or sqlite-vec's float vectors of 64 dimensions. */
const vectorsTable = (dialect: Dialect) => (dialect === "pg" ? "gb_vectors" : `gb_vectors_${DIMS}_floats`)

/** The vectors and the outbox rows, as the current transaction (or the database) sees them. */
const seenIn = (dialect: Dialect) =>
  Effect.all({ vectors: count(vectorsTable(dialect)), outbox: count("gb_vector_outbox") })

/** The one dataset's id. */
const datasetId = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ id: number }>`SELECT id FROM gb_datasets`).pipe(
  Effect.map((rows) => rows[0]!.id),
  Effect.orDie
)

const remember = (text: string) => Effect.flatMap(RememberManager, (m) => m.submit(textRequest(text)))

forEachDialect((dialect, makeLayer) => {
  const seen = seenIn(dialect)
  it.live("a remember writes its vectors in its transaction: no outbox row, searchable as soon as it returns", () => {
    const inside: Array<{ vectors: number; outbox: number }> = []
    return Effect.gen(function*() {
      expect((yield* VectorStore).transactional).toBe(true)
      const body = textBody(yield* remember("Alice lives in Lisbon."))
      // 2 entities and 1 fact, written before the commit; nothing queued
      expect(inside).toEqual([{ vectors: 3, outbox: 0 }])
      const id = yield* datasetId
      expect(yield* count("gb_vector_outbox")).toBe(0)
      expect(yield* idsIn(`dataset-${id}-entities`)).toHaveLength(2)
      expect(yield* idsIn(`dataset-${id}-edges`)).toEqual([`edge-${body.edges[0]!.id}`])
    }).pipe(Effect.provide(app(dialect, makeLayer, Effect.map(seen, (s) => void inside.push(s)))))
  }, 60_000)

  it.live("a failure after the vector writes rolls them back with the rows", () => {
    let broken = true
    const inside: Array<{ vectors: number; outbox: number }> = []
    const during = Effect.flatMap(seen, (s) => {
      inside.push(s)
      return broken ? Effect.dieMessage("store transaction broken") : Effect.void
    })
    return Effect.gen(function*() {
      const exit = yield* Effect.exit(remember("Alice lives in Lisbon."))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(inside).toEqual([{ vectors: 3, outbox: 0 }])
      expect(yield* count("gb_artifacts")).toBe(0)
      expect(yield* seen).toEqual({ vectors: 0, outbox: 0 })
      broken = false
      yield* remember("Alice lives in Lisbon.")
      expect(yield* seen).toEqual({ vectors: 3, outbox: 0 })
    }).pipe(Effect.provide(app(dialect, makeLayer, during)))
  }, 60_000)

  it.live(
    "an older pending outbox row of a vector written in a transaction is settled there, never drained over it",
    () =>
      Effect.gen(function*() {
        const deps = { database: yield* Database, outbox: yield* VectorOutbox, vectors: yield* VectorStore }
        const index = "dataset-7-entities"
        const old = Array.from({ length: DIMS }, (_, i) => (i === 0 ? 1 : 0))
        const fresh = Array.from({ length: DIMS }, (_, i) => (i === 1 ? 1 : 0))
        const now = "2025-01-01T00:00:00.000Z"
        // queued by a process on another store, before the switch
        yield* deps.outbox.enqueue([
          { dataset_id: 7, index_name: index, vector_id: "entity-1", values: old, metadata: { v: "old" } },
          { dataset_id: 7, index_name: index, vector_id: "entity-2", values: old, metadata: { v: "other" } }
        ], now)
        const ids = yield* deps.database.withTransaction(recordVectors(deps, [
          { dataset_id: 7, index_name: index, vector_id: "entity-1", values: fresh, metadata: { v: "new" } }
        ], now))
        expect(ids).toEqual([])
        expect(yield* deps.outbox.count()).toBe(1)
        // the other vector's row is still drained, in a transaction of its own
        expect(yield* drainOutbox(deps)).toBe(1)
        expect(yield* deps.outbox.count()).toBe(0)
        const [best] = yield* deps.vectors.query(index, fresh, 1, -1)
        expect(best).toMatchObject({ id: "entity-1", metadata: { v: "new" } })
        expect(best!.score).toBeCloseTo(1, 5)
        expect(yield* idsIn(index)).toEqual(["entity-1", "entity-2"])
      }).pipe(Effect.provide(app(dialect, makeLayer))),
    60_000
  )

  // on PostgreSQL the drain's row lock orders the two; SQLite's one connection serializes them
  it.live(
    "a drain that has read an older row first finishes before the transaction's write, not after it",
    () =>
      Effect.gen(function*() {
        const deps = { database: yield* Database, outbox: yield* VectorOutbox, vectors: yield* VectorStore }
        const index = "dataset-8-entities"
        const old = Array.from({ length: DIMS }, (_, i) => (i === 0 ? 1 : 0))
        const fresh = Array.from({ length: DIMS }, (_, i) => (i === 1 ? 1 : 0))
        const now = "2025-01-01T00:00:00.000Z"
        yield* deps.outbox.enqueue([
          { dataset_id: 8, index_name: index, vector_id: "entity-1", values: old, metadata: { v: "old" } }
        ], now)
        // a slow drain (another process): it holds the row while its write is under way
        const slow = {
          ...deps.vectors,
          upsert: (i: string, items: Parameters<typeof deps.vectors.upsert>[1]) =>
            Effect.zipRight(Effect.sleep("400 millis"), deps.vectors.upsert(i, items))
        }
        const drain = yield* Effect.fork(drainOutbox({ ...deps, vectors: slow }))
        yield* Effect.sleep("150 millis")
        yield* deps.database.withTransaction(recordVectors(deps, [
          { dataset_id: 8, index_name: index, vector_id: "entity-1", values: fresh, metadata: { v: "new" } }
        ], now))
        yield* drain.await
        const [best] = yield* deps.vectors.query(index, fresh, 1, -1)
        expect(best).toMatchObject({ id: "entity-1", metadata: { v: "new" } })
        expect(yield* deps.outbox.count()).toBe(0)
      }).pipe(Effect.provide(app(dialect, makeLayer))),
    60_000
  )

  it.live(
    "a forget deletes the vectors in its transaction, and a failure before its commit keeps them",
    () =>
      Effect.gen(function*() {
        const body = textBody(yield* remember("Alice lives in Lisbon."))
        const id = yield* datasetId
        const edges = `dataset-${id}-edges`
        expect(yield* idsIn(edges)).toHaveLength(1)
        const forgets = yield* Forgets
        const request = { user_id: "alice", dataset: "main", artifact_id: body.artifact_id }
        const sql = yield* SqlClient.SqlClient
        const inside: Array<{ vectors: number; outbox: number }> = []
        const look = Effect.provideService(Effect.map(seen, (s) => void inside.push(s)), SqlClient.SqlClient, sql)
        // the forget's transaction fails just before its commit, after its vector deletes
        const broken = yield* Effect.exit(
          Effect.locally(forgets.forgetArtifact(request), beforeCommit, [
            Effect.zipRight(look, Effect.dieMessage("no commit"))
          ])
        )
        expect(Exit.isFailure(broken)).toBe(true)
        // every vector of the text went (its only entities and fact), none queued
        expect(inside).toEqual([{ vectors: 0, outbox: 0 }])
        expect(yield* idsIn(edges)).toHaveLength(1)
        const forgotten = yield* Effect.locally(forgets.forgetArtifact(request), beforeCommit, [look])
        expect(inside[1]).toEqual({ vectors: 0, outbox: 0 })
        expect(forgotten.deleted.facts).toBe(1)
        expect(forgotten.vectors_pending).toBeUndefined()
        expect(yield* count("gb_vector_outbox")).toBe(0)
        expect(yield* idsIn(edges)).toEqual([])
        expect(yield* idsIn(`dataset-${id}-entities`)).toEqual([])
      }).pipe(Effect.provide(app(dialect, makeLayer))),
    60_000
  )
})
