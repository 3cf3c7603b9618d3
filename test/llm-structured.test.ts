/**
 * Structured output (issue #25) against fake servers on the real wire: OpenAI-compatible
 * response_format json_schema (strict, the stage's schema) with its fallbacks to json_object and
 * none, remembered per base URL and model; `<think>` answers; Anthropic's forced tool call.
 * Every JSON stage's request goes through each fake via callLlm and the stage's own parser.
 */
import { NodeFileSystem } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, Redacted } from "effect"
import { NoneClassifierLive } from "../layers/classifier/NoneClassifier.js"
import { makeAnthropicLlm } from "../layers/llm/AnthropicLlm.js"
import { makeOpenAiLlm, OpenAiLlmLive } from "../layers/llm/OpenAiLlm.js"
import { MemoryVectorStoreLive } from "../layers/vectors/MemoryVectorStore.js"
import { loadConfig } from "../src/Config.js"
import type { InferenceInput, InferenceRow } from "../src/domain/Rows.js"
import type { StructuredOutput } from "../src/domain/Stages.js"
import { parseDetectGeo } from "../src/pipeline/enrich/detectGeo.js"
import { parseImageAnswer } from "../src/pipeline/image/prompt.js"
import { type CallContext, callLlm } from "../src/pipeline/ModelCalls.js"
import { parseExtractGraph } from "../src/pipeline/prompts/extractGraph.js"
import { parseResolveEdges } from "../src/pipeline/prompts/resolveEdges.js"
import { parseSummary } from "../src/pipeline/prompts/summarizeChunk.js"
import { RememberManager, RememberManagerLive } from "../src/pipeline/RememberManager.js"
import { RememberPipelineLive } from "../src/pipeline/RememberPipelineLive.js"
import { RunSchedulerLive } from "../src/pipeline/RunScheduler.js"
import { parseResolveSeries } from "../src/pipeline/series/resolveSeries.js"
import { RememberSettings } from "../src/pipeline/Settings.js"
import { STAGE_ANSWERS } from "../src/pipeline/stageAnswers.js"
import { parseQueryAnswer } from "../src/query/answer.js"
import type { InferencesRepo } from "../src/services/InferencesRepo.js"
import type { Llm, LlmRequest } from "../src/services/Llm.js"
import { RunLogRepo } from "../src/services/RunLogRepo.js"
import { NoEmbeddings, noGeoNoTimeseries, tempImageStore, textBody, textRequest } from "./support/app.js"
import { forEachDialect } from "./support/databases.js"
import { type FakeAnthropic, forcedToolSchemaInstance, startFakeAnthropic } from "./support/fakeAnthropic.js"
import { ECHOED_SCHEMA_TEXT, type FakeOpenAi, startFakeOpenAi } from "./support/fakeOpenAi.js"
import { jsonSchemaInstance } from "./support/jsonSchemaInstance.js"

/** An in-memory gb_inferences: the rows callLlm records. */
const memoryInferences = () => {
  const rows: Array<InferenceRow> = []
  const repo: InferencesRepo["Type"] = {
    registerModel: (provider, name, now) => Effect.succeed({ id: 1, provider, name, created_at: now }),
    record: (input: InferenceInput) =>
      Effect.sync(() => {
        const row = { ...input, id: rows.length + 1, model_id: 1, structured_mode: input.structured_mode ?? null }
        rows.push(row)
        return row
      }),
    listByRun: () => Effect.succeed(rows)
  }
  return { rows, repo }
}

const contextFor = (llm: Llm["Type"], inferences: InferencesRepo["Type"]): CallContext => ({
  llm,
  inferences,
  prices: {},
  type: "remember",
  runId: null,
  datasetId: null,
  recorder: null,
  runStage: "test"
})

