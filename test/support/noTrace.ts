/**
 * Looking for a marker string after a forget (issue 22, "no trace"): in every column of every
 * table, and in the raw bytes of files (a SQLite database with its WAL and shared memory, an
 * image directory).
 *
 *   const marker = newMarker()                       // put it in the texts to be forgotten
 *   ...forget...
 *   expect(yield* markerLocations(sql, marker)).toEqual([])        // a live SqlClient, either dialect
 *   expect(yield* markerLocations(dbFile, marker)).toEqual([])     // a SQLite file, read-only
 *   expect(scanFiles([...sqliteFiles(dbFile), imageDir], marker)).toEqual([])
 *
 * Choose markers with `newMarker`: lowercase letters that the full-text tokenizers keep as they
 * are (no Porter suffix, no plural), so FTS5's terms and PostgreSQL's tsvector lexemes contain
 * the marker itself. FTS5 writes each term as the length of the prefix it shares with the term
 * before it and the rest, so only a term that shares no prefix with its neighbour is stored
 * whole: `newMarker` starts with "zq", which no English word does, and `scanFiles` also looks
 * for the marker without its first two letters.
 */
import { type SqlClient } from "@effect/sql"
import Sqlite from "better-sqlite3"
import { Effect } from "effect"
import { randomInt } from "node:crypto"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"

/** A table and column holding the marker, and in how many rows. */
export interface MarkerLocation {
  readonly table: string
  readonly column: string
  readonly rows: number
}

/** Where a file holds one of the marker's byte patterns. */
export interface FileHit {
  readonly file: string
  /** the byte offset of the first occurrence */
  readonly offset: number
  /** the pattern found (the marker, or its tail) */
  readonly found: string
}

/** Letters no stemmer rewrites when they end a word (no vowel, no s, y or e). */
const CONSONANTS = "bcdfghjklmnpqrtvwxz"

/** "zq" and 14 random consonants: a word no text contains by chance, kept whole by every tokenizer. */
export const newMarker = (): string =>
  "zq" + Array.from({ length: 14 }, () => CONSONANTS[randomInt(CONSONANTS.length)]).join("")

const quoteIdent = (name: string) => `"${name.replace(/"/g, "\"\"")}"`

/**
 * On SQLite every column of every table that is not virtual: SQLite is typed by value, not
 * by column, and the shadow tables of FTS5 (`*_fts_idx.term`) and sqlite-vec (`*_rowids.id`)
 * declare no type at all. Virtual tables are skipped: their data is in their shadow tables,
 * and reading them would need their module (sqlite-vec) loaded. Values are compared as bytes,
 * so a term inside an FTS5 segment blob counts.
 */
const sqliteTables =
  `SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name`
const sqliteColumns = `SELECT name FROM pragma_table_info(?) ORDER BY cid`
const sqliteCount = (table: string, column: string) =>
  `SELECT count(*) AS n FROM ${quoteIdent(table)} WHERE instr(CAST(${quoteIdent(column)} AS BLOB), CAST(? AS BLOB)) > 0`

/**
 * On PostgreSQL every column of every base table of the current schema, as text (a tsvector
 * as its lexemes, JSON as its text); bytea as its bytes.
 */
const pgColumns = `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
  JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
  WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
  ORDER BY c.table_name, c.ordinal_position`
const pgCount = (table: string, column: string, type: string) =>
  type === "bytea"
    ? `SELECT count(*)::int AS n FROM ${quoteIdent(table)} WHERE position(convert_to($1, 'UTF8') in ${
      quoteIdent(column)
    }) > 0`
    : `SELECT count(*)::int AS n FROM ${quoteIdent(table)} WHERE strpos(${quoteIdent(column)}::text, $1) > 0`

/** The marker and its lowercase form (what a tokenizer indexes), once each. */
const needles = (marker: string): ReadonlyArray<string> => [...new Set([marker, marker.toLowerCase()])]

const addHits = (
  found: Map<string, MarkerLocation>,
  table: string,
  column: string,
  rows: number
) => {
  if (rows === 0) return
  const key = `${table}\0${column}`
  const before = found.get(key)
  // the two forms may be in the same rows: the larger count, not the sum
  found.set(key, { table, column, rows: Math.max(rows, before?.rows ?? 0) })
}

