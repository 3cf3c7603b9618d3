/**
 * Latency floor: with slow models (500 ms a call), how close a remember gets to the time of its
 * model calls. A single-chunk text into a dataset whose facts it touches, embeddings on: the
 * calls are extract_graph, the similarity lookup's embeddings, resolve_edges and the store's
 * embeddings, one after another. The floor is the union of the calls' intervals as the fake
 * saw them; the figure is wall time ÷ floor. The calls are also counted in the run log.
 */
import { join } from "node:path"
import { type Context, withServer } from "../context.js"
import { openReadonly } from "../db.js"
import { criticalPathMs, type ModelCall } from "../fakes.js"
import { count, fmt, ratio, stats } from "../report.js"
import { type ConfigName, remember, request } from "../server.js"
import { makeRandom, paragraph, people } from "../texts.js"

const SCENARIO = "latency floor"
export const REFERENCE_TIME = "2025-06-01T00:00:00Z"

/** The inferences a run recorded, over all its stages. */
export const runInferences = async (url: string, runId: number): Promise<number> => {
  const run = await request<{ stages: Record<string, { inference_ids: Array<number> }> }>(
    "GET",
    `${url}/v1/gb/runs/${runId}`
  )
  return new Set(Object.values(run.body.stages).flatMap((s) => s.inference_ids)).size
}

interface Figure {
  readonly wall: Array<number>
  readonly floor: Array<number>
  readonly ratios: Array<number>
  readonly calls: Array<Record<string, number>>
  readonly gaps: Array<Array<[string, number]>>
  readonly runIds: Array<number>
  /** per call, the server's own measure of it (gb_inferences.latency_ms) minus the fake's latency */
  readonly callExcess: Array<number>
  /** per remember, the wall time outside the server's measures of its calls */
  readonly outsideCalls: Array<number>
}

/** The server's own view of its calls, from gb_inferences. */
const serverView = (file: string, f: Figure, latencyMs: number) => {
  const db = openReadonly(file)
  try {
    const q = db.prepare("SELECT latency_ms FROM gb_inferences WHERE run_id = ?")
    f.runIds.forEach((runId, i) => {
      const ms = (q.all(runId) as Array<{ latency_ms: number }>).map((r) => r.latency_ms)
      f.callExcess.push(...ms.map((m) => m - latencyMs))
      f.outsideCalls.push(f.wall[i]! - ms.reduce((a, b) => a + b, 0))
    })
  } finally {
    db.close()
  }
}

/** The time between the request, each call (arrival to answer) and the response, labelled. */
const gaps = (t0: number, calls: ReadonlyArray<ModelCall>, t1: number): Array<[string, number]> => {
  const out: Array<[string, number]> = []
  let previous = "request"
  let end = t0
  for (const c of [...calls].sort((a, b) => a.at - b.at)) {
    out.push([`${previous} → ${c.stage}`, c.at - end])
    previous = c.stage
    end = Math.max(end, c.at + c.latencyMs)
  }
  out.push([`${previous} → response`, t1 - end])
  return out
}

/**
 * The harness's own share: a bare request from this process to the fake at `latencyMs`, minus
 * the latency (timers, loopback HTTP, a machine waking from idle). Every model call carries it.
 */
