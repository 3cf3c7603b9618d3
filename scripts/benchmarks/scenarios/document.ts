/**
 * Long document: one text the server cuts into `docChunks` chunks, slow models (500 ms),
 * embeddings on, into a new dataset. Seed (one chunk at a time) against the defaults; both
 * servers must build the same graph (chunks are reconciled in document order whatever the
 * concurrency), compared on the export without ids or ingestion times.
 */
import { join } from "node:path"
import { type Context, withServer } from "../context.js"
import { criticalPathMs, type ModelCall } from "../fakes.js"
import { fmt } from "../report.js"
import { type ConfigName, remember, request } from "../server.js"
import { documentOfChunks, people } from "../texts.js"
import { REFERENCE_TIME } from "./latency.js"

const SCENARIO = "long document"

interface GraphExport {
  readonly entities: ReadonlyArray<{ name: string; type: string; description: string }>
  readonly edges: ReadonlyArray<{
    source: string
    target: string
    relation: string
    description: string
    valid_at: string
    invalid_at?: string
    expired_at?: string
  }>
}

/** A graph as comparable lines: entities by (name, type), facts by content and liveness. */
export const graphLines = (g: GraphExport) => ({
  entities: g.entities.map((e) => `${e.name}\t${e.type}`).sort(),
  edges: g.edges
    .map((e) =>
      [
        e.source,
        e.target,
        e.relation,
        e.description,
        e.valid_at,
        e.invalid_at ?? "",
        e.expired_at === undefined ? "live" : "closed"
      ].join("\t")
    )
    .sort()
})

const byStage = (calls: ReadonlyArray<ModelCall>) => {
  const counts: Record<string, number> = {}
  for (const c of calls) counts[c.stage] = (counts[c.stage] ?? 0) + 1
  return counts
}

export const longDocument = async (ctx: Context) => {
  const { docChunks, latencyMs } = ctx.sizes
  const text = documentOfChunks(docChunks, 5, people(12, 9))
  const figures: Partial<
    Record<ConfigName, {
      seconds: number
      floorSeconds: number
      /** every call's latency added up: the time of a strictly sequential pipeline's model calls */
      sequentialSeconds: number
      chunks: number
      calls: Record<string, number>
      graph: ReturnType<typeof graphLines>
    }>
  > = {}
  for (const config of ["seed", "defaults"] as const) {
    const db = join(ctx.dir, `document-${config}.db`)
    await withServer(ctx, { scenario: "document", db, config, embeddings: true }, async (server) => {
      ctx.fakes.setLatency(0)
      await remember(server, { user_id: "warm", dataset: "warm", text: "Alice Smith knows Bruno Novak." })
      ctx.fakes.setLatency(latencyMs)
      const t0 = performance.now()
      const res = await remember(server, { user_id: "bench", dataset: "doc", text, reference_time: REFERENCE_TIME })
      const calls = ctx.fakes.between(t0, performance.now())
      ctx.fakes.setLatency(0)
      const graph = await request<GraphExport>(
        "GET",
        `${server.url}/v1/gb/graph?user_id=bench&dataset=doc&include_expired=true`
      )
      figures[config] = {
        seconds: res.ms / 1000,
        floorSeconds: criticalPathMs(calls) / 1000,
        sequentialSeconds: calls.reduce((a, c) => a + c.latencyMs, 0) / 1000,
        chunks: res.body.chunks?.length ?? 1,
        calls: byStage(calls),
        graph: graphLines(graph.body)
      }
    })
    ctx.log(`long document: ${config}: ${figures[config]!.seconds.toFixed(1)} s`)
  }
  const s = figures.seed!
  const d = figures.defaults!
  const same = JSON.stringify(s.graph) === JSON.stringify(d.graph)
  ctx.report.check(
    SCENARIO,
    "the same graph under both configurations",
    same,
    `${d.graph.entities.length} entities, ${d.graph.edges.length} facts (${
      d.graph.edges.filter((e) => e.endsWith("closed")).length
    } closed)` +
      (same ? "" : `; seed has ${s.graph.entities.length} entities, ${s.graph.edges.length} facts`)
  )
  ctx.report.check(
    SCENARIO,
    `the text was cut into ${docChunks} chunks`,
    s.chunks === docChunks && d.chunks === docChunks,
    `${s.chunks} and ${d.chunks}`
  )
  // "Sequential" is a pipeline that makes the same calls one after another: its wall time is
  // at least every call's latency added up, so that sum over the wall is a lower bound of the
  // speed-up. chunk_concurrency 1 is not that pipeline: it already overlaps a chunk's
  // extraction with its summary and embeds ahead (src/pipeline/remember/unit.ts).
  const speedup = s.seconds / d.seconds
  const overSequential = d.sequentialSeconds / d.seconds
  ctx.report.row({
    scenario: SCENARIO,
    measure: `wall s, ${docChunks} chunks, ${latencyMs} ms models`,
    seed: fmt(s.seconds),
    defaults: fmt(d.seconds),
    ratio: `${fmt(speedup)}x faster`
  })
  ctx.report.row({
    scenario: SCENARIO,
    measure: "critical-path model time s (calls overlapping count once)",
    seed: fmt(s.floorSeconds),
    defaults: fmt(d.floorSeconds)
  })
  ctx.report.row({
    scenario: SCENARIO,
    measure: "faster than sequential: every call's latency added up s ÷ wall",
    seed: `${fmt(s.sequentialSeconds)} ÷ ${fmt(s.seconds)} = ${fmt(s.sequentialSeconds / s.seconds)}x`,
    defaults: `${fmt(d.sequentialSeconds)} ÷ ${fmt(d.seconds)} = ${fmt(overSequential)}x`,
    bar: ctx.report.bar(
      SCENARIO,
      `${docChunks}-chunk document, sequential model time ÷ defaults wall time`,
      overSequential,
      ">=",
      3,
      "x"
    )
  })
  const calls = (f: typeof s) => Object.entries(f.calls).map(([k, v]) => `${k} ${v}`).join(", ")
  ctx.report.row({ scenario: SCENARIO, measure: "model calls", seed: calls(s), defaults: calls(d) })
  ctx.report.figures[SCENARIO] = {
    chunks: docChunks,
    latency_ms: latencyMs,
    bytes: Buffer.byteLength(text),
    identical_graph: same,
    seed: { ...s, graph: { entities: s.graph.entities.length, edges: s.graph.edges.length } },
    defaults: { ...d, graph: { entities: d.graph.entities.length, edges: d.graph.edges.length } }
  }
}
