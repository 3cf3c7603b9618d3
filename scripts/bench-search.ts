/**
 * The read side's figures: `npx tsx scripts/bench-search.ts [--facts 100000] [--queries 200]
 * [--dims 256] [--pg URL|auto|pglite] [--vectors postgres|sqlite] [--keep]`.
 *
 * Seeds one dataset of --facts facts among facts/5 entities (names from a small vocabulary so
 * that words repeat as in real data; about 10% of the facts closed; every fact linked to one of
 * facts/10 artifacts and one of 100 sessions) through the repositories, and hash-embedding
 * vectors of every entity and fact into the vector store: sqlite-vec in the SQLite database; with
 * PostgreSQL the default `postgres` store (its portable search on a server without pgvector, HNSW
 * with it) or `--vectors sqlite`, a sqlite-vec file of its own. `--pg auto` starts a throwaway
 * cluster (no pgvector in Debian's packages); `--pg pglite` serves an in-memory PGlite with its
 * pgvector extension over the wire protocol (WebAssembly: slower than a server, label its figures
 * so). A second, small dataset of another user shares the tables.
 *
 * Then, in process (no HTTP), the latency of `runSearch` (limit 10) over --queries random
 * questions after a warm-up: full text + graph (no vectors), and with vectors (the question
 * embedded, four indexes queried); and the export throughput of the whole dataset (JSON and
 * GraphML, include_expired) into a byte counter. Prints tables for BENCHMARKS.md.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Redacted, Stream } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  PgClientLive,
  PgLive,
  PgMigratedLive,
  RepositoriesLive,
  SqliteLive,
  type Storage,
  type StorageError
} from "../layers/sql/index.js"
import { HashEmbeddings } from "../layers/testing/HashEmbeddings.js"
import {
  hnswIndexName,
  makePostgresVectorStore,
  PostgresVectorStoreLive
} from "../layers/vectors/PostgresVectorStore.js"
import { SqliteVecFileStoreLive, SqliteVecStoreLive } from "../layers/vectors/SqliteVecStore.js"
import { type ReadDeps, readDeps } from "../src/query/deps.js"
import { runExportGraph } from "../src/query/export.js"
import { runSearch } from "../src/query/search.js"
import { VectorStore } from "../src/services/VectorStore.js"
import { startPgCluster } from "../test/support/postgres.js"
import { startPglite } from "./benchmarks/pglite.js"
import { questions, seedDataset } from "./benchmarks/searchData.js"

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]!
}
const FACTS = Number(arg("facts", "100000"))
const ENTITIES = Math.max(50, Math.floor(FACTS / 5))
const QUERIES = Number(arg("queries", "200"))
const DIMS = Number(arg("dims", "256"))
const PG_URL = arg("pg", "")
const VECTORS = arg("vectors", "postgres")
/** keep the SQLite file (its path is printed) for looking at query plans */
const KEEP = process.argv.includes("--keep")

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const timeSearches = (deps: ReadDeps, qs: ReadonlyArray<string>, hops: number) =>
  Effect.gen(function*() {
    const times: Array<number> = []
    let facts = 0
    for (const [i, query] of qs.entries()) {
      const start = performance.now()
      const out = yield* runSearch(deps, {
        user_id: "bench",
        dataset: "main",
        query,
        include_expired: false,
        limit: 10,
        hops
      })
      if (i >= 20) {
        times.push(performance.now() - start)
        facts += out.facts.length
      }
    }
    times.sort((a, b) => a - b)
    return {
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      mean: times.reduce((a, b) => a + b, 0) / times.length,
      facts: facts / times.length
    }
  })

const timeExport = (deps: ReadDeps, format: "json" | "graphml") =>
  Effect.gen(function*() {
    const rssBefore = process.memoryUsage().rss
    let peak = rssBefore
    const start = performance.now()
    const exported = yield* runExportGraph(deps, { user_id: "bench", dataset: "main", include_expired: true, format })
    let bytes = 0
    yield* Stream.runForEach(exported.body, (piece) =>
      Effect.sync(() => {
        bytes += Buffer.byteLength(piece, "utf8")
        peak = Math.max(peak, process.memoryUsage().rss)
      }))
    const seconds = (performance.now() - start) / 1000
    return { seconds, bytes, peakDelta: (peak - rssBefore) / 2 ** 20 }
  })

const f = (x: number) => x.toFixed(x < 10 ? 1 : 0)

