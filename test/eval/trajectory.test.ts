/**
 * Eval mode through the manager over a real database (SQLite and PostgreSQL): the ATIF
 * trajectory of a text, a chunked text, an image, a cached image and failed runs. Every
 * trajectory is checked against the ATIF schema, and its totals against the run's
 * gb_inferences rows (one model-call step per row).
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import { expect } from "vitest"
import { FakeGeo } from "../../layers/testing/FakeGeo.js"
import { HashEmbeddingsLive } from "../../layers/testing/HashEmbeddings.js"
import { type LlmScript, type ScriptedAnswer, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { MemoryVectorStoreLive } from "../../layers/vectors/MemoryVectorStore.js"
import { type Trajectory, validateTrajectory } from "../../src/domain/Atif.js"
import { type RememberRequest, validateRememberRequest } from "../../src/domain/Remember.js"
import { rememberWithTrajectory } from "../../src/eval/trajectory.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import { ComplexityClassifier } from "../../src/services/ComplexityClassifier.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { graph, rememberLayer, type RememberLayerOptions, resolution, textBody, textRequest } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { webSearchBlocks } from "../support/fakeAnthropic.js"
import { b64, png } from "../support/images.js"

const request = textRequest

const evalRemember = (req: RememberRequest) => Effect.flatMap(RememberManager, (m) => rememberWithTrajectory(m, req))

const rows = <A extends object>(query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(query)).pipe(Effect.orDie)

const run = <A, E>(
  storage: () => StorageLayer,
  script: LlmScript,
  options: RememberLayerOptions,
  program: Effect.Effect<A, E, any>
) =>
  program.pipe(
    Effect.provide(rememberLayer(storage(), script, options) as Layer.Layer<any, any, never>)
  ) as Effect.Effect<A, E, never>

/** The document is valid ATIF; its steps in order, by `extra.step`. */
const checked = (trajectory: Trajectory) => {
  const valid = validateTrajectory(JSON.parse(JSON.stringify(trajectory)))
  if (Either.isLeft(valid)) expect.fail(valid.left)
  return trajectory.steps.map((s) => s.extra!.step as string)
}

/**
 * A step's `extra`: gligabao's own data, which ATIF leaves a record of unknowns; read as the
 * recorder writes it (the prompt and the result are the stage's, left open).
 */
interface StepExtra {
  readonly [key: string]: unknown
  readonly step: string
  readonly inference_id?: number
  readonly error?: string
  readonly prompt?: { readonly system: string; readonly messages: ReadonlyArray<{ readonly content: unknown }> }
  readonly result?: { readonly [key: string]: unknown }
}

type NamedStep = Trajectory["steps"][number] & { readonly extra: StepExtra }
type Metrics = NonNullable<Trajectory["steps"][number]["metrics"]>

const stepNamed = (t: Trajectory, step: string, nth = 0): NamedStep =>
  t.steps.filter((s) => s.extra?.step === step)[nth] as NamedStep

/** The text of a step's first observation result (a tool's answer). */
const observed = (step: NamedStep): string => {
  const content = step.observation?.results[0]?.content
  if (typeof content !== "string") throw new Error(`no text observation: ${JSON.stringify(step.observation)}`)
  return content
}

/** The trajectory's totals equal the sum of its steps and the run's gb_inferences rows. */
const expectTotalsMatchInferences = (t: Trajectory, runId: number) =>
  Effect.gen(function*() {
    const inferences = yield* rows<any>(`SELECT * FROM gb_inferences WHERE run_id = ${runId} ORDER BY id`)
    const modelSteps = t.steps.filter((s) => s.metrics !== undefined)
    expect(modelSteps.map((s) => s.extra!.inference_id as number).sort((a, b) => a - b)).toEqual(
      inferences.map((r: any) => Number(r.id))
    )
    const sumRows = (f: (r: any) => number) => inferences.reduce((n: number, r: any) => n + f(r), 0)
    const sumSteps = (f: (m: Metrics) => number | undefined) =>
      modelSteps.reduce((n, s) => n + (f(s.metrics!) ?? NaN), 0)
    const fm = t.final_metrics!
    const prompt = sumRows((r) => Number(r.input_tokens) + Number(r.cache_read_tokens) + Number(r.cache_write_tokens))
    expect(fm.total_prompt_tokens).toBe(prompt)
    expect(sumSteps((m) => m.prompt_tokens)).toBe(prompt)
    expect(fm.total_completion_tokens).toBe(sumRows((r) => Number(r.output_tokens)))
    expect(sumSteps((m) => m.completion_tokens)).toBe(fm.total_completion_tokens)
    expect(fm.total_cached_tokens).toBe(sumRows((r) => Number(r.cache_read_tokens)))
    expect(sumSteps((m) => m.cached_tokens)).toBe(fm.total_cached_tokens)
    expect(fm.total_cost_usd).toBeCloseTo(sumRows((r) => Number(r.cost_usd)), 12)
    expect(sumSteps((m) => m.cost_usd)).toBeCloseTo(fm.total_cost_usd!, 12)
    expect(fm.total_steps).toBe(t.steps.length)
    return inferences
  })

