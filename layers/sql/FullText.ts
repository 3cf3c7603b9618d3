/**
 * SQLite's full-text index: one pair of FTS5 tables per dataset (migration 0013), so that bm25's
 * statistics (the row count, the average length, how many rows hold a term) are the dataset's
 * own. What one dataset stores never reorders another's results, and a search scores only its
 * own dataset's matches.
 *
 * A trigger cannot choose its table per row, so the base tables' triggers queue every change in
 * gb_fts_pending (the op and the old or new words), and `flushFullText` applies the queue, in
 * order, to the datasets' tables: before every commit of `Database.withTransaction`, and at
 * startup (`ensureFullText`). Rows written by plain SQL reach the index at the next of those.
 *
 * The tables are external-content tables over gb_entities and gb_edges (rowid = id): they hold
 * the terms only, and a read asks them for rowids and bm25.
 */
import type { SqlClient, SqlError } from "@effect/sql"
import { Effect } from "effect"

export type FullTextSide = "entities" | "edges"

export const FULL_TEXT_SIDES: ReadonlyArray<FullTextSide> = ["entities", "edges"]

/** The indexed columns of a side, in the base table's names. */
export const FULL_TEXT_COLUMNS: Record<FullTextSide, string> = {
  entities: "name, description",
  edges: "description"
}

const CONTENT: Record<FullTextSide, string> = { entities: "gb_entities", edges: "gb_edges" }

/** The name of a dataset's FTS5 table: our own integer id, never input text. */
export const fullTextTable = (side: FullTextSide, datasetId: number): string => {
  if (!Number.isSafeInteger(datasetId) || datasetId < 0) throw new Error(`not a dataset id: ${datasetId}`)
  return `gb_fts_${side}_${datasetId}`
}

