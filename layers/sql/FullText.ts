/**
 * The FullTextIndex port on SQL (docs/FULLTEXT-ENGINE.md).
 *
 * SQLite: one FTS5 table a side (migration 0015), external content over gb_entities / gb_edges
 * (rowid = id), whose first column is the row's dataset_id: a search matches
 * `dataset_id : "<id>" AND <columns> : "<term>"`, which FTS5 answers by intersecting posting
 * lists, so it costs what the dataset's matches cost, whatever else the file holds. Scores are
 * FTS5's bm25 with the dataset's own statistics, computed here term by term rather than by
 * bm25(), whose statistics would be the whole table's: the term frequency from highlight(), the
 * row's length from gb_fts_lengths, the dataset's row count and average length from
 * gb_fts_stats, the term's matching rows counted in the dataset.
 *
 * That costs about 2 µs a match, which a large dataset's common word multiplies: a dataset side
 * of OWN_TABLE_ROWS rows or more moves (in the flush) to an FTS5 table of its own, registered in
 * gb_fts_own (migration 0016) and scored by FTS5's bm25() as 0013's tables were. Such tables are
 * at most (file rows / threshold), so the schema stays small.
 *
 * A trigger cannot run FTS5 commands with the old words of an external-content row, so the base
 * tables' triggers queue every change in gb_fts_pending, and `flush` applies the queue (the
 * index, the lengths and the statistics) before every commit of `Database.withTransaction` and
 * at startup. Rows written by plain SQL reach the index at the next of those.
 *
 * PostgreSQL: the tsvector column of migration 0004, kept by its triggers; ts_rank scores a row
 * by itself, so nothing is queued, counted or compacted.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Context, Effect, Layer, Option } from "effect"
import { PreCommitHooks } from "../../src/services/Database.js"
import { FullTextIndex, type FullTextSide } from "../../src/services/FullTextIndex.js"
import { SqliteScript } from "./sqliteClient.js"

export type { FullTextSide } from "../../src/services/FullTextIndex.js"

export const FULL_TEXT_SIDES: ReadonlyArray<FullTextSide> = ["entities", "edges"]

/** The indexed columns of a side, in the base table's names (the dataset column apart). */
export const FULL_TEXT_COLUMNS: Record<FullTextSide, string> = {
  entities: "name, description",
  edges: "description"
}

/** A side's FTS5 table. */
export const fullTextTable = (side: FullTextSide): string => `gb_fts_${side}`

/**
 * A dataset side of this many rows or more gets an FTS5 table of its own (`ownTable`), scored by FTS5's
 * bm25 as 0013's tables were: the shared table's scoring costs about 2 µs a match, which a large
 * dataset's common word multiplies. At least WEIGHTED_IDF_ROWS, so that the usual own table scores
 * with FTS5's plain IDF (one OR query); a smaller one (a shrunk dataset, a test) is weighted too.
 */
export const OWN_TABLE_ROWS = 20_000

/** A dataset side's own FTS5 table (0013's name): our own integer id, never input text. */
export const ownTable = (side: FullTextSide, datasetId: number): string => {
  if (!Number.isSafeInteger(datasetId) || datasetId < 0) throw new Error(`not a dataset id: ${datasetId}`)
  return `gb_fts_${side}_${datasetId}`
}

/** Porter stemming over unicode61 with diacritics folded, as since migration 0004. */
export const TOKENIZE = "porter unicode61 remove_diacritics 2"

/** Datasets up to this many rows a side have common words' IDF lifted (`termIdf`). */
export const WEIGHTED_IDF_ROWS = 20_000

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
 * Each term's IDF in a dataset of `rows` rows, from the rows each term matches there: `termIdf`
 * for several terms in a dataset of at most WEIGHTED_IDF_ROWS rows, else FTS5's. A count above
 * the row count (a lagging statistic) is read as the row count.
 */
