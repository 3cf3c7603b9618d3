/**
 * Series stats (spec/contracts.md section 11) on known numbers and as properties, and the
 * observation text written in code from them.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { formatNumber, observationText } from "../../src/pipeline/series/observe.js"
import { EMPTY_STATS, extremes, seriesStats } from "../../src/pipeline/series/stats.js"

const day = (d: number) => `2025-01-${String(d).padStart(2, "0")}T00:00:00.000Z`
const pts = (values: ReadonlyArray<number>) => values.map((value, i) => ({ ts: day(i + 1), value }))

describe("seriesStats", () => {
  it("on known numbers", () => {
    expect(seriesStats(pts([100, 90, 120, 110]))).toEqual({
      from: day(1),
      to: day(4),
      count: 4,
      first: 100,
      last: 110,
      min: 90,
      max: 120,
      mean: 105,
      change: 10,
      change_pct: 10
    })
  })

  it("a fall, and a negative first value: change_pct follows the direction", () => {
    expect(seriesStats(pts([200, 150]))).toMatchObject({ change: -50, change_pct: -25 })
    expect(seriesStats(pts([-4, -2]))).toMatchObject({ change: 2, change_pct: 50 })
  })

  it("change_pct is null from 0; one point has no change", () => {
    expect(seriesStats(pts([0, 5]))).toMatchObject({ change: 5, change_pct: null })
    expect(seriesStats(pts([7]))).toMatchObject({
      count: 1,
      first: 7,
      last: 7,
      min: 7,
      max: 7,
      mean: 7,
      change: 0,
      change_pct: 0
    })
  })

  it("an empty series has count 0 and nulls", () => {
    expect(seriesStats([])).toEqual(EMPTY_STATS)
    expect(EMPTY_STATS).toMatchObject({ count: 0, from: null, mean: null, change_pct: null })
  })

  it("properties: min <= first, last, mean <= max; change = last - first; from/to are the ends", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e9, max: 1e9, noNaN: true }), { minLength: 1, maxLength: 60 }),
        (values) => {
          const s = seriesStats(pts(values.slice(0, 31)))
          const n = Math.min(values.length, 31)
          expect(s.count).toBe(n)
          expect(s.min!).toBeLessThanOrEqual(s.first!)
          expect(s.min!).toBeLessThanOrEqual(s.last!)
          expect(s.max!).toBeGreaterThanOrEqual(s.first!)
          expect(s.max!).toBeGreaterThanOrEqual(s.last!)
          // the mean may be off by rounding, never by more
          expect(s.mean!).toBeGreaterThanOrEqual(s.min! - 1e-6 * Math.max(1, Math.abs(s.min!)))
          expect(s.mean!).toBeLessThanOrEqual(s.max! + 1e-6 * Math.max(1, Math.abs(s.max!)))
          expect(s.change).toBe(s.last! - s.first!)
          expect(s.from).toBe(day(1))
          expect(s.to).toBe(day(n))
        }
      )
    )
  })

  it("extremes: where the min and max first occur", () => {
    expect(extremes(pts([3, 1, 5, 1, 5]))).toEqual({ minAt: day(2), maxAt: day(3) })
    expect(extremes([])).toEqual({ minAt: null, maxAt: null })
  })
})

describe("observationText", () => {
  it("states the period, the move, the extremes and the mean, with dates and the unit", () => {
    const text = observationText({
      key: "AAPL.close",
      unit: "USD",
      about: ["Apple"],
      points: pts([243.85, 222.64, 236])
    })
    expect(text).toBe(
      "The time series AAPL.close of Apple went from 243.85 USD on 2025-01-01 to 236 USD on 2025-01-03, down 7.85 USD (-3.22%), over 3 values. " +
        "Its lowest value in that period was 222.64 USD on 2025-01-02 and its highest 243.85 USD on 2025-01-01; the mean was 234.16 USD."
    )
  })

  it("times that are not midnight are written with the minute, in UTC", () => {
    const text = observationText({
      key: "temp",
      unit: null,
      about: [],
      points: [{ ts: "2025-01-01T06:30:00.000Z", value: 1 }, { ts: "2025-01-01T18:45:00.000Z", value: 1 }]
    })
    expect(text).toContain(
      "The time series temp went from 1 on 2025-01-01 06:30 UTC to 1 on 2025-01-01 18:45 UTC, unchanged"
    )
  })

  it("one point, and several entities", () => {
    expect(observationText({ key: "k", unit: "EUR", about: ["A", "B"], points: pts([5]) })).toBe(
      "The time series k of A, B was 5 EUR on 2025-01-01."
    )
  })

  it("a rise from 0 has no percentage", () => {
    expect(observationText({ key: "k", unit: null, about: [], points: pts([0, 2]) })).toContain("up 2, over 2 values")
  })

  it("formatNumber: 2 decimals from 1 up, 4 significant digits below, no grouping", () => {
    expect(formatNumber(1234567.891)).toBe("1234567.89")
    expect(formatNumber(236)).toBe("236")
    expect(formatNumber(0.000123456)).toBe("0.0001235")
    expect(formatNumber(-0.5)).toBe("-0.5")
    expect(formatNumber(0)).toBe("0")
  })
})
