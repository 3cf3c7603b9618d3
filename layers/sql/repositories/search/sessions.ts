/**
 * A dataset's sessions with their counts, for SearchRepo. Chunks and summaries are pieces of a
 * text the session remembered, so they are not counted.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { SessionCounts } from "../../../../src/services/SearchRepo.js"

export const makeSessions = (sql: SqlClient.SqlClient) => (datasetId: number) =>
  Effect.gen(function*() {
    const texts = yield* sql<{
      session_id: string
      n: number
      first_at: string
      last_at: string
      first_stored_at: string
      last_stored_at: string
    }>`
      SELECT session_id, COUNT(*) AS n, MIN(valid_at) AS first_at, MAX(valid_at) AS last_at,
        MIN(created_at) AS first_stored_at, MAX(created_at) AS last_stored_at
      FROM gb_artifacts
      WHERE dataset_id = ${datasetId} AND session_id IS NOT NULL AND kind NOT IN ('chunk', 'chunk_summary')
      GROUP BY session_id`
    const entityCounts = yield* sql<{ session_id: string; n: number }>`
      SELECT ns.session_id, COUNT(*) AS n
      FROM gb_entities n JOIN gb_entity_sessions ns ON ns.entity_id = n.id
      WHERE n.dataset_id = ${datasetId}
      GROUP BY ns.session_id`
    const edgeCounts = yield* sql<{ session_id: string; n: number }>`
      SELECT es.session_id, COUNT(*) AS n
      FROM gb_edges e JOIN gb_edge_sessions es ON es.edge_id = e.id
      WHERE e.dataset_id = ${datasetId}
      GROUP BY es.session_id`
    const byId = new Map<string, { -readonly [K in keyof SessionCounts]: SessionCounts[K] }>()
    const entry = (id: string) => {
      let row = byId.get(id)
      if (row === undefined) {
        row = {
          session_id: id,
          artifacts: 0,
          entities: 0,
          edges: 0,
          first_at: null,
          last_at: null,
          first_stored_at: null,
          last_stored_at: null
        }
        byId.set(id, row)
      }
      return row
    }
    for (const r of texts) {
      Object.assign(entry(r.session_id), {
        artifacts: Number(r.n),
        first_at: r.first_at,
        last_at: r.last_at,
        first_stored_at: r.first_stored_at,
        last_stored_at: r.last_stored_at
      })
    }
    for (const r of entityCounts) entry(r.session_id).entities = Number(r.n)
    for (const r of edgeCounts) entry(r.session_id).edges = Number(r.n)
    return [...byId.values()].sort((a, b) => (a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : 0))
  }).pipe(Effect.orDie)
