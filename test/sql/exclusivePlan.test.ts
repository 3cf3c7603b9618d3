/**
 * An exclusive relation's candidates (docs/SCHEMA.md) are read through the (source_id, created_at)
 * and (target_id, created_at) indexes, newest first and stopped at the cap, on SQLite without
 * statistics: their cost follows the entity's facts, never the dataset's size.
 */
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { SqliteLive } from "../../layers/sql/index.js"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import { GraphRepo } from "../../src/services/GraphRepo.js"
import { planOf, sqlCapture } from "../support/sqlCapture.js"

const trace = sqlCapture()

describe("query plans", () => {
  it.effect("loadEdgesByEnds walks the end's (…, created_at) index, with no sort and no scan", () =>
    Effect.gen(function*() {
      const dataset = yield* (yield* DatasetsRepo).getOrCreate("u", "main", "2026-01-01T00:00:00.000Z")
      const graph = yield* GraphRepo
      trace.start()
      yield* graph.loadEdgesByEnds(dataset.id, [
        { side: "source", entity_id: 1, relation: "lives_in" },
        { side: "target", entity_id: 2, relation: "ceo_of" }
      ], 50)
      trace.stop()
      const [bySource, byTarget] = trace.captured.filter((sql) => sql.includes("e.relation = ?"))
      const sourcePlan = yield* planOf(bySource!)
      expect(sourcePlan).toMatch(/SEARCH e USING INDEX gb_edges_source_created \(source_id=\?\)/)
      const targetPlan = yield* planOf(byTarget!)
      expect(targetPlan).toMatch(/SEARCH e USING INDEX gb_edges_target_created \(target_id=\?\)/)
      for (const plan of [sourcePlan, targetPlan]) expect(plan).not.toMatch(/SCAN|TEMP B-TREE/)
    }).pipe(Effect.provide(SqliteLive(":memory:"))))
})
