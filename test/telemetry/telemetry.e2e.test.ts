/**
 * Telemetry of a real `gligabao serve` (the composition root of the CLI): with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local OTLP receiver, one remember through a fake
 * Anthropic API sends its request span, stage spans, Llm.complete span and the metrics; the same
 * figures are on `GET /metrics` (Prometheus text, admin token only when auth is on) and match
 * the run log's model calls exactly. The server is stopped before the receiver is read: its
 * shutdown flushes whatever the export interval had not sent yet.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AdminRunResponse } from "../../src/admin/responses.js"
import { type SpawnedServer, startServer } from "../support/cli.js"
import { type FakeAnthropic, startFakeAnthropic } from "../support/fakeAnthropic.js"
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlpReceiver.js"
import { families, type Sample, samples, sampleValue } from "../support/prometheusText.js"

const API_KEY = "sk-ant-TELEMETRY-KEY-4242"
const ADMIN = "tok-admin-TELEMETRY-1-0123456789"
const ALICE = "tok-alice-TELEMETRY-2-0123456789"
/** a text and a name found nowhere but in the request, so a leak into telemetry is unmistakable */
const TEXT = "Quorvalda Zentrith moved to Lisbon in March 2024."

const graph = {
  entities: [
    { name: "Quorvalda Zentrith", type: "person", description: "a person" },
    { name: "Lisbon", type: "place", description: "a city" }
  ],
  edges: [{
    source: "Quorvalda Zentrith",
    target: "Lisbon",
    relation: "lives in",
    description: "Quorvalda Zentrith lives in Lisbon",
    valid_at: "2024-03-01",
    invalid_at: null
  }]
}

const call = async (server: SpawnedServer, path: string, token: string | undefined, body?: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() }
}

