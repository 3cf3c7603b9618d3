/**
 * SQLite's two-step full-text match (the dataset's FTS table's best candidates, then the
 * filters) returns exactly what a reference computed term by term returns (every match scored
 * with the dataset's own IDF, filtered, sorted), whether the fast path answers or the fallback
 * must run; another dataset's rows change nothing; and the join reads the base table by primary
 * key.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import Sqlite from "better-sqlite3"
import { Effect, Runtime } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll } from "vitest"
import { fts5Idf, FULL_TEXT_COLUMNS, termIdf, TOKENIZE } from "../../layers/sql/FullText.js"
import { SqliteLive } from "../../layers/sql/index.js"
import { RETRY_FAST_EVERY, WEIGHTED_IDF_ROWS } from "../../layers/sql/repositories/Search.js"
import { Database } from "../../src/services/Database.js"
import { type ReadFilters, SearchRepo, type TextMatch } from "../../src/services/SearchRepo.js"

/** Every SQL text better-sqlite3 runs, to tell which path answered and to explain it. */
const captured: Array<string> = []
const statement = Object.getPrototypeOf(new Sqlite(":memory:").prepare("SELECT 1"))
const originals = Object.fromEntries(["all", "run", "get"].map((m) => [m, statement[m]]))
beforeAll(() => {
  for (const [name, original] of Object.entries(originals)) {
    statement[name] = function(this: { source: string }, ...args: Array<unknown>) {
      captured.push(this.source)
      return original.apply(this, args)
    }
  }
})
afterAll(() => Object.assign(statement, originals))

const isTwoStep = (s: string) => s.includes("best AS MATERIALIZED (")
/** the single statement over the whole match set (what the fallback runs) */
const isFull = (s: string) => /FROM scored CROSS JOIN gb_(edges|entities) [en]\b/.test(s)
/** runs `effect`, counting the fallback statements it ran */
const countingFallbacks = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    captured.length = 0
    const result = yield* effect
    return { result, fullRuns: captured.filter(isFull).length, twoStepRuns: captured.filter(isTwoStep).length }
  })

/** a time `day` days after a fixed origin, in the stored format */
const day = (n: number) => new Date(Date.UTC(2025, 0, 1) + n * 86_400_000).toISOString()

const NOW: ReadFilters = { asOf: day(100), knownAt: null, includeExpired: false, sessionId: null, kind: null }

interface Fact {
  readonly text: string
  readonly validAt?: number
  readonly invalidAt?: number | null | undefined
  readonly createdAt?: number
  readonly expiredAt?: number | null | undefined
  readonly session?: string | null
}
interface Entity {
  readonly name: string
  readonly description: string
  readonly createdAt?: number
  readonly session?: string | null
}

/** every row gone, in a Database transaction (whose commit takes them out of the full-text index) */
const wipe = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* (yield* Database).withTransaction(
    Effect.forEach(
      ["gb_edge_sessions", "gb_entity_sessions", "gb_edges", "gb_entities", "gb_datasets"],
      (table) => sql.unsafe(`DELETE FROM ${table}`),
      { discard: true }
    ).pipe(Effect.orDie)
  )
})

let nextId = 1
/**
 * A dataset with its facts and entities (ids ascending in list order), written by plain SQL in a
 * Database transaction (whose commit indexes them); the dataset's id.
 */
const seed = (name: string, facts: ReadonlyArray<Fact>, entities: ReadonlyArray<Entity> = []) =>
  Effect.flatMap(Database, (database) => database.withTransaction(seedRows(name, facts, entities)))

