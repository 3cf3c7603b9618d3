/**
 * The short form of the load test (scripts/load, issue 13): a few clients for a few seconds
 * against a real server and fake models. Only its correctness checks are asserted; its timings
 * are figures, never thresholds.
 */
import { describe, expect, it } from "vitest"
import { runLoad } from "../scripts/benchmarks/load.js"
import { runReadsUnderLoad } from "../scripts/benchmarks/readsUnderLoad.js"

describe("load test, short form", () => {
  it("6 clients for 6 s: every request answered, the file consistent, the figures numbers", async () => {
    const result = await runLoad({ clients: 6, seconds: 6, latencyMs: 20, datasets: 6 })
    for (const check of result.checks) {
      expect({ check: check.name, ok: check.ok, detail: check.detail }).toMatchObject({ ok: true })
    }
    expect(result.ok).toBe(true)
    expect(result.errors.count).toBe(0)
    // some work was done, of both kinds
    expect(result.requests.remember).toBeGreaterThanOrEqual(6)
    expect(result.requests.search).toBeGreaterThan(0)
    const figures = [
      result.throughput.remembersPerSecond,
      ...result.throughput.windows,
      result.latencyMs.remember.p99,
      result.latencyMs.search.p99,
      result.rssMB.start,
      result.rssMB.afterWarmUp,
      result.rssMB.max,
      result.rssMB.end,
      result.rssMB.slopeSecondHalfMBPerMin,
      result.rssMB.maxFirstHalf,
      result.rssMB.maxSecondHalf
    ]
    for (const x of figures) expect(Number.isFinite(x)).toBe(true)
    expect(result.throughput.windows.length).toBe(3)
  }, 60_000)

  it(
    "reads under load, short form: every request answered, idle answers stable, only the reader's facts read",
    async () => {
      const result = await runReadsUnderLoad({ writers: 3, seconds: 4, latencyMs: 20, readerTexts: 20, idleReads: 20 })
      for (const check of result.checks) {
        expect({ check: check.name, ok: check.ok, detail: check.detail }).toMatchObject({ ok: true })
      }
      expect(result.ok).toBe(true)
      expect(result.readerFacts).toBeGreaterThan(0)
      expect(result.idle.search.n).toBe(20)
      expect(result.underLoad.search.n).toBeGreaterThan(0)
      expect(result.remembers.count).toBeGreaterThan(0)
      const figures = [
        result.idle.search.p95,
        result.idle.context.p95,
        result.underLoad.search.p95,
        result.underLoad.context.p95,
        result.remembers.perSecond,
        result.rssMB.max,
        result.differing.search,
        result.differing.context
      ]
      for (const x of figures) expect(Number.isFinite(x)).toBe(true)
    },
    90_000
  )
})
