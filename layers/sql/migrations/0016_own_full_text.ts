/**
 * SQLite: the registry of datasets whose side has an FTS5 table of its own (layers/sql/FullText.ts,
 * docs/FULLTEXT-ENGINE.md): a side past a row threshold leaves the shared table for its own, which
 * FTS5's bm25 scores exactly and fast. The flush creates those tables; a file starts with none.
 * PostgreSQL: nothing.
 *
 * Its DDL is frozen here: a migration never imports runtime code (test/sql/migrationImports.test.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  if (pg) return
  yield* sql.unsafe(`CREATE TABLE gb_fts_own (
    dataset_id INTEGER NOT NULL,
    side TEXT NOT NULL,
    PRIMARY KEY (dataset_id, side)
  ) WITHOUT ROWID`)
})
