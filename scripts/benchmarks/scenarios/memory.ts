/**
 * Memory: the server's resident set while it remembers the largest text it accepts (1 MiB,
 * some 300 chunks), embeddings on, polled every 50 ms. (The throughput scenario reports the
 * peak under 16 concurrent datasets.)
 */
import { join } from "node:path"
import { type Context, withServer } from "../context.js"
import { fmt } from "../report.js"
import { type ConfigName, hwmMiB, MB, remember, rssMiB, sampleRss } from "../server.js"
import { people, textOfBytes } from "../texts.js"
import { REFERENCE_TIME } from "./latency.js"

const SCENARIO = "memory"

export const memory = async (ctx: Context) => {
  const { memoryBytes, memoryLatencyMs } = ctx.sizes
  const text = textOfBytes(memoryBytes, 17, people(40, 13))
  const figures: Partial<
    Record<ConfigName, { idleMB: number; peakMB: number; lifetimePeakMB: number; seconds: number; chunks: number }>
  > = {}
  for (const config of ["seed", "defaults"] as const) {
    const db = join(ctx.dir, `memory-${config}.db`)
    await withServer(ctx, { scenario: SCENARIO, db, config, embeddings: true }, async (server) => {
      ctx.fakes.setLatency(0)
      await remember(server, { user_id: "warm", dataset: "warm", text: "Alice Smith knows Bruno Novak." })
      ctx.fakes.setLatency(memoryLatencyMs)
      const idleMB = rssMiB(server.pid) * MB
      const sampler = sampleRss(server.pid)
      const res = await remember(server, {
        user_id: "bench",
        dataset: "big-text",
        text,
        reference_time: REFERENCE_TIME
      })
      const peakMB = sampler.stop() * MB
      ctx.fakes.setLatency(0)
      figures[config] = {
        idleMB,
        peakMB,
        lifetimePeakMB: hwmMiB(server.pid) * MB,
        seconds: res.ms / 1000,
        chunks: res.body.chunks?.length ?? 1
      }
    })
    ctx.log(`memory: ${config}: peak ${figures[config]!.peakMB.toFixed(0)} MB`)
  }
  const s = figures.seed!
  const d = figures.defaults!
  const size = `${
    fmt(Buffer.byteLength(text) / 2 ** 20, 2)
  } MiB text (${d.chunks} chunks, ${memoryLatencyMs} ms models)`
  ctx.report.row({
    scenario: SCENARIO,
    measure: `peak RSS MB remembering a ${size} (RSS before it)`,
    seed: `${fmt(s.peakMB, 0)} (${fmt(s.idleMB, 0)})`,
    defaults: `${fmt(d.peakMB, 0)} (${fmt(d.idleMB, 0)})`,
    bar: ctx.report.bar(
      SCENARIO,
      "peak RSS remembering the largest text (both configurations)",
      Math.max(s.peakMB, d.peakMB),
      "<",
      300,
      " MB"
    )
  })
  ctx.report.row({
    scenario: SCENARIO,
    measure: "that remember's wall s",
    seed: fmt(s.seconds),
    defaults: fmt(d.seconds)
  })
  ctx.report.figures[SCENARIO] = { bytes: Buffer.byteLength(text), latency_ms: memoryLatencyMs, ...figures }
}
