/**
 * Every model call of a remember goes through here, so that each one, successful or not,
 * is a gb_inferences row with its stage, model (as reported), reasoning, tokens, cost and
 * latency, filed in the run log under the stage that made it (spec/contracts.md section 7).
 * The recorder also hands the call (request, answer, row) to the run's observer, if any.
 * Recording is also where the model metrics are counted (so they are the recorded figures) and
 * where the call's span gets its tokens and cost: never a prompt, an answer or a key.
 */
import { Clock, Effect, type Either, Fiber } from "effect"
import { type EmbeddingFailed, LlmFailed, type LlmUnavailable } from "../domain/Errors.js"
import type { InferenceInput, InferenceType } from "../domain/Rows.js"
import { toIso } from "../domain/time.js"
import { costUsd, type PriceTable } from "../kernel/cost.js"
import { splitThinking } from "../kernel/json.js"
import type { EmbeddingBatch, Embeddings } from "../services/Embeddings.js"
import type { InferencesRepo } from "../services/InferencesRepo.js"
import type { Llm, LlmRequest, LlmResponse } from "../services/Llm.js"
import { modelCallRecorded } from "../telemetry/metrics.js"
import type { RunRecorder } from "./RunRecorder.js"
import { answerSchemaFor } from "./stageAnswers.js"

export interface CallContext {
  readonly llm: Llm["Type"]
  readonly inferences: InferencesRepo["Type"]
  readonly prices: PriceTable
  readonly type: InferenceType
  readonly runId: number | null
  readonly datasetId: number | null
  /** files the inference in this run-log stage */
  readonly recorder: RunRecorder | null
  readonly runStage: string
}

export interface RecordedResponse extends LlmResponse {
  readonly inferenceId: number
  /** gb_models id of the model that answered */
  readonly modelId: number | null
  readonly costUsd: number
  readonly latencyMs: number
}

/** Records the row and counts it in the metrics. */
const record = (inferences: InferencesRepo["Type"], input: InferenceInput) =>
  Effect.tap(inferences.record(input), modelCallRecorded)

/** An LLM call's row and its figures on the call's span (its Llm.complete). */
const recordLlm = (inferences: InferencesRepo["Type"], input: InferenceInput) =>
  record(inferences, input).pipe(
    Effect.tap((row) =>
      Effect.annotateCurrentSpan({
        model: row.model,
        input_tokens: row.input_tokens,
        output_tokens: row.output_tokens,
        cache_read_tokens: row.cache_read_tokens,
        cache_write_tokens: row.cache_write_tokens,
        cost_usd: row.cost_usd,
        inference_id: row.id,
        failed: row.error !== null
      })
    )
  )

const zeroUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, webSearchRequests: 0 }

/** The answer without its `<think>` blocks; what they held is kept in `thinking` (eval trajectories). */
const withoutThinking = (response: LlmResponse): LlmResponse => {
  const { answer, thinking } = splitThinking(response.text)
  if (thinking === undefined) return response
  return {
    ...response,
    text: answer,
    thinking: response.thinking === undefined ? thinking : `${response.thinking}\n\n${thinking}`
  }
}

/**
 * Calls the LLM and records the call. An answer cut by the output limit is recorded (its
 * tokens were paid for) and then fails with LlmFailed: a truncated answer is never used.
 * A JSON-answering stage's request carries its answer schema (filled in from STAGE_ANSWERS
 * when the stage did not set it), and the answer's visible reasoning is removed before the
 * stage parses it.
 */
