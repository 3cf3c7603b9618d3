/**
 * What forgetting a user or hard-deleting a dataset reads and cascades through (docs/FORGET.md):
 * - a user's datasets of a name, soft-deleted ones too (the live-name index covers live ones only);
 * - the foreign keys a dataset's or a run's delete follows that had no index, so neither delete
 *   scans a table: runs and inferences by dataset (ON DELETE SET NULL), Idempotency-Keys by run
 *   (ON DELETE CASCADE);
 * - a dataset's pending vector writes (the outbox has no foreign key, but is read by dataset).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const statements = [
    `CREATE INDEX gb_datasets_user_name ON gb_datasets (user_id, name)`,
    `CREATE INDEX gb_remember_runs_dataset_id ON gb_remember_runs (dataset_id)`,
    `CREATE INDEX gb_inferences_dataset ON gb_inferences (dataset_id)`,
    `CREATE INDEX gb_remember_idempotency_run ON gb_remember_idempotency (run_id)`,
    `CREATE INDEX gb_vector_outbox_dataset ON gb_vector_outbox (dataset_id)`
  ]
  for (const statement of statements) yield* sql.unsafe(statement)
})
