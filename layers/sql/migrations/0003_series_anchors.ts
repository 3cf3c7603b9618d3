/**
 * Series anchors: one row per (series, target), so re-anchoring a series (a repeated remember,
 * a fetch that finds it again) adds nothing; and indexes on the anchored rows, so finding the
 * series of an entity, edge or artifact, and the cascade when one is deleted, are not scans.
 * COALESCE makes the unique index see the NULLs of the two unused columns as equal.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE UNIQUE INDEX gb_series_anchors_unique ON gb_series_anchors
    (series_id, COALESCE(artifact_id, 0), COALESCE(entity_id, 0), COALESCE(edge_id, 0))`)
  yield* sql.unsafe(`DROP INDEX gb_series_anchors_series`)
  yield* sql.unsafe(
    `CREATE INDEX gb_series_anchors_artifact ON gb_series_anchors (artifact_id) WHERE artifact_id IS NOT NULL`
  )
  yield* sql.unsafe(
    `CREATE INDEX gb_series_anchors_entity ON gb_series_anchors (entity_id) WHERE entity_id IS NOT NULL`
  )
  yield* sql.unsafe(`CREATE INDEX gb_series_anchors_edge ON gb_series_anchors (edge_id) WHERE edge_id IS NOT NULL`)
})
