/**
 * Throughput across datasets: one client per dataset (16), each remembering its texts one after
 * another, all at once, with slow models (500 ms) and embeddings on. Texts per second under
 * each configuration; the server's peak memory meanwhile; then the database is checked for
 * duplicate entities and duplicate live facts (concurrency must not break deduplication).
 */
import { join } from "node:path"
import { type Context, withServer } from "../context.js"
import { openReadonly } from "../db.js"
import { fmt, ratio } from "../report.js"
import { type ConfigName, MB, remember, rssMiB, sampleRss } from "../server.js"
import { makeRandom, paragraph, people } from "../texts.js"
import { REFERENCE_TIME } from "./latency.js"

const SCENARIO = "throughput"

interface Figure {
  readonly texts: number
  readonly seconds: number
  readonly textsPerSecond: number
  readonly idleMB: number
  readonly peakMB: number
  readonly duplicateEntities: number
  readonly duplicateLiveEdges: number
}

/** Rows that break deduplication: entities twice in a dataset, live facts stated twice. */
export const duplicates = (file: string) => {
  const db = openReadonly(file)
  try {
    const entities = db.prepare(
      "SELECT dataset_id, name_key, type, COUNT(*) AS n FROM gb_entities GROUP BY 1, 2, 3 HAVING COUNT(*) > 1"
    ).all().length
    const edges = db.prepare(
      "SELECT dataset_id, source_id, target_id, relation, COUNT(*) AS n FROM gb_edges WHERE expired_at IS NULL GROUP BY 1, 2, 3, 4 HAVING COUNT(*) > 1"
    ).all().length
    return { entities, edges }
  } finally {
    db.close()
  }
}

const measure = async (ctx: Context, config: ConfigName): Promise<Figure> => {
  const { datasets, textsPerDataset, latencyMs } = ctx.sizes
  const db = join(ctx.dir, `throughput-${config.replace(/ /g, "-")}.db`)
  // a shared server has other scenarios' datasets: the check covers them too
  const figure = await withServer(ctx, { scenario: SCENARIO, db, config, embeddings: true }, async (server) => {
    ctx.fakes.setLatency(0)
    await remember(server, { user_id: "warm", dataset: "warm", text: "Alice Smith knows Bruno Novak." })
    ctx.fakes.setLatency(latencyMs)
    const idleMB = rssMiB(server.pid) * MB
    const sampler = sampleRss(server.pid)
    const t0 = performance.now()
    await Promise.all(Array.from({ length: datasets }, async (_, k) => {
      const cast = people(6, 100 + k)
      for (let j = 0; j < textsPerDataset; j++) {
        const text = paragraph(makeRandom(k * 100 + j), cast, 3, 2)
        await remember(server, { user_id: "bench", dataset: `d${k}`, text, reference_time: REFERENCE_TIME })
      }
    }))
    const seconds = (performance.now() - t0) / 1000
    const peakMB = sampler.stop() * MB
    ctx.fakes.setLatency(0)
    const texts = datasets * textsPerDataset
    const dup = duplicates(server.db)
    return { texts, seconds, textsPerSecond: texts / seconds, idleMB, peakMB, dup }
  })
  const { dup, ...rest } = figure
  ctx.log(`throughput: ${config}: ${figure.textsPerSecond.toFixed(2)} texts/s`)
  return { ...rest, duplicateEntities: dup.entities, duplicateLiveEdges: dup.edges }
}

export const throughput = async (ctx: Context) => {
  const seed = await measure(ctx, "seed")
  const defaults = await measure(ctx, "defaults")
  const bar = ctx.report.bar(
    SCENARIO,
    `${ctx.sizes.datasets} datasets at once, defaults ÷ seed texts/s`,
    defaults.textsPerSecond / seed.textsPerSecond,
    ">=",
    10,
    "x"
  )
  // the default concurrency may be the limit: show what 16 permits give, for the lead to decide
  const c16 = bar.pass ? undefined : await measure(ctx, "concurrency 16")
  const figures = { seed, defaults, ...(c16 === undefined ? {} : { "concurrency 16": c16 }) }
  for (const [name, f] of Object.entries(figures)) {
    ctx.report.check(
      SCENARIO,
      `no duplicate entities (${name})`,
      f.duplicateEntities === 0,
      `${f.duplicateEntities} duplicated (dataset, name_key, type)`
    )
    ctx.report.check(
      SCENARIO,
      `no live fact stored twice (${name})`,
      f.duplicateLiveEdges === 0,
      `${f.duplicateLiveEdges} duplicated live (source, target, relation)`
    )
  }
  const label = `${ctx.sizes.datasets} datasets × ${ctx.sizes.textsPerDataset} texts, ${ctx.sizes.latencyMs} ms models`
  ctx.report.row({
    scenario: SCENARIO,
    measure: `texts/s, ${label}`,
    seed: fmt(seed.textsPerSecond, 2),
    defaults: fmt(defaults.textsPerSecond, 2),
    ...(c16 === undefined ? {} : { c16: fmt(c16.textsPerSecond, 2) }),
    ratio: ratio(defaults.textsPerSecond, seed.textsPerSecond) +
      (c16 === undefined ? "" : `; concurrency 16: ${ratio(c16.textsPerSecond, seed.textsPerSecond)}`),
    bar
  })
  ctx.report.row({
    scenario: SCENARIO,
    measure: "wall s",
    seed: fmt(seed.seconds),
    defaults: fmt(defaults.seconds),
    ...(c16 === undefined ? {} : { c16: fmt(c16.seconds) })
  })
  const worst = Math.max(...Object.values(figures).map((f) => f.peakMB))
  ctx.report.row({
    scenario: "memory",
    measure: "peak RSS MB during throughput (RSS before it)",
    seed: `${fmt(seed.peakMB, 0)} (${fmt(seed.idleMB, 0)})`,
    defaults: `${fmt(defaults.peakMB, 0)} (${fmt(defaults.idleMB, 0)})`,
    ...(c16 === undefined ? {} : { c16: `${fmt(c16.peakMB, 0)} (${fmt(c16.idleMB, 0)})` }),
    bar: ctx.report.bar("memory", "peak RSS during throughput (every configuration)", worst, "<", 300, " MB")
  })
  ctx.report.figures[SCENARIO] = {
    datasets: ctx.sizes.datasets,
    texts_per_dataset: ctx.sizes.textsPerDataset,
    latency_ms: ctx.sizes.latencyMs,
    ...figures
  }
}
