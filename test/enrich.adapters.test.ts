/**
 * The enrichment adapters against local fakes that speak the wire protocols: Jev
 * (`/v1/systemone`), Nominatim (`/search`, jsonv2) and Anthropic Messages with the server-side
 * web search tool; then a whole remember through all three over SQLite.
 */
import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Redacted, TestClock } from "effect"
import { JevClassifierLive, makeJevClassifier } from "../layers/classifier/JevClassifier.js"
import { makeNominatimResolver, NominatimResolverLive } from "../layers/geo/NominatimResolver.js"
import { AnthropicLlmLive, makeAnthropicLlm } from "../layers/llm/AnthropicLlm.js"
import { ScriptedLlm } from "../layers/testing/ScriptedLlm.js"
import { TimeseriesProvidersLive } from "../layers/timeseries/index.js"
import { MemoryVectorStoreLive } from "../layers/vectors/MemoryVectorStore.js"
import type { RememberRequest } from "../src/domain/Remember.js"
import type { WebSearchItem } from "../src/pipeline/enrich/index.js"
import { readWebSearchAnswer, WEB_SEARCH_TOOL } from "../src/pipeline/enrich/webSearchAnswer.js"
import { RememberManager, RememberManagerLive } from "../src/pipeline/RememberManager.js"
import { RememberPipelineLive } from "../src/pipeline/RememberPipelineLive.js"
import { RunSchedulerLive } from "../src/pipeline/RunScheduler.js"
import { RememberSettings } from "../src/pipeline/Settings.js"
import { ClassifierFailed } from "../src/services/ComplexityClassifier.js"
import { GeoFailed } from "../src/services/GeoResolver.js"
import { RunLogRepo } from "../src/services/RunLogRepo.js"
import { itemsOf, NoEmbeddings, rememberLayer, tempImageStore, textBody } from "./support/app.js"
import { sqliteLayer } from "./support/databases.js"
import { type FakeAnthropic, startFakeAnthropic, webSearchMessage } from "./support/fakeAnthropic.js"
import { DEFAULT_JEV_ANSWER, jevAnswer, jevError, startFakeJev } from "./support/fakeJev.js"
import type { FakeServer } from "./support/fakeLlmServer.js"
import { BERLIN, nominatimError, startFakeNominatim } from "./support/fakeNominatim.js"

const USER_AGENT = "gligabao-tests/1 (ops@gligabao.test)"

/** A real pause (not the Effect clock), for a server round trip to happen under a TestClock. */
const realPause = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

