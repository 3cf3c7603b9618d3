/**
 * The built-in `prices` provider against a local fake CSV endpoint (normal, empty, HTTP error,
 * not a CSV), providers from the configuration, and gligabao as a library: a configured
 * provider and a Layer-provided callback side by side in one fetch, then the series read back
 * by key and by id.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, type Layer, Option } from "effect"
import { type ScriptedAnswer, ScriptedLlm } from "../layers/testing/ScriptedLlm.js"
import {
  makePricesProvider,
  providersFromConfig,
  timeseriesFor,
  TimeseriesProvidersLive
} from "../layers/timeseries/index.js"
import { defaultConfig } from "../src/Config.js"
import { validateRememberRequest } from "../src/domain/Remember.js"
import { RememberManager } from "../src/pipeline/RememberManager.js"
import type { FetchItem } from "../src/pipeline/series/index.js"
import { listSeries, readSeries } from "../src/pipeline/series/library.js"
import type { LlmRequest } from "../src/services/Llm.js"
import { ProviderFailed, type TimeseriesProvider, TimeseriesProviders } from "../src/services/TimeseriesProviders.js"
import { itemsOf, rememberLayer, textBody } from "./support/app.js"
import { sqliteLayer } from "./support/databases.js"
import { csvError, type FakeServer, startFakePricesCsv } from "./support/fakePricesCsv.js"

const AAPL = { "2024-12-31": 250.42, "2025-01-02": 243.85, "2025-01-03": 243.36, "2025-01-06": 245 }

describe("the prices provider against a fake CSV endpoint", () => {
  let fake: FakeServer
  beforeAll(async () => {
    fake = await startFakePricesCsv({ "AAPL.US": AAPL })
  })
  afterAll(() => fake.close())
  beforeEach(() => fake.reset())

  const provider = () => makePricesProvider({ name: "stocks", description: "Daily closes", baseUrl: `${fake.url}/` })

  it.live("reads the daily closes of the period, one series per query, at midnight UTC", () =>
    Effect.gen(function*() {
      const series = yield* provider().fetch("aapl.us", "2025-01-01T00:00:00.000Z", "2025-01-03T12:00:00.000Z")
      expect(series).toEqual([{
        key: "AAPL.US.close",
        points: [{ ts: "2025-01-02T00:00:00.000Z", value: 243.85 }, { ts: "2025-01-03T00:00:00.000Z", value: 243.36 }]
      }])
      expect(fake.requests).toHaveLength(1)
      const url = new URL(fake.requests[0]!.path, "http://fake")
      expect(url.pathname).toBe("/q/d/l/")
      expect(Object.fromEntries(url.searchParams)).toEqual({ s: "aapl.us", d1: "20250101", d2: "20250103", i: "d" })
      expect(String(fake.requests[0]!.headers["user-agent"])).toMatch(/^gligabao\//)
    }))

  it.live("an unknown symbol or an empty period is an empty series, not an error", () =>
    Effect.gen(function*() {
      expect(yield* provider().fetch("NOPE", "2025-01-01T00:00:00.000Z", "2025-01-31T00:00:00.000Z")).toEqual([{
        key: "NOPE.close",
        points: []
      }])
      expect(yield* provider().fetch("AAPL.US", "2023-01-01T00:00:00.000Z", "2023-01-31T00:00:00.000Z")).toEqual([{
        key: "AAPL.US.close",
        points: []
      }])
    }))

  it.live("an HTTP error and a body that is not a CSV are ProviderFailed, naming the provider", () =>
    Effect.gen(function*() {
      fake.enqueue(csvError(503, "Too many requests"))
      const http = yield* Effect.flip(
        provider().fetch("AAPL.US", "2025-01-01T00:00:00.000Z", "2025-01-31T00:00:00.000Z")
      )
      expect(http).toBeInstanceOf(ProviderFailed)
      expect(http.message).toMatch(/^stocks: HTTP 503: .*Too many requests/)
      fake.enqueue({
        status: 200,
        headers: { "content-type": "text/html" },
        raw: "<html>Please solve the captcha</html>"
      })
      const html = yield* Effect.flip(
        provider().fetch("AAPL.US", "2025-01-01T00:00:00.000Z", "2025-01-31T00:00:00.000Z")
      )
      expect(html.message).toMatch(/^stocks: the answer is not a CSV/)
    }))

  it.live("a server that is down is a ProviderFailed", () =>
    Effect.gen(function*() {
      const down = makePricesProvider({ name: "stocks", description: "d", baseUrl: "http://127.0.0.1:9" })
      const error = yield* Effect.flip(down.fetch("AAPL.US", "2025-01-01T00:00:00.000Z", "2025-01-31T00:00:00.000Z"))
      expect(error.message).toMatch(/^stocks: request failed/)
    }))

  it("the model is told how to query it", () => {
    expect(provider().description).toMatch(/^Daily closes \(query: .*AAPL\.US/)
  })
})

describe("providers from the configuration and as a Layer", () => {
  it.effect("[[timeseries.providers]] entries become providers, in order; none configured is none", () =>
    Effect.gen(function*() {
      const config = {
        ...defaultConfig,
        timeseries: {
          providers: [
            { name: "stocks", kind: "prices" as const, description: "Stocks", baseUrl: "http://127.0.0.1:7" },
            { name: "fx", kind: "prices" as const, description: "Currencies", baseUrl: "http://127.0.0.1:8" }
          ]
        }
      }
      expect(providersFromConfig(config.timeseries.providers).map((p) => p.name)).toEqual(["stocks", "fx"])
      const extra: TimeseriesProvider = { name: "own", description: "mine", fetch: () => Effect.succeed([]) }
      const both = yield* Effect.provide(TimeseriesProviders, timeseriesFor(config, [extra]))
      expect(both.providers.map((p) => p.name)).toEqual(["stocks", "fx", "own"])
      const none = yield* Effect.provide(TimeseriesProviders, timeseriesFor(defaultConfig))
      expect(none.providers).toEqual([])
    }))

  it.effect("a name used twice fails the layer", () =>
    Effect.gen(function*() {
      const p: TimeseriesProvider = { name: "x", description: "d", fetch: () => Effect.succeed([]) }
      const exit = yield* Effect.exit(Effect.provide(TimeseriesProviders, TimeseriesProvidersLive([p, p])))
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain("\"x\" is used twice")
    }))
})

describe("gligabao as a library: fetch through a configured and a Layer-provided provider, read the series back", () => {
  let fake: FakeServer
  beforeAll(async () => {
    fake = await startFakePricesCsv({ "AAPL.US": AAPL })
  })
  afterAll(() => fake.close())

  const userText = (r: LlmRequest) => String(r.messages[0]!.content)
  const script = (r: LlmRequest): ScriptedAnswer => {
    if (r.stage === "extract_graph") {
      return ScriptedLlm.json({
        entities: [{ name: "Apple", type: "organization" }, { name: "Cupertino", type: "place" }],
        edges: []
      })
    }
    if (r.stage === "resolve_series") {
      const sent = JSON.parse(userText(r))
      expect(sent.providers.map((p: any) => p.name)).toEqual(["stocks", "weather"])
      return ScriptedLlm.json({
        fetches: [
          { entity: "Apple", provider: "stocks", query: "AAPL.US", reason: "share price" },
          { entity: "Cupertino", provider: "weather", query: "Cupertino", reason: "temperature" }
        ]
      })
    }
    return { fail: { message: `unexpected ${r.stage}` } }
  }

  // the embedding application's own provider: any Effect
  const weather: TimeseriesProvider = {
    name: "weather",
    description: "Daily mean temperature of a city; query: the city name",
    fetch: (query, from) =>
      Effect.succeed([{
        key: `${query}.temp`,
        unit: "°C",
        points: [{ ts: from, value: 11.5 }, { ts: "2025-01-06T00:00:00Z", value: 13 }]
      }])
  }

  it.live("both fetched, stored and anchored; readSeries by key and by id, with a range; listSeries", () => {
    const config = {
      ...defaultConfig,
      timeseries: {
        providers: [{
          name: "stocks",
          kind: "prices" as const,
          description: "Daily closes of stocks",
          baseUrl: fake.url
        }]
      }
    }
    const layer = rememberLayer(sqliteLayer(), script, { timeseries: timeseriesFor(config, [weather]) })
    return Effect.gen(function*() {
      const body = validateRememberRequest({
        user_id: "u",
        text: "Apple is based in Cupertino.",
        reference_time: "2025-01-06T00:00:00Z",
        timeseries: { fetch: { before: "7d" } }
      })
      if (Either.isLeft(body)) throw new Error(body.left.message)
      const out = yield* (yield* RememberManager).submit(body.right)
      const fetches = itemsOf<FetchItem>(textBody(out).series_fetches)
      expect(fetches.map((f) => [f.provider, f.series.map((s) => [s.key, s.points])])).toEqual([
        ["stocks", [["AAPL.US.close", 4]]],
        ["weather", [["Cupertino.temp", 2]]]
      ])
      expect(fetches.every((f) => f.error === undefined)).toBe(true)

      const byKey = Option.getOrThrow(yield* readSeries("u", "main", { key: "AAPL.US.close" }))
      expect(byKey.points.map((p) => p.value)).toEqual([250.42, 243.85, 243.36, 245])
      expect(byKey.stats).toMatchObject({ count: 4, first: 250.42, last: 245, min: 243.36, max: 250.42 })
      expect(byKey.anchors.map((a) => [a.artifact_id !== null, a.entity_id !== null])).toEqual([[true, false], [
        false,
        true
      ]])

      const id = fetches[1].series[0].id
      const ranged = Option.getOrThrow(yield* readSeries("u", "main", { id }, { from: "2025-01-02T00:00:00.000Z" }))
      expect(ranged.series).toMatchObject({ key: "Cupertino.temp", unit: "°C" })
      expect(ranged.points).toEqual([{ ts: "2025-01-06T00:00:00.000Z", value: 13 }])
      expect(ranged.point_count).toBe(2)
      // datasets are isolated: another user's (or dataset's) id is not found
      expect(Option.isNone(yield* readSeries("someone-else", "main", { id }))).toBe(true)
      expect(Option.isNone(yield* readSeries("u", "other", { key: "AAPL.US.close" }))).toBe(true)
      expect((yield* listSeries("u", "main")).map((s) => s.key)).toEqual(["AAPL.US.close", "Cupertino.temp"])
    }).pipe(Effect.provide(layer as Layer.Layer<any, any, never>)) as Effect.Effect<void>
  })
})