export const callLlm = (
  ctx: CallContext,
  stageRequest: LlmRequest
): Effect.Effect<RecordedResponse, LlmFailed | LlmUnavailable> =>
  Effect.gen(function*() {
    const answerSchema = stageRequest.answerSchema ?? answerSchemaFor(stageRequest.stage)
    const request: LlmRequest = answerSchema === undefined ? stageRequest : { ...stageRequest, answerSchema }
    const startedMs = yield* Clock.currentTimeMillis
    const result = yield* Effect.either(ctx.llm.complete(request))
    const latencyMs = (yield* Clock.currentTimeMillis) - startedMs
    const base = {
      type: ctx.type,
      stage: request.stage,
      provider: ctx.llm.provider,
      started_at: toIso(startedMs),
      latency_ms: latencyMs,
      run_id: ctx.runId,
      dataset_id: ctx.datasetId
    }
    if (result._tag === "Left") {
      // No key: no call was made, so there is nothing to record.
      if (result.left._tag === "LlmUnavailable") return yield* result.left
      const row = yield* recordLlm(ctx.inferences, {
        ...base,
        model: request.model ?? ctx.llm.defaultModel,
        reasoning: request.reasoning,
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        web_search_requests: 0,
        cost_usd: 0,
        error: result.left.message,
        structured_mode: null
      })
      if (ctx.recorder !== null) {
        yield* ctx.recorder.modelCall(ctx.runStage, row, { kind: "llm", request, response: null })
      }
      return yield* new LlmFailed({
        message: `${request.stage}: ${result.left.message}`,
        stage: request.stage,
        ...(result.left.status !== undefined ? { status: result.left.status } : {}),
        ...(result.left.retryable !== undefined ? { retryable: result.left.retryable } : {})
      })
    }
    const response = withoutThinking(result.right)
    const truncated = response.stopReason === "max_tokens"
    const usage = response.usage ?? zeroUsage
    const cost = costUsd(response.model, usage, ctx.prices)
    const row = yield* recordLlm(ctx.inferences, {
      ...base,
      model: response.model,
      reasoning: response.reasoning,
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
      cache_read_tokens: usage.cacheReadTokens,
      cache_write_tokens: usage.cacheWriteTokens,
      web_search_requests: usage.webSearchRequests,
      cost_usd: cost,
      error: truncated ? `the answer was cut by the output limit (${request.maxTokens} tokens)` : null,
      structured_mode: response.structuredMode ?? "none"
    })
    if (ctx.recorder !== null) {
      yield* ctx.recorder.modelCall(ctx.runStage, row, { kind: "llm", request, response })
    }
    if (truncated) {
      return yield* new LlmFailed({
        message: `${request.stage}: the model's answer was cut by the output limit of ${request.maxTokens} tokens`,
        stage: request.stage
      })
    }
    return { ...response, inferenceId: row.id, modelId: row.model_id, costUsd: cost, latencyMs }
  }).pipe(
    // one span per model call, here rather than in each adapter: only here are its cost and row known
    Effect.withSpan("Llm.complete", {
      attributes: {
        provider: ctx.llm.provider,
        stage: stageRequest.stage,
        model: stageRequest.model ?? ctx.llm.defaultModel,
        ...(ctx.runId === null ? {} : { run_id: ctx.runId })
      }
    })
  )

export interface EmbedContext {
  readonly embeddings: Embeddings["Type"]
  readonly inferences: InferencesRepo["Type"]
  readonly prices: PriceTable
  readonly type: InferenceType
  readonly runId: number | null
  readonly datasetId: number | null
  readonly recorder: RunRecorder | null
  /** the run-log stage the request is filed under (load_candidates or store) */
  readonly runStage: string
}

/** One embeddings request and the gb_inferences row (stage `embed`) that records it, failed or not. */
const embedOnce = (ctx: Omit<EmbedContext, "recorder" | "runStage">, texts: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const startedMs = yield* Clock.currentTimeMillis
    const result = yield* Effect.either(ctx.embeddings.embed(texts))
    const latencyMs = (yield* Clock.currentTimeMillis) - startedMs
    const model = result._tag === "Right" ? result.right.model : ctx.embeddings.model
    const tokens = result._tag === "Right" ? result.right.inputTokens : 0
    const input: InferenceInput = {
      type: ctx.type,
      stage: "embed",
      provider: ctx.embeddings.provider,
      model,
      reasoning: "none",
      input_tokens: tokens,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      web_search_requests: 0,
      cost_usd: costUsd(model, { ...zeroUsage, inputTokens: tokens }, ctx.prices),
      latency_ms: latencyMs,
      started_at: toIso(startedMs),
      error: result._tag === "Left" ? result.left.message : null,
      run_id: ctx.runId,
      dataset_id: ctx.datasetId
    }
    return { result, input }
  })

/**
 * A read's embeddings request: the vectors (or the failure) at once, and its gb_inferences row
 * written beside what the read does next (the row waits for the writer's connection, which the
 * runs' transactions hold). `recorded` waits for the row; a read joins it before it answers, so
 * its cost is stored by then, and the row is written even if the read is interrupted.
 */
export const embedForRead = (
  ctx: Omit<EmbedContext, "recorder" | "runStage" | "runId">,
  texts: ReadonlyArray<string>
): Effect.Effect<{
  readonly result: Either.Either<EmbeddingBatch, EmbeddingFailed>
  readonly recorded: Effect.Effect<void>
}> =>
  Effect.gen(function*() {
    const { input, result } = yield* embedOnce({ ...ctx, runId: null }, texts)
    const writing = yield* Effect.forkDaemon(record(ctx.inferences, input))
    return { result, recorded: Effect.asVoid(Fiber.join(writing)) }
  })

/** One embeddings request, recorded as one gb_inferences row (stage `embed`), failed or not. */
export const callEmbeddings = (
  ctx: EmbedContext,
  texts: ReadonlyArray<string>
): Effect.Effect<EmbeddingBatch & { readonly inferenceId: number }, EmbeddingFailed> =>
  Effect.gen(function*() {
    const { input, result } = yield* embedOnce(ctx, texts)
    const row = yield* record(ctx.inferences, input)
    if (ctx.recorder !== null) {
      const vectors = result._tag === "Right" ? result.right.vectors.length : 0
      yield* ctx.recorder.modelCall(ctx.runStage, row, { kind: "embeddings", texts, vectors })
    }
    if (result._tag === "Left") return yield* result.left
    return { ...result.right, inferenceId: row.id }
  })
