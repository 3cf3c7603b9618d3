/**
 * A preload for `gligabao serve` (`node --require`, set by `scripts/load --loop-delay FILE`):
 * samples the event loop's delay (perf_hooks.monitorEventLoopDelay) and writes its percentiles,
 * in ms, as JSON to $GLIGABAO_BENCH_LOOP_DELAY when the process exits; SIGUSR2 starts the
 * sampling over (the reads scenario sends it when its load phase begins). Nothing in the server
 * changes.
 */
"use strict"
const { writeFileSync } = require("node:fs")
const { monitorEventLoopDelay } = require("node:perf_hooks")

const out = process.env.GLIGABAO_BENCH_LOOP_DELAY
const histogram = monitorEventLoopDelay({ resolution: 10 })
histogram.enable()
process.on("SIGUSR2", () => histogram.reset())
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
      max: ms(histogram.max)
    })
  )
})