describe("JevClassifier against a fake Jev", () => {
  let jev: FakeServer
  beforeAll(async () => {
    jev = await startFakeJev({ apiKey: "jev-key" })
  })
  afterAll(() => jev.close())
  beforeEach(() => jev.reset())

  const classifier = (timeoutMs?: number) =>
    makeJevClassifier({ url: `${jev.url}/`, apiKey: Redacted.make("jev-key"), timeoutMs })

  it.live("posts the choice question with the Bearer key; returns the choice, confidence, probabilities and latency", () =>
    Effect.gen(function*() {
      const result = yield* classifier().classify("Alice works at Acme.")
      expect(result).toEqual(Option.some({
        complexity: "medium",
        confidence: 0.82,
        probabilities: { simple: 0.1, medium: 0.82, complex: 0.08 },
        latency_ms: expect.any(Number)
      }))
      const [sent] = jev.requests
      expect(sent!.path).toBe("/v1/systemone")
      expect(sent!.headers.authorization).toBe("Bearer jev-key")
      expect(sent!.body).toEqual({
        question: expect.stringContaining("entities"),
        choices: ["simple", "medium", "complex"],
        input: "Alice works at Acme."
      })
    }))

  it.live("an HTTP error, a wrong key or an unusable answer is a ClassifierFailed naming it", () =>
    Effect.gen(function*() {
      jev.enqueue(jevError(500, "model not loaded"))
      const e500 = yield* Effect.flip(classifier().classify("x"))
      expect(e500).toBeInstanceOf(ClassifierFailed)
      expect(e500.message).toBe("jev: HTTP 500: model not loaded")

      const wrongKey = makeJevClassifier({ url: jev.url, apiKey: Redacted.make("nope") })
      expect((yield* Effect.flip(wrongKey.classify("x"))).message).toBe("jev: HTTP 401: invalid api key")

      jev.enqueue(jevAnswer({ choice: "huge", confidence: 0.5 }))
      expect((yield* Effect.flip(classifier().classify("x"))).message).toMatch(/^jev: unusable answer: `choice`/)
      jev.enqueue({ raw: "<html>" })
      expect((yield* Effect.flip(classifier().classify("x"))).message).toBe("jev: the answer is not JSON")
    }))

  it.live("a slow answer times out", () =>
    Effect.gen(function*() {
      jev.enqueue(jevAnswer(DEFAULT_JEV_ANSWER, 5_000))
      const error = yield* Effect.flip(classifier(50).classify("x"))
      expect(error.message).toBe("jev: timed out after 50ms")
    }))

  it.live("sees at most the first 32 KiB of a long text, cut on a character boundary; the result is on the run stage", () => {
    const text = "Ça va très bien, merci. ".repeat(1600)
    return Effect.gen(function*() {
      const out = yield* Effect.flatMap(RememberManager, (m) =>
        m.submit({
          user_id: "alice",
          dataset: "main",
          text,
          kind: "knowledge",
          models: {},
          reasoning: {},
          web_search: false
        }))
      const input: string = jev.requests[0]!.body.input
      expect(Buffer.byteLength(text)).toBeGreaterThan(32 * 1024)
      expect(Buffer.byteLength(input)).toBeLessThanOrEqual(32 * 1024)
      expect(Buffer.byteLength(input)).toBeGreaterThan(32 * 1024 - 4)
      expect(text.startsWith(input)).toBe(true)
      const run = Option.getOrThrow(yield* Effect.flatMap(RunLogRepo, (log) => log.get(out.runId)))
      expect(run.stages.find((s) => s.stage === "classify_complexity")).toMatchObject({
        status: "succeeded",
        detail: {
          complexity: "medium",
          confidence: 0.82,
          probabilities: DEFAULT_JEV_ANSWER.probabilities,
          latency_ms: expect.any(Number)
        }
      })
    }).pipe(
      Effect.provide(
        rememberLayer(
          sqliteLayer(),
          (
            r
          ) => (r.stage === "summarize_chunk" ? { text: "A summary." } : ScriptedLlm.json({ entities: [], edges: [] })),
          {
            classifier: JevClassifierLive({ url: jev.url, apiKey: Redacted.make("jev-key") })
          }
        )
      )
    )
  })
})

