/**
 * Full-text search in a large dataset and among many small ones, in process (BENCHMARKS.md,
 * "Full text per dataset at scale"). Seeds a SQLite file directly (datasets through
 * DatasetsRepo.getOrCreate, which 0013's engine needs for its tables; rows by plain SQL in
 * Database transactions, whose commit indexes them), then times warm searches on the reader
 * (SearchRepo.matchFacts / matchEntities, limit 10): the median of `--runs` after 5 unmeasured.
 *
 * Layouts (`--layout`, comma-separated; all by default):
 * - large:       one dataset of 100,000 facts and 20,000 entities;
 * - large+small: the same plus 1,000 datasets of 100 facts and 20 entities (half the facts elsewhere);
 * - small:       1,000 datasets of 100 facts and 20 entities, dataset 500 searched.
 *
 * Only the storage layer's public API is used, so the same file runs on older trees (copy it
 * into their scripts/).
 *
 *   node node_modules/tsx/dist/cli.mjs scripts/bench-fulltext-large.ts [--layout large] [--runs 50] [--facts 100000]
 *     [--keep /tmp/large.db]
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteLive } from "../layers/sql/index.js"
import { Database } from "../src/services/Database.js"
import { DatasetsRepo } from "../src/services/DatasetsRepo.js"
import { type ReadFilters, SearchRepo } from "../src/services/SearchRepo.js"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback
}
const RUNS = Number(arg("runs", "50"))
const LAYOUTS = arg("layout", "large,large+small,small").split(",")
/** the large dataset's facts (entities a fifth); smaller for a quick check of the script */
const LARGE = Number(arg("facts", "100000"))
/** keep the last layout's file here (for raw experiments), instead of a deleted temp directory */
const KEEP = arg("keep", "")

// a deterministic generator, so runs and trees are comparable
let state = 42
const random = () => {
  state = (state * 1664525 + 1013904223) % 2 ** 32
  return state / 2 ** 32
}
const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!

const FIRST = ["Alice", "Bob", "Carol", "Dmitri", "Emma", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena"]
  .concat(["Maya", "Nils", "Olga", "Pedro", "Quinn", "Rosa", "Sami", "Tara"])
const LAST = ["Smith", "Novak", "Okafor", "Tanaka", "Garcia", "Müller", "Rossi", "Haddad", "Larsen", "Kowalski"]
  .concat(["Silva", "Dubois", "Nakamura", "Ivanova", "Cohen", "Mensah", "Fischer", "Popescu", "Ahmed", "Berg"])
const RELATION = ["works with", "lives near", "knows", "works at the office of", "lives in the house of", "met"]
  .concat(["manages", "advises", "studied with", "visited"])
const CITY = ["Berlin", "Paris", "Lagos", "Tokyo", "Lima", "Oslo", "Cairo", "Quito", "Hanoi", "Dakar"]
/** one fact in this many holds the rare word */
const RARE_EVERY = 1_000

const person = () => `${pick(FIRST)} ${pick(LAST)}`
const factText = () =>
  `${person()} ${pick(RELATION)} ${person()} in ${pick(CITY)}${random() < 1 / RARE_EVERY ? " near Zanzibar" : ""}.`

const T0 = "2025-01-01T00:00:00.000Z"
const FILTERS: ReadFilters = {
  asOf: "2026-01-01T00:00:00.000Z",
  knownAt: null,
  includeExpired: false,
  sessionId: null,
  kind: null
}
/** rows a statement inserts (7 parameters a fact, under SQLite's 32,766) */
const CHUNK = 1_000

/** A dataset of `facts` facts among `entities` entities, written in transactions of 10,000 rows. */
const seedDataset = (name: string, facts: number, entities: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const database = yield* Database
    const dataset = yield* database.withTransaction((yield* DatasetsRepo).getOrCreate("bench", name, T0))
    const ids: Array<number> = []
    for (let done = 0; done < entities; done += 10_000) {
      yield* database.withTransaction(
        Effect.gen(function*() {
          for (let at = done; at < Math.min(entities, done + 10_000); at += CHUNK) {
            const n = Math.min(CHUNK, entities - at)
            const rows = yield* sql.unsafe<{ id: number }>(
              `INSERT INTO gb_entities (dataset_id, name, name_key, type, description, created_at, updated_at)
              VALUES ${Array.from({ length: n }, () => "(?, ?, ?, 'person', ?, ?, ?)").join(", ")} RETURNING id`,
              Array.from({ length: n }, (_, i) => {
                const name = person()
                return [dataset.id, name, `${name.toLowerCase()} ${at + i}`, `a person in ${pick(CITY)}`, T0, T0]
              }).flat()
            )
            ids.push(...rows.map((r) => Number(r.id)))
          }
        }).pipe(Effect.orDie)
      )
    }
    for (let done = 0; done < facts; done += 10_000) {
      yield* database.withTransaction(
        Effect.gen(function*() {
          for (let at = done; at < Math.min(facts, done + 10_000); at += CHUNK) {
            const n = Math.min(CHUNK, facts - at)
            yield* sql.unsafe(
              `INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, description, valid_at, created_at)
              VALUES ${Array.from({ length: n }, () => "(?, ?, ?, 'related_to', ?, ?, ?)").join(", ")}`,
              Array.from({ length: n }, () => [dataset.id, pick(ids), pick(ids), factText(), T0, T0]).flat()
            )
          }
        }).pipe(Effect.orDie)
      )
    }
    return dataset.id
  })

