/**
 * Eval mode: the ATIF trajectory of one remember run (spec/contracts.md section 16), built
 * from the run's own reports (the RunObserver of its run recorder), so it shows exactly what
 * the run log and gb_inferences record, with the prompts, answers and results added.
 *
 * Steps, in the order they completed:
 * - step 1 is the `user` step: the text (an image as `[image: <media type>, <bytes> bytes]`),
 *   the request without it in `extra.input`;
 * - every model call (LLM or embeddings; one per gb_inferences row of the run) is an `agent`
 *   step with `model_name` and `metrics`; an LLM step carries the answer as `message`, the
 *   prompt in `extra.prompt`, and, when the stage is the call's own (extract_graph,
 *   summarize_chunk, resolve_edges, extract_image), that stage's result or error; an
 *   embeddings step is `search_similar_entities` in load_candidates and `embed` elsewhere;
 * - every other stage that ran (classify_complexity, chunk_text, load_candidates, store,
 *   store_series, find_existing_image, store_image, resolve_geo, ...) is an `agent` step with
 *   one tool call named after the stage and its observation (the result as JSON text, or the
 *   error); `extra.result` has the result as data.
 * Everything that is not an ATIF field is under `extra` (`extra.step` names the step).
 */
import { Clock, Effect, Either } from "effect"
import { GLIGABAO_VERSION } from "../Config.js"
import { ATIF_SCHEMA_VERSION, type Trajectory } from "../domain/Atif.js"
import { type RememberError, statusOf } from "../domain/Errors.js"
import type { RememberRequest } from "../domain/Remember.js"
import type { RememberResult } from "../domain/Responses.js"
import type { InferenceRow } from "../domain/Rows.js"
import { toIso } from "../domain/time.js"
import type { Refusal, RememberManager } from "../pipeline/RememberManager.js"
import type { LlmMessage, LlmRequest } from "../services/Llm.js"
import type { ModelCallReport, RunObserver, StageReport, StageRunRef } from "../services/RunObserver.js"

type Step = Trajectory["steps"][number]

interface CallEntry {
  readonly kind: "call"
  readonly report: ModelCallReport
  /** the end of the stage this LLM call is the model work of */
  stage: StageReport | null
}

interface StageEntry {
  readonly kind: "stage"
  readonly report: StageReport
}

export interface RunEnd {
  readonly runId: number
  /** null when the run succeeded */
  readonly error: RememberError | null
}

export interface TrajectoryRecorder {
  /** give it to the run (RememberManager.enqueue(request, { observer })) */
  readonly observer: RunObserver
  /** the document, once the run is over */
  readonly build: (end: RunEnd) => Trajectory
}

/** Stages whose model work is one LLM call of their own name: their end is folded into that call's step. */
const ONE_CALL_STAGES: ReadonlySet<string> = new Set([
  "extract_graph",
  "summarize_chunk",
  "resolve_edges",
  "extract_image"
])

const NOTES = "gligabao remember pipeline: one agent step per model call (LLM or embeddings) and per other stage " +
  "that ran, in completion order; extra.step names the step and extra.run_stage the run-log stage it is filed under."

const imageNote = (mediaType: string, bytes: number) => `[image: ${mediaType}, ${bytes} bytes]`

const base64Bytes = (data: string): number => Buffer.byteLength(data, "base64")

/** A message as text; an image block becomes its note, never its bytes. */
const contentText = (content: LlmMessage["content"]): string =>
  typeof content === "string"
    ? content
    : content.map((b) => (b.type === "text" ? b.text : imageNote(b.mediaType, base64Bytes(b.data)))).join("\n")

const promptOf = (request: LlmRequest) => ({
  model: request.model ?? null,
  max_tokens: request.maxTokens,
  system: request.system,
  messages: request.messages.map((m) => ({ role: m.role, content: contentText(m.content) })),
  ...(request.tools === undefined ? {} : { tools: request.tools.length })
})