describe("NominatimResolver against a fake Nominatim", () => {
  let nominatim: FakeServer
  beforeAll(async () => {
    nominatim = await startFakeNominatim({ "Berlin, Germany": BERLIN })
  })
  afterAll(() => nominatim.close())
  beforeEach(() => nominatim.reset())

  // fast enough for tests that are not about the rate; the limit itself is tested below
  const resolver = () =>
    makeNominatimResolver({ baseUrl: nominatim.url, userAgent: USER_AGENT, requestsPerSecond: 1000 })

  it.live("searches jsonv2 with the User-Agent; coordinates come as strings; the answer is cached", () =>
    Effect.gen(function*() {
      const geo = resolver()
      const place = yield* geo.resolve("Berlin, Germany")
      expect(place).toEqual(Option.some({
        latitude: 52.5170365,
        longitude: 13.3888599,
        display_name: "Berlin, Deutschland",
        country: "Deutschland",
        country_code: "de",
        region: "Berlin"
      }))
      const url = new URL(nominatim.requests[0]!.path, "http://x")
      expect(url.pathname).toBe("/search")
      expect(Object.fromEntries(url.searchParams)).toEqual({
        q: "Berlin, Germany",
        format: "jsonv2",
        limit: "1",
        addressdetails: "1"
      })
      expect(nominatim.requests[0]!.headers["user-agent"]).toBe(USER_AGENT)
      // the same query again (any case and spacing) is answered from the cache
      expect(yield* geo.resolve("  berlin,   germany ")).toEqual(place)
      expect(nominatim.requests).toHaveLength(1)
      expect(geo.provider).toBe("nominatim")
    }))

  it.live("[] is unresolved (and cached); 429 and 503 are failures (not cached)", () =>
    Effect.gen(function*() {
      const geo = resolver()
      expect(yield* geo.resolve("Atlantis")).toEqual(Option.none())
      expect(yield* geo.resolve("Atlantis")).toEqual(Option.none())
      expect(nominatim.requests).toHaveLength(1)

      nominatim.enqueue(nominatimError(429, "Too Many Requests"), nominatimError(503, ""))
      const limited = yield* Effect.flip(geo.resolve("Berlin, Germany"))
      expect(limited).toBeInstanceOf(GeoFailed)
      expect(limited.message).toMatch(/^nominatim: HTTP 429/)
      expect((yield* Effect.flip(geo.resolve("Berlin, Germany"))).message).toMatch(
        /^nominatim: HTTP 503: .*Search temporarily unavailable/
      )
      // not cached: the third try reaches the server and succeeds
      expect(Option.isSome(yield* geo.resolve("Berlin, Germany"))).toBe(true)
      expect(nominatim.requests).toHaveLength(4)

      nominatim.enqueue({ json: { not: "a list" } })
      expect((yield* Effect.flip(geo.resolve("Somewhere"))).message).toBe(
        "nominatim: the answer is not a list of places"
      )
    }))

  it.effect("two concurrent lookups are spaced one second apart, across resolvers of the same server", () =>
    Effect.gen(function*() {
      // a server of its own: the limiter is per server for the whole process
      const own = yield* Effect.acquireRelease(
        Effect.promise(() => startFakeNominatim({ "Berlin, Germany": BERLIN })),
        (s) => Effect.promise(() => s.close())
      )
      const options = { baseUrl: own.url, userAgent: USER_AGENT, requestsPerSecond: 1 }
      const first = yield* Effect.fork(makeNominatimResolver(options).resolve("Berlin, Germany"))
      const second = yield* Effect.fork(makeNominatimResolver(options).resolve("Paris, France"))
      while (own.requests.length === 0) yield* realPause(10)
      yield* realPause(150)
      expect(own.requests).toHaveLength(1)
      yield* TestClock.adjust("999 millis")
      yield* realPause(150)
      expect(own.requests).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      const results = [yield* Fiber.join(first), yield* Fiber.join(second)]
      expect(own.requests.map((r) => new URL(r.path, "http://x").searchParams.get("q")).sort()).toEqual([
        "Berlin, Germany",
        "Paris, France"
      ])
      expect(results.filter(Option.isSome)).toHaveLength(1)
    }).pipe(Effect.scoped))

  it.live("a request that hangs times out", () =>
    Effect.gen(function*() {
      nominatim.enqueue({ json: [], delayMs: 5_000 })
      const geo = makeNominatimResolver({
        baseUrl: nominatim.url,
        userAgent: USER_AGENT,
        requestsPerSecond: 1000,
        timeoutMs: 50
      })
      expect((yield* Effect.flip(geo.resolve("Slow"))).message).toBe("nominatim: timed out after 50ms")
    }))
})