const QUERIES: ReadonlyArray<ReadonlyArray<string>> = [["alice"], ["smith", "works"], ["zanzibar"]]

const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const time = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 5; i++) yield* effect
    const times: Array<number> = []
    let found = 0
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now()
      const result = yield* effect
      times.push(performance.now() - start)
      found = (result as ReadonlyArray<unknown>).length
    }
    return { ms: median(times), found }
  })

const run = (layout: string) =>
  Effect.gen(function*() {
    const seedStart = performance.now()
    let searched = 0
    if (layout !== "small") searched = yield* seedDataset("large", LARGE, LARGE / 5)
    if (layout !== "large") {
      for (let d = 0; d < 1_000; d++) {
        const id = yield* seedDataset(`small-${d}`, 100, 20)
        if (d === 500 && layout === "small") searched = id
      }
    }
    const seedSeconds = (performance.now() - seedStart) / 1000
    const search = yield* SearchRepo
    const lines: Array<string> = []
    for (const terms of QUERIES) {
      const facts = yield* time(search.matchFacts(searched, terms, FILTERS, 10))
      const entities = yield* time(search.matchEntities(searched, terms, FILTERS, 10))
      lines.push(
        `| ${layout} | ${terms.join(" ")} | ${facts.ms.toFixed(3)} (${facts.found}) | ${
          entities.ms.toFixed(3)
        } (${entities.found}) |`
      )
    }
    return { lines, seedSeconds }
  })

const main = Effect.gen(function*() {
  console.log(`runs ${RUNS}, load ${loadavg()[0]!.toFixed(1)}`)
  console.log("| layout | terms | facts ms (rows) | entities ms (rows) |")
  console.log("| --- | --- | --- | --- |")
  for (const layout of LAYOUTS) {
    const dir = mkdtempSync(join(tmpdir(), "gb-fts-large-"))
    try {
      const file = KEEP === "" ? join(dir, "bench.db") : KEEP
      const { lines, seedSeconds } = yield* run(layout).pipe(Effect.provide(SqliteLive(file)))
      for (const line of lines) console.log(line)
      console.error(`${layout}: seeded in ${seedSeconds.toFixed(1)} s`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
})

Effect.runPromise(Effect.scoped(main)).catch((error) => {
  console.error(error)
  process.exit(1)
})
