/**
 * AdminRepo on both dialects: usage over a period, every user's datasets, a bounded graph slice.
 */
import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { usageStatement } from "../layers/sql/repositories/Admin.js"
import type { InferenceInput } from "../src/domain/Rows.js"
import { AdminRepo } from "../src/services/AdminRepo.js"
import { DatasetsRepo } from "../src/services/DatasetsRepo.js"
import { type EntityUpsert, GraphRepo, type NewArtifact, type NewEdge } from "../src/services/GraphRepo.js"
import { InferencesRepo } from "../src/services/InferencesRepo.js"
import { forEachDialect } from "./support/databases.js"

/** a time `seconds` after a fixed origin, in the stored format */
const t = (seconds: number) => new Date(Date.UTC(2025, 0, 1) + seconds * 1000).toISOString()

const inference = (
  started_at: string,
  stage: string,
  provider: string,
  model: string,
  cost_usd: number,
  tokens: [number, number],
  error: string | null = null
): InferenceInput => ({
  type: "remember",
  stage,
  provider,
  model,
  reasoning: "none",
  input_tokens: tokens[0],
  output_tokens: tokens[1],
  // cache tokens are not part of the usage sums
  cache_read_tokens: 1000,
  cache_write_tokens: 1000,
  web_search_requests: 0,
  cost_usd,
  latency_ms: 5,
  started_at,
  error,
  run_id: null,
  dataset_id: null
})

const entity = (name: string): EntityUpsert => ({
  name,
  name_key: name.toLowerCase(),
  type: "thing",
  description: `${name} described`,
  model_id: null,
  created_at: t(0)
})

const edge = (datasetId: number, sourceId: number, targetId: number, relation: string, at: number): NewEdge => ({
  dataset_id: datasetId,
  source_id: sourceId,
  target_id: targetId,
  relation,
  description: `${relation} fact`,
  valid_at: t(at),
  invalid_at: null,
  created_at: t(at),
  expired_at: null,
  artifact_id: null,
  model_id: null
})

const artifact = (datasetId: number, text: string, at = 0): NewArtifact => ({
  dataset_id: datasetId,
  kind: "knowledge",
  text,
  parent_id: null,
  session_id: "s1",
  valid_at: t(at),
  created_at: t(at),
  inference_id: null,
  query: null,
  metadata: null
})

/** totals with every field, so a missing or extra one fails toEqual */
const totals = (calls: number, failed: number, input_tokens: number, output_tokens: number, cost_usd: number) => ({
  calls,
  failed,
  input_tokens,
  output_tokens,
  cost_usd
})

// costs are binary fractions, so sums are exact in any order on both dialects
const seedUsage = Effect.gen(function*() {
  const inferences = yield* InferencesRepo
  const rows = [
    inference("2025-03-01T09:59:59.999Z", "extract_graph", "anthropic", "haiku", 8, [9000, 900]), // before from
    inference("2025-03-01T10:00:00.000Z", "extract_graph", "anthropic", "haiku", 0.25, [100, 10]), // at from
    inference("2025-03-01T10:59:59.999Z", "extract_graph", "anthropic", "haiku", 0.125, [50, 5], "boom"),
    inference("2025-03-01T11:30:00.000Z", "resolve_edges", "anthropic", "sonnet", 0.5, [200, 20]),
    inference("2025-03-01T12:00:00.000Z", "resolve_edges", "openai", "gpt-5", 0, [1, 1]),
    inference("2025-03-02T00:15:00.000Z", "summarize_chunk", "openai", "gpt-5", 0.5, [10, 1]),
    inference("2025-03-02T00:30:00.000Z", "classify", "openai", "gpt-5", 0.5, [20, 2]),
    inference("2025-03-02T01:00:00.000Z", "resolve_edges", "anthropic", "sonnet", 8, [9000, 900]) // at to
  ]
  for (const row of rows) yield* inferences.record(row)
})

const PERIOD = { from: "2025-03-01T10:00:00.000Z", to: "2025-03-02T01:00:00.000Z" }