/** A stage's request as callLlm receives it (the stage's answer schema comes from STAGE_ANSWERS). */
const stageRequest = (stage: string, overrides: Partial<LlmRequest> = {}): LlmRequest => ({
  stage,
  reasoning: "none",
  system: `You answer the ${stage} stage. Answer with JSON only.`,
  messages: [{ role: "user", content: "Alice works at Acme." }],
  maxTokens: 1024,
  ...overrides
})

/** What a model that follows its prompt answers: the form of the stage the system prompt names. */
const promptFollowingAnswer = (request: { body: any }): string => {
  const stage = /You answer the (\w+) stage/.exec(String(request.body.messages[0]?.content))?.[1] ?? ""
  const answer = STAGE_ANSWERS[stage]
  return answer === undefined ? "A summary." : JSON.stringify(jsonSchemaInstance(answer.schema))
}

const WINDOW = { from: "2024-01-01T00:00:00.000Z", to: "2024-12-31T00:00:00.000Z" }

/** Each stage's own parser (summarize_chunk answers prose). */
const PARSERS: Record<string, (text: string) => Either.Either<unknown, string>> = {
  extract_graph: (t) => parseExtractGraph(t, "2024-05-01T00:00:00.000Z"),
  summarize_chunk: parseSummary,
  resolve_edges: (t) => parseResolveEdges(t, new Set([1]), new Set([1])),
  resolve_series: (t) => parseResolveSeries(t, [{ id: 1, name: "x" }], ["x"], WINDOW),
  detect_geo: (t) => parseDetectGeo(t, [{ name: "x" }]),
  extract_image: parseImageAnswer,
  query: (t) => parseQueryAnswer(t, [1])
}
const STAGES = Object.keys(PARSERS)

const openAi = (fake: FakeOpenAi, options: { model?: string; structuredOutput?: StructuredOutput } = {}) =>
  makeOpenAiLlm({
    apiKey: Redacted.make("sk-test"),
    baseUrl: fake.url,
    defaultModel: options.model ?? "gpt-4o-mini",
    timeoutMs: 5_000,
    maxRetries: 0,
    ...(options.structuredOutput === undefined ? {} : { structuredOutput: options.structuredOutput })
  })

const anthropic = (fake: FakeAnthropic, structuredOutput?: StructuredOutput) =>
  makeAnthropicLlm({
    apiKey: Redacted.make("sk-ant-test"),
    baseUrl: fake.url,
    defaultModel: "claude-haiku-4-5",
    timeoutMs: 5_000,
    maxRetries: 0,
    ...(structuredOutput === undefined ? {} : { structuredOutput })
  })

const formatsOf = (fake: { requests: ReadonlyArray<{ body: any }> }) =>
  fake.requests.map((r) => r.body.response_format?.type ?? "none")

