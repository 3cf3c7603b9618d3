import { type Context, Effect, Layer, Redacted } from "effect"
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai"
import { type LlmFailed } from "../../src/domain/Errors.js"
import { type ReasoningLevel, type StructuredOutput, THINKING_BUDGET } from "../../src/domain/Stages.js"
import { toStrictJsonSchema } from "../../src/kernel/answerSchema.js"
import {
  Llm,
  type LlmAnswerSchema,
  type LlmMessage,
  type LlmRequest,
  type LlmResponse
} from "../../src/services/Llm.js"
import { AttemptFailed, callWithRetries, describeUnexpected, httpAttemptFailure } from "./retry.js"

export interface OpenAiLlmOptions {
  readonly apiKey: Redacted.Redacted<string>
  /** with `/v1` (e.g. http://localhost:11434/v1); the SDK's default (or OPENAI_BASE_URL) when absent */
  readonly baseUrl?: string | undefined
  readonly defaultModel: string
  /** per attempt */
  readonly timeoutMs: number
  readonly maxRetries: number
  readonly retryBaseDelayMs?: number | undefined
  /** recorded on every response: "openai", "ollama", "vllm", ... */
  readonly provider?: string | undefined
  /**
   * llm.structured_output: the one response_format mode to use for a stage that answers JSON;
   * absent: automatic (json_schema, falling back to json_object, then none, remembered)
   */
  readonly structuredOutput?: StructuredOutput | undefined
}

/** o1, o3, o4-mini, gpt-5*: they take `reasoning_effort` and `max_completion_tokens`. */
export const isReasoningModel = (model: string): boolean => {
  const name = model.slice(model.lastIndexOf("/") + 1)
  return /^o\d+(-|$)/.test(name) || name.startsWith("gpt-5")
}

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam

const toOpenAiMessage = (message: LlmMessage): ChatMessage => {
  if (typeof message.content === "string") return { role: message.role, content: message.content }
  if (message.role === "assistant") {
    // assistant messages carry text only
    const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("")
    return { role: "assistant", content: text }
  }
  return {
    role: "user",
    content: message.content.map((block): OpenAI.Chat.Completions.ChatCompletionContentPart =>
      block.type === "text"
        ? { type: "text", text: block.text }
        : { type: "image_url", image_url: { url: `data:${block.mediaType};base64,${block.data}` } }
    )
  }
}

type ResponseFormat = OpenAI.Chat.Completions.ChatCompletionCreateParams["response_format"]

/** The response_format of a mode: strict json_schema with the stage's schema, json_object, or none. */
export const responseFormatFor = (
  mode: StructuredOutput,
  answerSchema: LlmAnswerSchema | undefined
): ResponseFormat | undefined => {
  if (answerSchema === undefined || mode === "none") return undefined
  if (mode === "json_object") return { type: "json_object" }
  return {
    type: "json_schema",
    json_schema: {
      name: answerSchema.name,
      strict: true,
      schema: toStrictJsonSchema(answerSchema.schema) as Record<string, unknown>
    }
  }
}

/** The next mode to try when the server refuses `mode`'s response_format. */
export const FALLBACK_MODE: Readonly<Record<StructuredOutput, StructuredOutput | undefined>> = {
  json_schema: "json_object",
  json_object: "none",
  none: undefined
}

/**
 * A 400 that refuses the response_format (a server without structured outputs, or one that
 * rejects the schema): the message names response_format, json_schema or json_object.
 */
export const refusesResponseFormat = (error: LlmFailed): boolean =>
  error.status === 400 && /response_format|json_schema|json_object|structured output/i.test(error.message)

/**
 * The mode that worked, per base URL and model, for the life of the process: once a server
 * has refused json_schema, its later calls go straight to the mode that answered.
 */
const workingModes = new Map<string, StructuredOutput>()

/**
 * The request body. A reasoning model always reasons, so `none` runs (and is recorded)
 * as `low`; its budget is added to max_completion_tokens, which reasoning tokens count against.
 * `mode` is the structured-output mode for a request with an answer schema (a prose answer has
 * no response_format).
 */
export const buildOpenAiBody = (request: LlmRequest, model: string, mode: StructuredOutput = "json_schema") => {
  const messages: Array<ChatMessage> = [
    ...(request.system !== "" ? [{ role: "system" as const, content: request.system }] : []),
    ...request.messages.map(toOpenAiMessage)
  ]
  const responseFormat = responseFormatFor(mode, request.answerSchema)
  const base = { model, messages, ...(responseFormat === undefined ? {} : { response_format: responseFormat }) }
  if (!isReasoningModel(model)) {
    // local servers (Ollama, vLLM, llama.cpp) understand max_tokens
    const body: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = {
      ...base,
      max_tokens: request.maxTokens
    }
    return { body, reasoning: "none" as ReasoningLevel }
  }
  const level = request.reasoning === "none" ? "low" : request.reasoning
  const body: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = {
    ...base,
    max_completion_tokens: request.maxTokens + THINKING_BUDGET[level],
    reasoning_effort: level
  }
  return { body, reasoning: level as ReasoningLevel }
}

const FINISH_REASONS: Record<string, string> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  function_call: "tool_use",
  content_filter: "refusal"
}

/** A token count as reported; anything but a finite non-negative number counts 0 (it is untrusted). */
const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0)

