/**
 * The caller's metadata on artifacts, key by key, for the read filters (issue 42): each key of
 * an artifact's `metadata` that is the caller's (not gligabao's own chunk, conversation or web
 * search keys) with its value typed. Strings and booleans in `text_value`; numbers, and strings
 * that are RFC 3339 times (as epoch milliseconds), in `num_value`. The primary key serves the
 * check of one artifact; the two dataset indexes serve equality and ranges. No artifact had
 * caller metadata before this migration, so there is nothing to fill.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  const ref = pg ? "BIGINT" : "INTEGER"
  const real = pg ? "DOUBLE PRECISION" : "REAL"
  const text = pg ? `TEXT COLLATE "C"` : "TEXT"
  const statements = [
    `CREATE TABLE gb_artifact_metadata (
      artifact_id ${ref} NOT NULL REFERENCES gb_artifacts (id) ON DELETE CASCADE,
      dataset_id ${ref} NOT NULL,
      key ${text} NOT NULL,
      value_type TEXT NOT NULL,
      text_value ${text},
      num_value ${real},
      PRIMARY KEY (artifact_id, key)
    )`,
    `CREATE INDEX gb_artifact_metadata_text ON gb_artifact_metadata (dataset_id, key, text_value)`,
    `CREATE INDEX gb_artifact_metadata_number ON gb_artifact_metadata (dataset_id, key, num_value)`
  ]
  for (const statement of statements) yield* sql.unsafe(statement)
})
