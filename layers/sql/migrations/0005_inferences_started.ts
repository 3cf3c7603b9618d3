/**
 * gb_inferences by started_at: the admin usage view reads the calls of one period (a range on
 * started_at), which would otherwise scan every inference ever recorded.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE INDEX gb_inferences_started ON gb_inferences (started_at)`)
})
