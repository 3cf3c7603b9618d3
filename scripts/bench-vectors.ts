/**
 * The embedded vector store's figures: `npx tsx scripts/bench-vectors.ts [--sizes 10000,100000]
 * [--dims 1536] [--queries 200]`.
 *
 * For each size, on a fresh SQLite file (WAL, as `gligabao serve` runs it) through the real
 * SqliteVecStore: insert throughput (upserts of 100 random unit vectors, each its own
 * transaction), then the latency of `query` with k = 3 and k = 10 (random unit query vectors),
 * and of a query on a 100-vector index sharing the table (what a small dataset pays when
 * others are large). Prints a table; the figures are recorded in BENCHMARKS.md.
 */
import { SqlClient } from "@effect/sql"
import { type Context, Effect, Layer } from "effect"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteClientLive } from "../layers/sql/Sqlite.js"
import { SqliteVecStoreLive } from "../layers/vectors/SqliteVecStore.js"
import { type VectorItem, VectorStore } from "../src/services/VectorStore.js"

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]!
}
const SIZES = arg("sizes", "10000,100000").split(",").map(Number)
const DIMS = Number(arg("dims", "1536"))
const QUERIES = Number(arg("queries", "200"))
const BATCH = 100

const randomUnit = (): Array<number> => {
  const v = Array.from({ length: DIMS }, () => Math.random() * 2 - 1)
  const norm = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0))
  return v.map((x) => x / norm)
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const timeQueries = (store: Context.Tag.Service<VectorStore>, index: string, k: number) =>
  Effect.gen(function*() {
    const times: Array<number> = []
    const vectors = Array.from({ length: QUERIES }, randomUnit)
    for (const vector of vectors) {
      const start = performance.now()
      const matches = yield* store.query(index, vector, k, -1)
      times.push(performance.now() - start)
      if (matches.length !== k) return yield* Effect.dieMessage(`expected ${k} matches, got ${matches.length}`)
    }
    times.sort((a, b) => a - b)
    return { p50: percentile(times, 50), p95: percentile(times, 95) }
  })

const runSize = (size: number) =>
  Effect.gen(function*() {
    const store = yield* VectorStore
    const sql = yield* SqlClient.SqlClient
    const index = "dataset-1-entities"
    // only the upserts are timed, not making up the vectors
    let insertMs = 0
    for (let done = 0; done < size; done += BATCH) {
      const items: Array<VectorItem> = []
      for (let i = done; i < Math.min(size, done + BATCH); i++) {
        items.push({
          id: `entity-${i}`,
          values: randomUnit(),
          metadata: { dataset_id: 1, kind: "entity", entity_id: i }
        })
      }
      const start = performance.now()
      yield* store.upsert(index, items)
      insertMs += performance.now() - start
    }
    const insertSeconds = insertMs / 1000
    // the same 100 ids again: the overwrite path (delete + insert)
    const overwrite = Array.from(
      { length: BATCH },
      (_, i) => ({ id: `entity-${i}`, values: randomUnit(), metadata: {} })
    )
    const overwriteStart = performance.now()
    yield* store.upsert(index, overwrite)
    const overwriteMs = performance.now() - overwriteStart

    yield* store.upsert(
      "dataset-2-entities",
      Array.from({ length: 100 }, (_, i) => ({ id: `entity-${i}`, values: randomUnit(), metadata: {} }))
    )
    yield* sql`PRAGMA wal_checkpoint(TRUNCATE)`
    const k3 = yield* timeQueries(store, index, 3)
    const k10 = yield* timeQueries(store, index, 10)
    const small = yield* timeQueries(store, "dataset-2-entities", 10)
    return { insertPerSecond: size / insertSeconds, insertSeconds, overwriteMs, k3, k10, small }
  })

const main = Effect.gen(function*() {
  console.log(
    `sqlite-vec via SqliteVecStore, ${DIMS} dimensions, ${QUERIES} queries per row, inserts in upserts of ${BATCH}`
  )
  console.log(
    "| vectors | insert vectors/s | overwrite 100 ms | k=3 p50 / p95 ms | k=10 p50 / p95 ms | 100-vector index k=10 p50 / p95 ms | file MiB | RSS MiB |"
  )
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |")
  for (const size of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), "gligabao-bench-vectors-"))
    const file = join(dir, "bench.db")
    const result = yield* runSize(size).pipe(
      Effect.provide(SqliteVecStoreLive(DIMS).pipe(Layer.provideMerge(SqliteClientLive(file))))
    )
    const mib = statSync(file).size / 2 ** 20
    rmSync(dir, { recursive: true, force: true })
    const f = (x: number) => x.toFixed(x < 10 ? 2 : 1)
    console.log(
      `| ${size.toLocaleString("en-US")} | ${Math.round(result.insertPerSecond).toLocaleString("en-US")} | ${
        f(result.overwriteMs)
      } | ${f(result.k3.p50)} / ${f(result.k3.p95)} | ${f(result.k10.p50)} / ${f(result.k10.p95)} | ${
        f(result.small.p50)
      } / ${f(result.small.p95)} | ${Math.round(mib)} | ${Math.round(process.memoryUsage().rss / 2 ** 20)} |`
    )
  }
})

Effect.runPromise(main).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