/** The thinking the model showed, if any (Anthropic thinking blocks). */
const thinkingOf = (blocks: ReadonlyArray<unknown>): string | undefined => {
  const parts = blocks.flatMap((b) => {
    const block = b as { readonly type?: unknown; readonly thinking?: unknown }
    return block?.type === "thinking" && typeof block.thinking === "string" ? [block.thinking] : []
  })
  return parts.length === 0 ? undefined : parts.join("\n")
}

/** ATIF metrics of one gb_inferences row: prompt tokens include the cached ones. */
const metricsOf = (inference: InferenceRow) => ({
  prompt_tokens: inference.input_tokens + inference.cache_read_tokens + inference.cache_write_tokens,
  completion_tokens: inference.output_tokens,
  cached_tokens: inference.cache_read_tokens,
  cost_usd: inference.cost_usd,
  extra: {
    input_tokens: inference.input_tokens,
    cache_creation_tokens: inference.cache_write_tokens,
    ...(inference.web_search_requests > 0 ? { web_search_requests: inference.web_search_requests } : {})
  }
})

const placeOf = (run: StageRunRef | null) =>
  run === null ? {} : { ...(run.within === null ? {} : { within: run.within }), ...run.labels }

const userMessage = (request: RememberRequest): string => {
  if (request.image === undefined) return request.text ?? ""
  const file = request.image_file
  return file === undefined
    ? imageNote("image", base64Bytes(request.image))
    : imageNote(file.media_type, file.bytes.length)
}

/** The request without its text or image bytes (the user step carries those). */
export const requestInput = (request: RememberRequest): Record<string, unknown> => ({
  user_id: request.user_id,
  dataset: request.dataset,
  ...(request.image === undefined
    ? {
      kind: request.kind,
      text_length: request.text?.length ?? 0,
      text_bytes: Buffer.byteLength(request.text ?? "", "utf8")
    }
    : {
      image: request.image_file === undefined
        ? { base64_length: request.image.length }
        : {
          media_type: request.image_file.media_type,
          bytes: request.image_file.bytes.length,
          sha256: request.image_file.sha256
        }
    }),
  ...(request.reference_time === undefined ? {} : { reference_time: request.reference_time }),
  ...(request.session_id === undefined ? {} : { session_id: request.session_id }),
  models: request.models,
  reasoning: request.reasoning,
  web_search: request.web_search,
  ...(request.timeseries === undefined ? {} : { timeseries: request.timeseries })
})

const num = (u: unknown): number | undefined => (typeof u === "number" ? u : undefined)