const inSqliteFile = (file: string, marker: string): ReadonlyArray<MarkerLocation> => {
  const db = new Sqlite(file, { readonly: true, fileMustExist: true })
  try {
    const found = new Map<string, MarkerLocation>()
    const tables = db.prepare<[], { name: string }>(sqliteTables).all()
    for (const { name: table } of tables) {
      for (const { name: column } of db.prepare<[string], { name: string }>(sqliteColumns).all(table)) {
        for (const needle of needles(marker)) {
          const row = db.prepare<[string], { n: number }>(sqliteCount(table, column)).get(needle)
          addHits(found, table, column, row?.n ?? 0)
        }
      }
    }
    return [...found.values()]
  } finally {
    db.close()
  }
}

const inClient = (sql: SqlClient.SqlClient, marker: string) =>
  Effect.gen(function*() {
    const found = new Map<string, MarkerLocation>()
    const columns = yield* sql.onDialectOrElse({
      pg: () =>
        Effect.map(
          sql.unsafe<{ table_name: string; column_name: string; data_type: string }>(pgColumns),
          (rows) => rows.map((r) => ({ table: r.table_name, column: r.column_name, type: r.data_type }))
        ),
      orElse: () =>
        Effect.gen(function*() {
          const out: Array<{ table: string; column: string; type: string }> = []
          for (const { name: table } of yield* sql.unsafe<{ name: string }>(sqliteTables)) {
            for (const { name: column } of yield* sql.unsafe<{ name: string }>(sqliteColumns, [table])) {
              out.push({ table, column, type: "" })
            }
          }
          return out
        })
    })
    for (const { column, table, type } of columns) {
      const statement = sql.onDialectOrElse({
        pg: () => pgCount(table, column, type),
        orElse: () => sqliteCount(table, column)
      })
      for (const needle of needles(marker)) {
        const [row] = yield* sql.unsafe<{ n: number }>(statement, [needle])
        addHits(found, table, column, Number(row?.n ?? 0))
      }
    }
    return [...found.values()] as ReadonlyArray<MarkerLocation>
  })

/**
 * Every table and column holding `marker` (either case form), in a SQLite file (opened
 * read-only, so it needs no extension and changes nothing) or through a live client of either
 * dialect (run it outside a transaction: it reads every row of every table). Empty: no trace.
 */
export const markerLocations = (
  source: string | SqlClient.SqlClient,
  marker: string
): Effect.Effect<ReadonlyArray<MarkerLocation>> =>
  typeof source === "string"
    ? Effect.sync(() => inSqliteFile(source, marker))
    : inClient(source, marker).pipe(Effect.orDie)

/** A SQLite database's files that exist: the database, its WAL, its shared memory, a rollback journal. */
export const sqliteFiles = (dbFile: string): ReadonlyArray<string> =>
  [dbFile, `${dbFile}-wal`, `${dbFile}-shm`, `${dbFile}-journal`].filter((f) => existsSync(f))

const filesUnder = (path: string): ReadonlyArray<string> => {
  if (!existsSync(path)) return []
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path).sort().flatMap((name) => filesUnder(join(path, name)))
}

/**
 * The byte patterns a trace of `marker` can take: the marker and its lowercase form, in UTF-8,
 * and (for FTS5's prefix-compressed terms) both without their first two letters.
 */
export const markerPatterns = (
  marker: string
): ReadonlyArray<string> => [...new Set(needles(marker).flatMap((m) => (m.length > 8 ? [m, m.slice(2)] : [m])))]

/**
 * Every file under `paths` (files, or directories walked recursively; missing ones are
 * skipped) whose bytes contain a pattern of `marker`, with the first offset. Empty: no trace.
 */
export const scanFiles = (paths: string | ReadonlyArray<string>, marker: string): ReadonlyArray<FileHit> => {
  const patterns = markerPatterns(marker).map((p) => ({ text: p, bytes: Buffer.from(p, "utf8") }))
  const hits: Array<FileHit> = []
  for (const file of (typeof paths === "string" ? [paths] : paths).flatMap(filesUnder)) {
    const bytes = readFileSync(file)
    for (const pattern of patterns) {
      const offset = bytes.indexOf(pattern.bytes)
      if (offset !== -1) {
        hits.push({ file, offset, found: pattern.text })
        break
      }
    }
  }
  return hits
}
