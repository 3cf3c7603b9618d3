/**
 * Several searches in one call (`VectorStore.queryMany`, `queryEach`): the sqlite-vec store
 * answers each as `query` does, in order, on its reader thread in one message or on the main
 * connection; a store without it is asked query by query.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteLive } from "../../layers/sql/index.js"
import { MemoryVectorStoreLive } from "../../layers/vectors/MemoryVectorStore.js"
import { makeSqliteVecStore, SqliteVecStoreLive } from "../../layers/vectors/SqliteVecStore.js"
import { startVecReader } from "../../layers/vectors/VecReader.js"
import { queryEach, type VectorQuery, VectorStore } from "../../src/services/VectorStore.js"

/** deterministic vectors around a few centres */
const vectorsOf = (count: number, dims: number, seed: number): Array<Array<number>> => {
  let state = seed
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32 - 0.5
  }
  const centres = Array.from({ length: 4 }, () => Array.from({ length: dims }, next))
  return Array.from({ length: count }, (_, i) => centres[i % 4]!.map((x) => x + 0.6 * next()))
}

const tempFile = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "gligabao-querymany-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => join(dir, "graph.db")))

/** two indexes of `dims` dimensions, and a batch of searches over both with varied k and thresholds */
const world = (store: VectorStore["Type"], dims: number) =>
  Effect.gen(function*() {
    const data = vectorsOf(120, dims, dims)
    yield* store.upsert(
      "dataset-1-entities",
      data.slice(0, 60).map((values, i) => ({
        id: `entity-${i + 1}`,
        values,
        metadata: { name_key: `n${i}` }
      }))
    )
    yield* store.upsert(
      "dataset-1-edges",
      data.slice(60).map((values, i) => ({
        id: `edge-${i + 1}`,
        values,
        metadata: { edge_id: i + 1 }
      }))
    )
    const queries: Array<VectorQuery> = vectorsOf(8, dims, 7 * dims).map((vector, i) => ({
      index: i % 2 === 0 ? "dataset-1-entities" : "dataset-1-edges",
      vector,
      k: [1, 5, 11, 0][i % 4]!,
      minScore: i < 4 ? -1 : 0.3
    }))
    // an index nothing was written to answers nothing
    queries.push({ index: "dataset-2-edges", vector: data[0]!, k: 5, minScore: -1 })
    return queries
  })

const oneByOne = (store: VectorStore["Type"], queries: ReadonlyArray<VectorQuery>) =>
  Effect.forEach(queries, (q) => store.query(q.index, q.vector, q.k, q.minScore))

describe("VectorStore.queryMany", () => {
  for (const dims of [384, 32]) {
    it.live(`sqlite-vec (${dims} dimensions) answers each search as query does, with and without its reader`, () =>
      Effect.gen(function*() {
        const filename = yield* tempFile
        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const context = yield* Layer.build(
            SqliteVecStoreLive(dims, { filename, mmapBytes: 0 }).pipe(
              Layer.provide(Layer.succeed(SqlClient.SqlClient, sql))
            )
          )
          const withReader = Context.get(context, VectorStore)
          const onMain = yield* makeSqliteVecStore(sql, dims)
          const queries = yield* world(withReader, dims)
          const expected = yield* oneByOne(onMain, queries)
          expect(expected.some((matches) => matches.length > 0)).toBe(true)
          expect(expected[3]).toEqual([]) // k = 0
          expect(expected.at(-1)).toEqual([])
          expect(yield* withReader.queryMany!(queries)).toEqual(expected)
          expect(yield* onMain.queryMany!(queries)).toEqual(expected)
          expect(yield* queryEach(withReader, queries, 4)).toEqual(expected)
          expect(yield* queryEach(withReader, [], 4)).toEqual([])
        }).pipe(Effect.provide(SqliteLive(filename)))
      }).pipe(Effect.scoped))
  }

  it.live("a batch with an unusable vector fails as a whole, naming it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* makeSqliteVecStore(sql, 384)
      const [good] = vectorsOf(1, 384, 1)
      const failed = yield* Effect.flip(store.queryMany!([
        { index: "dataset-1-edges", vector: good!, k: 3, minScore: 0 },
        { index: "dataset-1-entities", vector: [1, 2, 3], k: 3, minScore: 0 }
      ]))
      expect(failed.message).toContain("dataset-1-entities")
      expect(failed.message).toContain("3 numbers")
    }).pipe(Effect.provide(SqliteLive(":memory:"))))

  it.live("the reader runs a batch of statements in one message, in order, and reports a bad one", () =>
    Effect.gen(function*() {
      const filename = yield* tempFile
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE t (n INTEGER)`
        yield* sql`INSERT INTO t VALUES (1), (2), (3)`
        const reader = yield* startVecReader(filename)
        const rows = yield* reader.allMany!<{ n: number }>([
          { sql: "SELECT n FROM t WHERE n >= ? ORDER BY n", params: [2] },
          { sql: "SELECT n FROM t WHERE n = ?", params: [9] },
          { sql: "SELECT count(*) AS n FROM t", params: [] }
        ])
        expect(rows).toEqual([[{ n: 2 }, { n: 3 }], [], [{ n: 3 }]])
        const bad = yield* Effect.flip(reader.allMany!([
          { sql: "SELECT n FROM t", params: [] },
          { sql: "SELECT nope FROM t", params: [] }
        ]))
        expect(bad.message).toContain("nope")
      }).pipe(Effect.provide(SqliteLive(filename)))
    }).pipe(Effect.scoped))

  it.effect("a store without it is asked query by query", () =>
    Effect.gen(function*() {
      const store = yield* VectorStore
      expect(store.queryMany).toBeUndefined()
      const queries = yield* world(store, 16)
      expect(yield* queryEach(store, queries, 2)).toEqual(yield* oneByOne(store, queries))
    }).pipe(Effect.provide(MemoryVectorStoreLive())))
})