describe("structured output against fake servers", () => {
  let honours: FakeOpenAi
  let rejects: FakeOpenAi
  let bare: FakeOpenAi
  let echoes: FakeOpenAi
  let thinks: FakeOpenAi
  let claude: FakeAnthropic
  beforeAll(async () => {
    // OpenAI (and vLLM, llama.cpp): json_schema honoured, its answer an instance of the schema sent
    honours = await startFakeOpenAi({ honourSchema: true })
    // a server with json_object only (older servers, some proxies): json_schema is a 400
    // (its model follows the prompt: it answers the form of the stage the system prompt names)
    rejects = await startFakeOpenAi({ responseFormats: ["json_object"], text: promptFollowingAnswer })
    // a server with no response_format at all
    bare = await startFakeOpenAi({ responseFormats: [] })
    // a small model that, in json_object mode, answers with a JSON Schema instead of an answer
    echoes = await startFakeOpenAi({ honourSchema: true, jsonObjectAnswer: "echo" })
    // a reasoning model that writes its thinking in <think> before the answer
    thinks = await startFakeOpenAi({ honourSchema: true, thinkAloud: true })
    claude = await startFakeAnthropic({ toolInput: forcedToolSchemaInstance })
  })
  afterAll(async () => {
    for (const fake of [honours, rejects, bare, echoes, thinks, claude]) await fake.close()
  })

  it.live("honours json_schema: strict, the stage's schema (every property required, no others), mode recorded", () =>
    Effect.gen(function*() {
      honours.reset()
      const { repo, rows } = memoryInferences()
      const response = yield* callLlm(contextFor(openAi(honours), repo), stageRequest("extract_graph"))
      const format = honours.requests[0]!.body.response_format
      expect(format).toMatchObject({ type: "json_schema", json_schema: { name: "extract_graph", strict: true } })
      expect(format.json_schema.schema.properties.entities.items.required).toEqual(["name", "type", "description"])
      expect(format.json_schema.schema.additionalProperties).toBe(false)
      expect(response.structuredMode).toBe("json_schema")
      expect(rows[0]!.structured_mode).toBe("json_schema")
      expect(Either.isRight(parseExtractGraph(response.text, "2024-05-01T00:00:00.000Z"))).toBe(true)
    }))

  it.live("a 400 refusing json_schema: json_object is taken, and remembered (the next call goes straight to it)", () =>
    Effect.gen(function*() {
      rejects.reset()
      const { repo, rows } = memoryInferences()
      const llm = openAi(rejects, { model: "remembered-model" })
      yield* callLlm(contextFor(llm, repo), stageRequest("extract_graph"))
      expect(formatsOf(rejects)).toEqual(["json_schema", "json_object"])
      yield* callLlm(contextFor(llm, repo), stageRequest("detect_geo"))
      expect(formatsOf(rejects)).toEqual(["json_schema", "json_object", "json_object"])
      // remembered per process, not per adapter: a new adapter on the same server and model too
      yield* callLlm(contextFor(openAi(rejects, { model: "remembered-model" }), repo), stageRequest("query"))
      expect(formatsOf(rejects).slice(3)).toEqual(["json_object"])
      // another model on the same server starts from json_schema again
      yield* callLlm(contextFor(openAi(rejects, { model: "other-model" }), repo), stageRequest("query"))
      expect(formatsOf(rejects).slice(4)).toEqual(["json_schema", "json_object"])
      expect(rows.map((r) => r.structured_mode)).toEqual(["json_object", "json_object", "json_object", "json_object"])
    }))

  it.live("a server without response_format: json_schema, then json_object, then none", () =>
    Effect.gen(function*() {
      bare.reset()
      const { repo, rows } = memoryInferences()
      const response = yield* callLlm(contextFor(openAi(bare), repo), stageRequest("extract_graph"))
      expect(formatsOf(bare)).toEqual(["json_schema", "json_object", "none"])
      expect(response.structuredMode).toBe("none")
      expect(rows[0]!.structured_mode).toBe("none")
    }))

  it.live("the schema-echoing model: the json_schema path gets an answer; forced json_object gets the echo", () =>
    Effect.gen(function*() {
      echoes.reset()
      const { repo } = memoryInferences()
      const auto = yield* callLlm(contextFor(openAi(echoes), repo), stageRequest("query"))
      expect(formatsOf(echoes)).toEqual(["json_schema"])
      expect(Either.isRight(parseQueryAnswer(auto.text, [1]))).toBe(true)
      const forced = yield* callLlm(
        contextFor(openAi(echoes, { structuredOutput: "json_object" }), repo),
        stageRequest("query")
      )
      expect(formatsOf(echoes).slice(1)).toEqual(["json_object"])
      expect(forced.text).toBe(ECHOED_SCHEMA_TEXT)
      expect(parseQueryAnswer(forced.text, [1])).toEqual(
        Either.left(expect.stringContaining("query answer is invalid"))
      )
    }))

  it.live("llm.structured_output forces one mode: no fallback from it; none sends no response_format", () =>
    Effect.gen(function*() {
      rejects.reset()
      const { repo, rows } = memoryInferences()
      const failed = yield* Effect.flip(
        callLlm(contextFor(openAi(rejects, { structuredOutput: "json_schema" }), repo), stageRequest("extract_graph"))
      )
      expect(failed.message).toMatch(/HTTP 400 .*response_format/)
      expect(formatsOf(rejects)).toEqual(["json_schema"])
      yield* callLlm(contextFor(openAi(rejects, { structuredOutput: "none" }), repo), stageRequest("extract_graph"))
      expect(formatsOf(rejects).slice(1)).toEqual(["none"])
      expect(rows.map((r) => r.structured_mode)).toEqual([null, "none"])
    }))

  it.live("a prose stage (summarize_chunk) gets no response_format and no answer schema", () =>
    Effect.gen(function*() {
      honours.reset()
      const { repo } = memoryInferences()
      yield* callLlm(contextFor(openAi(honours), repo), stageRequest("summarize_chunk"))
      expect(honours.requests[0]!.body).not.toHaveProperty("response_format")
    }))

  it.live("<think> answers: the thinking is removed before parsing and kept on the response", () =>
    Effect.gen(function*() {
      thinks.reset()
      const { repo } = memoryInferences()
      const response = yield* callLlm(contextFor(openAi(thinks), repo), stageRequest("extract_graph"))
      expect(response.text.startsWith("{")).toBe(true)
      expect(response.thinking).toContain("Let me think.")
      expect(Either.isRight(parseExtractGraph(response.text, "2024-05-01T00:00:00.000Z"))).toBe(true)
    }))

  it.live("Anthropic without thinking: a forced tool call with the stage's schema; its input is the answer", () =>
    Effect.gen(function*() {
      claude.reset()
      const { repo, rows } = memoryInferences()
      const response = yield* callLlm(contextFor(anthropic(claude), repo), stageRequest("extract_graph"))
      const body = claude.requests[0]!.body
      expect(body.tool_choice).toEqual({ type: "tool", name: "extract_graph" })
      expect(body.tools).toEqual([{
        name: "extract_graph",
        description: expect.any(String),
        input_schema: STAGE_ANSWERS["extract_graph"]!.schema
      }])
      expect(response.stopReason).toBe("tool_use")
      expect(response.structuredMode).toBe("tool")
      expect(rows[0]!.structured_mode).toBe("tool")
      expect(JSON.parse(response.text)).toEqual(forcedToolSchemaInstance(claude.requests[0]!))
    }))

  it.live("Anthropic with thinking: no forced tool (the API refuses both); structured_output none: no tool", () =>
    Effect.gen(function*() {
      claude.reset()
      const { repo, rows } = memoryInferences()
      yield* callLlm(
        contextFor(anthropic(claude), repo),
        stageRequest("extract_graph", { reasoning: "low", model: "claude-sonnet-4-5" })
      )
      expect(claude.requests[0]!.body).not.toHaveProperty("tool_choice")
      expect(claude.requests[0]!.body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 })
      yield* callLlm(contextFor(anthropic(claude, "none"), repo), stageRequest("extract_graph"))
      expect(claude.requests[1]!.body).not.toHaveProperty("tools")
      expect(rows.map((r) => r.structured_mode)).toEqual(["none", "none"])
    }))

  // every stage through every fake: the request callLlm sends, the fake's answer, the stage's parser
  const servers: ReadonlyArray<readonly [string, () => Llm["Type"], string | null]> = [
    ["honours json_schema", () => openAi(honours), "json_schema"],
    ["rejects json_schema", () => openAi(rejects, { model: "table-model" }), "json_object"],
    ["echoes the schema in json_object mode", () => openAi(echoes), "json_schema"],
    ["wraps answers in <think>", () => openAi(thinks), "json_schema"],
    ["Anthropic tool_use", () => anthropic(claude), "tool"]
  ]
  for (const [server, makeLlm, mode] of servers) {
    for (const stage of STAGES) {
      it.live(`${stage} through the server that ${server}`, () =>
        Effect.gen(function*() {
          const { repo, rows } = memoryInferences()
          const response = yield* callLlm(contextFor(makeLlm(), repo), stageRequest(stage))
          const parsed = PARSERS[stage]!(response.text)
          expect(Either.isRight(parsed), JSON.stringify({ text: response.text, parsed })).toBe(true)
          // summarize_chunk answers prose: never constrained
          expect(rows[0]!.structured_mode).toBe(stage === "summarize_chunk" ? "none" : mode)
        }))
    }
  }
})