describe("telemetry of gligabao serve: OTLP export and GET /metrics", () => {
  let receiver: OtlpReceiver
  let anthropic: FakeAnthropic
  let server: SpawnedServer
  let runId = 0
  let run: AdminRunResponse
  let metricsPage: { status: number; type: string; text: string }
  const refusals: Record<string, number> = {}
  let spans: ReadonlyArray<ReceivedSpan> = []

  beforeAll(async () => {
    receiver = await startOtlpReceiver()
    anthropic = await startFakeAnthropic({
      text: (request) =>
        JSON.stringify(request.body?.system ?? "").includes("You extract a knowledge graph")
          ? JSON.stringify(graph)
          : JSON.stringify({ duplicates: [], contradictions: [] })
    })
    server = await startServer({
      env: {
        ANTHROPIC_API_KEY: API_KEY,
        ANTHROPIC_BASE_URL: anthropic.url,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SERVICE_NAME: "gligabao-under-test",
        GLIGABAO_TELEMETRY_EXPORT_INTERVAL_MS: "200",
        GLIGABAO_AUTH_TOKENS: JSON.stringify([{ token: ADMIN, admin: true }, { token: ALICE, user_id: "alice" }])
      }
    })
    const remembered = await call(server, "/v1/gb/remember", ALICE, { user_id: "alice", dataset: "kb", text: TEXT })
    expect(remembered.status, remembered.text).toBe(200)
    runId = JSON.parse(remembered.text).remember_run_id
    const searched = await call(server, "/v1/gb/search", ALICE, { user_id: "alice", dataset: "kb", query: "Quorvalda" })
    expect(searched.status, searched.text).toBe(200)
    expect((await call(server, "/healthz", undefined)).status).toBe(200)
    expect((await call(server, "/readyz", undefined)).status).toBe(200)
    refusals["none"] = (await call(server, "/metrics", undefined)).status
    refusals["user"] = (await call(server, "/metrics", ALICE)).status
    metricsPage = await call(server, "/metrics", ADMIN)
    const dbs = JSON.parse((await call(server, "/v1/gb/admin/api/databases", ADMIN)).text)
    const db = dbs.databases.find((d: { primary: boolean }) => d.primary).name
    run = JSON.parse((await call(server, `/v1/gb/admin/api/remember-runs/${runId}?db=${db}`, ADMIN)).text)
    expect(await server.stop()).toEqual({ code: 0, signal: null })
    spans = receiver.spans()
  }, 90_000)

  afterAll(async () => {
    await server?.stop()
    await anthropic?.close()
    await receiver?.close()
  })

  const spansNamed = (name: string) => spans.filter((s) => s.name === name)

  it("exports spans with the configured service name", () => {
    expect(spans.length).toBeGreaterThan(0)
    expect(new Set(spans.map((s) => s.resource["service.name"]))).toEqual(new Set(["gligabao-under-test"]))
  })

  it("one http.server span per request, with method, path and status", () => {
    const remember = spans.filter((s) =>
      s.name === "http.server POST" && s.attributes["url.path"] === "/v1/gb/remember"
    )
    expect(remember).toHaveLength(1)
    expect(remember[0]!.attributes["http.response.status_code"]).toBe(200)
    expect(
      spans.filter((s) => s.attributes["url.path"] === "/metrics").map((s) => s.attributes["http.response.status_code"])
    )
      .toEqual([401, 403, 200])
    // probes are not traced: they would drown the rest
    expect(spans.filter((s) => ["/healthz", "/readyz"].includes(String(s.attributes["url.path"])))).toEqual([])
    // the bearer token is redacted from the recorded headers
    expect(remember[0]!.attributes["http.request.header.authorization"]).toBe("<redacted>")
  })

  it("a span per remember stage, with the run id and dataset", () => {
    for (const stage of ["extract_graph", "load_candidates", "store"]) {
      const found = spansNamed(`remember.${stage}`)
      expect(found, stage).toHaveLength(1)
      expect(found[0]!.attributes).toMatchObject({ run_id: runId, dataset: "kb", stage })
    }
    // the store transaction as one span, inside the store stage
    const [store] = spansNamed("remember.store")
    const [sqlStore] = spansNamed("sql.store")
    expect(sqlStore?.traceId).toBe(store!.traceId)
    expect(spans.some((s) => s.name === "sql.execute" && s.traceId === store!.traceId)).toBe(true)
  })

  it("a read is traced from its request down to the repository: Reads.search, then SearchRepo's methods", () => {
    const [request] = spans.filter((s) => s.name === "http.server POST" && s.attributes["url.path"] === "/v1/gb/search")
    const [search] = spansNamed("Reads.search")
    expect(search!.traceId).toBe(request!.traceId)
    const repository = spans.filter((s) => s.name.startsWith("SearchRepo.") && s.traceId === request!.traceId)
    expect(repository.map((s) => s.name)).toContain("SearchRepo.dataset")
    expect(repository.map((s) => s.name)).toContain("SearchRepo.matchFacts")
    // the query's words are in no span
    expect(JSON.stringify([search, ...repository])).not.toContain("Quorvalda")
  })

  it("an Llm.complete span per model call with model, stage, tokens and cost as recorded", () => {
    const calls = spansNamed("Llm.complete")
    const llmRows = run.inferences.filter((i) => i.stage !== "embed")
    expect(calls).toHaveLength(llmRows.length)
    const extract = calls.find((s) => s.attributes["stage"] === "extract_graph")!
    const row = llmRows.find((i) => i.stage === "extract_graph")!
    expect(extract.attributes).toMatchObject({
      provider: "anthropic",
      model: row.model,
      input_tokens: row.input_tokens,
      output_tokens: row.output_tokens,
      cost_usd: row.cost_usd,
      inference_id: row.id,
      run_id: runId
    })
    expect(row.input_tokens).toBeGreaterThan(0)
    expect(row.cost_usd).toBeGreaterThan(0)
  })

  it("no text, prompt, key or token in anything exported", () => {
    const everything = JSON.stringify(receiver.requests)
    for (const secret of [API_KEY, ADMIN, ALICE, "Quorvalda", "You extract a knowledge graph"]) {
      expect(everything.includes(secret), secret).toBe(false)
    }
  })

  it("exports the metrics: remembers by status, stage durations, model calls, tokens, cost, queue depth", () => {
    const points = receiver.latestPoints()
    const point = (metric: string, attributes: Record<string, string>) =>
      points.filter((p) => p.metric === metric && Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))
    expect(point("gligabao_remembers_total", { status: "succeeded" }).map((p) => p.value)).toEqual([1])
    const extract = point("gligabao_stage_duration_seconds", { stage: "extract_graph" })
    expect(extract.map((p) => [p.kind, p.value])).toEqual([["histogram", 1]])
    const row = run.inferences.find((i) => i.stage === "extract_graph")!
    const byCall = { model: row.model, stage: "extract_graph" }
    expect(point("gligabao_model_calls_total", { ...byCall, status: "ok" }).map((p) => p.value)).toEqual([1])
    expect(point("gligabao_model_tokens_total", { ...byCall, type: "input" }).map((p) => p.value)).toEqual([
      row.input_tokens
    ])
    expect(point("gligabao_model_cost_usd_total", byCall)[0]!.value).toBeCloseTo(row.cost_usd, 12)
    expect(point("gligabao_remember_queue_depth", { state: "queued" }).map((p) => [p.kind, p.value])).toEqual([
      ["gauge", 0]
    ])
  })

  describe("GET /metrics", () => {
    let all: ReadonlyArray<Sample> = []
    beforeAll(() => {
      all = samples(metricsPage.text)
    })

    it("needs the admin token when auth is on: 401 without a token, 403 with a user's", () => {
      expect(refusals).toEqual({ none: 401, user: 403 })
      expect(metricsPage.status).toBe(200)
      expect(metricsPage.type).toContain("text/plain")
      expect(metricsPage.type).toContain("version=0.0.4")
    })

    it("parses as Prometheus text with the expected families and types", () => {
      const types = Object.fromEntries(families(metricsPage.text).map((f) => [f.name, f.type]))
      expect(types).toMatchObject({
        gligabao_remembers_total: "COUNTER",
        gligabao_stage_duration_seconds: "HISTOGRAM",
        gligabao_model_calls_total: "COUNTER",
        gligabao_model_tokens_total: "COUNTER",
        gligabao_model_cost_usd_total: "COUNTER",
        gligabao_remember_queue_depth: "GAUGE"
      })
    })

    it("remembers by status and each stage's duration as the run log has it", () => {
      expect(sampleValue(all, "gligabao_remembers_total", { status: "succeeded" })).toBe(1)
      expect(sampleValue(all, "gligabao_remembers_total", { status: "failed" })).toBeUndefined()
      for (const [stage, view] of Object.entries(run.run.stages)) {
        if (view.status === "not_started") continue
        // one execution each here, so the histogram's sum is the stage row's duration
        expect(sampleValue(all, "gligabao_stage_duration_seconds_count", { stage }), stage).toBe(1)
        expect(sampleValue(all, "gligabao_stage_duration_seconds_sum", { stage })! * 1000).toBeCloseTo(
          view.duration_ms!,
          6
        )
        expect(sampleValue(all, "gligabao_stage_duration_seconds_bucket", { stage, le: "+Inf" })).toBe(1)
      }
    })

    it("model calls, tokens and cost by model and stage are the run log's figures", () => {
      const byKey = new Map<string, { calls: number; input: number; output: number; cost: number }>()
      for (const i of run.inferences) {
        const key = JSON.stringify([i.model, i.stage])
        const t = byKey.get(key) ?? { calls: 0, input: 0, output: 0, cost: 0 }
        byKey.set(key, {
          calls: t.calls + 1,
          input: t.input + i.input_tokens,
          output: t.output + i.output_tokens,
          cost: t.cost + i.cost_usd
        })
      }
      expect(byKey.size).toBeGreaterThan(0)
      for (const [key, t] of byKey) {
        const [model, stage] = JSON.parse(key) as [string, string]
        expect(sampleValue(all, "gligabao_model_calls_total", { model, stage, status: "ok" }), key).toBe(t.calls)
        expect(sampleValue(all, "gligabao_model_tokens_total", { model, stage, type: "input" }), key).toBe(t.input)
        expect(sampleValue(all, "gligabao_model_tokens_total", { model, stage, type: "output" }), key).toBe(t.output)
        expect(sampleValue(all, "gligabao_model_cost_usd_total", { model, stage }), key).toBeCloseTo(t.cost, 12)
      }
      const calls = all.filter((s) => s.name === "gligabao_model_calls_total").reduce((n, s) => n + s.value, 0)
      expect(calls).toBe(run.inferences.length)
    })

    it("the queue depth gauge is back to zero once the run is done", () => {
      expect(sampleValue(all, "gligabao_remember_queue_depth", { state: "queued" })).toBe(0)
      expect(sampleValue(all, "gligabao_remember_queue_depth", { state: "running" })).toBe(0)
    })
  })
})
