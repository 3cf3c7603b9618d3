/**
 * What no trace costs on SQLite (issue 22; BENCHMARKS.md, "No trace"):
 * `npx tsx scripts/bench-compact.ts [--edges 10000,100000] [--dims 256] [--rounds 5] [--forget 10]`.
 *
 * Per size, a SQLite file seeded as scripts/bench-search.ts seeds it (one dataset of --edges
 * facts among edges/5 entities through the repositories, hash-embedding vectors of every entity
 * and fact in sqlite-vec in the same file, a small second dataset), then:
 *
 * - the first `Database.compact` after seeding (every segment the seeding left merged);
 * - --rounds forget-sized rounds: the facts of one artifact (about --forget) and their vectors
 *   deleted, then the steps of `Database.compact` timed one by one (FTS5 'optimize' of the
 *   entities' and the facts' index, the WAL checkpointed and truncated), with the WAL's size
 *   before the checkpoint; then the whole `Database.compact` once more;
 * - the cost of secure_delete itself: the facts of 50 artifacts (about 500) and their vectors
 *   deleted with it on and with it off (alternating, five times each), per 1,000 facts.
 *
 * Then, on a file of its own, what secure_delete adds to the delete a remember always makes: its
 * queued request (the whole text) leaving the queue. A row of 1, 16 and 128 KB is inserted and
 * deleted, each in its own transaction as the server does, in alternating blocks with
 * secure_delete on and off; the median time of a delete.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { fullTextTable } from "../layers/sql/FullText.js"
import { SqliteLive } from "../layers/sql/index.js"
import { truncateWal } from "../layers/sql/SqliteCompact.js"
import { SqliteVecStoreLive } from "../layers/vectors/SqliteVecStore.js"
import { edgeVectorId, indexName } from "../src/pipeline/vectors.js"
import { Database } from "../src/services/Database.js"
import { VectorStore } from "../src/services/VectorStore.js"
import { resetRandom, seedDataset } from "./benchmarks/searchData.js"

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]!
}
const SIZES = arg("edges", "10000,100000").split(",").map(Number)
const DIMS = Number(arg("dims", "256"))
const ROUNDS = Number(arg("rounds", "5"))
const FORGET = Number(arg("forget", "10"))

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
const ms = (x: number) => x.toFixed(x < 10 ? 1 : 0)
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const fileSize = (file: string) => (existsSync(file) ? statSync(file).size : 0)

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = performance.now()
    yield* effect
    return performance.now() - start
  })

const run = (file: string, edges: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const database = yield* Database
    const vectors = yield* VectorStore
    resetRandom()
    const seedStart = performance.now()
    const seeded = yield* seedDataset("bench", edges, Math.max(50, Math.floor(edges / 5)), DIMS)
    yield* seedDataset("other", 1000, 200, DIMS)
    yield* sql`PRAGMA wal_checkpoint(TRUNCATE)`
    const seedSeconds = (performance.now() - seedStart) / 1000
    // one table a side, shared by the datasets (the small second one's rows in it too)
    const entitiesTable = fullTextTable("entities")
    const edgesTable = fullTextTable("edges")
    const [fts] = yield* sql.unsafe<{ entities: number; edges: number }>(`SELECT
      (SELECT sum(length(block)) FROM ${entitiesTable}_data) AS entities,
      (SELECT sum(length(block)) FROM ${edgesTable}_data) AS edges`)
    const dbBytes = fileSize(file)
    const first = yield* timed(database.compact)

    /** the facts of `artifact`, and their vectors, deleted as a forget would */
    const forgetArtifact = (artifact: number) =>
      Effect.gen(function*() {
        const ids = (yield* sql<{ id: number }>`SELECT id FROM gb_edges WHERE artifact_id = ${artifact}`)
          .map((r) => r.id)
        yield* database.withTransaction(sql`DELETE FROM gb_edges WHERE artifact_id = ${artifact}`)
        yield* vectors.delete(indexName(seeded.datasetId, "edges"), ids.map(edgeVectorId))
        return ids.length
      })
    const [firstArtifact] = yield* sql<
      { id: number }
    >`SELECT min(id) AS id FROM gb_artifacts WHERE dataset_id = ${seeded.datasetId}`
    const min = firstArtifact!.id
    const perArtifact = Math.max(1, Math.round(FORGET / 10))
    const rounds: Array<{ deleted: number; entities: number; edges: number; wal: number; checkpoint: number }> = []
    for (let r = 0; r < ROUNDS; r++) {
      let deleted = 0
      for (let k = 0; k < perArtifact; k++) deleted += yield* forgetArtifact(min + r * perArtifact + k)
      const entitiesMs = yield* timed(sql.unsafe(`INSERT INTO ${entitiesTable}(${entitiesTable}) VALUES ('optimize')`))
      const edgesMs = yield* timed(sql.unsafe(`INSERT INTO ${edgesTable}(${edgesTable}) VALUES ('optimize')`))
      const wal = fileSize(`${file}-wal`)
      const checkpoint = yield* timed(truncateWal(sql))
      rounds.push({ deleted, entities: entitiesMs, edges: edgesMs, wal, checkpoint })
    }
    yield* forgetArtifact(min + ROUNDS * perArtifact)
    const whole = yield* timed(database.compact)

    // secure_delete's own cost: 1,000 facts (and their vectors) deleted with it on, then off
    const bulk: { on: Array<number>; off: Array<number> } = { on: [], off: [] }
    let next = min + ROUNDS * perArtifact + 1
    for (let i = 0; i < 10; i++) {
      const mode = i % 2 === 0 ? "on" : "off"
      yield* sql.unsafe(`PRAGMA secure_delete = ${mode === "on" ? "ON" : "OFF"}`)
      const from = next
      next += 50
      const ids = (yield* sql<
        { id: number }
      >`SELECT id FROM gb_edges WHERE artifact_id >= ${from} AND artifact_id < ${next}`).map((r) => r.id)
      const took = yield* timed(Effect.gen(function*() {
        yield* database.withTransaction(
          sql`DELETE FROM gb_edges WHERE artifact_id >= ${from} AND artifact_id < ${next}`
        )
        yield* vectors.delete(indexName(seeded.datasetId, "edges"), ids.map(edgeVectorId))
      }))
      bulk[mode].push(took / Math.max(1, ids.length) * 1000)
    }
    yield* sql`PRAGMA secure_delete = ON`
    return { seedSeconds, dbBytes, fts: fts!, first, rounds, whole, bulk }
  })