const seedRows = (name: string, facts: ReadonlyArray<Fact>, entities: ReadonlyArray<Entity>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [dataset] = yield* sql<{ id: number }>`INSERT INTO gb_datasets (user_id, name, created_at)
      VALUES ('u', ${name}, ${day(0)}) RETURNING id`
    const datasetId = dataset!.id
    // two endpoints, named outside every vocabulary, for all the facts
    const endpoint = () =>
      Effect.gen(function*() {
        const id = nextId++
        yield* sql`INSERT INTO gb_entities ${
          sql.insert({
            id,
            dataset_id: datasetId,
            name: "zzz",
            name_key: `zzz${id}`,
            type: "t",
            description: "",
            created_at: day(0),
            updated_at: day(0)
          })
        }`
        return id
      })
    const source = yield* endpoint()
    const target = yield* endpoint()
    for (const e of entities) {
      const id = nextId++
      yield* sql`INSERT INTO gb_entities ${
        sql.insert({
          id,
          dataset_id: datasetId,
          name: e.name,
          name_key: `k${id}`,
          type: "t",
          description: e.description,
          created_at: day(e.createdAt ?? 0),
          updated_at: day(e.createdAt ?? 0)
        })
      }`
      if (e.session != null) {
        yield* sql`INSERT INTO gb_entity_sessions (entity_id, session_id) VALUES (${id}, ${e.session})`
      }
    }
    for (const f of facts) {
      const id = nextId++
      yield* sql`INSERT INTO gb_edges ${
        sql.insert({
          id,
          dataset_id: datasetId,
          source_id: source,
          target_id: target,
          relation: "r",
          description: f.text,
          valid_at: day(f.validAt ?? 0),
          invalid_at: f.invalidAt == null ? null : day(f.invalidAt),
          created_at: day(f.createdAt ?? 0),
          expired_at: f.expiredAt == null ? null : day(f.expiredAt)
        })
      }`
      if (f.session != null) yield* sql`INSERT INTO gb_edge_sessions (edge_id, session_id) VALUES (${id}, ${f.session})`
    }
    return datasetId
  }).pipe(Effect.orDie)

/** factFilters / entityFilters of the repository, for the filters these tests vary */
const referenceFilters = (
  alias: "e" | "n",
  f: ReadFilters
): { readonly sql: string; readonly params: Array<unknown> } => {
  const clauses: Array<string> = []
  const params: Array<unknown> = []
  if (alias === "e") {
    clauses.push("e.valid_at <= ?")
    params.push(f.asOf)
  }
  if (f.knownAt !== null) {
    clauses.push(`${alias}.created_at <= ?`)
    params.push(f.knownAt)
  }
  if (alias === "e" && !f.includeExpired) {
    if (f.knownAt === null) {
      clauses.push("(e.invalid_at IS NULL OR e.invalid_at > ?)")
      params.push(f.asOf)
    } else {
      const ended = "(CASE WHEN e.expired_at > ? THEN NULL ELSE e.invalid_at END)"
      clauses.push(`(${ended} IS NULL OR ${ended} > ?)`)
      params.push(f.knownAt, f.knownAt, f.asOf)
    }
  }
  if (f.sessionId !== null) {
    clauses.push(
      alias === "e"
        ? "EXISTS (SELECT 1 FROM gb_edge_sessions es WHERE es.edge_id = e.id AND es.session_id = ?)"
        : "EXISTS (SELECT 1 FROM gb_entity_sessions ns WHERE ns.entity_id = n.id AND ns.session_id = ?)"
    )
    params.push(f.sessionId)
  }
  return { sql: clauses.length === 0 ? "1=1" : clauses.join(" AND "), params }
}

/**
 * The match computed apart: each term's bm25 in an FTS5 table of the dataset's rows alone (built
 * here, in temp), rescaled from FTS5's
 * IDF to `termIdf` (N the dataset's rows, n the term's) when there are several terms, summed per
 * row; the rows that pass the filters, best first, then by id.
 */
const reference = (alias: "e" | "n", datasetId: number, terms: ReadonlyArray<string>, f: ReadFilters, limit: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fts = "temp.reference_fts"
    const base = alias === "e" ? "gb_edges" : "gb_entities"
    const columns = FULL_TEXT_COLUMNS[alias === "e" ? "edges" : "entities"]
    yield* sql.unsafe(`CREATE VIRTUAL TABLE ${fts} USING fts5(${columns}, tokenize = '${TOKENIZE}')`)
    yield* sql.unsafe(
      `INSERT INTO ${fts} (rowid, ${columns}) SELECT id, ${columns} FROM ${base} WHERE dataset_id = ? ORDER BY id`,
      [datasetId]
    )
    const weights = alias === "n" ? ", 4.0, 1.0" : ""
    const counted = yield* sql.unsafe<{ rows: number }>(`SELECT COUNT(*) AS rows FROM ${base} WHERE dataset_id = ?`, [
      datasetId
    ])
    const N = Number(counted[0]!.rows)
    const scores = new Map<number, number>()
    for (const term of terms) {
      const hits = yield* sql.unsafe<{ id: number; b: number }>(
        `SELECT rowid AS id, -bm25(reference_fts${weights}) AS b FROM ${fts} WHERE reference_fts MATCH ?`,
        [`"${term}"`]
      )
      const n = hits.length
      const weight = terms.length === 1 || N > WEIGHTED_IDF_ROWS ? 1 : termIdf(N, n) / fts5Idf(N, n)
      for (const { b, id } of hits) scores.set(id, (scores.get(id) ?? 0) + b * weight)
    }
    yield* sql.unsafe(`DROP TABLE ${fts}`)
    const filters = referenceFilters(alias, f)
    const passing = yield* sql.unsafe<{ id: number }>(
      `SELECT ${alias}.id AS id FROM ${base} ${alias} WHERE ${alias}.dataset_id = ? AND ${filters.sql}`,
      [datasetId, ...filters.params]
    )
    return passing.flatMap(({ id }) => scores.has(id) ? [{ id, score: scores.get(id)! }] : [])
      .sort((a, b) => b.score - a.score || a.id - b.id)
      .slice(0, limit)
  }).pipe(Effect.orDie)

