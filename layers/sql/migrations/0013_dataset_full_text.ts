/**
 * SQLite's full-text index per dataset (layers/sql/FullText.ts): the shared FTS5 tables of 0004
 * ranked every dataset's matches with the whole file's statistics, so one dataset's writes
 * reordered another's search. Here:
 * - gb_fts_pending, the queue of index changes the triggers write (they cannot name a table
 *   per row);
 * - the base tables' triggers rewritten to queue, and an update queues only when the words
 *   change (the entity upsert sets the description on every conflict);
 * - each existing dataset's two tables, filled from its rows; the shared tables dropped.
 * PostgreSQL is unchanged: ts_rank scores a row by itself.
 *
 * Its DDL is frozen here, as layers/sql/FullText.ts wrote it when this migration was made: a
 * migration never imports runtime code, so a later change there never changes what an old
 * migration does (test/sql/migrationImports.test.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** A side's indexed columns and its content table (FullText.ts's FULL_TEXT_COLUMNS and CONTENT). */
const SIDES = [
  { side: "entities", columns: "name, description", content: "gb_entities" },
  { side: "edges", columns: "description", content: "gb_edges" }
] as const

/** A dataset's FTS5 table (FullText.ts's fullTextTable): our own integer id, never input text. */
const fullTextTable = (side: "entities" | "edges", datasetId: number): string => {
  if (!Number.isSafeInteger(datasetId) || datasetId < 0) throw new Error(`not a dataset id: ${datasetId}`)
  return `gb_fts_${side}_${datasetId}`
}

/** A dataset's two tables (FullText.ts's createFullTextStatements): porter over unicode61, as 0004. */
const createFullTextStatements = (datasetId: number): ReadonlyArray<string> =>
  SIDES.map(({ columns, content, side }) =>
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${fullTextTable(side, datasetId)} USING fts5(
      ${columns},
      content = '${content}', content_rowid = 'id',
      tokenize = 'porter unicode61 remove_diacritics 2'
    )`
  )

const queued = (side: "entities" | "edges", op: "insert" | "delete", row: "new" | "old") =>
  side === "entities"
    ? `INSERT INTO gb_fts_pending (dataset_id, side, op, row_id, name, description)
        VALUES (${row}.dataset_id, 'entities', '${op}', ${row}.id, ${row}.name, ${row}.description);`
    : `INSERT INTO gb_fts_pending (dataset_id, side, op, row_id, name, description)
        VALUES (${row}.dataset_id, 'edges', '${op}', ${row}.id, NULL, ${row}.description);`

/** The base table's insert, delete and update triggers of a side (migration 0004's names). */
const triggers = (side: "entities" | "edges"): ReadonlyArray<string> => {
  const table = side === "entities" ? "gb_entities" : "gb_edges"
  const columns = side === "entities" ? ["name", "description"] : ["description"]
  return [
    `CREATE TRIGGER ${table}_fts_insert AFTER INSERT ON ${table} BEGIN
      ${queued(side, "insert", "new")}
    END`,
    `CREATE TRIGGER ${table}_fts_delete AFTER DELETE ON ${table} BEGIN
      ${queued(side, "delete", "old")}
    END`,
    `CREATE TRIGGER ${table}_fts_update AFTER UPDATE OF ${columns.join(", ")} ON ${table}
      WHEN ${columns.map((c) => `old.${c} IS NOT new.${c}`).join(" OR ")} BEGIN
      ${queued(side, "delete", "old")}
      ${queued(side, "insert", "new")}
    END`
  ]
}

const sqlite: ReadonlyArray<string> = [
  `DROP TRIGGER gb_entities_fts_insert`,
  `DROP TRIGGER gb_entities_fts_delete`,
  `DROP TRIGGER gb_entities_fts_update`,
  `DROP TRIGGER gb_edges_fts_insert`,
  `DROP TRIGGER gb_edges_fts_delete`,
  `DROP TRIGGER gb_edges_fts_update`,
  `DROP TABLE gb_entities_fts`,
  `DROP TABLE gb_edges_fts`,
  `CREATE TABLE gb_fts_pending (
    id INTEGER PRIMARY KEY,
    dataset_id INTEGER NOT NULL,
    side TEXT NOT NULL,
    op TEXT NOT NULL,
    row_id INTEGER NOT NULL,
    name TEXT,
    description TEXT
  )`,
  ...triggers("entities"),
  ...triggers("edges")
]

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  if (pg) return
  for (const statement of sqlite) yield* sql.unsafe(statement)
  const datasets = yield* sql<{ id: number }>`SELECT id FROM gb_datasets ORDER BY id`
  for (const { id } of datasets) {
    for (const statement of createFullTextStatements(Number(id))) yield* sql.unsafe(statement)
    for (const { columns, content, side } of SIDES) {
      yield* sql.unsafe(
        `INSERT INTO ${fullTextTable(side, Number(id))} (rowid, ${columns})
          SELECT id, ${columns} FROM ${content}
          WHERE dataset_id = ? ORDER BY id`,
        [id]
      )
    }
  }
})