export const idfsOf = (rows: number, counts: ReadonlyArray<number>): ReadonlyArray<number> => {
  const total = Math.max(rows, ...counts)
  const idf = counts.length > 1 && rows <= WEIGHTED_IDF_ROWS ? termIdf : fts5Idf
  return counts.map((n) => idf(total, n))
}

/** An FTS5 phrase of one term (the tokenizer stems it). */
export const phraseOf = (term: string): string => `"${term.replaceAll("\"", "\"\"")}"`

/** The MATCH of a term among a dataset's rows: the dataset's token, then the term in the side's columns. */
const matchOf = (side: FullTextSide, datasetId: number, term: string): string => {
  if (!Number.isSafeInteger(datasetId) || datasetId < 0) throw new Error(`not a dataset id: ${datasetId}`)
  return `dataset_id : "${datasetId}" AND ${side === "entities" ? "{name description}" : "description"} : ${
    phraseOf(term)
  }`
}

/**
 * A term's weighted frequency in the matched row (bm25's f): how many instances highlight()
 * marks in each column (the characters it adds, one a mark, as the close mark is empty), names
 * weighing 4 times a description as in bm25(t, 4, 1).
 */
const termFrequency = (side: FullTextSide): string => {
  const table = fullTextTable(side)
  const marks = (column: number, name: string) =>
    `(COALESCE(length(highlight(${table}, ${column}, char(1), '')), 0) - COALESCE(length(${table}.${name}), 0))`
  return side === "entities"
    ? `(4.0 * ${marks(1, "name")} + 1.0 * ${marks(2, "description")})`
    : `(1.0 * ${marks(1, "description")})`
}

const BM25_K1 = "1.2"
const BM25_B = "0.75"

/** How the SQLite adapter chooses tables: a dataset side of `ownTableRows` rows or more gets its own. */
export type FullTextOptions = {
  readonly ownTableRows?: number
  /** runs the flush's fixed writes in one call (sqliteClient.ts); without it, one statement each */
  readonly script?: SqliteScript["Type"] | undefined
}

