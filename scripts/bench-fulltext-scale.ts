/**
 * SQLite's full-text index at scale (issue 38, item 3; docs design debt 4; docs/FULLTEXT-ENGINE.md):
 * `node node_modules/tsx/dist/cli.mjs scripts/bench-fulltext-scale.ts [--datasets 1000,10000] [--opens 3]
 * [--compacts 3] [--seed-seconds 150] [--keep]`.
 *
 * Per size N, a fresh SQLite file in a temp directory is seeded through the server's own code:
 * `SqliteLive` (migrations), then N datasets of N users, each created as a remember's store
 * transaction creates it (`Database.withTransaction` around `DatasetsRepo.getOrCreate`); every
 * tenth of them also gets, in that transaction, one artifact, four entities and five facts
 * (indexed by the pre-commit flush, FullTextIndex.flush). The seeding stops after --seed-seconds
 * and what was created is measured (the table says so): under 0013's engine, where each dataset
 * created two FTS5 tables, creation slowed as the schema grew.
 * Then:
 *
 * - the schema: `sqlite_schema` rows (all, and the `gb_fts_*` ones), the bytes of their SQL, the
 *   file's size, `PRAGMA page_count` and the pages the `gb_fts_*` tables hold (dbstat);
 * - --opens cold opens, each in a child process of its own (so that its RSS is the open's alone):
 *   `SqliteLive` built as the server builds it (migrations checked, the startup flush, the reader
 *   connection) and `Database.health` answered, which is when the server is ready; then, apart,
 *   the flush once more in a transaction (its own share of the open), the first full-text search
 *   on the read connection (which parses the schema there), RSS, one more dataset created and
 *   the next search on the reader; then the warm search latency, the median of --searches
 *   searches of dataset 1 for a word every filled dataset holds ("acme") and for two words;
 * - `Database.compact` as a forget runs it (FTS5 'optimize' of the full-text tables, then the
 *   WAL truncated): the first one after seeding, then --compacts times a forget-sized round
 *   (one fact deleted in one dataset, then `Database.compact`).
 *
 * The vector store is left out: its vec0 tables are one set per dimension count, not per dataset
 * (though its reader thread's connection parses the same schema as the search reader does). The
 * page cache is warm: the file was just written. Figures and verdict: BENCHMARKS.md, "Full text
 * per dataset at scale (issue 38)".
 */
import { SqlClient } from "@effect/sql"
import BetterSqlite3 from "better-sqlite3"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { makeFullTextIndex } from "../layers/sql/FullText.js"
import { SqliteLive } from "../layers/sql/index.js"
import { truncateWal } from "../layers/sql/SqliteCompact.js"
import { Database } from "../src/services/Database.js"
import { DatasetsRepo } from "../src/services/DatasetsRepo.js"
import { GraphRepo } from "../src/services/GraphRepo.js"
import { type ReadFilters, SearchRepo } from "../src/services/SearchRepo.js"

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]!
}
const SIZES = arg("datasets", "1000,10000").split(",").map(Number)
const OPENS = Number(arg("opens", "3"))
const COMPACTS = Number(arg("compacts", "3"))
const SEARCHES = Number(arg("searches", "200"))
const KEEP = process.argv.includes("--keep")
/** seeding stops here (the datasets created so far are measured): creation slows as the schema grows */
const SEED_SECONDS = Number(arg("seed-seconds", "150"))
/** every FILLED-th dataset gets a few rows */
const FILLED = 10

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const ms = (x: number) => x.toFixed(x < 10 ? 1 : 0)
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
const load = () => loadavg().map((x) => x.toFixed(2)).join(" ")
const NOW = "2026-12-05T00:00:00.000Z"
const FILTERS: ReadFilters = { asOf: NOW, knownAt: null, includeExpired: false, sessionId: null, kind: null }

const CITIES = ["Berlin", "Paris", "Lagos", "Tokyo", "Lima", "Oslo"]

