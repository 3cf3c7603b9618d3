/**
 * A chunked text's progress in the durable queue: the document artifact its first chunk stored
 * and how many chunks are stored, written in each chunk's store transaction, so a run taken
 * over or retried goes on from the chunk after the last stored one.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ref = sql.onDialectOrElse({ pg: () => "BIGINT", orElse: () => "INTEGER" })
  yield* sql.unsafe(`ALTER TABLE gb_remember_queue ADD COLUMN document_id ${ref}`)
  yield* sql.unsafe(`ALTER TABLE gb_remember_queue ADD COLUMN stored_chunks ${ref} NOT NULL DEFAULT 0`)
})