/** SQLite's adapter over `sql` (the writer's connection; a reader's only scores and counts). */
export const makeSqliteFullText = (sql: SqlClient.SqlClient, options: FullTextOptions = {}): FullTextIndex["Type"] => {
  const nothing = sql`SELECT NULL AS id, NULL AS score WHERE 0`
  const ownTableRows = options.ownTableRows ?? OWN_TABLE_ROWS
  const script = options.script

  /**
   * A dataset side with its own table: FTS5's bm25 over it, names weighing 4 as in 0013. Several
   * terms in a dataset of at most WEIGHTED_IDF_ROWS rows have their IDF lifted as `idfsOf` does:
   * each term's bm25 scaled by termIdf / FTS5's IDF (0013's `idfFactors`), so scores equal the
   * shared table's for the same rows.
   */
  const scoredOwn = (side: FullTextSide, datasetId: number, terms: ReadonlyArray<string>, datasetRows: number) =>
    Effect.gen(function*() {
      const table = ownTable(side, datasetId)
      const t = sql.literal(table)
      const bm25 = sql.literal(`-bm25(${table}${side === "entities" ? ", 4.0, 1.0" : ""})`)
      const plain = sql`SELECT rowid AS id, ${bm25} AS score FROM ${t} WHERE ${t} MATCH ${
        terms.map(phraseOf).join(" OR ")
      }`
      if (terms.length < 2 || datasetRows > WEIGHTED_IDF_ROWS) return plain
      const [counted] = yield* sql.unsafe<Record<string, number | null>>(
        `SELECT ${terms.map((_, i) => `(SELECT COUNT(*) FROM ${table} WHERE ${table} MATCH ?) AS n${i}`).join(", ")}`,
        terms.map(phraseOf)
      )
      const counts = terms.map((_, i) => Number(counted?.[`n${i}`] ?? 0))
      const total = Math.max(datasetRows, ...counts)
      const factors = counts.map((n) => termIdf(total, n) / fts5Idf(total, n))
      if (factors.every((factor) => factor === 1)) return plain
      const perTerm = terms.flatMap((term, i) =>
        counts[i] === 0 ? [] : [sql`SELECT rowid AS id, ${bm25} * ${factors[i]!} AS s FROM ${t}
          WHERE ${t} MATCH ${phraseOf(term)}`]
      )
      // materialized: bm25() cannot run in the aggregate's context
      return sql`WITH per AS MATERIALIZED (${sql.join(" UNION ALL ", false)(perTerm)})
        SELECT id, SUM(s) AS score FROM per GROUP BY id`
    })

  const rows = (side: FullTextSide, datasetId: number) =>
    sql<{ rows: number }>`SELECT rows FROM gb_fts_stats WHERE dataset_id = ${datasetId} AND side = ${side}`.pipe(
      Effect.map((found) => Number(found[0]?.rows ?? 0)),
      Effect.orDie
    )

  /**
   * bm25 of fts5_aux.c term by term, with the dataset's statistics, in its order of operations
   * (so that scores equal a per-dataset table's but for the logarithm's last bit and the sum's
   * order): Σ idf · f·(k1+1) / (f + k1·(1 − b + b·D/avgdl)), the IDF from `idfsOf`.
   */
  const scored = (side: FullTextSide, datasetId: number, terms: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const table = fullTextTable(side)
      if (terms.length === 0) return nothing
      const matches = terms.map((term) => matchOf(side, datasetId, term))
      // the statistics, whether the side has its own table and (if not: CASE runs the subquery
      // only then) each term's matches in one statement: a search costs two
      const [counted] = yield* sql.unsafe<Record<string, number | null>>(
        `SELECT s.rows AS rows, s.tokens AS tokens, o.side IS NOT NULL AS own, ${
          matches.map((_, i) =>
            `CASE WHEN o.side IS NULL THEN (SELECT COUNT(*) FROM ${table} WHERE ${table} MATCH ?) END AS n${i}`
          ).join(", ")
        } FROM (SELECT NULL) LEFT JOIN gb_fts_stats s ON s.dataset_id = ? AND s.side = ?
        LEFT JOIN gb_fts_own o ON o.dataset_id = ? AND o.side = ?`,
        [...matches, datasetId, side, datasetId, side]
      )
      const datasetRows = Number(counted?.rows ?? 0)
      if (datasetRows === 0) return nothing
      if (Number(counted?.own ?? 0) === 1) return yield* scoredOwn(side, datasetId, terms, datasetRows)
      const counts = matches.map((_, i) => Number(counted?.[`n${i}`] ?? 0))
      const idfs = idfsOf(datasetRows, counts)
      const avgdl = Number(counted!.tokens) / datasetRows
      const f = sql.literal(termFrequency(side))
      const perTerm = matches.flatMap((match, i) => {
        if (counts[i] === 0) return []
        return [sql`SELECT rowid AS id, ${idfs[i]!} AS idf, ${f} AS f FROM ${sql.literal(table)}
          WHERE ${sql.literal(table)} MATCH ${match}`]
      })
      if (perTerm.length === 0) return nothing
      // materialized, so that highlight() runs once a row and term (bm25 reads f twice)
      return sql`WITH tf AS MATERIALIZED (${sql.join(" UNION ALL ", false)(perTerm)})
        SELECT tf.id AS id, SUM(tf.idf * ((tf.f * (${sql.literal(`${BM25_K1} + 1.0`)})) / (tf.f + ${
        sql.literal(BM25_K1)
      } * (1 - ${sql.literal(BM25_B)} + ${sql.literal(BM25_B)} * l.length / ${avgdl})))) AS score
        FROM tf CROSS JOIN gb_fts_lengths l ON l.side = ${side} AND l.row_id = tf.id
        GROUP BY tf.id`
    }).pipe(Effect.orDie, Effect.withSpan("FullTextIndex.scored"))

  /**
   * Moves a dataset side into a table of its own, once the queue is applied (the index then holds
   * the base table's words): its rows are copied into the new table and deleted from the shared
   * one with those same words. Lengths and statistics are per row and dataset already: they stay.
   */
  const promote = (side: FullTextSide, datasetId: number) =>
    Effect.gen(function*() {
      const own = ownTable(side, datasetId)
      const shared = fullTextTable(side)
      const columns = FULL_TEXT_COLUMNS[side]
      const base = side === "entities" ? "gb_entities" : "gb_edges"
      yield* sql.unsafe(`CREATE VIRTUAL TABLE IF NOT EXISTS ${own} USING fts5(
        ${columns}, content = '${base}', content_rowid = 'id', tokenize = '${TOKENIZE}')`)
      yield* sql.unsafe(
        `INSERT INTO ${own} (rowid, ${columns}) SELECT id, ${columns} FROM ${base} WHERE dataset_id = ? ORDER BY id`,
        [datasetId]
      )
      yield* sql.unsafe(
        `INSERT INTO ${shared} (${shared}, rowid, dataset_id, ${columns})
          SELECT 'delete', id, dataset_id, ${columns} FROM ${base} WHERE dataset_id = ? ORDER BY id`,
        [datasetId]
      )
      yield* sql`INSERT INTO gb_fts_own (dataset_id, side) VALUES (${datasetId}, ${side})`
    })

  /** The rows whose last change in the queue is their insert: what the index holds of them now. */
  const lastInserts = `(SELECT MAX(id) AS id FROM gb_fts_pending GROUP BY side, row_id) last
    CROSS JOIN gb_fts_pending p ON p.id = last.id`

  /** Adds (sign 1) or takes away (-1) the touched rows' lengths from their datasets' statistics. */
  const addToStats = (sign: 1 | -1) =>
    `INSERT INTO gb_fts_stats (dataset_id, side, rows, tokens)
      SELECT l.dataset_id, l.side, ${sign} * COUNT(*), ${sign} * SUM(l.length)
      FROM (SELECT DISTINCT side, row_id FROM gb_fts_pending) p
      CROSS JOIN gb_fts_lengths l ON l.side = p.side AND l.row_id = p.row_id
      WHERE true
      GROUP BY l.dataset_id, l.side
      ON CONFLICT (dataset_id, side) DO UPDATE SET rows = rows + excluded.rows, tokens = tokens + excluded.tokens`

  /**
   * Applies the queue, oldest first: an insert row adds its words to the side's table, a delete
   * row is FTS5's 'delete' command with the words the index holds (an update queued both).
   * Then each touched row's length: its old one leaves the statistics and gb_fts_lengths, and
   * the row as it now is (its last queued insert, if any) is counted with the real tokenizer, in
   * a temp contentless FTS5 table (the writer keeps temp in memory, Sqlite.ts), and added. Costs
   * one read of an empty table when nothing is queued.
   */
  const flushQueue = Effect.gen(function*() {
    // the dataset sides the queue touches, and which have a table of their own
    const touched = yield* sql<{ dataset_id: number; side: FullTextSide; own: number }>`SELECT DISTINCT
      p.dataset_id AS dataset_id, p.side AS side, o.side IS NOT NULL AS own
      FROM gb_fts_pending p LEFT JOIN gb_fts_own o ON o.dataset_id = p.dataset_id AND o.side = p.side`
    if (touched.length === 0) return
    const writes: Array<string> = []
    for (const side of FULL_TEXT_SIDES) {
      const table = fullTextTable(side)
      const columns = FULL_TEXT_COLUMNS[side]
      // an FTS5 command names its table as a column; NULL there is a plain insert
      writes.push(`INSERT INTO ${table} (${table}, rowid, dataset_id, ${columns})
          SELECT CASE op WHEN 'delete' THEN 'delete' END, row_id, dataset_id, ${columns} FROM gb_fts_pending p
          WHERE side = '${side}' AND NOT EXISTS (SELECT 1 FROM gb_fts_own o WHERE o.dataset_id = p.dataset_id AND o.side = p.side)
          ORDER BY id`)
    }
    for (const { dataset_id, side } of touched.filter((t) => Number(t.own) === 1)) {
      const own = ownTable(side, Number(dataset_id))
      writes.push(`INSERT INTO ${own} (${own}, rowid, ${FULL_TEXT_COLUMNS[side]})
            SELECT CASE op WHEN 'delete' THEN 'delete' END, row_id, ${FULL_TEXT_COLUMNS[side]} FROM gb_fts_pending
            WHERE side = '${side}' AND dataset_id = ${Number(dataset_id)} ORDER BY id`)
    }
    writes.push(
      addToStats(-1),
      `DELETE FROM gb_fts_lengths WHERE (side, row_id) IN (SELECT side, row_id FROM gb_fts_pending)`,
      `CREATE VIRTUAL TABLE IF NOT EXISTS temp.gb_fts_count USING fts5(
      name, description, content = '', tokenize = '${TOKENIZE}')`,
      `CREATE VIRTUAL TABLE IF NOT EXISTS temp.gb_fts_count_vocab
      USING fts5vocab(temp, gb_fts_count, 'instance')`,
      `INSERT INTO temp.gb_fts_count (rowid, name, description)
      SELECT p.id, p.name, p.description FROM ${lastInserts} WHERE p.op = 'insert'`,
      // the counts go into a keyed table first: joined as a subquery, the vocabulary was scanned
      // again for every queued row (a flush of 100,000 rows took minutes; BENCHMARKS.md)
      `CREATE TEMP TABLE IF NOT EXISTS gb_fts_counted (doc INTEGER PRIMARY KEY, n INTEGER NOT NULL)`,
      `INSERT INTO temp.gb_fts_counted (doc, n) SELECT doc, COUNT(*) FROM temp.gb_fts_count_vocab GROUP BY doc`,
      `INSERT INTO gb_fts_lengths (side, row_id, dataset_id, length)
      SELECT p.side, p.row_id, p.dataset_id, COALESCE(c.n, 0) FROM ${lastInserts}
      LEFT JOIN temp.gb_fts_counted c ON c.doc = p.id
      WHERE p.op = 'insert'`,
      `DELETE FROM temp.gb_fts_counted`,
      `INSERT INTO temp.gb_fts_count (gb_fts_count) VALUES ('delete-all')`,
      addToStats(1),
      // a dataset side left without rows keeps no statistics
      `DELETE FROM gb_fts_stats WHERE rows = 0
      AND (dataset_id, side) IN (SELECT DISTINCT dataset_id, side FROM gb_fts_pending)`,
      `DELETE FROM gb_fts_pending`
    )
    // every statement above is ours, with our own integers and side names in it: no parameters
    yield* script === undefined
      ? Effect.forEach(writes, (write) => sql.unsafe(write), { discard: true })
      : script.exec(writes.join(";\n"))
    const sharedSides = touched.filter((t) => Number(t.own) === 0)
    if (sharedSides.length === 0) return
    const crossed = yield* sql<{ dataset_id: number; side: FullTextSide }>`SELECT dataset_id, side FROM gb_fts_stats
      WHERE rows >= ${ownTableRows} AND (dataset_id, side) IN (VALUES ${
      sql.literal(sharedSides.map((t) => `(${Number(t.dataset_id)}, '${t.side}')`).join(", "))
    })`
    for (const { dataset_id, side } of crossed) yield* promote(side, Number(dataset_id))
  })

  const flush = flushQueue.pipe(Effect.orDie, Effect.withSpan("FullTextIndex.flush"))

  /** Every dataset side with a table of its own. */
  const owned = sql<{ dataset_id: number; side: FullTextSide }>`SELECT dataset_id, side FROM gb_fts_own
    ORDER BY dataset_id, side`

  // the table names are ours, not input: an FTS5 command names its table as a column
  const optimize: Effect.Effect<void, SqlError.SqlError> = Effect.flatMap(owned, (own) =>
    Effect.forEach(
      [...FULL_TEXT_SIDES.map(fullTextTable), ...own.map((o) => ownTable(o.side, Number(o.dataset_id)))],
      (table) => sql.unsafe(`INSERT INTO ${table}(${table}) VALUES ('optimize')`),
      { discard: true }
    ))

  return FullTextIndex.of({
    scored,
    flush,
    rows: (side, datasetId) => rows(side, datasetId).pipe(Effect.withSpan("FullTextIndex.rows")),
    // changes plain SQL queued still hold deleted words: applied first, in a transaction of their own
    compact: sql.withTransaction(flushQueue).pipe(
      Effect.zipRight(optimize),
      Effect.orDie,
      Effect.withSpan("FullTextIndex.compact")
    ),
    // the cascade queued the rows' deletes: applying them takes the rows' terms and lengths away;
    // an own table is dropped whole (its pages freed, which secure_delete zeroes)
    drop: (datasetId) =>
      flushQueue.pipe(
        Effect.zipRight(sql`DELETE FROM gb_fts_stats WHERE dataset_id = ${datasetId}`),
        Effect.zipRight(Effect.forEach(
          FULL_TEXT_SIDES,
          (side) => sql.unsafe(`DROP TABLE IF EXISTS ${ownTable(side, datasetId)}`),
          { discard: true }
        )),
        Effect.zipRight(sql`DELETE FROM gb_fts_own WHERE dataset_id = ${datasetId}`),
        Effect.asVoid,
        Effect.orDie,
        Effect.withSpan("FullTextIndex.drop")
      )
  })
}

