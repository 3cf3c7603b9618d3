/**
 * What an exact forget needs (docs/FORGET.md):
 * - each provenance link keeps what its artifact stated (an entity's spelling and description,
 *   a fact's description and times), so a fact or entity that outlives a forgotten artifact
 *   takes the words of the artifacts that remain;
 * - gb_edge_closures records every closing decision when it is made, in the store transaction:
 *   which fact was closed, by which fact (and artifact), and the values it replaced;
 * - the outbox carries vector deletes as well as upserts.
 * Rows stored before this migration have no statements and no decisions: a forget does not
 * reopen what they closed.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  const pk = pg ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
  const ref = pg ? "BIGINT" : "INTEGER"
  const time = pg ? `TEXT COLLATE "C"` : "TEXT"
  const statements = [
    `ALTER TABLE gb_entity_artifacts ADD COLUMN name TEXT`,
    `ALTER TABLE gb_entity_artifacts ADD COLUMN description TEXT`,
    `ALTER TABLE gb_edge_artifacts ADD COLUMN description TEXT`,
    `ALTER TABLE gb_edge_artifacts ADD COLUMN valid_at ${time}`,
    `ALTER TABLE gb_edge_artifacts ADD COLUMN invalid_at ${time}`,
    `CREATE TABLE gb_edge_closures (
      id ${pk},
      edge_id ${ref} NOT NULL REFERENCES gb_edges (id) ON DELETE CASCADE,
      by_edge_id ${ref} REFERENCES gb_edges (id) ON DELETE CASCADE,
      artifact_id ${ref} REFERENCES gb_artifacts (id) ON DELETE SET NULL,
      kind TEXT NOT NULL,
      invalid_at ${time} NOT NULL,
      expired_at ${time} NOT NULL,
      prev_invalid_at ${time},
      created_at ${time} NOT NULL
    )`,
    `CREATE INDEX gb_edge_closures_edge ON gb_edge_closures (edge_id)`,
    `CREATE INDEX gb_edge_closures_by_edge ON gb_edge_closures (by_edge_id) WHERE by_edge_id IS NOT NULL`,
    `CREATE INDEX gb_edge_closures_artifact ON gb_edge_closures (artifact_id) WHERE artifact_id IS NOT NULL`,
    `ALTER TABLE gb_vector_outbox ADD COLUMN op TEXT NOT NULL DEFAULT 'upsert'`,
    `CREATE INDEX gb_vector_outbox_vector ON gb_vector_outbox (index_name, vector_id)`,
    `CREATE INDEX gb_remember_runs_artifact ON gb_remember_runs (artifact_id) WHERE artifact_id IS NOT NULL`
  ]
  for (const statement of statements) yield* sql.unsafe(statement)
})