const bareCallMs = async (ctx: Context, latencyMs: number): Promise<number> => {
  ctx.fakes.setLatency(latencyMs)
  const body = {
    model: "bench",
    max_tokens: 16,
    system: "You extract a knowledge graph",
    messages: [{ role: "user", content: "<text>\nAlice Smith knows Bruno Novak.\n</text>" }]
  }
  const ms: Array<number> = []
  for (let i = 0; i < 6; i++) {
    const t0 = performance.now()
    const res = await fetch(`${ctx.fakes.anthropicUrl}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "bench" },
      body: JSON.stringify(body)
    })
    await res.text()
    if (i > 0) ms.push(performance.now() - t0 - latencyMs)
  }
  ctx.fakes.setLatency(0)
  return stats(ms).p50
}

export const latencyFloor = async (ctx: Context) => {
  const { latencyMs, floorRuns } = ctx.sizes
  const bare = await bareCallMs(ctx, latencyMs)
  const cast = people(8, 3)
  const background = cast.map((p, i) => `${p} lives in Oslo in 2010. ${p} knows ${cast[(i + 1) % cast.length]}.`).join(
    " "
  )
  const figures: Partial<Record<ConfigName, Figure>> = {}
  let mismatched = 0
  for (const config of ["seed", "defaults"] as const) {
    const db = join(ctx.dir, `floor-${config}.db`)
    await withServer(ctx, { scenario: "latency", db, config, embeddings: true }, async (server) => {
      ctx.fakes.setLatency(0)
      for (let i = 0; i < 5; i++) {
        await remember(server, {
          user_id: "bench",
          dataset: `warm-${i}`,
          text: background,
          reference_time: REFERENCE_TIME
        })
      }
      await remember(server, { user_id: "bench", dataset: "floor", text: background, reference_time: REFERENCE_TIME })
      ctx.fakes.setLatency(latencyMs)
      const f: Figure = {
        wall: [],
        floor: [],
        ratios: [],
        calls: [],
        gaps: [],
        runIds: [],
        callExcess: [],
        outsideCalls: []
      }
      for (let i = 0; i < floorRuns; i++) {
        const text = paragraph(makeRandom(1000 + i), cast, 2, 1)
        const t0 = performance.now()
        const res = await remember(server, { user_id: "bench", dataset: "floor", text, reference_time: REFERENCE_TIME })
        const calls = ctx.fakes.between(t0, performance.now())
        const floor = criticalPathMs(calls)
        f.wall.push(res.ms)
        f.floor.push(floor)
        f.ratios.push(res.ms / floor)
        const byStage: Record<string, number> = {}
        for (const c of calls) byStage[c.stage] = (byStage[c.stage] ?? 0) + 1
        f.calls.push(byStage)
        f.gaps.push(gaps(t0, calls, t0 + res.ms))
        f.runIds.push(res.body.remember_run_id)
        if ((await runInferences(server.url, res.body.remember_run_id)) !== calls.length) mismatched += 1
      }
      figures[config] = f
      ctx.fakes.setLatency(0)
      serverView(server.db, f, latencyMs)
    })
    ctx.log(`latency floor: ${config} done`)
  }
  ctx.report.check(
    SCENARIO,
    "the model calls the fake saw are the run log's inferences",
    mismatched === 0,
    mismatched === 0 ? "" : `${mismatched} runs differ`
  )

  const s = figures.seed!
  const d = figures.defaults!
  const median = (xs: Array<number>) => stats(xs).p50
  const callsText = (f: typeof s) => {
    const all: Record<string, number> = {}
    for (const c of f.calls) for (const [k, v] of Object.entries(c)) all[k] = (all[k] ?? 0) + v / f.calls.length
    return Object.entries(all).map(([k, v]) => `${k} ${count(v)}`).join(", ")
  }
  const bar = ctx.report.bar(
    SCENARIO,
    "wall ÷ model time on the critical path (median)",
    median(d.ratios),
    "<",
    1.05,
    ""
  )
  ctx.report.row({
    scenario: SCENARIO,
    measure: `wall ÷ critical-path model time, ${latencyMs} ms calls (median)`,
    seed: fmt(median(s.ratios), 3),
    defaults: fmt(median(d.ratios), 3),
    bar
  })
  ctx.report.row({
    scenario: SCENARIO,
    measure: "wall ms (median)",
    seed: fmt(median(s.wall)),
    defaults: fmt(median(d.wall)),
    ratio: ratio(median(d.wall), median(s.wall))
  })
  ctx.report.row({
    scenario: SCENARIO,
    measure: "critical-path model time ms (median)",
    seed: fmt(median(s.floor)),
    defaults: fmt(median(d.floor))
  })
  ctx.report.row({
    scenario: SCENARIO,
    measure: "model calls per remember",
    seed: callsText(s),
    defaults: callsText(d)
  })
  ctx.report.row({
    scenario: SCENARIO,
    measure: "the harness alone: a bare HTTP call to the fake, ms beyond its latency (median)",
    seed: fmt(bare),
    defaults: fmt(bare)
  })
  ctx.report.row({
    scenario: SCENARIO,
    measure: "the server's view: a call's round trip (gb_inferences.latency_ms) beyond the latency, ms (median)",
    seed: fmt(median(s.callExcess)),
    defaults: fmt(median(d.callExcess))
  })
  ctx.report.row({
    scenario: SCENARIO,
    measure: "the server's view: wall time outside its model calls, ms per remember (median)",
    seed: fmt(median(s.outsideCalls)),
    defaults: fmt(median(d.outsideCalls))
  })
  // the same ratio with the harness's own cost per call added to the floor: what is gligabao's
  const net = (f: Figure) =>
    median(f.wall.map((w, i) => w / (f.floor[i]! + bare * Object.values(f.calls[i]!).reduce((a, b) => a + b, 0))))
  ctx.report.row({
    scenario: SCENARIO,
    measure: "wall ÷ (model time + the harness's share per call) (median)",
    seed: fmt(net(s), 3),
    defaults: fmt(net(d), 3)
  })
  const labels = d.gaps[0]?.map(([label]) => label) ?? []
  ctx.report.table(
    `Latency floor: where the time beyond the model calls goes (median ms of each gap between the client and the fake's calls, ${latencyMs} ms a call; a gap holds the response's transit, gligabao's work, and the next request's transit)`,
    ["gap", "seed", "defaults"],
    labels.map((
      label,
      i
    ) => [label, fmt(median(s.gaps.map((g) => g[i]?.[1] ?? NaN))), fmt(median(d.gaps.map((g) => g[i]?.[1] ?? NaN)))])
  )
  ctx.report.figures[SCENARIO] = { latency_ms: latencyMs, runs: floorRuns, bare_call_extra_ms: bare, ...figures }
}