const main = (storage: Layer.Layer<Storage, StorageError>, vectorStore: Layer.Layer<VectorStore, unknown, any>) =>
  Effect.gen(function*() {
    const seedStart = performance.now()
    const progress = (done: number) => {
      if (done % 20_000 === 0 || done === FACTS) process.stderr.write(`\rseeded ${done} facts of ${FACTS}`)
    }
    // HNSW: inserting into the index one vector at a time is what a server does, but in WebAssembly it
    // makes seeding take most of an hour; the index is built once after seeding instead
    const sql = yield* SqlClient.SqlClient
    if (PG_URL === "pglite") yield* sql.unsafe(`DROP INDEX IF EXISTS ${hnswIndexName(DIMS)}`)
    const seeded = yield* seedDataset("bench", FACTS, ENTITIES, DIMS, progress)
    process.stderr.write("\n")
    yield* seedDataset("other", 1000, 200, DIMS)
    if (PG_URL === "pglite") {
      const built = performance.now()
      yield* sql`SET maintenance_work_mem = '1GB'`
      yield* makePostgresVectorStore(sql, DIMS)
      console.log(`HNSW index built in ${f((performance.now() - built) / 1000)} s`)
    }
    console.log(
      `seeded ${FACTS.toLocaleString("en-US")} facts, ${ENTITIES.toLocaleString("en-US")} entities in ${
        f((performance.now() - seedStart) / 1000)
      } s`
    )
    const deps = yield* readDeps
    const qs = questions(seeded.names, QUERIES + 20)
    const plain = yield* timeSearches({ ...deps, embeddings: null }, qs, 1)
    const textOnly = yield* timeSearches({ ...deps, embeddings: null }, qs, 0)
    const withVectors = yield* timeSearches(deps, qs, 1)
    console.log(
      `\nsearch, limit 10, ${QUERIES} questions after 20 warm-up, ${DIMS}-dimension hash embeddings in ${
        (yield* (yield* VectorStore).health).search
      }`
    )
    console.log("| sources | p50 ms | p95 ms | mean ms | facts returned (mean) |")
    console.log("| --- | --- | --- | --- | --- |")
    for (
      const [name, r] of [
        ["full text only (hops 0)", textOnly],
        ["full text + graph (hops 1), no vectors", plain],
        ["full text + vectors + graph (hops 1)", withVectors]
      ] as const
    ) {
      console.log(`| ${name} | ${f(r.p50)} | ${f(r.p95)} | ${f(r.mean)} | ${r.facts.toFixed(1)} |`)
    }
    console.log(
      `\nexport of the whole dataset (include_expired): ${FACTS.toLocaleString("en-US")} facts, ${
        ENTITIES.toLocaleString("en-US")
      } entities, ${Math.floor(FACTS / 10).toLocaleString("en-US")} artifacts`
    )
    console.log("| format | seconds | facts/s | MB | MB/s | RSS growth MiB |")
    console.log("| --- | --- | --- | --- | --- | --- |")
    for (const format of ["json", "graphml"] as const) {
      const r = yield* timeExport(deps, format)
      const mb = r.bytes / 1e6
      console.log(
        `| ${format} | ${r.seconds.toFixed(1)} | ${Math.round(FACTS / r.seconds).toLocaleString("en-US")} | ${
          f(mb)
        } | ${f(mb / r.seconds)} | ${Math.round(r.peakDelta)} |`
      )
    }
  }).pipe(
    Effect.provide(
      Layer.mergeAll(vectorStore, HashEmbeddings.layer({ dimensions: DIMS })).pipe(Layer.provideMerge(storage))
    )
  )

const dir = mkdtempSync(join(tmpdir(), "gligabao-bench-search-"))
// `--pg auto`: a throwaway cluster, as the tests start one
const cluster = PG_URL === "auto" ? await startPgCluster() : undefined
const pglite = PG_URL === "pglite" ? await startPglite() : undefined
const pgUrl = cluster?.adminUrl ?? pglite?.url ?? PG_URL
if (pglite !== undefined) await Effect.runPromise(Effect.scoped(Layer.build(PgMigratedLive(Redacted.make(pgUrl)))))
const program = pgUrl === ""
  ? main(SqliteLive(join(dir, "bench.db")), SqliteVecStoreLive(DIMS))
  : main(
    // PGlite is one backend, and pglite-socket interleaves two connections' extended-protocol
    // messages: one connection (migrated first, since the migration's lock holds one of its own)
    pglite === undefined
      ? PgLive(Redacted.make(pgUrl))
      : RepositoriesLive.pipe(Layer.provideMerge(PgClientLive(Redacted.make(pgUrl), { maxConnections: 1 }))),
    VECTORS === "sqlite" ? SqliteVecFileStoreLive(join(dir, "vectors.db"), DIMS) : PostgresVectorStoreLive(DIMS)
  )

console.log(
  `${
    pgUrl === "" ? "SQLite (WAL file)" : pglite ? "PostgreSQL (PGlite with pgvector)" : "PostgreSQL"
  }, Node ${process.version}`
)
await Effect.runPromise(program as Effect.Effect<void, unknown, never>)
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => {
    cluster?.stop()
    void pglite?.stop()
    if (KEEP) console.log(`kept ${dir}`)
    else rmSync(dir, { recursive: true, force: true })
  })
