/**
 * The pure parts of timeseries.fetch: the resolve_series prompt and answer, the window of
 * before/after, checking what a provider returned, and the `prices` CSV.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { parsePricesCsv, pricesKey, pricesUrl } from "../../layers/timeseries/PricesProvider.js"
import { cleanFetched, fetchWindow } from "../../src/pipeline/series/fetch.js"
import { buildResolveSeriesPrompt, MAX_FETCHES, parseResolveSeries } from "../../src/pipeline/series/resolveSeries.js"

const entities = [{ id: 1, name: "Apple Inc." }, { id: 2, name: "Tim Cook" }]
const window = { from: "2025-01-01T00:00:00.000Z", to: "2025-01-31T00:00:00.000Z" }
const parse = (answer: unknown, providers = ["prices"]) =>
  parseResolveSeries(typeof answer === "string" ? answer : JSON.stringify(answer), entities, providers, window)
const right = <A>(e: Either.Either<A, string>): A => {
  if (Either.isLeft(e)) throw new Error(e.left)
  return e.right
}

describe("resolve_series", () => {
  it("the prompt carries the reference time, the window, the providers and the entities as data", () => {
    const prompt = buildResolveSeriesPrompt({
      referenceTime: "2025-01-31T00:00:00.000Z",
      window,
      providers: [{ name: "prices", description: "Daily closes" }],
      entities: [{ name: "Apple Inc.", type: "organization", description: "" }, {
        name: "Tim Cook",
        type: "person",
        description: "CEO"
      }]
    })
    expect(JSON.parse(prompt.user)).toEqual({
      reference_time: "2025-01-31T00:00:00.000Z",
      window,
      providers: [{ name: "prices", description: "Daily closes" }],
      entities: [{ name: "Apple Inc.", type: "organization" }, { name: "Tim Cook", type: "person", description: "CEO" }]
    })
    expect(prompt.system).toContain(`"fetches"`)
  })

  it("matches entities by name or normalized name; times default to the window and are kept within it", () => {
    const result = right(parse(
      "Here you go:\n```json\n" + JSON.stringify({
        fetches: [
          { entity: "apple  inc.", provider: "prices", query: " AAPL.US ", reason: "share price" },
          { entity: "Tim Cook", provider: "prices", query: "X", from: "2024-06-01", to: "2025-01-15T12:00:00Z" }
        ]
      }) + "\n```"
    ))
    expect(result.ignored).toEqual([])
    expect(result.fetches).toEqual([
      {
        entity: entities[0],
        provider: "prices",
        query: "AAPL.US",
        reason: "share price",
        from: window.from,
        to: window.to
      },
      {
        entity: entities[1],
        provider: "prices",
        query: "X",
        reason: "",
        from: window.from,
        to: "2025-01-15T12:00:00.000Z"
      }
    ])
  })

  it("ignores unknown entities and providers, empty queries, repeats, inverted periods and what is over the limit", () => {
    const many = Array.from(
      { length: MAX_FETCHES + 2 },
      (_, i) => ({ entity: "Apple Inc.", provider: "prices", query: `Q${i}` })
    )
    const result = right(parse({
      fetches: [
        { entity: "Google", provider: "prices", query: "GOOG" },
        { entity: "Apple Inc.", provider: "weather", query: "AAPL" },
        { entity: "Apple Inc.", provider: "prices", query: "  " },
        {
          entity: "Apple Inc.",
          provider: "prices",
          query: "A",
          from: "2025-01-20T00:00:00Z",
          to: "2025-01-10T00:00:00Z"
        },
        ...many,
        { entity: "Apple Inc.", provider: "prices", query: "Q0" }
      ]
    }))
    expect(result.fetches.map((f) => f.query)).toEqual(many.slice(0, MAX_FETCHES).map((f) => f.query))
    expect(result.ignored).toEqual([
      "Google: not an entity of the text",
      "Apple Inc.: unknown provider \"weather\"",
      "Apple Inc.: empty query",
      "Apple Inc.: from 2025-01-20T00:00:00.000Z is after to 2025-01-10T00:00:00.000Z",
      "Apple Inc.: over the limit of 10 fetches",
      "Apple Inc.: over the limit of 10 fetches",
      "Apple Inc.: prices \"Q0\" listed twice"
    ])
  })

  it("an answer that is not the JSON asked for is a Left naming the stage", () => {
    const notJson = parse("no idea")
    expect(Either.isLeft(notJson) && notJson.left).toMatch(/^resolve_series answer is not JSON/)
    const invalid = parse({ fetches: [{ entity: "Apple Inc.", provider: "prices" }] })
    expect(Either.isLeft(invalid) && invalid.left).toMatch(/^resolve_series answer is invalid: .*query/)
    expect(right(parse({ fetches: [] })).fetches).toEqual([])
  })
})

describe("fetch helpers", () => {
  it("fetchWindow: before and after around the reference time", () => {
    expect(
      fetchWindow("2025-01-31T00:00:00.000Z", {
        before: "30d",
        beforeMs: 30 * 86_400_000,
        after: "12h",
        afterMs: 12 * 3_600_000
      })
    )
      .toEqual({ from: "2025-01-01T00:00:00.000Z", to: "2025-01-31T12:00:00.000Z" })
  })

  it("cleanFetched: canonical times in order, bad points dropped and counted, a repeated time keeps the last value", () => {
    const cleaned = cleanFetched({
      key: "k",
      points: [
        { ts: "2025-01-02", value: 2 },
        { ts: "2025-01-01T00:00:00Z", value: 1 },
        { ts: "not a time", value: 3 },
        { ts: "2025-01-03", value: Number.NaN },
        { ts: "2025-01-02T00:00:00.000Z", value: 22 }
      ]
    })
    expect(cleaned).toEqual({
      points: [{ ts: "2025-01-01T00:00:00.000Z", value: 1 }, { ts: "2025-01-02T00:00:00.000Z", value: 22 }],
      dropped: 2
    })
  })
})

describe("prices CSV", () => {
  const CSV =
    "Date,Open,High,Low,Close,Volume\r\n2025-01-03,1,1,1,243.36,1\r\n2025-01-02,1,1,1,243.85,1\r\n2024-12-31,1,1,1,250.42,1\r\n"

  it("reads Date and Close within [from, to] by day, in time order", () => {
    expect(parsePricesCsv(CSV, "2025-01-01T00:00:00.000Z", "2025-01-03T23:00:00.000Z")).toEqual([
      { ts: "2025-01-02T00:00:00.000Z", value: 243.85 },
      { ts: "2025-01-03T00:00:00.000Z", value: 243.36 }
    ])
  })

  it("finds the columns by name, skips unreadable rows; No data is no points; HTML is not a CSV", () => {
    expect(parsePricesCsv("close,date\n5,2025-01-02\nx,2025-01-03\n6,\n", "2025-01-01", "2025-12-31")).toEqual([
      { ts: "2025-01-02T00:00:00.000Z", value: 5 }
    ])
    expect(parsePricesCsv("No data", "2025-01-01", "2025-12-31")).toEqual([])
    expect(parsePricesCsv("", "2025-01-01", "2025-12-31")).toEqual([])
    expect(parsePricesCsv("<html><body>Rate limited</body></html>", "2025-01-01", "2025-12-31")).toBeUndefined()
  })

  it("the URL shape and the series key", () => {
    expect(pricesUrl("https://stooq.com/", "AAPL.US", "2025-01-01T00:00:00.000Z", "2025-01-31T00:00:00.000Z"))
      .toBe("https://stooq.com/q/d/l/?s=AAPL.US&d1=20250101&d2=20250131&i=d")
    expect(pricesKey(" aapl.us ")).toBe("AAPL.US.close")
  })
})