forEachDialect((dialect, makeLayer) => {
  const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof makeLayer>>>) =>
    effect.pipe(Effect.provide(makeLayer()))

  it.effect("usage: totals, by stage, by model and hour buckets of [from, to), failed counted", () =>
    run(
      Effect.gen(function*() {
        yield* seedUsage
        const usage = yield* (yield* AdminRepo).inferenceUsage({ ...PERIOD, bucket: "hour" })
        expect(usage.totals).toEqual(totals(6, 1, 381, 39, 1.875))
        // cost desc, then calls desc (resolve_edges has 2), then name
        expect(usage.by_stage).toEqual([
          { stage: "resolve_edges", ...totals(2, 0, 201, 21, 0.5) },
          { stage: "classify", ...totals(1, 0, 20, 2, 0.5) },
          { stage: "summarize_chunk", ...totals(1, 0, 10, 1, 0.5) },
          { stage: "extract_graph", ...totals(2, 1, 150, 15, 0.375) }
        ])
        expect(usage.by_model).toEqual([
          { provider: "openai", model: "gpt-5", ...totals(3, 0, 31, 4, 1) },
          { provider: "anthropic", model: "sonnet", ...totals(1, 0, 200, 20, 0.5) },
          { provider: "anthropic", model: "haiku", ...totals(2, 1, 150, 15, 0.375) }
        ])
        expect(usage.buckets).toEqual([
          {
            start: "2025-03-01T10:00:00.000Z",
            stage: "extract_graph",
            model: "haiku",
            ...totals(2, 1, 150, 15, 0.375)
          },
          { start: "2025-03-01T11:00:00.000Z", stage: "resolve_edges", model: "sonnet", ...totals(1, 0, 200, 20, 0.5) },
          { start: "2025-03-01T12:00:00.000Z", stage: "resolve_edges", model: "gpt-5", ...totals(1, 0, 1, 1, 0) },
          { start: "2025-03-02T00:00:00.000Z", stage: "classify", model: "gpt-5", ...totals(1, 0, 20, 2, 0.5) },
          { start: "2025-03-02T00:00:00.000Z", stage: "summarize_chunk", model: "gpt-5", ...totals(1, 0, 10, 1, 0.5) }
        ])
        for (const value of Object.values(usage.totals)) expect(typeof value).toBe("number")
        for (const bucket of usage.buckets) expect(typeof bucket.calls).toBe("number")
      })
    ))

  it.effect("usage: day buckets; the boundaries are from inclusive, to exclusive; an empty period is zeros", () =>
    run(
      Effect.gen(function*() {
        yield* seedUsage
        const admin = yield* AdminRepo
        const usage = yield* admin.inferenceUsage({ ...PERIOD, bucket: "day" })
        expect(usage.buckets.map((b) => [b.start, b.stage, b.model, b.calls])).toEqual([
          ["2025-03-01T00:00:00.000Z", "extract_graph", "haiku", 2],
          ["2025-03-01T00:00:00.000Z", "resolve_edges", "gpt-5", 1],
          ["2025-03-01T00:00:00.000Z", "resolve_edges", "sonnet", 1],
          ["2025-03-02T00:00:00.000Z", "classify", "gpt-5", 1],
          ["2025-03-02T00:00:00.000Z", "summarize_chunk", "gpt-5", 1]
        ])
        // one millisecond wider on each side takes in both rows at the edges
        const wider = yield* admin.inferenceUsage({
          from: "2025-03-01T09:59:59.999Z",
          to: "2025-03-02T01:00:00.001Z",
          bucket: "day"
        })
        expect(wider.totals).toEqual(totals(8, 1, 18381, 1839, 17.875))
        const empty = yield* admin.inferenceUsage({
          from: "2025-04-01T00:00:00.000Z",
          to: "2025-05-01T00:00:00.000Z",
          bucket: "hour"
        })
        expect(empty).toEqual({ totals: totals(0, 0, 0, 0, 0), by_stage: [], by_model: [], buckets: [] })
      })
    ))

  if (dialect === "sqlite") {
    it.effect("usage: the period is read through the started_at index", () =>
      run(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const plan = yield* sql<{ detail: string }>`EXPLAIN QUERY PLAN ${
            usageStatement(sql, { ...PERIOD, bucket: "day" })
          }`
          const details = plan.map((row) => row.detail).join("\n")
          expect(details).toContain("USING INDEX gb_inferences_started (started_at>? AND started_at<?)")
        })
      ))
  }

  it.effect("datasets: every user's, soft-deleted included, newest first, paged, with counts", () =>
    run(
      Effect.gen(function*() {
        const datasets = yield* DatasetsRepo
        const graph = yield* GraphRepo
        const a = yield* datasets.getOrCreate("u1", "a", t(0))
        const b = yield* datasets.getOrCreate("u2", "b", t(10))
        const d = yield* datasets.getOrCreate("u3", "d", t(10)) // same time as b, later id: before it
        const c = yield* datasets.getOrCreate("u1", "c", t(20))
        const [x, y] = yield* graph.upsertEntities(a.id, [entity("X"), entity("Y")])
        yield* graph.insertEdges([edge(a.id, x!.id, y!.id, "r", 1), edge(a.id, y!.id, x!.id, "s", 2)])
        yield* graph.insertArtifact(artifact(a.id, "a text"))
        yield* graph.upsertEntities(c.id, [entity("Z")])
        yield* graph.insertArtifact(artifact(c.id, "c text"))
        yield* graph.insertArtifact(artifact(c.id, "c text 2"))
        yield* datasets.softDelete("u1", "c", t(30))
        const c2 = yield* datasets.getOrCreate("u1", "c", t(40))

        const admin = yield* AdminRepo
        const first = yield* admin.datasets({ limit: 2, offset: 0 })
        expect(first).toEqual({
          total: 5,
          datasets: [
            { ...c2, artifacts: 0, entities: 0, edges: 0 },
            { ...c, deleted_at: t(30), artifacts: 2, entities: 1, edges: 0 }
          ]
        })
        const second = yield* admin.datasets({ limit: 2, offset: 2 })
        expect(second.datasets.map((row) => row.id)).toEqual([d.id, b.id])
        const last = yield* admin.datasets({ limit: 2, offset: 4 })
        expect(last).toEqual({ total: 5, datasets: [{ ...a, artifacts: 1, entities: 2, edges: 2 }] })
        expect(yield* admin.datasets({ limit: 2, offset: 6 })).toEqual({ total: 5, datasets: [] })
      })
    ))

  it.effect("graph: the newest edges (closed too), their endpoints then other entities, cited artifacts cut at 2,000 chars", () =>
    run(
      Effect.gen(function*() {
        const datasets = yield* DatasetsRepo
        const graph = yield* GraphRepo
        const admin = yield* AdminRepo
        const main = yield* datasets.getOrCreate("u1", "main", t(0))
        const other = yield* datasets.getOrCreate("u2", "other", t(0))
        const [na, nb, nc, nd, ne, nf] = yield* graph.upsertEntities(
          main.id,
          ["A", "B", "C", "D", "E", "F"].map(entity)
        )
        yield* graph.upsertEntities(other.id, [entity("Elsewhere")])
        const [e1, e2, e3, e4] = yield* graph.insertEdges([
          edge(main.id, na!.id, nb!.id, "r1", 1),
          edge(main.id, nb!.id, nc!.id, "r2", 2),
          edge(main.id, nc!.id, nd!.id, "r3", 3),
          edge(main.id, nd!.id, na!.id, "r4", 4)
        ])
        yield* graph.closeEdges([{ id: e4!.id, invalid_at: t(5), expired_at: t(6) }])
        // characters, not bytes: "é" is two bytes in UTF-8
        const long = yield* graph.insertArtifact(artifact(main.id, "é".repeat(2500)))
        const exact = yield* graph.insertArtifact(artifact(main.id, "x".repeat(2000)))
        const old = yield* graph.insertArtifact(artifact(main.id, "only e1"))
        yield* graph.insertArtifact(artifact(main.id, "cited by nothing"))
        yield* graph.linkEdgeArtifacts(exact.id, [e4!.id])
        yield* graph.linkEdgeArtifacts(long.id, [e4!.id, e3!.id])
        yield* graph.linkEdgeArtifacts(old.id, [e1!.id])

        const two = Option.getOrThrow(yield* admin.graph(main.id, 2))
        expect(two.dataset).toEqual({ id: main.id, user_id: "u1", name: "main" })
        expect(two.truncated).toBe(true)
        expect(two.edges).toEqual([
          {
            id: e4!.id,
            source_id: nd!.id,
            target_id: na!.id,
            relation: "r4",
            description: "r4 fact",
            valid_at: t(4),
            invalid_at: t(5),
            created_at: t(4),
            expired_at: t(6),
            artifact_ids: [long.id, exact.id]
          },
          {
            id: e3!.id,
            source_id: nc!.id,
            target_id: nd!.id,
            relation: "r3",
            description: "r3 fact",
            valid_at: t(3),
            invalid_at: null,
            created_at: t(3),
            expired_at: null,
            artifact_ids: [long.id]
          }
        ])
        // three endpoints for a limit of two: all of them, none added
        expect(two.entities.map((n) => n.name)).toEqual(["D", "C", "A"])
        expect(two.entities[0]).toEqual({
          id: nd!.id,
          name: "D",
          type: "thing",
          description: "D described",
          created_at: t(0)
        })
        expect(two.artifacts.map((a) => [a.id, a.text.length, a.text_truncated])).toEqual([
          [long.id, 2000, true],
          [exact.id, 2000, false]
        ])
        expect(two.artifacts[0]).toMatchObject({
          kind: "knowledge",
          text: "é".repeat(2000),
          session_id: "s1",
          valid_at: t(0),
          created_at: t(0)
        })

        // all four edges: four endpoints, then the newest other entity fills the limit of five
        const five = Option.getOrThrow(yield* admin.graph(main.id, 5))
        expect(five.truncated).toBe(false)
        expect(five.edges.map((e) => e.id)).toEqual([e4!.id, e3!.id, e2!.id, e1!.id])
        expect(five.entities.map((n) => n.id)).toEqual([nd!.id, nc!.id, nb!.id, na!.id, nf!.id])
        expect(five.artifacts.map((a) => a.id)).toEqual([long.id, exact.id, old.id])

        const ten = Option.getOrThrow(yield* admin.graph(main.id, 10))
        expect(ten.entities.map((n) => n.id)).toEqual([nd!.id, nc!.id, nb!.id, na!.id, nf!.id, ne!.id])
        // exactly as many edges as the limit is not truncated
        expect((Option.getOrThrow(yield* admin.graph(main.id, 4))).truncated).toBe(false)
      })
    ))

  it.effect("graph: None for an unknown id; an empty or soft-deleted dataset is still shown", () =>
    run(
      Effect.gen(function*() {
        const datasets = yield* DatasetsRepo
        const graph = yield* GraphRepo
        const admin = yield* AdminRepo
        const main = yield* datasets.getOrCreate("u1", "main", t(0))
        expect(Option.isNone(yield* admin.graph(main.id + 1000, 10))).toBe(true)
        expect(yield* admin.graph(main.id, 10)).toEqual(
          Option.some({
            dataset: { id: main.id, user_id: "u1", name: "main" },
            truncated: false,
            entities: [],
            edges: [],
            artifacts: []
          })
        )
        const [solo] = yield* graph.upsertEntities(main.id, [entity("Solo")])
        yield* datasets.softDelete("u1", "main", t(1))
        const shown = Option.getOrThrow(yield* admin.graph(main.id, 10))
        expect(shown.entities.map((n) => n.id)).toEqual([solo!.id])
      })
    ))
})