/** The dataset of user `i`, created as a remember's store transaction creates it, with rows when `filled`. */
const createDataset = (i: number, filled: boolean) =>
  Effect.gen(function*() {
    const database = yield* Database
    const datasets = yield* DatasetsRepo
    const graph = yield* GraphRepo
    return yield* database.withTransaction(Effect.gen(function*() {
      const dataset = yield* datasets.getOrCreate(`user-${i}`, "main", NOW)
      if (!filled) return dataset.id
      const artifact = yield* graph.insertArtifact({
        dataset_id: dataset.id,
        kind: "knowledge",
        text: `Alice ${i} lives in Berlin and works at Acme.`,
        parent_id: null,
        session_id: null,
        valid_at: NOW,
        created_at: NOW,
        inference_id: null,
        query: null,
        metadata: null
      })
      const names = [`Alice ${i}`, `Bob ${i}`, "Acme Labs", CITIES[i % CITIES.length]!]
      const entities = yield* graph.upsertEntities(
        dataset.id,
        names.map((name, k) => ({
          name,
          name_key: name.toLowerCase(),
          type: k < 2 ? "person" : k === 2 ? "organization" : "place",
          description: `${name}, seen in text ${i}`,
          model_id: null,
          created_at: NOW
        }))
      )
      const [alice, bob, acme, city] = entities.map((e) => e.id)
      const facts: ReadonlyArray<readonly [number, string, number, string]> = [
        [alice!, "lives in", city!, `${names[0]} lives in ${names[3]}`],
        [alice!, "works at", acme!, `${names[0]} works at Acme Labs`],
        [bob!, "knows", alice!, `${names[1]} knows ${names[0]}`],
        [bob!, "works at", acme!, `${names[1]} works at Acme Labs on rockets`],
        [bob!, "visited", city!, `${names[1]} visited ${names[3]} for coffee`]
      ]
      yield* graph.insertEdges(facts.map(([source_id, relation, target_id, description]) => ({
        dataset_id: dataset.id,
        source_id,
        target_id,
        relation,
        description,
        valid_at: NOW,
        invalid_at: null,
        created_at: NOW,
        expired_at: null,
        artifact_id: artifact.id,
        model_id: null
      })))
      return dataset.id
    }))
  })

/** Seeds N datasets; the time of every 1% of them, to see creation slow down as the schema grows. */
const seed = (file: string, n: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const step = Math.max(1, Math.floor(n / 100))
    const slices: Array<number> = []
    let sliceStart = performance.now()
    const start = sliceStart
    let created = 0
    while (created < n && performance.now() - start < SEED_SECONDS * 1000) {
      yield* createDataset(created, created % FILLED === 0)
      created++
      if (created % step === 0) {
        const now = performance.now()
        slices.push((now - sliceStart) / step)
        sliceStart = now
        if (created % (step * 5) === 0) {
          console.error(
            `  ${n}: ${created} datasets, ${((now - start) / 1000).toFixed(0)} s, a dataset ${
              ms(slices.at(-1)!)
            } ms, load ${load()}`
          )
        }
      }
    }
    yield* truncateWal(sql)
    return { created, seconds: (performance.now() - start) / 1000, first: slices[0]!, last: slices.at(-1)! }
  }).pipe(Effect.provide(SqliteLive(file)))

/** The file's schema, read with a plain connection. */
const schemaOf = (file: string) => {
  const db = new BetterSqlite3(file, { readonly: true })
  try {
    const one = <T>(query: string) => db.prepare(query).get() as T
    const rows = one<{ n: number; bytes: number }>(`SELECT count(*) AS n, sum(length(sql)) AS bytes FROM sqlite_schema`)
    const fts = one<{ n: number }>(`SELECT count(*) AS n FROM sqlite_schema WHERE name GLOB 'gb_fts_*'`)
    const pages = one<{ page_count: number }>(`PRAGMA page_count`).page_count
    const pageSize = one<{ page_size: number }>(`PRAGMA page_size`).page_size
    let ftsPages: number | undefined
    try {
      ftsPages = one<{ n: number }>(`SELECT count(*) AS n FROM dbstat WHERE name GLOB 'gb_fts_*'`).n
    } catch {
      ftsPages = undefined
    }
    return { rows: rows.n, sqlBytes: rows.bytes, ftsRows: fts.n, pages, pageSize, ftsPages, bytes: statSync(file).size }
  } finally {
    db.close()
  }
}

/** Wall and CPU (user + system, every thread of the process) milliseconds. */
interface Took {
  readonly wall: number
  readonly cpu: number
}