describe("Anthropic with the server-side web search tool", () => {
  let anthropic: FakeAnthropic
  beforeAll(async () => {
    anthropic = await startFakeAnthropic()
  })
  afterAll(() => anthropic.close())
  beforeEach(() => anthropic.reset())

  const llm = () =>
    makeAnthropicLlm({
      apiKey: Redacted.make("sk-ant-test"),
      baseUrl: anthropic.url,
      defaultModel: "claude-haiku-4-5",
      timeoutMs: 5_000,
      maxRetries: 0
    })

  const ask = (tools: ReadonlyArray<unknown> = [WEB_SEARCH_TOOL]) =>
    llm().complete({
      stage: "web_search",
      reasoning: "none",
      system: "s",
      messages: [{ role: "user", content: "Acme?" }],
      maxTokens: 2048,
      tools
    })

  it.live("sends the tool; reads server_tool_use, web_search_tool_result and usage.server_tool_use.web_search_requests", () =>
    Effect.gen(function*() {
      anthropic.enqueue(webSearchMessage({
        preamble: "I'll look that up.",
        searches: [
          { query: "Acme news", results: [{ url: "https://a.test/1", title: "Acme", page_age: "January 5, 2025" }] },
          { query: "Acme 2025", results: [{ url: "https://a.test/2", title: "Acme 2" }] }
        ],
        text: ["On 2025-01-05 Acme ", "opened a plant."]
      }))
      const response = yield* ask()
      expect(anthropic.requests[0]!.body.tools).toEqual([{
        type: "web_search_20250305",
        name: "web_search",
        max_uses: 3
      }])
      expect(response.usage.webSearchRequests).toBe(2)
      expect(readWebSearchAnswer(response.blocks)).toEqual({
        text: "On 2025-01-05 Acme opened a plant.",
        queries: ["Acme news", "Acme 2025"],
        sources: [
          { url: "https://a.test/1", title: "Acme", page_age: "January 5, 2025" },
          { url: "https://a.test/2", title: "Acme 2", page_age: null }
        ],
        toolErrors: []
      })
    }))

  it.live("a tool error arrives inside a 200: no searches billed, the error code is reported", () =>
    Effect.gen(function*() {
      anthropic.enqueue(
        webSearchMessage({ searches: [{ query: "Acme", errorCode: "too_many_requests" }], text: "I could not search." })
      )
      const response = yield* ask()
      expect(response.usage.webSearchRequests).toBe(0)
      expect(readWebSearchAnswer(response.blocks)).toMatchObject({
        queries: ["Acme"],
        sources: [],
        toolErrors: ["too_many_requests"]
      })
    }))
})