/**
 * Maps a chat completion. `inputTokens` excludes cached prompt tokens (as Anthropic's
 * input_tokens does), so cost = input + cache reads at their own prices on both providers.
 */
export const mapOpenAiResponse = (
  raw: unknown,
  reasoning: ReasoningLevel,
  provider: string
): LlmResponse | undefined => {
  if (typeof raw !== "object" || raw === null) return undefined
  const completion = raw as Partial<OpenAI.Chat.Completions.ChatCompletion>
  const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined
  // untrusted: `choices: [null]` or a null message is not a completion either
  if (typeof choice !== "object" || choice === null) return undefined
  if (typeof choice.message !== "object" || choice.message === null || typeof completion.model !== "string") {
    return undefined
  }
  const text = typeof choice.message.content === "string" ? choice.message.content : ""
  const usage = (completion.usage ?? {}) as Partial<OpenAI.CompletionUsage>
  const cached = num(usage.prompt_tokens_details?.cached_tokens)
  return {
    text,
    model: completion.model,
    provider,
    // untrusted: only a string is a reason (and "constructor" is not a key of the table)
    stopReason: typeof choice.finish_reason !== "string"
      ? "unknown"
      : Object.hasOwn(FINISH_REASONS, choice.finish_reason)
      ? FINISH_REASONS[choice.finish_reason]!
      : choice.finish_reason,
    reasoning,
    usage: {
      inputTokens: Math.max(0, num(usage.prompt_tokens) - cached),
      outputTokens: num(usage.completion_tokens),
      cacheReadTokens: cached,
      cacheWriteTokens: 0,
      webSearchRequests: 0
    },
    blocks: text === "" ? [] : [{ type: "text", text }]
  }
}

const classify = (timeoutMs: number) => (error: unknown): AttemptFailed => {
  if (error instanceof AttemptFailed) return error
  if (error instanceof APIConnectionTimeoutError) {
    return new AttemptFailed({ message: `timed out after ${timeoutMs}ms`, retryable: true })
  }
  if (error instanceof APIConnectionError) {
    return new AttemptFailed({ message: `connection failed: ${error.message}`, retryable: true })
  }
  if (error instanceof APIError && typeof error.status === "number") {
    const body = error.error as { message?: unknown; type?: unknown } | undefined
    const detail = [
      typeof body?.type === "string" ? body.type : undefined,
      typeof body?.message === "string" ? body.message : error.message
    ]
      .filter(Boolean)
      .join(": ")
    return httpAttemptFailure(error, detail)
  }
  return new AttemptFailed({ message: describeUnexpected(error), retryable: false })
}

/** The OpenAI-compatible chat completions adapter (OpenAI, Ollama, vLLM, llama.cpp). */
export const makeOpenAiLlm = (options: OpenAiLlmOptions): Context.Tag.Service<Llm> => {
  const provider = options.provider ?? "openai"
  const client = new OpenAI({
    apiKey: Redacted.value(options.apiKey),
    baseURL: options.baseUrl,
    maxRetries: 0,
    timeout: options.timeoutMs
  })
  const attempt = (request: LlmRequest, model: string, mode: StructuredOutput) => {
    const { body, reasoning } = buildOpenAiBody(request, model, mode)
    const structuredMode = body.response_format === undefined ? "none" as const : mode
    return callWithRetries(
      async (signal) => {
        const raw: unknown = await client.chat.completions.create(body, { signal })
        const response = mapOpenAiResponse(raw, reasoning, provider)
        if (response === undefined) {
          throw new AttemptFailed({ message: "the response is not a chat completion", retryable: false })
        }
        return { ...response, structuredMode }
      },
      classify(options.timeoutMs),
      { ...options, provider, stage: request.stage, model }
    )
  }
  const complete = (request: LlmRequest) => {
    const model = request.model || options.defaultModel
    const key = `${options.baseUrl ?? "default"} ${model}`
    // a forced mode is used as is; automatic starts from what worked last (json_schema at first)
    const tryFrom = (mode: StructuredOutput): Effect.Effect<LlmResponse, LlmFailed> =>
      attempt(request, model, mode).pipe(
        // only what automatic mode found is remembered (a forced mode is not a finding about the server)
        Effect.tap(() =>
          request.answerSchema === undefined || options.structuredOutput !== undefined
            ? Effect.void
            : Effect.sync(() => workingModes.set(key, mode))
        ),
        Effect.catchIf(
          (error) =>
            options.structuredOutput === undefined && request.answerSchema !== undefined &&
            FALLBACK_MODE[mode] !== undefined && refusesResponseFormat(error),
          (error) =>
            Effect.logWarning("the server refused the response_format; falling back", {
              stage: request.stage,
              model,
              from: mode,
              to: FALLBACK_MODE[mode],
              error: error.message
            }).pipe(Effect.zipRight(tryFrom(FALLBACK_MODE[mode]!)))
        )
      )
    // the call's span (Llm.complete, with its tokens and cost) is made where it is recorded: src/pipeline/ModelCalls.ts
    return tryFrom(options.structuredOutput ?? workingModes.get(key) ?? "json_schema")
  }
  return Llm.of({ provider, defaultModel: options.defaultModel, complete })
}

export const OpenAiLlmLive = (options: OpenAiLlmOptions): Layer.Layer<Llm> =>
  Layer.sync(Llm, () => makeOpenAiLlm(options))