const cpuMs = () => {
  const { system, user } = process.cpuUsage()
  return (user + system) / 1000
}

const measured = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const wall = performance.now()
    const cpu = cpuMs()
    const value = yield* effect
    return [{ wall: performance.now() - wall, cpu: cpuMs() - cpu } satisfies Took, value] as const
  })

interface Opened {
  readonly ready: Took
  readonly ensure: Took
  readonly firstSearch: Took
  readonly create: Took
  readonly reloadSearch: Took
  readonly rssBefore: number
  readonly rssReady: number
  readonly rssSearched: number
  readonly common: number
  readonly twoWords: number
}

const SEARCH_TERMS = ["alice", "berlin"]

/** One open as the server's startup does it (run in a child process: `--open FILE`). */
const openOnce = (file: string, datasetId: number, extra: number) =>
  Effect.gen(function*() {
    const rssBefore = process.memoryUsage().rss
    const scope = yield* Scope.make()
    const [ready, context] = yield* measured(Effect.gen(function*() {
      const context = yield* Layer.buildWithScope(SqliteLive(file), scope)
      yield* Context.get(context, Database).health
      return context
    }))
    const rssReady = process.memoryUsage().rss
    const database = Context.get(context, Database)
    const sql = Context.get(context, SqlClient.SqlClient)
    const search = Context.get(context, SearchRepo)
    const datasets = Context.get(context, DatasetsRepo)
    const [ensure] = yield* measured(sql.withTransaction(makeFullTextIndex(sql).flush))
    const [firstSearch, found] = yield* measured(search.matchFacts(datasetId, SEARCH_TERMS, FILTERS, 10))
    if (found.length === 0) return yield* Effect.dieMessage(`no match in dataset ${datasetId}`)
    const rssSearched = process.memoryUsage().rss
    const [create] = yield* measured(
      database.withTransaction(datasets.getOrCreate(`late-user-${extra}`, "main", NOW))
    )
    const [reloadSearch] = yield* measured(search.matchFacts(datasetId, SEARCH_TERMS, FILTERS, 10))
    /** the median ms of SEARCHES warm searches of `terms` */
    const latency = (terms: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const times: Array<number> = []
        for (let k = 0; k < SEARCHES; k++) {
          const [took, hits] = yield* measured(search.matchFacts(datasetId, terms, FILTERS, 10))
          if (hits.length === 0) return yield* Effect.dieMessage(`no match for ${terms.join(" ")}`)
          times.push(took.wall)
        }
        return median(times)
      })
    const common = yield* latency(["acme"])
    const twoWords = yield* latency(SEARCH_TERMS)
    yield* Scope.close(scope, Exit.void)
    return {
      ready,
      ensure,
      firstSearch,
      create,
      reloadSearch,
      rssBefore,
      rssReady,
      rssSearched,
      common,
      twoWords
    } satisfies Opened
  })

const openInChild = (file: string, datasetId: number, extra: number): Opened => {
  const child = spawnSync(
    process.execPath,
    [
      ...process.execArgv,
      fileURLToPath(import.meta.url),
      "--open",
      file,
      "--dataset",
      String(datasetId),
      "--extra",
      String(extra)
    ],
    { encoding: "utf8", maxBuffer: 16 * 2 ** 20 }
  )
  if (child.status !== 0) throw new Error(`open failed: ${child.stderr}`)
  return JSON.parse(child.stdout.trim().split("\n").at(-1)!) as Opened
}

