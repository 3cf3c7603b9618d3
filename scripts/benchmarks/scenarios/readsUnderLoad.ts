/**
 * Reads under load (scripts/benchmarks/readsUnderLoad.ts, also `scripts/load --reads`): search
 * and context p50/p95/p99 on the idle server, then while 16 clients remember into 16 datasets
 * with 200 ms models (the reader's query embeddings answered at once). Quick: 4 writers, 8 s.
 */
import type { Context } from "../context.js"
import { runReadsUnderLoad } from "../readsUnderLoad.js"
import { fmt, ratio } from "../report.js"

const SCENARIO = "reads-under-load"

export const readsUnderLoad = async (ctx: Context) => {
  const r = await runReadsUnderLoad({
    dims: ctx.dims,
    log: ctx.log,
    ...(ctx.quick ? { writers: 4, seconds: 8, readerTexts: 60, idleReads: 40 } : {})
  })
  const load = `${r.options.writers} writers, ${r.options.latencyMs} ms models`
  for (const read of ["search", "context"] as const) {
    for (const p of ["p50", "p95", "p99"] as const) {
      const idle = r.idle[read][p]
      const loaded = r.underLoad[read][p]
      ctx.report.row({
        scenario: SCENARIO,
        measure: `${read} ${p} ms, idle → under load (${load}), ${r.readerFacts} facts`,
        defaults: `${fmt(idle)} → ${fmt(loaded)}`,
        ratio: ratio(loaded, idle),
        ...(read === "search" && p === "p95"
          ? { bar: ctx.report.bar(SCENARIO, "search p95 under load", loaded, "<", 50, " ms") }
          : {})
      })
    }
  }
  ctx.report.bar(SCENARIO, "search p95 under load / idle", r.underLoad.search.p95 / r.idle.search.p95, "<", 2, "x")
  ctx.report.row({
    scenario: SCENARIO,
    measure: "remembers per second under load",
    defaults: fmt(r.remembers.perSecond, 2)
  })
  for (const check of r.checks) ctx.report.check(SCENARIO, check.name, check.ok, check.detail)
  ctx.report.figures[SCENARIO] = r
}