const stagesOf = (runId: number) =>
  Effect.flatMap(RunLogRepo, (log) => log.get(runId)).pipe(
    Effect.map(Option.getOrThrow),
    Effect.map((r) => Object.fromEntries(r.stages.map((s) => [s.stage, s])))
  )

const USAGE = { inputTokens: 100, outputTokens: 20, cacheReadTokens: 30, cacheWriteTokens: 5 }
const PRICES = {
  extractor: { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 },
  [ScriptedLlm.DEFAULT_MODEL]: { input: 2, output: 10 },
  "hash-embedding": { input: 0.02, output: 0 }
}

const classifier = Layer.succeed(
  ComplexityClassifier,
  ComplexityClassifier.of({
    enabled: true,
    classify: () =>
      Effect.succeed(
        Option.some({
          complexity: "simple" as const,
          confidence: 0.9,
          probabilities: { simple: 0.9, medium: 0.08, complex: 0.02 },
          latency_ms: 12
        })
      )
  })
)

const withVectors: RememberLayerOptions = {
  embeddings: HashEmbeddingsLive({ dimensions: 64 }),
  vectors: MemoryVectorStoreLive({ dimensions: 64 }),
  settings: { similarityThreshold: 0.5, prices: PRICES }
}

const livesIn = (who: string, city: string, valid_at: string) =>
  graph(
    [{ name: who, type: "person" }, { name: city, type: "place" }],
    [{ source: who, target: city, relation: "lives in", description: `${who} lives in ${city}`, valid_at }]
  )

