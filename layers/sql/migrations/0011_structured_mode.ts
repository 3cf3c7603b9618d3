/**
 * gb_inferences.structured_mode: how a model call's answer was constrained:
 * `json_schema` or `json_object` (OpenAI-compatible response_format), `tool` (Anthropic's forced
 * tool call) or `none`; NULL for embeddings, failed calls and calls recorded before this.
 * Same DDL on both dialects (TEXT, nullable).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`ALTER TABLE gb_inferences ADD COLUMN structured_mode TEXT`)
})