/** Porter stemming over unicode61 with diacritics folded, as since migration 0004. */
export const createFullTextStatements = (datasetId: number): ReadonlyArray<string> =>
  FULL_TEXT_SIDES.map((side) =>
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${fullTextTable(side, datasetId)} USING fts5(
      ${FULL_TEXT_COLUMNS[side]},
      content = '${CONTENT[side]}', content_rowid = 'id',
      tokenize = 'porter unicode61 remove_diacritics 2'
    )`
  )

const run = (sql: SqlClient.SqlClient, statements: ReadonlyArray<string>) =>
  Effect.forEach(statements, (statement) => sql.unsafe(statement), { discard: true })

/** A dataset's two tables, when it has none yet. */
export const createFullText = (sql: SqlClient.SqlClient, datasetId: number): Effect.Effect<void, SqlError.SqlError> =>
  run(sql, createFullTextStatements(datasetId))

/**
 * Drops a deleted dataset's tables and its queued changes (its rows' deletes, queued by the
 * cascade): dropping frees every page of the index at once, which secure_delete zeroes.
 */
export const dropFullText = (sql: SqlClient.SqlClient, datasetId: number): Effect.Effect<void, SqlError.SqlError> =>
  Effect.zipRight(
    sql`DELETE FROM gb_fts_pending WHERE dataset_id = ${datasetId}`,
    run(sql, FULL_TEXT_SIDES.map((side) => `DROP TABLE IF EXISTS ${fullTextTable(side, datasetId)}`))
  )

/**
 * Applies the queued changes, oldest first, one statement per dataset and side: an insert row
 * adds the words; a delete row is FTS5's 'delete' command with the words the index holds (an
 * update queued both). Then empties the queue. Costs one read of an empty table when nothing
 * is queued; the tables' IF NOT EXISTS creation is a no-op for a dataset that has them.
 */
export const flushFullText = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError.SqlError> =>
  Effect.gen(function*() {
    const groups = yield* sql<{ dataset_id: number; side: FullTextSide }>`
      SELECT DISTINCT dataset_id, side FROM gb_fts_pending`
    if (groups.length === 0) return
    for (const datasetId of new Set(groups.map((g) => Number(g.dataset_id)))) {
      // a no-op but for a dataset whose row plain SQL inserted
      yield* createFullText(sql, datasetId)
    }
    for (const { dataset_id, side } of groups) {
      const table = fullTextTable(side, Number(dataset_id))
      const columns = FULL_TEXT_COLUMNS[side]
      // an FTS5 command names its table as a column; NULL there is a plain insert
      yield* sql.unsafe(
        `INSERT INTO ${table} (${table}, rowid, ${columns})
          SELECT CASE op WHEN 'delete' THEN 'delete' END, row_id, ${columns} FROM gb_fts_pending
          WHERE dataset_id = ? AND side = ? ORDER BY id`,
        [dataset_id, side]
      )
    }
    yield* sql`DELETE FROM gb_fts_pending`
  })

/**
 * At startup: every dataset has its tables (one created by plain SQL, or whose creation was cut
 * short, gets them), and what plain SQL queued is applied.
 */
export const ensureFullText = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError.SqlError> =>
  sql.withTransaction(Effect.gen(function*() {
    const datasets = yield* sql<{ id: number }>`SELECT id FROM gb_datasets ORDER BY id`
    yield* Effect.forEach(datasets, ({ id }) => createFullText(sql, Number(id)), { discard: true })
    yield* flushFullText(sql)
  }))

/** Every dataset's FTS5 tables (for 'optimize'). */
export const fullTextTables = (sql: SqlClient.SqlClient): Effect.Effect<ReadonlyArray<string>, SqlError.SqlError> =>
  sql<{ name: string }>`SELECT name FROM sqlite_schema
    WHERE type = 'table' AND name GLOB 'gb_fts_*' AND sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name`.pipe(
    Effect.map((rows) => rows.map((row) => row.name))
  )

/**
 * A varint of SQLite's format (FTS5 writes its records with it): big-endian groups of 7 bits,
 * a set high bit meaning more follow, the ninth byte whole.
 */
export const readVarint = (bytes: Uint8Array, offset: number): number => {
  let value = 0
  for (let i = 0; i < 9; i++) {
    const byte = bytes[offset + i] ?? 0
    if (i === 8) return value * 256 + byte
    value = value * 128 + (byte & 0x7f)
    if ((byte & 0x80) === 0) return value
  }
  return value
}

/**
 * How many rows a dataset's table indexes: the first varint of FTS5's averages record (rowid 1
 * of its `_data` table), the row count bm25 itself reads. Zero for a table that never held one.
 */
export const indexedRows = (
  sql: SqlClient.SqlClient,
  side: FullTextSide,
  datasetId: number
): Effect.Effect<number, SqlError.SqlError> =>
  sql.unsafe<{ block: Uint8Array | null }>(`SELECT block FROM ${fullTextTable(side, datasetId)}_data WHERE id = 1`)
    .pipe(Effect.map((rows) => {
      const block = rows[0]?.block
      return block === undefined || block === null || block.length === 0 ? 0 : readVarint(block, 0)
    }))

/** FTS5's IDF (fts5_aux.c): ln((N - n + 0.5) / (n + 0.5)), or 1e-6 where that is not positive. */
export const fts5Idf = (rows: number, n: number): number => {
  const idf = Math.log((rows - n + 0.5) / (n + 0.5))
  return idf <= 0 ? 1e-6 : idf
}

/** Below this a term's floor is left out: a word in nearly every row tells rows apart by nothing. */
const MIN_FLOOR = 0.01

/**
 * The IDF a term is scored with: FTS5's, or half of ln(1 + (N - n + 0.5) / (n + 0.5)) where that
 * is more. FTS5's is nothing for a word in half the rows or more, which in a small dataset is
 * the name most facts share; the floor keeps such a word counting, below any rarer word (both
 * fall as n grows), and takes over only for words in more than about 38% of the rows.
 */
export const termIdf = (rows: number, n: number): number => {
  const floor = 0.5 * Math.log(1 + (rows - n + 0.5) / (n + 0.5))
  return Math.max(fts5Idf(rows, n), floor >= MIN_FLOOR ? floor : 0)
}

/**
 * The factor on each term's own bm25 that turns FTS5's IDF into `termIdf` (bm25 sums per term),
 * from the table's row count and each term's matching rows; undefined when every factor is 1,
 * and one OR query's bm25 is the score.
 */
export const idfFactors = (rows: number, counts: ReadonlyArray<number>): ReadonlyArray<number> | undefined => {
  const total = Math.max(rows, ...counts)
  const factors = counts.map((n) => termIdf(total, n) / fts5Idf(total, n))
  return factors.every((f) => f === 1) ? undefined : factors
}