forEachDialect((_dialect, makeLayer) => {
  it.live("a text: one step per model call and per stage, in order, and totals that equal the inference rows", () =>
    run(
      makeLayer,
      {
        extract_graph: [livesIn("Alice Smith", "Berlin", "2024-03-01"), {
          ...livesIn("Alice", "Paris", "2025-01-15"),
          usage: USAGE
        }],
        resolve_edges: [{
          ...resolution([], [{ new: 0, existing: [1] }]),
          usage: { inputTokens: 50, outputTokens: 10 }
        }]
      },
      { ...withVectors, classifier },
      Effect.gen(function*() {
        yield* evalRemember(request("Alice Smith lives in Berlin."))
        const second = yield* evalRemember(request("Alice moved to Paris.", {
          session_id: "s1",
          models: { extract_graph: "extractor" },
          reasoning: { resolve_edges: "low" }
        }))
        expect(Either.isRight(second.outcome)).toBe(true)
        const t = second.trajectory
        expect(checked(t)).toEqual([
          "input",
          "classify_complexity",
          "extract_graph",
          // the texts of the similarity lookup and the store, embedded ahead in one request
          // (a lookup that has to embed for itself is a search_similar_entities step)
          "embed",
          "load_candidates",
          "resolve_edges",
          "store"
        ])
        expect(t).toMatchObject({
          schema_version: "ATIF-v1.7",
          session_id: "s1",
          agent: { name: "gligabao", model_name: "extractor" },
          extra: { run_id: second.runId, pipeline: "text", status: "succeeded" }
        })
        // the request, the models requested included, without its text (the user step has it)
        const input = {
          user_id: "alice",
          dataset: "main",
          session_id: "s1",
          models: { extract_graph: "extractor" },
          reasoning: { resolve_edges: "low" }
        }
        expect(t.extra!.input).toMatchObject(input)
        expect(t.steps[0]).toMatchObject({
          step_id: 1,
          source: "user",
          message: "Alice moved to Paris.",
          extra: { input }
        })

        const extract = stepNamed(t, "extract_graph")
        expect(extract).toMatchObject({
          source: "agent",
          model_name: "extractor",
          reasoning_effort: "none",
          message: expect.stringContaining("Paris"),
          metrics: {
            prompt_tokens: 135,
            completion_tokens: 20,
            cached_tokens: 30,
            extra: { cache_creation_tokens: 5 }
          },
          extra: {
            run_stage: "extract_graph",
            status: "succeeded",
            result: { edges: [expect.objectContaining({ target: "Paris" })] }
          }
        })
        expect(extract.metrics!.cost_usd).toBeCloseTo((100 * 1 + 20 * 5 + 30 * 0.1 + 5 * 1.25) / 1e6, 12)
        expect(extract.extra.prompt!.messages[0].content).toContain("Alice moved to Paris.")
        expect(extract.extra.prompt!.system.length).toBeGreaterThan(0)
        expect(stepNamed(t, "resolve_edges")).toMatchObject({ reasoning_effort: "low", metrics: { prompt_tokens: 50 } })

        const stages = yield* stagesOf(second.runId)
        // the candidates with how each was found: the same as the run log says
        const load = stepNamed(t, "load_candidates")
        expect(load.tool_calls).toEqual([expect.objectContaining({ function_name: "load_candidates" })])
        expect(load.observation!.results[0].source_call_id).toBe(load.tool_calls![0].tool_call_id)
        const candidates = JSON.parse(observed(load)).candidates
        expect(candidates).toEqual([
          expect.objectContaining({ id: 1, source: "Alice Smith", relation: "lives_in", target: "Berlin" })
        ])
        expect(Object.fromEntries(candidates.map((c: any) => [c.id, c.found_by]))).toEqual(
          stages.load_candidates!.detail!.found_by
        )
        expect(candidates[0].found_by).toMatch(/similar/)
        expect(load.extra.result!.candidates).toEqual(candidates)

        // the one embeddings request, made ahead for the similarity lookup and the store, is filed under store
        const embed = stepNamed(t, "embed")
        expect(embed).toMatchObject({ model_name: "hash-embedding", extra: { run_stage: "store" } })
        expect(embed.metrics!.prompt_tokens).toBeGreaterThan(0)
        expect(embed.metrics!.cost_usd).toBeCloseTo(embed.metrics!.prompt_tokens! * 0.02 / 1e6, 15)
        expect(stages.load_candidates!.inference_ids).toEqual([])
        expect(stages.store!.inference_ids).toEqual([embed.extra.inference_id])

        const classify = stepNamed(t, "classify_complexity")
        expect(classify.extra).toMatchObject({
          latency_ms: 12,
          started_at: expect.any(String),
          detail: { complexity: "simple" }
        })
        const store = stepNamed(t, "store")
        expect(JSON.parse(observed(store))).toMatchObject({
          invalidated_edges: [1],
          inserted_edges: 1
        })

        const inferences = yield* expectTotalsMatchInferences(t, second.runId)
        expect(inferences).toHaveLength(3)
        expect(t.final_metrics!.total_cost_usd).toBeGreaterThan(0)
        // the run log notes an eval run
        const runRow = Option.getOrThrow(yield* (yield* RunLogRepo).get(second.runId))
        expect(runRow.params).toMatchObject({ eval: true, models: { extract_graph: "extractor" } })
      })
    ))

  it.live("a chunked text: chunk_text, and each chunk's extraction, summary, candidates and store, labelled by chunk", () =>
    run(
      makeLayer,
      chunkScript,
      { settings: { chunkSize: 80, chunkOverlapPercent: 20 } },
      Effect.gen(function*() {
        const out = yield* evalRemember(request(DOCUMENT))
        expect(Either.isRight(out.outcome)).toBe(true)
        const names = checked(out.trajectory)
        const chunks = textBody(Either.getOrThrow(out.outcome)).chunks!.length
        expect(chunks).toBeGreaterThan(1)
        expect(names.filter((n) => n === "chunk_text")).toHaveLength(1)
        for (const step of ["extract_graph", "summarize_chunk", "load_candidates", "store"]) {
          expect(names.filter((n) => n === step)).toHaveLength(chunks)
          const labels = out.trajectory.steps.filter((s) => s.extra?.step === step).map((s) => s.extra!.chunk)
          expect([...labels].sort()).toEqual(Array.from({ length: chunks }, (_, i) => i))
        }
        const chunkText = stepNamed(out.trajectory, "chunk_text")
        expect(JSON.parse(observed(chunkText))).toHaveLength(chunks)
        expect(stepNamed(out.trajectory, "summarize_chunk").message).toMatch(/^A summary/)
        // reconciliation runs in document order: each chunk is stored before the next one's candidates load
        const order = names.filter((n) => n === "load_candidates" || n === "store")
        expect(order).toEqual(Array.from({ length: chunks }, () => ["load_candidates", "store"]).flat())
        yield* expectTotalsMatchInferences(out.trajectory, out.runId)
      })
    ))

  it.live("an image: the vision call notes the image instead of its bytes; a repeat is one find_existing_image step", () =>
    run(
      makeLayer,
      { extract_image: [IMAGE_ANSWER] },
      {},
      Effect.gen(function*() {
        const bytes = png({ width: 3, height: 2, rgb: [1, 2, 3] })
        const first = yield* evalRemember(imageRequest(bytes))
        expect(checked(first.trajectory)).toEqual(["input", "find_existing_image", "extract_image", "store_image"])
        const note = `[image: image/png, ${bytes.length} bytes]`
        expect(first.trajectory.steps[0]!.message).toBe(note)
        const extract = stepNamed(first.trajectory, "extract_image")
        expect(extract).toMatchObject({
          model_name: ScriptedLlm.DEFAULT_MODEL,
          reasoning_effort: "low",
          metrics: { prompt_tokens: 1500 }
        })
        expect(extract.extra.prompt!.messages[0].content).toContain(note)
        expect(JSON.stringify(first.trajectory)).not.toContain(b64(bytes))
        expect(first.trajectory.extra!.input).toMatchObject({ image: { media_type: "image/png", bytes: bytes.length } })
        yield* expectTotalsMatchInferences(first.trajectory, first.runId)

        const repeat = yield* evalRemember(imageRequest(bytes))
        expect(checked(repeat.trajectory)).toEqual(["input", "find_existing_image"])
        const find = stepNamed(repeat.trajectory, "find_existing_image")
        expect(JSON.parse(observed(find))).toMatchObject({ found: true, cached: true })
        expect(find.message).toMatch(/repeat/)
        expect(repeat.trajectory.agent.model_name).toBeUndefined()
        expect(repeat.trajectory.final_metrics).toMatchObject({
          total_prompt_tokens: 0,
          total_cost_usd: 0,
          total_steps: 2
        })
        yield* expectTotalsMatchInferences(repeat.trajectory, repeat.runId)
      })
    ))

  it.live("a failed extraction: the steps up to the failure, with the error", () =>
    run(
      makeLayer,
      {
        extract_graph: [{ fail: { message: "HTTP 500 from provider", status: 500 } }]
      },
      { ...withVectors, classifier },
      Effect.gen(function*() {
        const out = yield* evalRemember(request("Alice lives in Berlin."))
        expect(Either.isLeft(out.outcome)).toBe(true)
        expect(checked(out.trajectory)).toEqual(["input", "classify_complexity", "extract_graph"])
        const extract = stepNamed(out.trajectory, "extract_graph")
        expect(extract).toMatchObject({
          message: "",
          extra: { status: "failed", error: expect.stringContaining("HTTP 500") }
        })
        expect(out.trajectory.extra).toMatchObject({
          status: "failed",
          error: { type: "LlmFailed", status: 502, message: expect.stringContaining("HTTP 500") }
        })
        yield* expectTotalsMatchInferences(out.trajectory, out.runId)
      })
    ))

  it.live("a <think> answer: the step's message is the answer, the thinking its reasoning_content", () =>
    run(
      makeLayer,
      {
        extract_graph: [{
          text: `<think>\nAlice is a person {maybe}.\n</think>\n${
            JSON.stringify({ entities: [{ name: "Alice Smith" }], edges: [] })
          }`
        }]
      },
      { ...withVectors, classifier },
      Effect.gen(function*() {
        const out = yield* evalRemember(request("Alice lives in Berlin."))
        expect(Either.isRight(out.outcome)).toBe(true)
        const extract = stepNamed(out.trajectory, "extract_graph")
        expect(extract.message).toBe(JSON.stringify({ entities: [{ name: "Alice Smith" }], edges: [] }))
        expect(extract.reasoning_content).toBe("Alice is a person {maybe}.")
        expect(extract.extra).toMatchObject({ structured_mode: "none" })
      })
    ))

  it.live("a failure after a model answered (unusable resolve_edges): that step has the answer and the error", () =>
    run(
      makeLayer,
      {
        extract_graph: [livesIn("Alice", "Berlin", "2024-03-01"), livesIn("Alice", "Paris", "2025-01-15")],
        resolve_edges: [{ text: "{\"duplicates\": 5}", usage: { inputTokens: 40, outputTokens: 3 } }]
      },
      {},
      Effect.gen(function*() {
        yield* evalRemember(request("Alice lives in Berlin."))
        const out = yield* evalRemember(request("Alice lives in Paris."))
        expect(Either.isLeft(out.outcome)).toBe(true)
        expect(checked(out.trajectory)).toEqual(["input", "extract_graph", "load_candidates", "resolve_edges"])
        expect(stepNamed(out.trajectory, "resolve_edges")).toMatchObject({
          message: "{\"duplicates\": 5}",
          metrics: { prompt_tokens: 40, completion_tokens: 3 },
          extra: { status: "failed", error: expect.stringContaining("resolve_edges: unusable answer") }
        })
        yield* expectTotalsMatchInferences(out.trajectory, out.runId)
      })
    ))

  it.live("a failed store (the embeddings request fails): the failed embed step, then the failed store step", () =>
    run(
      makeLayer,
      { extract_graph: [livesIn("Alice", "Berlin", "2024-03-01")] },
      {
        embeddings: HashEmbeddingsLive({ dimensions: 64, failWhen: () => true }),
        vectors: MemoryVectorStoreLive({ dimensions: 64 })
      },
      Effect.gen(function*() {
        const out = yield* evalRemember(request("Alice lives in Berlin."))
        expect(Either.isLeft(out.outcome)).toBe(true)
        // the request made ahead fails (the call goes on), then the store's own
        expect(checked(out.trajectory)).toEqual([
          "input",
          "extract_graph",
          "embed",
          "load_candidates",
          "embed",
          "store"
        ])
        expect(stepNamed(out.trajectory, "embed").extra.error).toMatch(/failed/)
        const store = stepNamed(out.trajectory, "store")
        expect(store.extra).toMatchObject({ status: "failed", error: expect.any(String) })
        expect(observed(store)).toMatch(/^error: /)
        yield* expectTotalsMatchInferences(out.trajectory, out.runId)
      })
    ))
})

