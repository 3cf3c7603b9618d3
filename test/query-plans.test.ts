/**
 * Hot-path queries read through the index meant for them, on SQLite without statistics (a
 * fresh file has none): the repository's own SQL is trace.captured as it runs, then explained.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { SqliteLive } from "../layers/sql/index.js"
import { DatasetsRepo } from "../src/services/DatasetsRepo.js"
import { ForgetRepo } from "../src/services/ForgetRepo.js"
import { GraphRepo } from "../src/services/GraphRepo.js"
import { SearchRepo } from "../src/services/SearchRepo.js"
import { sqlCapture } from "./support/sqlCapture.js"

const trace = sqlCapture()

describe("query plans", () => {
  it.effect("findEntitiesByNameKeys reads (dataset_id, name_key), not every entity of the dataset", () =>
    Effect.gen(function*() {
      const dataset = yield* (yield* DatasetsRepo).getOrCreate("u", "main", "2026-01-01T00:00:00.000Z")
      const graph = yield* GraphRepo
      trace.start()
      yield* graph.findEntitiesByNameKeys(dataset.id, ["alice", "bob"])
      trace.stop()
      const lookup = trace.captured.find((sql) => sql.includes("name_key IN"))
      expect(lookup).toBeDefined()
      const sql = yield* SqlClient.SqlClient
      const params = (lookup!.match(/\?/g) ?? []).map(() => null)
      const plan = yield* sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${lookup}`, params)
      expect(plan.map((r) => r.detail).join("\n")).toMatch(/USING (COVERING )?INDEX gb_entities_dataset_name_key/)
    }).pipe(Effect.provide(SqliteLive(":memory:"))))

  it.effect("loadEdgesByTriples reads (dataset_id, source_id, target_id, relation) per wanted triple", () =>
    Effect.gen(function*() {
      const dataset = yield* (yield* DatasetsRepo).getOrCreate("u", "main", "2026-01-01T00:00:00.000Z")
      const graph = yield* GraphRepo
      trace.start()
      yield* graph.loadEdgesByTriples(dataset.id, [
        { source_id: 1, target_id: 2, relation: "works_at" },
        { source_id: 1, target_id: 3, relation: "lives_in" }
      ])
      trace.stop()
      const lookup = trace.captured.find((sql) => sql.includes("WITH wanted"))
      expect(lookup).toBeDefined()
      const sql = yield* SqlClient.SqlClient
      const params = (lookup!.match(/\?/g) ?? []).map(() => null)
      const plan = (yield* sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${lookup}`, params)).map((r) => r.detail)
      expect(plan.join("\n")).toMatch(
        /SEARCH e USING INDEX gb_edges_dataset_triple \(dataset_id=\? AND source_id=\? AND target_id=\? AND relation=\?\)/
      )
      expect(plan.join("\n")).not.toMatch(/SCAN e\b/)
    }).pipe(Effect.provide(SqliteLive(":memory:"))))
  it.effect("the closed candidates are read through the (source_id, created_at) and (target_id, created_at) indexes", () =>
    Effect.gen(function*() {
      const dataset = yield* (yield* DatasetsRepo).getOrCreate("u", "main", "2026-01-01T00:00:00.000Z")
      const graph = yield* GraphRepo
      trace.start()
      yield* graph.loadCandidateEdgesByNameKeys(dataset.id, ["alice", "berlin"], 20, "closed")
      trace.stop()
      const lookup = trace.captured.find((sql) => sql.includes("expired_at IS NOT NULL"))
      expect(lookup).toBeDefined()
      const sql = yield* SqlClient.SqlClient
      const params = (lookup!.match(/\?/g) ?? []).map(() => null)
      const plan = (yield* sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${lookup}`, params)).map((r) => r.detail)
      expect(plan.join("\n")).toMatch(/gb_edges USING INDEX gb_edges_source_created \(source_id=\?\)/)
      expect(plan.join("\n")).toMatch(/gb_edges USING INDEX gb_edges_target_created \(target_id=\?\)/)
      expect(plan.join("\n")).not.toMatch(/SCAN gb_edges\b/)
    }).pipe(Effect.provide(SqliteLive(":memory:"))))
  it.effect("a result's capped links walk each owner's primary key, not every link of the owners", () =>
    Effect.gen(function*() {
      const dataset = yield* (yield* DatasetsRepo).getOrCreate("u", "main", "2026-01-01T00:00:00.000Z")
      const sql = yield* SqlClient.SqlClient
      // three owners: the walks are joined by UNION ALL (padded to four)
      const owners = yield* Effect.forEach(["alice", "bob", "carol"], (key) =>
        Effect.map(
          sql<{ id: number }>`INSERT INTO gb_entities ${
            sql.insert({
              dataset_id: dataset.id,
              name: key,
              name_key: key,
              type: "person",
              created_at: "2026-01-01T00:00:00.000Z",
              updated_at: "2026-01-01T00:00:00.000Z"
            })
          } RETURNING id`,
          (rows) => rows[0]!.id
        ))
      const filters = {
        asOf: "2026-02-01T00:00:00.000Z",
        knownAt: "2026-02-01T00:00:00.000Z",
        includeExpired: false,
        sessionId: null,
        kind: null
      }
      trace.start()
      yield* (yield* SearchRepo).links("entity", owners, filters)
      trace.stop()
      const walks = trace.captured.filter((s) => s.includes("UNION ALL") && s.includes(") capped "))
      expect(walks.length).toBe(2)
      for (const walk of walks) {
        const params = (walk.match(/\?/g) ?? []).map(() => null)
        const plan = (yield* sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${walk}`, params)).map((r) => r.detail)
        expect(plan.join("\n")).toMatch(
          /SEARCH l USING (COVERING )?INDEX sqlite_autoindex_gb_entity_(artifacts|sessions)_1 \(entity_id=\?\)/
        )
        expect(plan.join("\n")).not.toMatch(/SCAN l\b/)
      }
    }).pipe(Effect.provide(SqliteLive(":memory:"))))
  it.effect("a forget's entities count their fact ends on the (source_id, …) and (target_id, …) indexes", () =>
    Effect.gen(function*() {
      const forget = yield* ForgetRepo
      trace.start()
      yield* forget.entities([1, 2], [3])
      yield* forget.entitiesLinkedTo([3])
      trace.stop()
      const sql = yield* SqlClient.SqlClient
      const explain = (text: string) =>
        Effect.map(
          sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`, (text.match(/\?/g) ?? []).map(() => null)),
          (rows) => rows.map((r) => r.detail).join("\n")
        )
      const counts = trace.captured.find((s) => s.includes("fact_ends"))
      expect(counts).toBeDefined()
      const plan = yield* explain(counts!)
      expect(plan).toMatch(/gb_edges USING COVERING INDEX gb_edges_source_created \(source_id=\?\)/)
      expect(plan).toMatch(/gb_edges USING COVERING INDEX gb_edges_target_created \(target_id=\?\)/)
      expect(plan).not.toMatch(/SCAN gb_edges\b/)
      const linked = trace.captured.find((s) => s.includes("FROM gb_entity_artifacts WHERE artifact_id IN"))
      expect(linked).toBeDefined()
      expect(yield* explain(linked!)).toMatch(/USING (COVERING )?INDEX gb_entity_artifacts_artifact \(artifact_id=\?\)/)
    }).pipe(Effect.provide(SqliteLive(":memory:"))))
})
