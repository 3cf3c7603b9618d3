/**
 * `embedded_at` on entities and edges: set when a row's vector is written or queued in the
 * outbox, so `gligabao reembed` finds the rows stored before embeddings were configured
 * (partial indexes keep that lookup cheap on a big dataset).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const time = sql.onDialectOrElse({ pg: () => `TEXT COLLATE "C"`, orElse: () => "TEXT" })
  yield* sql.unsafe(`ALTER TABLE gb_entities ADD COLUMN embedded_at ${time}`)
  yield* sql.unsafe(`ALTER TABLE gb_edges ADD COLUMN embedded_at ${time}`)
  yield* sql.unsafe(`CREATE INDEX gb_entities_unembedded ON gb_entities (dataset_id, id) WHERE embedded_at IS NULL`)
  yield* sql.unsafe(`CREATE INDEX gb_edges_unembedded ON gb_edges (dataset_id, id) WHERE embedded_at IS NULL`)
  // deleting an artifact nulls its edges' artifact_id: without an index that is a full scan
  yield* sql.unsafe(`CREATE INDEX gb_edges_artifact ON gb_edges (artifact_id)`)
})