/** The first compaction after seeding, then forget-sized rounds: one fact deleted, then `Database.compact`. */
const compactions = (file: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const database = yield* Database
    const [tables] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_schema
      WHERE type = 'table' AND name GLOB 'gb_fts_*' AND sql LIKE 'CREATE VIRTUAL TABLE%'`
    const [first] = yield* measured(database.compact)
    const rounds: Array<Took> = []
    for (let r = 0; r < COMPACTS; r++) {
      const [fact] = yield* sql<{ id: number }>`SELECT max(id) AS id FROM gb_edges`
      yield* database.withTransaction(sql`DELETE FROM gb_edges WHERE id = ${fact!.id}`)
      const [took] = yield* measured(database.compact)
      rounds.push(took)
    }
    return { tables: Number(tables!.n), first, rounds }
  }).pipe(Effect.provide(SqliteLive(file)))

/** `wall (cpu)` of the median of each */
const tookOf = (xs: ReadonlyArray<Took>) => `${ms(median(xs.map((x) => x.wall)))} (${ms(median(xs.map((x) => x.cpu)))})`
const count = (x: number) => x.toLocaleString("en-US")

const main = Effect.gen(function*() {
  console.log(`load average at the start: ${load()}`)
  const schemaRows: Array<string> = []
  const timeRows: Array<string> = []
  for (const n of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), "gligabao-fts-scale-"))
    const file = join(dir, "gligabao.db")
    try {
      const loadBefore = load()
      const seeded = yield* seed(file, n)
      const schema = schemaOf(file)
      console.error(
        `${seeded.created} of ${n}: seeded in ${seeded.seconds.toFixed(0)} s (a dataset ${
          ms(seeded.first)
        } ms in the first 1%, ${ms(seeded.last)} ms in the last); ${JSON.stringify(schema)}`
      )
      const opens: Array<Opened> = []
      for (let k = 0; k < OPENS; k++) {
        const opened = openInChild(file, 1, k)
        console.error(`  open ${k + 1}: ${JSON.stringify(opened)}`)
        opens.push(opened)
      }
      const compacted = yield* compactions(file)
      console.error(`  compaction: ${JSON.stringify(compacted)}; load ${load()}`)
      const label = `${count(seeded.created)}${
        seeded.created < n ? ` (of ${count(n)}: stopped after ${SEED_SECONDS} s)` : ""
      }`
      const rss = (f: (o: Opened) => number) => mb(median(opens.map(f)))
      schemaRows.push(
        `| ${label} | ${seeded.seconds.toFixed(0)} s; ${ms(seeded.first)} → ${ms(seeded.last)} ms | ${
          count(schema.rows)
        } (${count(schema.ftsRows)}) | ${mb(schema.sqlBytes)} | ${mb(schema.bytes)} | ${
          count(schema.pages)
        } × ${schema.pageSize} (${schema.ftsPages === undefined ? "?" : count(schema.ftsPages)}) | ${
          count(compacted.tables)
        } |`
      )
      timeRows.push(
        `| ${label} | ${loadBefore} | ${tookOf(opens.map((o) => o.ready))} | ${tookOf(opens.map((o) => o.ensure))} | ${
          tookOf(opens.map((o) => o.firstSearch))
        } | ${rss((o) => o.rssBefore)} → ${rss((o) => o.rssReady)} → ${rss((o) => o.rssSearched)} | ${
          tookOf(opens.map((o) => o.create))
        } | ${tookOf(opens.map((o) => o.reloadSearch))} | ${tookOf([compacted.first])} | ${
          tookOf(compacted.rounds)
        } | ${(median(opens.map((o) => o.common))).toFixed(3)} | ${(median(opens.map((o) => o.twoWords))).toFixed(3)} |`
      )
    } finally {
      if (KEEP) console.error(`kept ${file}`)
      else rmSync(dir, { recursive: true, force: true })
    }
  }
  console.log(
    "\n| datasets | seeding; a dataset's creation, first 1% → last 1% | sqlite_schema rows (gb_fts_*) | " +
      "schema SQL MB | file MB | page_count × page_size (pages of gb_fts_*) | FTS5 tables |"
  )
  console.log("| --- | --- | --- | --- | --- | --- | --- |")
  for (const line of schemaRows) console.log(line)
  console.log(
    `\nms wall (CPU), medians: ${OPENS} opens in child processes, ${COMPACTS} forget-sized compactions\n` +
      "\n| datasets | load at start | open to ready | flush again | first search (reader) | " +
      "RSS MB before → ready → searched | one more dataset | next search on the reader | " +
      "first compact | compact after a forget | warm search \"acme\" | warm search \"alice berlin\" |"
  )
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
  for (const line of timeRows) console.log(line)
  console.log(`\nload average at the end: ${load()}`)
})

if (process.argv.includes("--open")) {
  Effect.runPromise(openOnce(arg("open", ""), Number(arg("dataset", "1")), Number(arg("extra", "0")))).then(
    (opened) => console.log(JSON.stringify(opened)),
    (error) => {
      console.error(error)
      process.exit(1)
    }
  )
} else {
  Effect.runPromise(main).catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
