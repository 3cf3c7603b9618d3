/**
 * The searches of the sqlite-vec store (SqliteVecStore.ts) as statements and the matches of
 * their rows, so that several can be sent to the reader thread in one message (`queryMany`).
 * A coded store scans its binary codes and rescores the nearest on their float vectors; a
 * store of fewer than 64 dimensions scans the floats of its vec0 table.
 */
import type { VectorMatch } from "../../src/services/VectorStore.js"
import { binaryCode } from "./binaryCodes.js"
import { toMetadata } from "./common.js"
import { toBlob } from "./sqliteRows.js"

/** sqlite-vec refuses a larger k */
export const MAX_K = 4096

/**
 * Codes fetched for a query of `k`: rescored exactly, so more is better recall and slower
 * (vec0 selects the top k in rows x k). 3k keeps the whole exact top 10 of a search and most
 * of its top 30 (docs/DECISIONS.md, BENCHMARKS.md); search asks for 3 x its limit per source so
 * fusion has candidates to spare, and ranks past 20 matter little.
 */
export const candidatesFor = (k: number) => Math.min(MAX_K, Math.max(64, 3 * k))

export type SearchRow = { vector_id: string; distance: number | null; metadata: string | null }

/** One search: its statement, and how many of its rows are kept. */
export interface SearchStatement {
  readonly sql: string
  readonly params: ReadonlyArray<unknown>
  readonly limit: number
  /** true: the rows are candidates to order and cut; false: they come nearest first, `limit` at most */
  readonly rescored: boolean
}

export interface SearchTables {
  /** true: codes and floats; false: the vec0 float table */
  readonly coded: boolean
  readonly dimensions: number
  readonly table: string
  readonly codes: string
  readonly floats: string
}

/** The statement of a search of `index` for the `limit` nearest to `vector`. */
export const searchStatement = (
  tables: SearchTables,
  index: string,
  vector: ReadonlyArray<number>,
  limit: number
): SearchStatement =>
  tables.coded
    ? {
      // the nearest codes, rescored on their float vectors (CROSS JOIN: the codes drive the key lookups)
      sql:
        `WITH candidates AS (SELECT key FROM ${tables.codes} WHERE code MATCH vec_bit(?) AND k = ? AND index_name = ?) ` +
        `SELECT v.vector_id, vec_distance_cosine(v.embedding, ?) AS distance, v.metadata ` +
        `FROM candidates CROSS JOIN ${tables.floats} AS v ON v.key = candidates.key`,
      params: [binaryCode(vector, tables.dimensions), candidatesFor(limit), index, toBlob(vector)],
      limit,
      rescored: true
    }
    : {
      // the exact scan of the partition
      sql: `SELECT vector_id, distance, metadata FROM ${tables.table} ` +
        `WHERE embedding MATCH ? AND k = ? AND index_name = ? ORDER BY distance`,
      params: [toBlob(vector), limit, index],
      limit,
      rescored: false
    }

const parseMetadata = (raw: unknown) => {
  try {
    return toMetadata(typeof raw === "string" ? JSON.parse(raw) : undefined)
  } catch {
    return {}
  }
}

/** A search's rows as matches: the `limit` nearest, best first, those at `minScore` or above. */
export const matchesOf = (
  search: SearchStatement,
  rows: ReadonlyArray<SearchRow>,
  minScore: number
): ReadonlyArray<VectorMatch> => {
  const nearest = search.rescored
    ? rows
      .filter((row) => row.distance !== null)
      .sort((a, b) => a.distance! - b.distance! || (a.vector_id < b.vector_id ? -1 : 1))
      .slice(0, search.limit)
    : rows
  const matches: Array<VectorMatch> = []
  for (const row of nearest) {
    // a zero vector has no direction: sqlite-vec gives it no distance
    if (row.distance === null) continue
    const score = 1 - row.distance
    if (score >= minScore) matches.push({ id: row.vector_id, score, metadata: parseMetadata(row.metadata) })
  }
  return matches
}