/** PostgreSQL's adapter: the tsvector column its triggers keep (migration 0004). */
export const makePgFullText = (sql: SqlClient.SqlClient): FullTextIndex["Type"] => {
  const base = (side: FullTextSide) => sql.literal(side === "entities" ? "gb_entities" : "gb_edges")
  return FullTextIndex.of({
    scored: (side, datasetId, terms) => {
      const query = sql`(${sql.join(" || ", false)(terms.map((t) => sql`plainto_tsquery('english', ${t})`))})`
      return Effect.succeed<Fragment>(
        terms.length === 0
          ? sql`SELECT NULL AS id, NULL AS score WHERE false`
          : sql`SELECT id, ts_rank(search_tsv, ${query}) AS score FROM ${base(side)}
            WHERE search_tsv @@ ${query} AND dataset_id = ${datasetId}`
      ).pipe(Effect.withSpan("FullTextIndex.scored"))
    },
    flush: Effect.void.pipe(Effect.withSpan("FullTextIndex.flush")),
    rows: (side, datasetId) =>
      sql<{ n: number }>`SELECT COUNT(*) AS n FROM ${base(side)} WHERE dataset_id = ${datasetId}`.pipe(
        Effect.map((found) => Number(found[0]?.n ?? 0)),
        Effect.orDie,
        Effect.withSpan("FullTextIndex.rows")
      ),
    compact: Effect.void.pipe(Effect.withSpan("FullTextIndex.compact")),
    drop: () => Effect.void.pipe(Effect.withSpan("FullTextIndex.drop"))
  })
}

/** The adapter of `sql`'s dialect. */
export const makeFullTextIndex = (sql: SqlClient.SqlClient, options: FullTextOptions = {}): FullTextIndex["Type"] =>
  sql.onDialectOrElse({ pg: () => makePgFullText(sql), orElse: () => makeSqliteFullText(sql, options) })

/**
 * The index over the writer's client, and its flush as a pre-commit hook of
 * `Database.withTransaction`.
 */
export const fullTextIndexLayer = (
  options: FullTextOptions = {}
): Layer.Layer<FullTextIndex | PreCommitHooks, never, SqlClient.SqlClient> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // gligabao's SQLite client runs scripts (sqliteClient.ts); another client does without
      const script = Option.getOrUndefined(yield* Effect.serviceOption(SqliteScript))
      const index = makeFullTextIndex(sql, { script, ...options })
      return Context.make(FullTextIndex, index).pipe(Context.add(PreCommitHooks, [index.flush]))
    })
  )

/** `fullTextIndexLayer` with the default threshold (OWN_TABLE_ROWS). */
export const FullTextIndexLive = fullTextIndexLayer()
