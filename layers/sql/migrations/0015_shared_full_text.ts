/**
 * SQLite's full-text index in one FTS5 table a side, for every dataset (layers/sql/FullText.ts,
 * docs/FULLTEXT-ENGINE.md): 0013's two tables a dataset made a file of thousands of datasets
 * slow to open (its schema holds ten tables a dataset) and every new dataset reloaded the
 * schema. Here:
 * - gb_fts_entities / gb_fts_edges, external content over the base tables, whose first column
 *   is the row's dataset_id (a search matches the dataset's token);
 * - gb_fts_lengths (each indexed row's tokens) and gb_fts_stats (each dataset side's rows and
 *   tokens), the statistics that keep scores per dataset;
 * - both tables filled from the base tables, which 0013's tables equal once the queue is
 *   applied (an external-content index holds no text to copy), and the queue emptied;
 * - 0013's tables dropped, newest first (dropping in creation order costs twice as much).
 * The queue and 0013's triggers stay: they carry the dataset already. PostgreSQL is unchanged.
 *
 * Its DDL is frozen here, as FullText.ts used it when this migration was made: a migration never
 * imports runtime code (test/sql/migrationImports.test.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const TOKENIZE = "porter unicode61 remove_diacritics 2"

const SIDES = [
  { side: "entities", columns: "name, description", content: "gb_entities" },
  { side: "edges", columns: "description", content: "gb_edges" }
] as const

const create: ReadonlyArray<string> = [
  ...SIDES.map(({ columns, content, side }) =>
    `CREATE VIRTUAL TABLE gb_fts_${side} USING fts5(
      dataset_id, ${columns},
      content = '${content}', content_rowid = 'id', columnsize = 0,
      tokenize = '${TOKENIZE}'
    )`
  ),
  `CREATE TABLE gb_fts_lengths (
    side TEXT NOT NULL,
    row_id INTEGER NOT NULL,
    dataset_id INTEGER NOT NULL,
    length INTEGER NOT NULL,
    PRIMARY KEY (side, row_id)
  ) WITHOUT ROWID`,
  `CREATE TABLE gb_fts_stats (
    dataset_id INTEGER NOT NULL,
    side TEXT NOT NULL,
    rows INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, side)
  ) WITHOUT ROWID`
]

/** Rows counted at once in the temp table (its index is held in memory until 'delete-all'). */
const COUNT_BATCH = 5_000

/** 0013's table names: a guard on what is dropped. */
const PER_DATASET = /^gb_fts_(entities|edges)_\d+$/

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  if (pg) return
  for (const statement of create) yield* sql.unsafe(statement)
  for (const { side } of SIDES) yield* sql.unsafe(`INSERT INTO gb_fts_${side} (gb_fts_${side}) VALUES ('rebuild')`)
  yield* sql.unsafe(`DELETE FROM gb_fts_pending`)

  // each row's tokens, counted by the tokenizer itself in a contentless table of the connection's temp
  yield* sql.unsafe(`CREATE VIRTUAL TABLE temp.gb_fts_migrate_count USING fts5(
    name, description, content = '', tokenize = '${TOKENIZE}')`)
  yield* sql.unsafe(`CREATE VIRTUAL TABLE temp.gb_fts_migrate_vocab
    USING fts5vocab(temp, gb_fts_migrate_count, 'instance')`)
  for (const { content, side } of SIDES) {
    const name = side === "entities" ? "name" : "NULL"
    let after = 0
    for (;;) {
      const batch = yield* sql.unsafe<{ id: number }>(
        `SELECT id FROM ${content} WHERE id > ? ORDER BY id LIMIT 1 OFFSET ?`,
        [after, COUNT_BATCH - 1]
      )
      const last = batch[0] === undefined ? Number.MAX_SAFE_INTEGER : Number(batch[0].id)
      yield* sql.unsafe(
        `INSERT INTO temp.gb_fts_migrate_count (rowid, name, description)
          SELECT id, ${name}, description FROM ${content} WHERE id > ? AND id <= ?`,
        [after, last]
      )
      yield* sql.unsafe(
        `INSERT INTO gb_fts_lengths (side, row_id, dataset_id, length)
          SELECT '${side}', b.id, b.dataset_id, COALESCE(c.n, 0) FROM ${content} b
          LEFT JOIN (SELECT doc, COUNT(*) AS n FROM temp.gb_fts_migrate_vocab GROUP BY doc) c ON c.doc = b.id
          WHERE b.id > ? AND b.id <= ?`,
        [after, last]
      )
      yield* sql.unsafe(`INSERT INTO temp.gb_fts_migrate_count (gb_fts_migrate_count) VALUES ('delete-all')`)
      if (batch[0] === undefined) break
      after = last
    }
  }
  yield* sql.unsafe(`DROP TABLE temp.gb_fts_migrate_vocab`)
  yield* sql.unsafe(`DROP TABLE temp.gb_fts_migrate_count`)
  yield* sql.unsafe(`INSERT INTO gb_fts_stats (dataset_id, side, rows, tokens)
    SELECT dataset_id, side, COUNT(*), SUM(length) FROM gb_fts_lengths GROUP BY dataset_id, side`)

  // newest first: measured twice as fast as in creation order at 1,000 datasets (docs/FULLTEXT-ENGINE.md)
  const old = yield* sql.unsafe<{ name: string }>(
    `SELECT name FROM sqlite_schema WHERE type = 'table' AND name GLOB 'gb_fts_*'
      AND sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY rowid DESC`
  )
  for (const { name } of old) {
    if (PER_DATASET.test(name)) yield* sql.unsafe(`DROP TABLE ${name}`)
  }
})