describe("a remember through Anthropic, Jev and Nominatim fakes", () => {
  let anthropic: FakeAnthropic
  let jev: FakeServer
  let nominatim: FakeServer
  beforeAll(async () => {
    ;[anthropic, jev, nominatim] = await Promise.all([
      startFakeAnthropic(),
      startFakeJev(),
      startFakeNominatim({ "Berlin, Germany": BERLIN })
    ])
  })
  afterAll(() => Promise.all([anthropic.close(), jev.close(), nominatim.close()]))

  const TEXT = "Alice Smith lives in Berlin."
  const WEB_TEXT = "On 2025-01-20 Alice Smith gave a talk in Berlin."
  const extraction = (text: string) =>
    text.includes(WEB_TEXT)
      ? {
        entities: [{ name: "Alice Smith", type: "person" }, { name: "Berlin", type: "city" }],
        edges: [{ source: "Alice Smith", target: "Berlin", relation: "gave talk in", valid_at: "2025-01-20" }]
      }
      : {
        entities: [{ name: "Alice Smith", type: "person" }, { name: "Berlin", type: "city" }],
        edges: [{ source: "Alice Smith", target: "Berlin", relation: "lives in" }]
      }

  const app = () =>
    RememberManagerLive({ concurrency: 1, instanceId: "test-instance" }).pipe(
      Layer.provideMerge(RememberPipelineLive),
      Layer.provideMerge(RunSchedulerLive),
      Layer.provideMerge(Layer.mergeAll(
        AnthropicLlmLive({
          apiKey: Redacted.make("sk-ant-test"),
          baseUrl: anthropic.url,
          defaultModel: "claude-haiku-4-5",
          timeoutMs: 5_000,
          maxRetries: 0
        }),
        JevClassifierLive({ url: jev.url, apiKey: Redacted.make("jev-test-key") }),
        NominatimResolverLive({ baseUrl: nominatim.url, userAgent: USER_AGENT, requestsPerSecond: 1000 }),
        RememberSettings.layer({ webSearch: true }),
        NoEmbeddings,
        MemoryVectorStoreLive(),
        tempImageStore(),
        TimeseriesProvidersLive([])
      )),
      Layer.provideMerge(sqliteLayer())
    )

  it.live("classifies, geocodes and searches; the searches are counted and priced in gb_inferences", () =>
    Effect.gen(function*() {
      anthropic.setHandler((request) => {
        const body = request.body
        const user = JSON.stringify(body.messages)
        // the server web search tool (the JSON stages' forced answer tools are custom tools)
        if (body.tools?.some((t: any) => String(t?.type).startsWith("web_search"))) {
          return webSearchMessage({
            model: "claude-haiku-4-5-20251001",
            searches: [{ query: "Alice Smith news", results: [{ url: "https://news.test/alice", title: "Talk" }] }, {
              query: "Alice Smith Berlin",
              results: []
            }],
            text: WEB_TEXT
          })
        }
        if (String(body.system).includes("places among the entities")) {
          return {
            json: {
              type: "message",
              role: "assistant",
              model: "claude-haiku-4-5-20251001",
              content: [{
                type: "text",
                text: JSON.stringify({ places: [{ entity: "Berlin", kind: "city", query: "Berlin, Germany" }] })
              }],
              stop_reason: "end_turn",
              usage: { input_tokens: 50, output_tokens: 20 }
            }
          }
        }
        return {
          json: {
            type: "message",
            role: "assistant",
            model: "claude-haiku-4-5-20251001",
            content: [{ type: "text", text: JSON.stringify(extraction(user)) }],
            stop_reason: "end_turn",
            usage: { input_tokens: 100, output_tokens: 40 }
          }
        }
      })
      const request: RememberRequest = {
        user_id: "alice",
        dataset: "main",
        text: TEXT,
        kind: "knowledge",
        reference_time: "2025-02-01T00:00:00.000Z",
        models: {},
        reasoning: {},
        web_search: true
      }
      const out = yield* Effect.flatMap(RememberManager, (m) => m.submit(request))
      const response = textBody(out)

      expect(jev.requests[0]!.body.input).toBe(TEXT)
      expect(response.geo).toEqual([
        expect.objectContaining({
          entity: "Berlin",
          resolved: true,
          latitude: 52.5170365,
          longitude: 13.3888599,
          country_code: "de",
          provider: "nominatim"
        })
      ])
      expect(response.web_searches).toHaveLength(2)
      const webSearches = itemsOf<WebSearchItem>(response.web_searches)
      expect(webSearches[0]).toMatchObject({
        entity: "Alice Smith",
        query: "Alice Smith news\nAlice Smith Berlin",
        sources: [{ url: "https://news.test/alice", title: "Talk", page_age: null }],
        artifact_id: expect.any(Number)
      })
      expect(webSearches[0].edges.map((e) => e.relation)).toEqual(["gave_talk_in"])

      const sql = yield* SqlClient.SqlClient
      const searches = yield* sql<
        any
      >`SELECT web_search_requests, cost_usd, model FROM gb_inferences WHERE stage = 'web_search' ORDER BY id`
      expect(searches.map((s: any) => Number(s.web_search_requests))).toEqual([2, 2])
      // 2000 input and 300 output tokens at $1/$5 per million, plus 2 searches at $10 per 1,000
      expect(Number(searches[0].cost_usd)).toBeCloseTo(0.002 + 0.0015 + 0.02, 8)
      const run = Option.getOrThrow(yield* Effect.flatMap(RunLogRepo, (log) => log.get(out.runId)))
      expect(run.status).toBe("succeeded")
      expect(Object.fromEntries(run.stages.map((s) => [s.stage, s.status]))).toMatchObject({
        classify_complexity: "succeeded",
        resolve_geo: "succeeded",
        web_search: "succeeded"
      })
    }).pipe(Effect.provide(app())))
})
