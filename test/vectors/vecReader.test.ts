/**
 * The worker-thread reader of a sqlite-vec file (layers/vectors/VecReader.ts) and the store's use
 * of it (layers/vectors/SqliteVecStore.ts): same answers as the main connection, a connection of
 * its own (it sees only what is committed), the main connection when the reader fails.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteLive } from "../../layers/sql/index.js"
import { makeSqliteVecStore, SqliteVecStoreLive } from "../../layers/vectors/SqliteVecStore.js"
import { startVecReader, type VecReader, VecReaderFailed } from "../../layers/vectors/VecReader.js"
import { type VectorItem, VectorStore } from "../../src/services/VectorStore.js"

const DIMS = 384

/** deterministic vectors around a few centres */
const vectorsOf = (count: number, seed: number): Array<Array<number>> => {
  let state = seed
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32 - 0.5
  }
  const centres = Array.from({ length: 5 }, () => Array.from({ length: DIMS }, next))
  return Array.from({ length: count }, (_, i) => centres[i % 5]!.map((x) => x + 0.5 * next()))
}

const items = (vectors: ReadonlyArray<ReadonlyArray<number>>): Array<VectorItem> =>
  vectors.map((values, i) => ({ id: `edge-${i + 1}`, values, metadata: { n: i + 1 } }))

/** a temporary SQLite file, removed with the scope */
const tempFile = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "gligabao-vecreader-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => join(dir, "graph.db")))

/** the store with a reader and the same store without one, on one file */
const bothStores = (filename: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // built in the test's scope: the reader lives as long as the test
    const context = yield* Layer.build(
      SqliteVecStoreLive(DIMS, { filename, mmapBytes: 0 }).pipe(Layer.provide(Layer.succeed(SqlClient.SqlClient, sql)))
    )
    const withReader = Context.get(context, VectorStore)
    const onMain = yield* makeSqliteVecStore(sql, DIMS)
    return { withReader, onMain, sql }
  })

describe("SqliteVecStore with a worker-thread reader", () => {
  it.live("answers what the main connection answers", () =>
    Effect.gen(function*() {
      const filename = yield* tempFile
      yield* Effect.gen(function*() {
        const { onMain, withReader } = yield* bothStores(filename)
        const data = vectorsOf(400, 3)
        yield* withReader.upsert("dataset-1-edges", items(data))
        for (const query of data.slice(0, 12)) {
          const fromReader = yield* withReader.query("dataset-1-edges", query, 10, -1)
          const fromMain = yield* onMain.query("dataset-1-edges", query, 10, -1)
          expect(fromReader).toHaveLength(10)
          expect(fromReader).toEqual(fromMain)
        }
      }).pipe(Effect.provide(SqliteLive(filename)))
    }).pipe(Effect.scoped))

  it.live("reads on a connection of its own: what the main connection has not committed is not seen", () =>
    Effect.gen(function*() {
      const filename = yield* tempFile
      yield* Effect.gen(function*() {
        const { onMain, withReader, sql } = yield* bothStores(filename)
        const [v] = vectorsOf(1, 5)
        const inside = yield* Effect.gen(function*() {
          yield* withReader.upsert("dataset-1-edges", items([v!]))
          return {
            reader: yield* withReader.query("dataset-1-edges", v!, 5, -1),
            main: yield* onMain.query("dataset-1-edges", v!, 5, -1)
          }
        }).pipe(sql.withTransaction)
        expect(inside.main.map((m) => m.id)).toEqual(["edge-1"])
        expect(inside.reader).toEqual([])
        const after = yield* withReader.query("dataset-1-edges", v!, 5, -1)
        expect(after.map((m) => m.id)).toEqual(["edge-1"])
      }).pipe(Effect.provide(SqliteLive(filename)))
    }).pipe(Effect.scoped))

  it.live("queries on the main connection when the reader fails, or cannot start", () =>
    Effect.gen(function*() {
      const filename = yield* tempFile
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        let asked = 0
        const broken: VecReader = {
          all: () =>
            Effect.sync(() => asked++).pipe(Effect.zipRight(Effect.fail(new VecReaderFailed({ message: "gone" })))),
          alive: () => true
        }
        const store = yield* makeSqliteVecStore(sql, DIMS, Effect.succeed(broken))
        const data = vectorsOf(50, 7)
        yield* store.upsert("dataset-1-edges", items(data))
        const [best] = yield* store.query("dataset-1-edges", data[7]!, 1, -1)
        expect(asked).toBe(1)
        expect(best!.id).toBe("edge-8")
        expect(best!.score).toBeCloseTo(1, 5)
        // a reader that cannot start at all: the store is built and answers all the same
        const unstarted = yield* makeSqliteVecStore(
          sql,
          DIMS,
          Effect.fail(new VecReaderFailed({ message: "no threads" }))
        )
        const [again] = yield* unstarted.query("dataset-1-edges", data[7]!, 1, -1)
        expect(again!.id).toBe("edge-8")
      }).pipe(Effect.provide(SqliteLive(filename)))
    }).pipe(Effect.scoped))
})

describe("startVecReader", () => {
  it.live("binds blobs, reports a bad statement, and fails once stopped", () =>
    Effect.gen(function*() {
      const filename = yield* tempFile
      yield* Effect.gen(function*() {
        // the file must exist (in WAL mode) before the reader opens it
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE t (x INTEGER)`
        const scope = yield* Scope.make()
        const reader = yield* startVecReader(filename).pipe(Scope.extend(scope))
        const rows = yield* reader.all<{ n: number; bits: number }>(
          "SELECT length(?) AS n, vec_length(vec_bit(?)) AS bits",
          [
            Buffer.alloc(24, 1),
            Buffer.alloc(24, 1)
          ]
        )
        expect(rows).toEqual([{ n: 24, bits: 192 }])
        const bad = yield* Effect.flip(reader.all("SELECT x FROM nowhere", []))
        expect(bad).toBeInstanceOf(VecReaderFailed)
        expect(bad.message).toContain("nowhere")
        // it only reads
        const write = yield* Effect.flip(reader.all("INSERT INTO t VALUES (1) RETURNING x", []))
        expect(write.message).toMatch(/readonly|read-only|query_only/i)
        expect(reader.alive()).toBe(true)
        yield* Scope.close(scope, Exit.void)
        expect(reader.alive()).toBe(false)
        expect(yield* Effect.flip(reader.all("SELECT 1", []))).toBeInstanceOf(VecReaderFailed)
      }).pipe(Effect.provide(SqliteLive(filename)))
    }).pipe(Effect.scoped))
})
