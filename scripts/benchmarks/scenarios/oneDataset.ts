/**
 * One dataset: single-chunk texts about the same people into one dataset, slow models (500 ms)
 * and embeddings on, as one batch under the defaults (the runs' extraction and embeddings run
 * ahead of their turn) against the seed's one at a time. Only resolve_edges must wait for the
 * run before it, so the limit is about 3x. The two databases must hold the same graph.
 */
import { join } from "node:path"
import { type Context, withServer } from "../context.js"
import { graphOf } from "../db.js"
import { fmt, ratio } from "../report.js"
import { type ConfigName, remember, request, type Server } from "../server.js"
import { makeRandom, paragraph, people } from "../texts.js"
import { REFERENCE_TIME } from "./latency.js"

const SCENARIO = "one dataset"

const textsFor = (count: number): Array<string> => {
  const cast = people(8, 7)
  return Array.from({ length: count }, (_, i) => paragraph(makeRandom(5_000 + i), cast, 3, 2))
}

const measure = async (ctx: Context, config: ConfigName, texts: ReadonlyArray<string>) => {
  const db = join(ctx.dir, `one-dataset-${config}.db`)
  return withServer(
    ctx,
    { scenario: SCENARIO, db, config, embeddings: true, shared: false },
    async (server: Server) => {
      ctx.fakes.setLatency(0)
      await remember(server, { user_id: "warm", dataset: "warm", text: "Alice Smith knows Bruno Novak." })
      ctx.fakes.setLatency(ctx.sizes.latencyMs)
      const t0 = performance.now()
      if (config === "seed") {
        for (const text of texts) {
          await remember(server, { user_id: "bench", dataset: "one", text, reference_time: REFERENCE_TIME })
        }
      } else {
        const items = texts.map((text) => ({ text, reference_time: REFERENCE_TIME }))
        const answer = await request<{ items: ReadonlyArray<{ error?: string }> }>(
          "POST",
          `${server.url}/v1/gb/remember/batch`,
          { user_id: "bench", dataset: "one", items, wait: true }
        )
        const failed = answer.body.items.filter((item) => item.error !== undefined)
        ctx.report.check(SCENARIO, "every batch item succeeded", failed.length === 0, `${failed.length} failed`)
      }
      const seconds = (performance.now() - t0) / 1000
      ctx.fakes.setLatency(0)
      return { seconds, graph: graphOf(server.db, "one") }
    }
  )
}

export const oneDataset = async (ctx: Context) => {
  const texts = textsFor(ctx.quick ? 12 : 48)
  const seed = await measure(ctx, "seed", texts)
  const defaults = await measure(ctx, "defaults", texts)
  ctx.log(`one dataset: seed ${seed.seconds.toFixed(1)} s, batch ${defaults.seconds.toFixed(1)} s`)
  ctx.report.check(SCENARIO, "the same graph as one at a time", seed.graph === defaults.graph)
  const bar = ctx.report.bar(
    SCENARIO,
    `${texts.length} texts into one dataset as a batch, seed s ÷ defaults s`,
    seed.seconds / defaults.seconds,
    ">=",
    2.7,
    "x"
  )
  ctx.report.row({
    scenario: SCENARIO,
    measure: `wall s, ${texts.length} texts, ${ctx.sizes.latencyMs} ms models, embeddings on`,
    seed: fmt(seed.seconds),
    defaults: fmt(defaults.seconds),
    ratio: ratio(seed.seconds, defaults.seconds),
    bar
  })
}