const plural = (n: unknown, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** One line saying what a tool-like stage did. */
const stageMessage = (report: StageReport): string => {
  const stage = report.run.stage
  if (report.status === "failed") return `${stage} failed: ${report.error ?? "unknown error"}`
  const d = report.detail ?? {}
  switch (stage) {
    case "classify_complexity":
      return typeof d.complexity === "string"
        ? `complexity: ${d.complexity} (confidence ${d.confidence})`
        : "no complexity class"
    case "chunk_text":
      return `split into ${plural(d.chunks, "chunk")} of at most ${d.chunk_size} tokens`
    case "load_candidates": {
      const found = Object.values((d.found_by ?? {}) as Record<string, string>)
      const by = (how: string) => found.filter((f) => f === how).length
      const byMeaning = found.filter((f) => f.split("+").includes("similar_fact")).length
      return `${plural(d.candidates, "candidate fact")} (by name ${by("name")}, by similarity ${
        by("similar")
      }, by both ${by("name+similar")}${byMeaning === 0 ? "" : `, by meaning ${byMeaning}`})`
    }
    case "store":
      return `stored artifact ${d.artifact_id}: ${
        plural(d.inserted_edges, "new fact")
      }, ${d.duplicate_edges} repeated, ${d.closed_edges} closed`
    case "find_existing_image":
      return d.found === true
        ? d.extraction_id === null || d.extraction_id === undefined
          ? `image artifact ${d.image_artifact_id} exists without an extraction: read again`
          : `a repeat of image artifact ${d.image_artifact_id}: answered from extraction ${d.extraction_id}, no model call`
        : "a new image in this dataset"
    case "store_image":
      return `stored image artifact ${d.image_artifact_id} (extraction ${d.extraction_id}) at ${d.path}`
    default:
      return `${stage} succeeded`
  }
}

export const makeTrajectoryRecorder = (
  input: { readonly request: RememberRequest; readonly receivedAt: string }
): TrajectoryRecorder => {
  const entries: Array<CallEntry | StageEntry> = []
  /** by stage run: its LLM call that is the stage's own model work (the last one) */
  const ownCalls = new Map<number, CallEntry>()

  const observer: RunObserver = {
    modelCalled: (report) => {
      const entry: CallEntry = { kind: "call", report, stage: null }
      entries.push(entry)
      const run = report.run
      if (
        run !== null && report.call.kind === "llm" && report.call.request.stage === run.stage &&
        ONE_CALL_STAGES.has(run.stage)
      ) {
        ownCalls.set(run.id, entry)
      }
    },
    stageFinished: (report) => {
      const own = ownCalls.get(report.run.id)
      if (own === undefined) entries.push({ kind: "stage", report })
      else own.stage = report
    }
  }

  const callStep = (stepId: number, entry: CallEntry): Step => {
    const { call, inference, run, runStage } = entry.report
    const common = {
      run_stage: runStage,
      ...placeOf(run),
      inference_id: inference.id,
      provider: inference.provider,
      started_at: inference.started_at,
      latency_ms: inference.latency_ms
    }
    if (call.kind === "embeddings") {
      return {
        step_id: stepId,
        timestamp: inference.started_at,
        source: "agent",
        model_name: inference.model,
        message: inference.error === null ? `embedded ${plural(call.texts.length, "text")}` : "",
        metrics: metricsOf(inference),
        extra: {
          step: run?.stage === "load_candidates" ? "search_similar_entities" : "embed",
          ...common,
          texts: call.texts,
          vectors: call.vectors,
          ...(inference.error === null ? {} : { error: inference.error })
        }
      }
    }
    const stage = entry.stage
    const error = stage?.error ?? inference.error
    // thinking blocks (Anthropic) and `<think>` text removed from the answer (local reasoning models)
    const thoughts = call.response === null
      ? []
      : [thinkingOf(call.response.blocks), call.response.thinking].filter((t) => t !== undefined && t !== "")
    const reasoning = thoughts.length === 0 ? undefined : thoughts.join("\n")
    return {
      step_id: stepId,
      timestamp: inference.started_at,
      source: "agent",
      model_name: inference.model,
      reasoning_effort: inference.reasoning,
      message: call.response?.text ?? "",
      ...(reasoning === undefined ? {} : { reasoning_content: reasoning }),
      metrics: metricsOf(inference),
      extra: {
        step: call.request.stage,
        ...common,
        ...(call.response === null ? {} : { stop_reason: call.response.stopReason }),
        ...(inference.structured_mode === null ? {} : { structured_mode: inference.structured_mode }),
        prompt: promptOf(call.request),
        ...(stage === null
          ? {}
          : {
            status: stage.status,
            ...(stage.status === "succeeded" ? { result: stage.trace?.observation ?? stage.detail } : {})
          }),
        ...(error === null ? {} : { error })
      }
    }
  }

  const stageStep = (stepId: number, report: StageReport): Step => {
    const callId = `${report.run.stage}-${stepId}`
    const failed = report.status === "failed"
    const result = report.trace?.observation ?? report.detail ?? {}
    const observation = failed ? `error: ${report.error}` : JSON.stringify(result)
    return {
      step_id: stepId,
      timestamp: report.startedAt,
      source: "agent",
      message: stageMessage(report),
      tool_calls: [{ tool_call_id: callId, function_name: report.run.stage, arguments: report.trace?.arguments ?? {} }],
      observation: { results: [{ source_call_id: callId, content: observation }] },
      extra: {
        step: report.run.stage,
        run_stage: report.run.within ?? report.run.stage,
        ...placeOf(report.run),
        status: report.status,
        started_at: report.startedAt,
        duration_ms: report.durationMs,
        // the classifier reports its own latency (a Jev round trip), the stage its whole run
        ...(report.run.stage === "classify_complexity"
          ? { latency_ms: num(report.detail?.latency_ms) ?? report.durationMs }
          : {}),
        ...(report.detail === null ? {} : { detail: report.detail }),
        // the observation as data (ATIF's observation content is text)
        ...(failed ? {} : { result }),
        ...(report.error === null ? {} : { error: report.error })
      }
    }
  }

  const build = (end: RunEnd): Trajectory => {
    const { request, receivedAt } = input
    const inputView = requestInput(request)
    const userStep: Step = {
      step_id: 1,
      timestamp: receivedAt,
      source: "user",
      message: userMessage(request),
      extra: { step: "input", input: inputView }
    }
    const steps: Array<Step> = [userStep]
    for (const entry of entries) {
      steps.push(entry.kind === "call" ? callStep(steps.length + 1, entry) : stageStep(steps.length + 1, entry.report))
    }
    const calls = entries.flatMap((e) => (e.kind === "call" ? [e.report] : []))
    const sum = (f: (m: ReturnType<typeof metricsOf>) => number) =>
      calls.reduce((total, c) => total + f(metricsOf(c.inference)), 0)
    const firstLlm = calls.find((c) => c.call.kind === "llm")
    const modelName = firstLlm?.inference.model ?? request.models.extract_graph ?? request.models.extract_image
    return {
      schema_version: ATIF_SCHEMA_VERSION,
      session_id: request.session_id ?? `remember-run-${end.runId}`,
      trajectory_id: `remember-run-${end.runId}`,
      agent: {
        name: "gligabao",
        version: GLIGABAO_VERSION,
        ...(modelName === undefined ? {} : { model_name: modelName })
      },
      steps,
      notes: NOTES,
      final_metrics: {
        total_prompt_tokens: sum((m) => m.prompt_tokens),
        total_completion_tokens: sum((m) => m.completion_tokens),
        total_cached_tokens: sum((m) => m.cached_tokens),
        total_cost_usd: sum((m) => m.cost_usd),
        total_steps: steps.length,
        extra: {
          cache_creation_tokens: sum((m) => m.extra.cache_creation_tokens),
          web_search_requests: calls.reduce((n, c) => n + c.inference.web_search_requests, 0),
          llm_calls: calls.filter((c) => c.call.kind === "llm").length,
          embedding_calls: calls.filter((c) => c.call.kind === "embeddings").length,
          inference_ids: calls.map((c) => c.inference.id)
        }
      },
      extra: {
        run_id: end.runId,
        pipeline: request.image === undefined ? "text" : "image",
        status: end.error === null ? "succeeded" : "failed",
        ...(end.error === null
          ? {}
          : { error: { type: end.error._tag, message: end.error.message, status: statusOf(end.error) } }),
        input: inputView
      }
    }
  }

  return { observer, build }
}

/** A remember run through the manager, with its trajectory whether it succeeded or failed. */
export interface EvalRun {
  readonly runId: number
  readonly outcome: Either.Either<RememberResult, RememberError>
  readonly trajectory: Trajectory
}

/** A request the server cannot serve (no LLM, ...) is refused before it is queued: no run, no trajectory. */
export const rememberWithTrajectory = (
  manager: RememberManager["Type"],
  request: RememberRequest
): Effect.Effect<EvalRun, Refusal> =>
  Effect.gen(function*() {
    const recorder = makeTrajectoryRecorder({ request, receivedAt: toIso(yield* Clock.currentTimeMillis) })
    const run = yield* manager.enqueue(request, { observer: recorder.observer })
    const outcome = yield* Effect.either(run.await)
    const trajectory = recorder.build({ runId: run.runId, error: Either.isLeft(outcome) ? outcome.left : null })
    return { runId: run.runId, outcome, trajectory }
  })
