/**
 * Validation of the `timeseries` request field (spec/contracts.md section 11): every malformed
 * case is a 400 naming the field, before anything is queued; the valid forms normalize.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { runParams, validateRememberRequest } from "../../src/domain/Remember.js"
import {
  MAX_ANCHORS_PER_SERIES,
  MAX_POINTS_PER_REQUEST,
  MAX_POINTS_PER_SERIES,
  MAX_SERIES,
  parseDuration,
  parsePointTime,
  validateTimeseries
} from "../../src/domain/Timeseries.js"

const error = (timeseries: unknown): string => {
  const r = validateRememberRequest({ user_id: "u", text: "x", timeseries })
  if (Either.isRight(r)) throw new Error(`expected a validation error for ${JSON.stringify(timeseries)}`)
  return r.left.message
}
const ok = (timeseries: unknown) => {
  const r = validateTimeseries(timeseries)
  if (Either.isLeft(r)) throw new Error(r.left)
  return r.right
}

const P = [["2025-01-31T00:00:00Z", 1]]
const series = (extra: Record<string, unknown>) => ({ series: [{ key: "k", points: P, ...extra }] })
const points = (n: number) =>
  Array.from({ length: n }, (_, i) => [new Date(Date.UTC(2000, 0, 1) + i * 3_600_000).toISOString(), i])

describe("timeseries validation", () => {
  it.each([
    [5, "timeseries must be an object"],
    [{}, "timeseries must have series or fetch"],
    [{ observations: true }, "timeseries must have series or fetch"],
    [{ series: {} }, "timeseries.series must be an array"],
    [{ series: [5] }, "timeseries.series[0] must be an object"],
    [{ series: [{ points: P }] }, "timeseries.series[0].key must be a string"],
    [{ series: [{ key: "", points: P }] }, "timeseries.series[0].key must not be empty"],
    [{ series: [{ key: "  ", points: P }] }, "timeseries.series[0].key must not be empty"],
    [{ series: [{ key: "a\u0000", points: P }] }, "timeseries.series[0].key must not contain control characters"],
    [
      { series: [{ key: "a\ud800", points: P }] },
      "timeseries.series[0].key must be valid Unicode: it has a lone surrogate"
    ],
    [
      { series: [{ key: "\udc00b", points: P }] },
      "timeseries.series[0].key must be valid Unicode: it has a lone surrogate"
    ],
    [{ series: [{ key: "k".repeat(257), points: P }] }, "timeseries.series[0].key must be at most 256 bytes"],
    [{ series: [{ key: "k" }] }, "timeseries.series[0].points must be an array"],
    [series({ points: [["2025-01-31T00:00:00Z"]] }), "timeseries.series[0].points[0] must be a pair"],
    [series({ points: [[1738281600, 1]] }), "timeseries.series[0].points[0][0] must be a time string"],
    [series({ points: [["yesterday", 1]] }), "timeseries.series[0].points[0][0] must be an RFC 3339 time"],
    [series({ points: [["2025-02-30", 1]] }), "timeseries.series[0].points[0][0] must be an RFC 3339 time"],
    [series({ points: [["2025-02-30T00:00:00Z", 1]] }), "timeseries.series[0].points[0][0] must be an RFC 3339 time"],
    [series({ points: [["2025-01-31T00:00:00", 1]] }), "timeseries.series[0].points[0][0] must be an RFC 3339 time"],
    [
      series({ points: [["2025-01-31T00:00:00Z", "222"]] }),
      "timeseries.series[0].points[0][1] must be a finite number"
    ],
    [series({ points: [["2025-01-31T00:00:00Z", null]] }), "timeseries.series[0].points[0][1] must be a finite number"],
    [
      series({ points: [["2025-01-31T00:00:00Z", 1], ["2025-02-01T00:00:00Z", 2], ["2025-01-31T01:00:00+01:00", 3]] }),
      "timeseries.series[0].points[2] repeats the time of points[0]"
    ],
    [
      series({ points: points(MAX_POINTS_PER_SERIES + 1) }),
      `timeseries.series[0].points must have at most ${MAX_POINTS_PER_SERIES} points`
    ],
    [series({ unit: 5 }), "timeseries.series[0].unit must be a string"],
    [series({ unit: "u".repeat(65) }), "timeseries.series[0].unit must be at most 64 bytes"],
    [series({ anchors: {} }), "timeseries.series[0].anchors must be an array"],
    [series({ anchors: [5] }), "timeseries.series[0].anchors[0] must be an object"],
    [series({ anchors: [{}] }), "timeseries.series[0].anchors[0] must have exactly one of entity, edge or artifact"],
    [
      series({ anchors: [{ entity: { name: "A" }, artifact: true }] }),
      "timeseries.series[0].anchors[0] must have exactly one of"
    ],
    [series({ anchors: [{ entity: "Apple" }] }), "timeseries.series[0].anchors[0].entity must be an object"],
    [series({ anchors: [{ entity: {} }] }), "timeseries.series[0].anchors[0].entity.name must be a string"],
    [series({ anchors: [{ entity: { name: "" } }] }), "timeseries.series[0].anchors[0].entity.name must not be empty"],
    [
      series({ anchors: [{ entity: { name: "A", type: 3 } }] }),
      "timeseries.series[0].anchors[0].entity.type must be a string"
    ],
    [
      series({ anchors: [{ edge: { relation: "works at" } }] }),
      "timeseries.series[0].anchors[0].edge.source must be a string"
    ],
    [
      series({ anchors: [{ edge: { source: "A", target: "" } }] }),
      "timeseries.series[0].anchors[0].edge.target must not be empty"
    ],
    [series({ anchors: [{ artifact: false }] }), "timeseries.series[0].anchors[0].artifact must be true"],
    [series({ anchors: [{ artifact: "yes" }] }), "timeseries.series[0].anchors[0].artifact must be true"],
    [
      series({ anchors: [{ artifact: true, required: "no" }] }),
      "timeseries.series[0].anchors[0].required must be a boolean"
    ],
    [
      series({ anchors: Array.from({ length: MAX_ANCHORS_PER_SERIES + 1 }, () => ({ artifact: true })) }),
      `timeseries.series[0].anchors must have at most ${MAX_ANCHORS_PER_SERIES} selectors`
    ],
    [
      { series: [{ key: "a", points: P }, { key: "a", points: P }] },
      "timeseries.series[1].key repeats the key of series[0]"
    ],
    [
      { series: Array.from({ length: MAX_SERIES + 1 }, (_, i) => ({ key: `k${i}`, points: [] })) },
      `at most ${MAX_SERIES} series`
    ],
    [
      { series: Array.from({ length: 11 }, (_, i) => ({ key: `k${i}`, points: points(MAX_POINTS_PER_REQUEST / 10) })) },
      `timeseries.series must have at most ${MAX_POINTS_PER_REQUEST} points in all`
    ],
    [{ series: [], observations: "yes" }, "timeseries.observations must be a boolean"],
    [{ fetch: 5 }, "timeseries.fetch must be an object"],
    [{ fetch: { providers: "prices" } }, "timeseries.fetch.providers must be an array"],
    [{ fetch: { providers: [] } }, "timeseries.fetch.providers must not be empty"],
    [{ fetch: { providers: [""] } }, "timeseries.fetch.providers[0] must not be empty"],
    [{ fetch: { before: 30 } }, "timeseries.fetch.before must be a duration string"],
    [{ fetch: { before: "30" } }, "timeseries.fetch.before must be a duration"],
    [{ fetch: { before: "30 days" } }, "timeseries.fetch.before must be a duration"],
    [{ fetch: { after: "-1d" } }, "timeseries.fetch.after must be a duration"],
    [{ fetch: { after: "101000d" } }, "timeseries.fetch.after must be a duration"]
  ])("rejects %j", (timeseries, message) => {
    expect(error(timeseries)).toContain(message)
  })

  it("normalizes a series: canonical times in order, selectors with their required flag", () => {
    const t = ok({
      series: [{
        key: "AAPL.close",
        unit: "USD",
        points: [["2025-01-31", 236], ["2025-01-30T12:00:00+01:00", 237.5]],
        anchors: [{ entity: { name: "Apple", type: "Organization" } }, {
          edge: { source: "Tim", relation: "leads" },
          required: false
        }, { artifact: true }]
      }]
    })
    expect(t.series[0]).toEqual({
      key: "AAPL.close",
      unit: "USD",
      points: [{ ts: "2025-01-30T11:00:00.000Z", value: 237.5 }, { ts: "2025-01-31T00:00:00.000Z", value: 236 }],
      anchors: [
        { entity: { name: "Apple", type: "Organization" }, required: true },
        { edge: { source: "Tim", relation: "leads" }, required: false },
        { artifact: true, required: true }
      ]
    })
    expect(t.fetch).toBeUndefined()
    expect(t.observations).toBe(false)
  })

  it("accepts the seed's example, a series without anchors, and the limits exactly", () => {
    const seed = ok({
      series: [{
        key: "AAPL.close",
        points: [["2025-01-31T00:00:00Z", 222.0]],
        anchors: [{ entity: { name: "Apple" } }]
      }]
    })
    expect(seed.series[0]!.points).toEqual([{ ts: "2025-01-31T00:00:00.000Z", value: 222 }])
    expect(ok({ series: [{ key: "k", points: P }] }).series[0]!.anchors).toEqual([])
    expect(ok(series({ points: points(MAX_POINTS_PER_SERIES) })).series[0]!.points).toHaveLength(MAX_POINTS_PER_SERIES)
  })

  it("fetch: every field optional, defaults 30d before and 0 after; providers deduplicated", () => {
    expect(ok({ fetch: {} }).fetch).toEqual({
      providers: undefined,
      before: "30d",
      beforeMs: 30 * 86_400_000,
      after: "0",
      afterMs: 0
    })
    expect(ok({ fetch: true }).fetch?.before).toBe("30d")
    const f = ok({ fetch: { providers: ["prices", "prices", "fx"], before: "12h", after: "1w" }, observations: true })
    expect(f.fetch).toEqual({
      providers: ["prices", "fx"],
      before: "12h",
      beforeMs: 12 * 3_600_000,
      after: "1w",
      afterMs: 604_800_000
    })
    expect(f.observations).toBe(true)
    expect(f.series).toEqual([])
  })

  it("is checked before the image rule only for texts: with image it is a 400 of its own", () => {
    const r = validateRememberRequest({ user_id: "u", image: "aGk=", timeseries: { series: [] } })
    expect(Either.isLeft(r) && r.left.message).toBe("timeseries must not be given together with image")
  })

  it("the run log keeps counts, never the points", () => {
    const r = validateRememberRequest({
      user_id: "u",
      text: "x",
      timeseries: { series: [{ key: "k", points: P }], observations: true }
    })
    if (Either.isLeft(r)) throw new Error(r.left.message)
    const params = runParams(r.right)
    expect(params.timeseries).toEqual({ series: 1, points: 1, fetch: false, observations: true })
    expect(JSON.stringify(params)).not.toContain("2025-01-31")
  })
})

describe("parseDuration", () => {
  it.each([
    ["0", 0],
    ["00", 0],
    ["0d", 0],
    ["30d", 30 * 86_400_000],
    ["12h", 12 * 3_600_000],
    ["1.5h", 5_400_000],
    ["90m", 5_400_000],
    ["45s", 45_000],
    ["250ms", 250],
    ["2w", 2 * 604_800_000],
    [" 7D ", 7 * 86_400_000]
  ])("%s -> %d ms", (input, ms) => {
    expect(parseDuration(input)).toBe(ms)
  })

  it.each(["", "d", "30", "-1d", "1y", "1 day", "1e3d", "36501000d"])("rejects %j", (input) => {
    expect(parseDuration(input)).toBeUndefined()
  })
})

describe("parsePointTime", () => {
  it.each([
    ["2025-01-31", "2025-01-31T00:00:00.000Z"],
    ["2024-02-29", "2024-02-29T00:00:00.000Z"],
    ["2025-01-31T00:00:00Z", "2025-01-31T00:00:00.000Z"],
    ["2025-01-31T09:30:00.5+02:00", "2025-01-31T07:30:00.500Z"]
  ])("%s -> %s", (input, canonical) => {
    expect(parsePointTime(input)).toBe(canonical)
  })

  it.each(["2025-02-29", "2025-04-31", "2025-13-01", "31/01/2025", "2025-01-31T00:00:00"])("rejects %s", (input) => {
    expect(parsePointTime(input)).toBeUndefined()
  })
})