describe("llm.structured_output in the configuration", () => {
  const load = (env: Record<string, string>) =>
    loadConfig({}, env, { defaultPath: "/nonexistent/gligabao.toml" }).pipe(Effect.provide(NodeFileSystem.layer))

  it.effect("unset is automatic; the environment sets it; an unknown value is refused naming the key", () =>
    Effect.gen(function*() {
      expect((yield* load({})).llm.structuredOutput).toEqual(Option.none())
      const set = yield* load({ GLIGABAO_LLM_STRUCTURED_OUTPUT: "json_object" })
      expect(set.llm.structuredOutput).toEqual(Option.some("json_object"))
      const bad = yield* Effect.flip(load({ GLIGABAO_LLM_STRUCTURED_OUTPUT: "xml" }))
      expect(bad.message).toContain("llm.structured_output")
      expect(bad.message).toContain("GLIGABAO_LLM_STRUCTURED_OUTPUT")
    }))
})

// a whole remember through the OpenAI-compatible adapter: the mode on the rows and the run stages
forEachDialect((_dialect, makeLayer) => {
  let server: FakeOpenAi
  beforeAll(async () => {
    // json_object only, so the first call falls back and later ones go straight to json_object
    server = await startFakeOpenAi({
      responseFormats: ["json_object"],
      text: (r) =>
        r.body.response_format === undefined
          ? "A summary."
          : JSON.stringify({
            entities: [{ name: "Alice" }, { name: "Acme" }],
            edges: [{ source: "Alice", target: "Acme", relation: "WORKS_AT" }]
          })
    })
  })
  afterAll(() => server.close())

  const app = () =>
    RememberManagerLive({ concurrency: 1, instanceId: "test-instance" }).pipe(
      Layer.provideMerge(RememberPipelineLive),
      Layer.provideMerge(RunSchedulerLive),
      Layer.provideMerge(Layer.mergeAll(
        OpenAiLlmLive({
          apiKey: Redacted.make("sk-test"),
          baseUrl: server.url,
          defaultModel: `pipeline-model-${_dialect}`,
          timeoutMs: 5_000,
          maxRetries: 0
        }),
        NoneClassifierLive,
        RememberSettings.layer({}),
        NoEmbeddings,
        MemoryVectorStoreLive(),
        tempImageStore(),
        noGeoNoTimeseries()
      )),
      Layer.provideMerge(makeLayer())
    )

  it.live("the mode is on each gb_inferences row and in its run stage's detail", () =>
    Effect.gen(function*() {
      const out = yield* Effect.flatMap(RememberManager, (m) => m.submit(textRequest("Alice works at Acme.")))
      expect(textBody(out).edges).toHaveLength(1)
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ stage: string; structured_mode: string | null }>`
        SELECT stage, structured_mode FROM gb_inferences WHERE run_id = ${out.runId} ORDER BY id`
      expect(rows.find((r) => r.stage === "extract_graph")?.structured_mode).toBe("json_object")
      expect(rows.find((r) => r.stage === "summarize_chunk")?.structured_mode ?? "none").toBe("none")
      const run = Option.getOrThrow(yield* Effect.flatMap(RunLogRepo, (log) => log.get(out.runId)))
      expect(run.stages.find((s) => s.stage === "extract_graph")?.detail).toMatchObject({
        structured_mode: "json_object"
      })
      // the fallback was taken once, then remembered
      expect(formatsOf(server).filter((f) => f !== "none").slice(0, 2)).toEqual(["json_schema", "json_object"])
    }).pipe(Effect.provide(app())))
})
