/**
 * Indexes of the durable queue's hot paths: a run about to apply finds the unfinished runs of
 * its dataset submitted before it (across processes), and the heartbeat purges expired
 * Idempotency-Keys.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(
    `CREATE INDEX gb_remember_runs_unfinished ON gb_remember_runs (user_id, dataset, id)
      WHERE status IN ('queued', 'started')`
  )
  yield* sql.unsafe(`CREATE INDEX gb_remember_idempotency_created ON gb_remember_idempotency (created_at)`)
})