/** the same ids in the same order, the same scores up to rounding */
const expectSameMatches = (actual: ReadonlyArray<TextMatch>, expected: ReadonlyArray<TextMatch>) => {
  expect(actual.map((m) => m.id)).toEqual(expected.map((m) => m.id))
  actual.forEach((m, i) => expect(m.score).toBeCloseTo(expected[i]!.score, 9))
}

const matchFacts = (datasetId: number, terms: ReadonlyArray<string>, f: ReadFilters, limit: number) =>
  Effect.flatMap(SearchRepo, (repo) => repo.matchFacts(datasetId, terms, f, limit))
const matchEntities = (datasetId: number, terms: ReadonlyArray<string>, f: ReadFilters, limit: number) =>
  Effect.flatMap(SearchRepo, (repo) => repo.matchEntities(datasetId, terms, f, limit))

const repeat = <A>(n: number, make: (i: number) => A) => Array.from({ length: n }, (_, i) => make(i))
/** one word alone outscores it among other words (bm25 favours short documents) */
const SHORT = "apple"
const LONG = "apple pear plum fig kiwi lime melon"

describe("SQLite full text: best candidates first, then the dataset and filters", () => {
  it.effect("the fast path answers when the dataset's rows lead the candidates", () =>
    Effect.gen(function*() {
      // equal scores: the candidates are ordered by id, and ours come first
      const main = yield* seed("main", repeat(60, () => ({ text: SHORT })))
      yield* seed("other", repeat(200, () => ({ text: SHORT })))
      const { fullRuns, result, twoStepRuns } = yield* countingFallbacks(matchFacts(main, ["apple"], NOW, 10))
      expect(twoStepRuns).toBe(1)
      expect(fullRuns).toBe(0)
      expect(result).toHaveLength(10)
      expectSameMatches(result, yield* reference("e", main, ["apple"], NOW, 10))
    }).pipe(Effect.provide(SqliteLive(":memory:"))))

  it.effect("few matches in all: every candidate was seen, so fewer than limit rows are the answer", () =>
    Effect.gen(function*() {
      const main = yield* seed("main", [{ text: SHORT }, { text: LONG }, { text: "pear" }])
      yield* seed("other", repeat(20, () => ({ text: SHORT })))
      const { fullRuns, result } = yield* countingFallbacks(matchFacts(main, ["apple"], NOW, 10))
      expect(fullRuns).toBe(0)
      expect(result.map((r) => r.id)).toHaveLength(2)
      expectSameMatches(result, yield* reference("e", main, ["apple"], NOW, 10))
    }).pipe(Effect.provide(SqliteLive(":memory:"))))

  it.effect("another dataset's matches change neither the candidates nor the scores", () =>
    Effect.gen(function*() {
      const facts = [{ text: LONG }, { text: "apple pear" }, { text: `${LONG} apple` }, { text: "kiwi" }]
      const alone = yield* seed("alone", facts)
      const before = yield* matchFacts(alone, ["apple", "kiwi"], NOW, 5)
      yield* seed("other", repeat(150, () => ({ text: SHORT })))
      const main = yield* seed("main", facts)
      const { fullRuns, result } = yield* countingFallbacks(matchFacts(main, ["apple", "kiwi"], NOW, 5))
      expect(fullRuns).toBe(0)
      expect(result.map((r) => r.score)).toEqual(before.map((r) => r.score))
      expectSameMatches(result, yield* reference("e", main, ["apple", "kiwi"], NOW, 5))
      // and a dataset's own writes are the only ones that move its scores
      yield* seed("more", repeat(50, () => ({ text: "kiwi kiwi" })))
      expect(yield* matchFacts(alone, ["apple", "kiwi"], NOW, 5)).toEqual(before)
    }).pipe(Effect.provide(SqliteLive(":memory:"))))

  it.effect("after a fallback, a dataset's next queries go straight to the full query, and every 16th tries the fast path", () =>
    Effect.gen(function*() {
      // the best 100 candidates ended before NOW: the fast path cannot answer
      const main = yield* seed("main", [
        ...repeat(150, () => ({ text: SHORT, invalidAt: 50 })),
        { text: LONG },
        { text: `${LONG} apple` }
      ])
      const big = yield* seed("big", repeat(150, () => ({ text: SHORT })))
      const paths: Array<string> = []
      for (let i = 0; i <= RETRY_FAST_EVERY; i++) {
        const { fullRuns, result, twoStepRuns } = yield* countingFallbacks(matchFacts(main, ["apple"], NOW, 5))
        paths.push(`${twoStepRuns}/${fullRuns}`)
        expectSameMatches(result, yield* reference("e", main, ["apple"], NOW, 5))
      }
      expect(paths).toEqual(["1/1", ...repeat(RETRY_FAST_EVERY - 1, () => "0/1"), "1/1"])
      // another dataset, or other filters, are not affected
      const filtered = yield* countingFallbacks(matchFacts(main, ["apple"], { ...NOW, includeExpired: true }, 5))
      expect([filtered.twoStepRuns, filtered.fullRuns]).toEqual([1, 0])
      const other = yield* countingFallbacks(matchFacts(big, ["apple"], NOW, 5))
      expect([other.twoStepRuns, other.fullRuns]).toEqual([1, 0])
    }).pipe(Effect.provide(SqliteLive(":memory:"))))

  it.effect("the dataset's best matches are filtered out (ended facts): the fallback runs", () =>
    Effect.gen(function*() {
      const main = yield* seed("main", [
        ...repeat(110, () => ({ text: SHORT, invalidAt: 50 })),
        { text: LONG },
        { text: LONG, invalidAt: 200 }
      ])
      const { fullRuns, result } = yield* countingFallbacks(matchFacts(main, ["apple"], NOW, 4))
      expect(fullRuns).toBe(1)
      expect(result).toHaveLength(2)
      expectSameMatches(result, yield* reference("e", main, ["apple"], NOW, 4))
      // with the ended facts kept, the dataset's own rows lead: no fallback
      const all = yield* countingFallbacks(matchFacts(main, ["apple"], { ...NOW, includeExpired: true }, 4))
      expect(all.fullRuns).toBe(0)
      expectSameMatches(all.result, yield* reference("e", main, ["apple"], { ...NOW, includeExpired: true }, 4))
    }).pipe(Effect.provide(SqliteLive(":memory:"))))

  it.effect("entities: names weigh more; the fallback finds a session's description-only matches", () =>
    Effect.gen(function*() {
      const main = yield* seed("main", [], [
        ...repeat(120, () => ({ name: "apple", description: "", session: "s2" })),
        { name: "pear", description: "an apple", session: "s1" },
        { name: "plum", description: LONG, session: "s1" }
      ])
      const inS1 = { ...NOW, sessionId: "s1" }
      const { fullRuns, result } = yield* countingFallbacks(matchEntities(main, ["apple"], inS1, 10))
      expect(fullRuns).toBe(1)
      expect(result).toHaveLength(2)
      expectSameMatches(result, yield* reference("n", main, ["apple"], inS1, 10))
      // a name match outranks a description match
      const all = yield* matchEntities(main, ["apple"], NOW, 200)
      expect(all).toHaveLength(122)
      expect(all.slice(0, 120).every((m) => m.id < all[120]!.id)).toBe(true)
    }).pipe(Effect.provide(SqliteLive(":memory:"))))

  it.effect("the candidates are joined to the base table by primary key, never scanned", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const main = yield* seed("main", [{ text: SHORT }], [{ name: "apple", description: "" }])
      const filters: ReadFilters = { ...NOW, knownAt: day(100), sessionId: "s1", kind: "knowledge" }
      for (const [alias, match] of [["e", matchFacts], ["n", matchEntities]] as const) {
        const { twoStepRuns } = yield* countingFallbacks(match(main, ["apple"], filters, 10))
        expect(twoStepRuns).toBe(1)
        const text = captured.find(isTwoStep)!
        const params = (text.match(/\?/g) ?? []).map(() => null)
        const plan = (yield* sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`, params)).map((r) => r.detail)
        expect(plan.join("\n")).toContain(`SEARCH ${alias} USING INTEGER PRIMARY KEY (rowid=?)`)
        expect(plan.join("\n")).not.toMatch(new RegExp(`SCAN (${alias}|gb_edges|gb_entities)\\b`))
      }
    }).pipe(Effect.provide(SqliteLive(":memory:"))))

  const WORDS = ["apple", "pear", "plum", "fig", "kiwi", "lime"]
  const text = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 5 }).map((w) => w.join(" "))
  const session = fc.constantFrom(null, "s1", "s2")
  const fact: fc.Arbitrary<Fact> = fc.record({
    text,
    validAt: fc.integer({ min: 0, max: 120 }),
    invalidAt: fc.option(fc.integer({ min: 0, max: 150 })),
    createdAt: fc.integer({ min: 0, max: 120 }),
    expiredAt: fc.option(fc.integer({ min: 0, max: 150 })),
    session
  })
  const entity: fc.Arbitrary<Entity> = fc.record({
    name: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 2 }).map((w) => w.join(" ")),
    description: fc.oneof(fc.constant(""), text),
    createdAt: fc.integer({ min: 0, max: 120 }),
    session
  })
  const filters: fc.Arbitrary<ReadFilters> = fc.record({
    asOf: fc.integer({ min: 0, max: 150 }).map(day),
    knownAt: fc.option(fc.integer({ min: 0, max: 150 }).map(day)),
    includeExpired: fc.boolean(),
    sessionId: fc.constantFrom(null, "s1"),
    kind: fc.constant(null)
  })
  // the dataset is large enough to fill the candidates (at least 100), so that the filters can
  // leave too few of them and the fallback runs; another dataset shares the file
  const world = fc.record({
    mainFacts: fc.array(fact, { maxLength: 250, size: "max" }),
    otherFacts: fc.array(fact, { maxLength: 60, size: "max" }),
    mainEntities: fc.array(entity, { maxLength: 200, size: "max" }),
    otherEntities: fc.array(entity, { maxLength: 40, size: "max" }),
    otherFirst: fc.boolean(),
    terms: fc.uniqueArray(fc.constantFrom(...WORDS, "absent"), { minLength: 1, maxLength: 3 }),
    filters,
    limit: fc.integer({ min: 1, max: 30 })
  })

  type World = typeof world extends fc.Arbitrary<infer T> ? T : never

  it.effect(
    "property: the two-step match equals the reference, facts and entities",
    () =>
      Effect.gen(function*() {
        const runtime = yield* Effect.runtime<Database | SqlClient.SqlClient | SearchRepo>()
        const paths = { fast: 0, fallback: 0 }
        const check = (w: World) =>
          Effect.gen(function*() {
            yield* wipe
            const seedOther = seed("other", w.otherFacts, w.otherEntities)
            if (w.otherFirst) yield* seedOther
            const main = yield* seed("main", w.mainFacts, w.mainEntities)
            if (!w.otherFirst) yield* seedOther
            for (const [alias, match] of [["e", matchFacts], ["n", matchEntities]] as const) {
              const { fullRuns, result } = yield* countingFallbacks(match(main, w.terms, w.filters, w.limit))
              if (fullRuns > 0) paths.fallback++
              else paths.fast++
              expectSameMatches(result, yield* reference(alias, main, w.terms, w.filters, w.limit))
            }
          })
        // no shrinking: each step reseeds hundreds of rows, and shrinking such worlds takes minutes
        yield* Effect.promise(() =>
          fc.assert(fc.asyncProperty(world, (w) => Runtime.runPromise(runtime)(check(w))), {
            numRuns: 80,
            endOnFailure: true,
            // a fixed seed (SEARCH_SEED for another): random worlds exercised the fallback path
            // fewer than 5 times in some runs, which failed the coverage check below by chance
            seed: Number(process.env.SEARCH_SEED ?? 20261205)
          })
        )
        // both paths were exercised, or the property proves little
        expect(paths.fast).toBeGreaterThanOrEqual(5)
        expect(paths.fallback).toBeGreaterThanOrEqual(5)
      }).pipe(Effect.provide(SqliteLive(":memory:"))),
    60_000
  )
})
