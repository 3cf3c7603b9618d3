/**
 * The durable remember queue (docs/INGESTION.md): a submitted run's whole request waits in
 * gb_remember_queue until its artifact is stored (the row is deleted in that transaction) or
 * the run finished; a run counts its attempts and keeps its response; Idempotency-Keys name
 * their run per user (the primary key is the UNIQUE (user_id, idempotency_key) that makes two
 * concurrent submissions one run).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  const ref = pg ? "BIGINT" : "INTEGER"
  const time = pg ? `TEXT COLLATE "C"` : "TEXT"
  const statements = [
    `ALTER TABLE gb_remember_runs ADD COLUMN attempts ${ref} NOT NULL DEFAULT 0`,
    `ALTER TABLE gb_remember_runs ADD COLUMN response TEXT`,
    `ALTER TABLE gb_remember_runs ADD COLUMN error_tag TEXT`,
    `CREATE TABLE gb_remember_queue (
      run_id ${ref} PRIMARY KEY REFERENCES gb_remember_runs (id) ON DELETE CASCADE,
      request TEXT NOT NULL
    )`,
    `CREATE TABLE gb_remember_idempotency (
      user_id TEXT NOT NULL,
      idempotency_key TEXT NOT NULL,
      request_hash TEXT NOT NULL,
      run_id ${ref} NOT NULL REFERENCES gb_remember_runs (id) ON DELETE CASCADE,
      created_at ${time} NOT NULL,
      PRIMARY KEY (user_id, idempotency_key)
    )`,
    `CREATE INDEX gb_remember_runs_user_id ON gb_remember_runs (user_id, id)`
  ]
  for (const statement of statements) yield* sql.unsafe(statement)
})
