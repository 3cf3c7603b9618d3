/**
 * The full-text match of SearchRepo: a dataset's rows matching any of the terms, best first,
 * after the read filters. On SQLite the FullTextIndex port scores the dataset's matches
 * (FullText.ts, a CTE `scored`), with a top-N fast path; on PostgreSQL tsvector @@ tsquery +
 * ts_rank, inline in one statement with the filters (migrations/0004).
 */
import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"
import type { ReadFilters, TextMatch } from "../../../../src/services/SearchRepo.js"
import { makeFullTextIndex } from "../../FullText.js"
import type { ReadFilterSql } from "./filters.js"

export { WEIGHTED_IDF_ROWS } from "../../FullText.js"

/** After a fallback, the full query serves a dataset's next queries but every this-many-th. */
export const RETRY_FAST_EVERY = 16
/** a bound on the fallbacks remembered (one entry a dataset and side) */
const MAX_REMEMBERED_FALLBACKS = 10_000

export const makeTextMatch = (sql: SqlClient.SqlClient, readFilters: ReadFilterSql) => {
  const isPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  const { baseOf, entityFilters, factFilters, limitOf } = readFilters
  // this client's own instance (the reader's, on a file): scoring only reads
  const fullText = makeFullTextIndex(sql)

  /**
   * SQLite: a CTE `scored(id, score)`, every match of the terms in the dataset, higher better:
   * bm25 with the dataset's own statistics (FullTextIndex.scored, FullText.ts).
   */
  const scoredMatches = (alias: "n" | "e", datasetId: number, terms: ReadonlyArray<string>) =>
    Effect.map(
      fullText.scored(alias === "n" ? "entities" : "edges", datasetId, terms),
      (body) => sql`scored AS (${body})`
    )

  /**
   * Every matching row of the dataset that passes `filters`, best first (score DESC, id), at
   * most `limit`: one statement that joins and filters the dataset's whole match set.
   */
  const fullMatch = (
    alias: "n" | "e",
    datasetId: number,
    terms: ReadonlyArray<string>,
    filters: Fragment,
    limit: number
  ) =>
    Effect.gen(function*() {
      const a = sql.literal(alias)
      if (isPg) {
        const query = sql`(${sql.join(" || ", false)(terms.map((t) => sql`plainto_tsquery('english', ${t})`))})`
        return yield* sql<TextMatch>`SELECT ${a}.id AS id, ts_rank(${a}.search_tsv, ${query}) AS score
          FROM ${baseOf(alias)} ${a}
          WHERE ${a}.search_tsv @@ ${query} AND ${a}.dataset_id = ${datasetId} AND ${filters}
          ORDER BY score DESC, ${a}.id
          LIMIT ${limitOf(limit)}`
      }
      // the matches drive the join (CROSS JOIN keeps SQLite from probing the index per row)
      return yield* sql<TextMatch>`WITH ${yield* scoredMatches(alias, datasetId, terms)}
        SELECT ${a}.id AS id, scored.score AS score
        FROM scored CROSS JOIN ${baseOf(alias)} ${a} ON ${a}.id = scored.id
        WHERE ${a}.dataset_id = ${datasetId} AND ${filters}
        ORDER BY score DESC, ${a}.id
        LIMIT ${limitOf(limit)}`
    }).pipe(Effect.orDie)

  /**
   * How many of the FTS table's best matches the SQLite fast path looks at before joining:
   * enough that the filters (time, session, kind) may take three quarters of them (or all but
   * `limit` of a hundred) and `limit` rows still survive. Scoring every match is
   * the cost either way (the sort keeps a heap of this size), so a generous size is cheap; only
   * these rows are joined to the base table, by primary key.
   */
  const ftsCandidatesFor = (limit: number) => Math.max(4 * limit, 100)

  /** side, dataset and filters -> queries since their fast path last fell back (absent: it did not) */
  const fellBack = new Map<string, number>()
  /**
   * What a fallback is remembered by: the side, the dataset and the filters but `asOf` (which is
   * the request's time unless given, so never the same twice).
   */
  const fallbackKey = (alias: "n" | "e", datasetId: number, f: ReadFilters) =>
    JSON.stringify([alias, datasetId, f.knownAt, f.includeExpired, f.sessionId, f.kind, f.conditions ?? null])

  /**
   * SQLite: the `ftsCandidatesFor(limit)` best rows of the FTS table alone (`best`, ordered as the
   * full query orders: score DESC, rowid = id), then those joined to the base table by primary
   * key and filtered (`kept`), at most `limit`. The statement always returns one row more than
   * nothing: `seen`, the number of candidates, LEFT JOINed with the survivors (a lone row with a
   * null id when none survive).
   *
   * Exactness. Let C be the candidates (a prefix of all matches in that total order) and K the
   * candidates that pass. A passing row outside C ranks below every row of C, so below all of
   * K. (1) |K| >= limit: such a row is outranked by >= limit passing rows, so it is not in the
   * full answer; that answer is the first `limit` of K, which is what `kept` is. (2) |C| <
   * candidates: C is every match, there is no such row. Otherwise (few survivors of a full
   * candidate list) the answer may lie beyond C: run the full query.
   */
  const matchTopN = (
    alias: "n" | "e",
    datasetId: number,
    terms: ReadonlyArray<string>,
    readFilters: ReadFilters,
    filters: Fragment,
    limit: number
  ) =>
    Effect.gen(function*() {
      // a dataset and filters whose last fast attempt fell back (filters that keep few of the
      // best matches, such as one session of a large dataset) go straight to the full query, which then costs it what it always did; every
      // RETRY_FAST_EVERY-th query tries the fast path again, as datasets grow
      const key = fallbackKey(alias, datasetId, readFilters)
      const misses = fellBack.get(key) ?? 0
      if (misses % RETRY_FAST_EVERY !== 0) {
        fellBack.set(key, misses + 1)
        return yield* fullMatch(alias, datasetId, terms, filters, limit)
      }
      const a = sql.literal(alias)
      const candidates = ftsCandidatesFor(limit)
      const rows = yield* sql<{ seen: number; id: number | null; score: number | null }>`
        WITH ${yield* scoredMatches(alias, datasetId, terms)},
        best AS MATERIALIZED (
          SELECT id, score FROM scored
          ORDER BY score DESC, id
          LIMIT ${limitOf(candidates)}
        ),
        kept AS (
          SELECT best.id AS id, best.score AS score
          FROM best CROSS JOIN ${baseOf(alias)} ${a} ON ${a}.id = best.id
          WHERE ${a}.dataset_id = ${datasetId} AND ${filters}
          ORDER BY best.score DESC, best.id
          LIMIT ${limitOf(limit)}
        )
        SELECT seen.n AS seen, kept.id AS id, kept.score AS score
        FROM (SELECT COUNT(*) AS n FROM best) seen LEFT JOIN kept ON 1 = 1
        ORDER BY kept.score DESC, kept.id`.pipe(Effect.orDie)
      const kept = rows.flatMap(({ id, score }) => id === null || score === null ? [] : [{ id, score }])
      const seen = Number(rows[0]?.seen ?? 0)
      if (kept.length >= limit || seen < candidates) {
        fellBack.delete(key)
        return kept as ReadonlyArray<TextMatch>
      }
      if (fellBack.size >= MAX_REMEMBERED_FALLBACKS) fellBack.clear()
      fellBack.set(key, misses + 1)
      return yield* fullMatch(alias, datasetId, terms, filters, limit)
    })

  const matchEntities = (datasetId: number, terms: ReadonlyArray<string>, filters: ReadFilters, limit: number) => {
    if (terms.length === 0 || limit <= 0) return Effect.succeed([] as ReadonlyArray<TextMatch>)
    return isPg
      ? fullMatch("n", datasetId, terms, entityFilters(filters), limit)
      : matchTopN("n", datasetId, terms, filters, entityFilters(filters), limit)
  }

  const matchFacts = (datasetId: number, terms: ReadonlyArray<string>, filters: ReadFilters, limit: number) => {
    if (terms.length === 0 || limit <= 0) return Effect.succeed([] as ReadonlyArray<TextMatch>)
    return isPg
      ? fullMatch("e", datasetId, terms, factFilters(filters), limit)
      : matchTopN("e", datasetId, terms, filters, factFilters(filters), limit)
  }

  return { matchEntities, matchFacts }
}