/** µs of one committed delete of a `kb` KB row, secure_delete on and off (median of blocks) */
const queueDeletes = (file: string, kb: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE IF NOT EXISTS bench_queue (id INTEGER PRIMARY KEY, request TEXT NOT NULL)`
    const text = "lorem ipsum dolor sit amet ".repeat(Math.ceil((kb * 1024) / 27)).slice(0, kb * 1024)
    const blocks: { on: Array<number>; off: Array<number> } = { on: [], off: [] }
    for (let b = 0; b < 10; b++) {
      const mode = b % 2 === 0 ? "on" : "off"
      yield* sql.unsafe(`PRAGMA secure_delete = ${mode === "on" ? "ON" : "OFF"}`)
      const times: Array<number> = []
      for (let i = 0; i < 200; i++) {
        const [row] = yield* sql<{ id: number }>`INSERT INTO bench_queue (request) VALUES (${text}) RETURNING id`
        times.push(yield* timed(sql`DELETE FROM bench_queue WHERE id = ${row!.id}`))
      }
      if (b >= 2) blocks[mode].push(median(times) * 1000)
    }
    yield* sql`PRAGMA secure_delete = ON`
    yield* sql`PRAGMA wal_checkpoint(TRUNCATE)`
    return { on: median(blocks.on), off: median(blocks.off), file }
  })

const main = Effect.gen(function*() {
  console.log(`load average at the start: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`)
  console.log(
    "\n| facts | database MB | FTS5 index MB (entities / facts) | first compact after seeding ms | " +
      "optimize entities ms | optimize facts ms | WAL before checkpoint MB | checkpoint ms | compact ms (median of rounds) | " +
      "Database.compact once more ms | delete of facts + vectors, secure_delete on / off, ms per 1,000 facts |"
  )
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
  for (const edges of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), "gligabao-compact-"))
    const file = join(dir, "gligabao.db")
    try {
      const r = yield* run(file, edges).pipe(
        Effect.provide(
          SqliteVecStoreLive(DIMS, { filename: file, mmapBytes: 0 }).pipe(Layer.provideMerge(SqliteLive(file)))
        )
      )
      const total = r.rounds.map((x) => x.entities + x.edges + x.checkpoint)
      console.log(
        `| ${edges.toLocaleString("en-US")} | ${mb(r.dbBytes)} | ${mb(r.fts.entities)} / ${mb(r.fts.edges)} | ${
          ms(r.first)
        } | ${ms(median(r.rounds.map((x) => x.entities)))} | ${ms(median(r.rounds.map((x) => x.edges)))} | ${
          mb(median(r.rounds.map((x) => x.wal)))
        } | ${ms(median(r.rounds.map((x) => x.checkpoint)))} | ${ms(median(total))} | ${ms(r.whole)} | ${
          ms(median(r.bulk.on))
        } / ${ms(median(r.bulk.off))} |`
      )
      console.error(
        `${edges}: seeded in ${r.seedSeconds.toFixed(0)} s; ${
          r.rounds.map((x) => x.deleted).join(", ")
        } facts a round; per 1,000 facts on ${r.bulk.on.map(ms).join(", ")}, off ${r.bulk.off.map(ms).join(", ")}`
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  console.log("\n| queued request deleted | secure_delete on µs | off µs |")
  console.log("| --- | --- | --- |")
  const dir = mkdtempSync(join(tmpdir(), "gligabao-compact-"))
  try {
    const file = join(dir, "queue.db")
    for (const kb of [1, 16, 128]) {
      const r = yield* queueDeletes(file, kb).pipe(Effect.provide(SqliteLive(file)))
      console.log(`| ${kb} KB | ${r.on.toFixed(0)} | ${r.off.toFixed(0)} |`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  console.log(`\nload average at the end: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`)
})

Effect.runPromise(main).catch((error) => {
  console.error(error)
  process.exit(1)
})