// ---------------------------------------------------------------------------------------------
// enrichments: geo and web search (whose extraction, reconciliation and store are done within it)

const WEB: Record<string, { readonly text: string; readonly graph: ScriptedAnswer }> = {
  "Alice Smith": {
    text: "[web:Alice] On 2025-01-10 Alice Smith moved to Paris.",
    graph: livesIn("Alice Smith", "Paris", "2025-01-10")
  },
  Berlin: {
    text: "[web:Berlin] On 2025-01-25 Berlin hosted the Berlinale.",
    graph: graph([{ name: "Berlin", type: "place" }, { name: "Berlinale", type: "event" }], [{
      source: "Berlin",
      target: "Berlinale",
      relation: "hosted",
      valid_at: "2025-01-25"
    }])
  }
}

const enrichScript = (r: LlmRequest): ScriptedAnswer => {
  const text = userText(r)
  switch (r.stage) {
    case "web_search": {
      const web = WEB[/Entity: (.+?) \(/.exec(text)![1]!]!
      const searches = [{
        query: `${web.text.slice(0, 12)} news`,
        results: [{ url: "https://news.test/x", title: "x" }]
      }]
      return {
        text: web.text,
        blocks: webSearchBlocks({ searches, text: web.text }),
        usage: { inputTokens: 1500, outputTokens: 120, webSearchRequests: 1 }
      }
    }
    case "detect_geo":
      return ScriptedLlm.json({ places: [{ entity: "Berlin", kind: "city", query: "Berlin, Germany" }] })
    case "resolve_edges":
      return resolution([], [{ new: 0, existing: [1] }])
    case "extract_graph":
      return Object.values(WEB).find((w) => text.includes(w.text))?.graph ??
        livesIn("Alice Smith", "Berlin", "2024-03-01")
    default:
      return { fail: { message: `unexpected stage ${r.stage}` } }
  }
}

forEachDialect((_dialect, makeLayer) => {
  it.live("enrichments: detect_geo and resolve_geo, the web searches and the work done within web_search", () =>
    run(
      makeLayer,
      enrichScript,
      {
        geo: FakeGeo.layer({ "Berlin, Germany": FakeGeo.place("Berlin", 52.517, 13.3889, "Deutschland", "de") }),
        settings: { webSearch: true }
      },
      Effect.gen(function*() {
        const out = yield* evalRemember(request("Alice Smith lives in Berlin.", { web_search: true }))
        expect(Either.isRight(out.outcome)).toBe(true)
        const t = out.trajectory
        const names = checked(t)
        expect(names.slice(0, 4)).toEqual(["input", "extract_graph", "load_candidates", "store"])
        expect(names.indexOf("detect_geo")).toBeLessThan(names.indexOf("resolve_geo"))
        expect(stepNamed(t, "resolve_geo").tool_calls![0].function_name).toBe("resolve_geo")
        const searches = t.steps.filter((s) => s.extra?.step === "web_search" && s.metrics !== undefined)
        expect(searches).toHaveLength(2)
        expect(searches[0].metrics!.extra).toMatchObject({ web_search_requests: 1 })
        // the web_search stage ends with its own step, after everything done within it
        expect(names[names.length - 1]).toBe("web_search")
        expect(t.steps[t.steps.length - 1].tool_calls![0].function_name).toBe("web_search")
        const within = t.steps.filter((s) => s.extra?.within === "web_search").map((s) => s.extra!.step)
        expect(within).toEqual(expect.arrayContaining(["extract_graph", "load_candidates", "resolve_edges", "store"]))
        expect(t.final_metrics!.extra).toMatchObject({ web_search_requests: 2 })
        yield* expectTotalsMatchInferences(t, out.runId)
      })
    ))
})

// ---------------------------------------------------------------------------------------------
// a chunked document: paragraph k states fact k

const filler = (n: number) =>
  `This paragraph carries the record number ${n} of the archive. It talks at some length about the weather, the harbour, ` +
  `the ships that came and went, and the people who watched them from the quay in the evening light.`

const FACTS: Record<number, { source: string; target: string; relation: string }> = {
  1: { source: "Alice", target: "Berlin", relation: "lives in" },
  2: { source: "Bob", target: "Carol", relation: "knows" },
  3: { source: "Carol", target: "Acme", relation: "works at" }
}
const DOCUMENT = [1, 2, 3].map((k) => `[F${k}] ${filler(k)}`).join("\n\n")

const userText = (r: LlmRequest) => String(typeof r.messages[0]!.content === "string" ? r.messages[0]!.content : "")

const chunkScript = (r: LlmRequest): ScriptedAnswer => {
  const text = userText(r)
  if (r.stage === "summarize_chunk") {
    return {
      text: `A summary of ${text.match(/\[F\d\]/g)?.join(" ") ?? "filler"}.`,
      usage: { inputTokens: 60, outputTokens: 9 }
    }
  }
  if (r.stage === "resolve_edges") return resolution([], [])
  const facts = [...text.matchAll(/\[F(\d)\]/g)].map((m) => FACTS[Number(m[1])]!)
  return {
    ...graph(
      facts.flatMap((f) => [{ name: f.source }, { name: f.target }]),
      facts.map((f) => ({ ...f, valid_at: "2024-01-01" }))
    ),
    usage: { inputTokens: 200, outputTokens: 40 }
  }
}

// ---------------------------------------------------------------------------------------------
// images

const IMAGE_ANSWER = ScriptedLlm.json(
  { theme: "plot", title: "Revenue 2024", text_blocks: [{ kind: "title", text: "Revenue 2024" }] },
  { usage: { inputTokens: 1500, outputTokens: 120 } }
)

const imageRequest = (bytes: Uint8Array): RememberRequest =>
  Either.getOrThrow(
    validateRememberRequest({ user_id: "alice", image: b64(bytes), reference_time: "2025-02-01T00:00:00Z" })
  )
