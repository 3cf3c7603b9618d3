/**
 * A preload for `gligabao serve` (`node --require`, set by `scripts/load --loop-delay FILE`):
 * samples the event loop's delay (perf_hooks.monitorEventLoopDelay) and writes its percentiles,
 * in ms, as JSON to $GLIGABAO_BENCH_LOOP_DELAY when the process exits; SIGUSR2 starts the
 * sampling over (the reads scenario sends it when its load phase begins). The garbage collector's
 * pauses of the same period are written beside it (`gc`: count, total and longest, ms, by kind).
 * Nothing in the server changes.
 */
"use strict"
const { writeFileSync } = require("node:fs")
const { monitorEventLoopDelay, PerformanceObserver } = require("node:perf_hooks")

const out = process.env.GLIGABAO_BENCH_LOOP_DELAY
const histogram = monitorEventLoopDelay({ resolution: 10 })
histogram.enable()
// kinds as node:perf_hooks numbers them (constants.NODE_PERFORMANCE_GC_*)
const GC_KINDS = { 1: "minor", 2: "major", 4: "incremental", 8: "weakcb" }
let gc = {}
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = GC_KINDS[entry.detail?.kind] ?? String(entry.detail?.kind)
    const k = gc[kind] ??= { count: 0, totalMs: 0, maxMs: 0 }
    k.count++
    k.totalMs += entry.duration
    k.maxMs = Math.max(k.maxMs, entry.duration)
  }
}).observe({ entryTypes: ["gc"] })
process.on("SIGUSR2", () => {
  histogram.reset()
  gc = {}
})
process.on("exit", () => {
  histogram.disable()
  const ms = (ns) => Math.round(ns / 1e4) / 100
  writeFileSync(
    out,
    JSON.stringify({
      samples: histogram.count,
      mean: ms(histogram.mean),
      p50: ms(histogram.percentile(50)),
      p95: ms(histogram.percentile(95)),
      p99: ms(histogram.percentile(99)),
      max: ms(histogram.max),
      gc: Object.fromEntries(
        Object.entries(gc).map(([kind, k]) => [kind, {
          count: k.count,
          totalMs: Math.round(k.totalMs),
          maxMs: Math.round(k.maxMs * 10) / 10
        }])
      )
    })
  )
})
