/**
 * Overhead: what gligabao adds to a remember when the model answers at once (0 ms). A
 * single-chunk text into a new dataset (1 model call), and into a dataset of `edges` stored
 * facts whose people it names (2 calls: the stored facts are compared), sequentially after a
 * warm-up. Embeddings are off: this is the SQL path, which must stay flat in the dataset's size.
 */
import { join } from "node:path"
import { type Context, withServer } from "../context.js"
import { count, fmt, ratio, type Stats, stats } from "../report.js"
import { breakdown, medians } from "../runs.js"
import { BIG, seedEdges } from "../seedEdges.js"
import { type ConfigName, migrate, remember } from "../server.js"

const SCENARIO = "overhead"
const SMALL_EDGES = 1000

/** The j-th of distinct facts among `people` (no two j give the same pair while j < people²). */
const pairText = (j: number, people: number) => {
  const a = j % people
  return `P${a} knows P${(a + 1 + Math.floor(j / people)) % people}.`
}

export const overhead = async (ctx: Context) => {
  const { runs, edges } = ctx.sizes
  const db = join(ctx.dir, "overhead.db")
  await migrate(db, ctx.configFile)
  ctx.log(`overhead: seeding ${edges.toLocaleString("en-US")} edges`)
  const seeded = seedEdges(db, edges)
  ctx.log(`overhead: seeded in ${seeded.seconds.toFixed(1)} s`)
  // the same two model calls on a small dataset: what size alone costs
  const small = seedEdges(db, SMALL_EDGES, "small")
  ctx.fakes.setLatency(0)

  const figures: Partial<
    Record<ConfigName, {
      empty: Stats
      big: Stats
      small: Stats
      callsSmall: number
      callsEmpty: number
      callsBig: number
      /** median ms of each part of a remember, from the run log */
      partsEmpty: Record<string, number>
      partsBig: Record<string, number>
    }>
  > = {}
  for (const [k, config] of (["seed", "defaults"] as const).entries()) {
    await withServer(ctx, { scenario: SCENARIO, db, config, embeddings: false, shared: false }, async (server) => {
      // JIT, prepared statements, the connection's page cache
      for (let i = 0; i < ctx.sizes.warmUp; i++) {
        await remember(server, { user_id: "warm", dataset: `w-${config}-${i}`, text: "P1 knows P2." })
        await remember(server, { user_id: BIG.user, dataset: BIG.dataset, text: `P${i * 13} knows P${i * 17 + 1}.` })
      }
      const time = async (body: (i: number) => Record<string, unknown>) => {
        const t0 = performance.now()
        const done: Array<{ ms: number; runId: number }> = []
        for (let i = 0; i < runs; i++) {
          const res = await remember(server, body(i))
          done.push({ ms: res.ms, runId: res.body.remember_run_id })
        }
        const calls = ctx.fakes.between(t0, performance.now()).length / runs
        // read after timing, so the run log's reads do not interleave with the measured requests
        const parts = await Promise.all(done.map((d) => breakdown(server, d.runId, d.ms)))
        return { stats: stats(done.map((d) => d.ms)), calls, parts: medians(parts) }
      }
      const empty = await time((i) => ({
        user_id: BIG.user,
        dataset: `empty-${config}-${i}`,
        text: `P${i} knows P${i + 1}.`
      }))
      // facts not stored yet (another configuration's run must not have stated them already)
      const people = seeded.people
      const big = await time((i) => ({
        user_id: BIG.user,
        dataset: BIG.dataset,
        text: `P${((i + k * runs) * 7919) % people} knows P${((i + k * runs) * 104729 + 1) % people}.`
      }))
      const smallSet = await time((i) => ({
        user_id: BIG.user,
        dataset: "small",
        text: pairText(i + k * runs, small.people)
      }))
      figures[config] = {
        empty: empty.stats,
        big: big.stats,
        small: smallSet.stats,
        callsSmall: smallSet.calls,
        callsEmpty: empty.calls,
        callsBig: big.calls,
        partsEmpty: empty.parts,
        partsBig: big.parts
      }
    })
    ctx.log(`overhead: ${config} done`)
  }

  const s = figures.seed!
  const d = figures.defaults!
  const size = edges.toLocaleString("en-US")
  const row = (measure: string, pick: (f: typeof s) => number, bar?: ReturnType<typeof ctx.report.bar>) =>
    ctx.report.row({
      scenario: SCENARIO,
      measure,
      seed: fmt(pick(s)),
      defaults: fmt(pick(d)),
      ratio: ratio(pick(d), pick(s)),
      ...(bar === undefined ? {} : { bar })
    })
  row(
    `p50 ms, new dataset (${count(d.callsEmpty)} model call${d.callsEmpty === 1 ? "" : "s"})`,
    (f) => f.empty.p50,
    ctx.report.bar(SCENARIO, "p50 at an empty dataset", d.empty.p50, "<", 5, " ms")
  )
  row("p95 ms, new dataset", (f) => f.empty.p95)
  row(
    `p50 ms, ${size} edges (${count(d.callsBig)} model calls)`,
    (f) => f.big.p50,
    ctx.report.bar(SCENARIO, `p50 at ${size} edges`, d.big.p50, "<", 5, " ms")
  )
  row(`p95 ms, ${size} edges`, (f) => f.big.p95)
  row(
    `p50 at ${size} edges ÷ p50 empty`,
    (f) => f.big.p50 / f.empty.p50,
    ctx.report.bar(SCENARIO, `p50 at ${size} edges ÷ p50 empty`, d.big.p50 / d.empty.p50, "<", 1.5, "x")
  )
  row(
    `p50 ms, ${SMALL_EDGES.toLocaleString("en-US")} edges (${count(d.callsSmall)} model calls, like for like)`,
    (f) => f.small.p50
  )
  row(
    `p50 at ${size} edges ÷ p50 at ${SMALL_EDGES.toLocaleString("en-US")} edges (same calls: the cost of size alone)`,
    (f) => f.big.p50 / f.small.p50
  )
  const parts = [...new Set([...Object.keys(d.partsBig), ...Object.keys(d.partsEmpty)])]
  ctx.report.table(
    `Overhead: where a remember's time goes (median ms of each part, from the run log, which has millisecond times; the medians need not add up)`,
    ["part", "seed, new dataset", "seed, big dataset", "defaults, new dataset", "defaults, big dataset"],
    parts.map((p) => [p, fmt(s.partsEmpty[p]), fmt(s.partsBig[p]), fmt(d.partsEmpty[p]), fmt(d.partsBig[p])])
  )
  ctx.report.figures[SCENARIO] = {
    runs,
    edges,
    small_edges: SMALL_EDGES,
    seeding_s: seeded.seconds,
    people: seeded.people,
    ...figures
  }
}
