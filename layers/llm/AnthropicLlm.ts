import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError } from "@anthropic-ai/sdk"
import { type Context, Layer, Redacted } from "effect"
import { type StructuredOutput, THINKING_BUDGET } from "../../src/domain/Stages.js"
import {
  type JsonSchemaObject,
  Llm,
  type LlmMessage,
  type LlmRequest,
  type LlmResponse
} from "../../src/services/Llm.js"
import { AttemptFailed, callWithRetries, describeUnexpected, httpAttemptFailure } from "./retry.js"

export interface AnthropicLlmOptions {
  readonly apiKey: Redacted.Redacted<string>
  /** without `/v1`; the SDK's default (or ANTHROPIC_BASE_URL) when absent */
  readonly baseUrl?: string | undefined
  readonly defaultModel: string
  /** per attempt */
  readonly timeoutMs: number
  readonly maxRetries: number
  readonly retryBaseDelayMs?: number | undefined
  /** llm.structured_output: "none" turns the forced answer tool off; the other values leave it on */
  readonly structuredOutput?: StructuredOutput | undefined
}

export const ANTHROPIC_PROVIDER = "anthropic"

/** The Claude 3 and 3.5 families have no extended thinking; 3.7 does. */
export const supportsThinking = (model: string): boolean =>
  !(model.startsWith("claude-3-") && !model.startsWith("claude-3-7"))

const toAnthropicMessage = (message: LlmMessage): Anthropic.MessageParam => ({
  role: message.role,
  content: typeof message.content === "string"
    ? message.content
    : message.content.map((block): Anthropic.ContentBlockParam =>
      block.type === "text"
        ? { type: "text", text: block.text }
        : {
          type: "image",
          source: {
            type: "base64",
            media_type: block.mediaType as Anthropic.Base64ImageSource["media_type"],
            data: block.data
          }
        }
    )
})

/**
 * The request body; temperature is never sent (thinking and newer models reject it). A stage
 * that answers JSON and runs without extended thinking answers through a forced tool call whose
 * input schema is the stage's answer schema (`answerTool` names it); thinking cannot be combined
 * with a forced tool, so a thinking call is constrained by its prompt alone, as before.
 */
export const buildAnthropicBody = (request: LlmRequest, model: string, structuredOutput?: StructuredOutput) => {
  const thinking = request.reasoning !== "none" && supportsThinking(model)
  const budget = thinking ? THINKING_BUDGET[request.reasoning] : 0
  const answer = request.answerSchema !== undefined && !thinking && structuredOutput !== "none"
    ? request.answerSchema
    : undefined
  const tools: Array<Anthropic.ToolUnion> = [
    ...((request.tools ?? []) as Array<Anthropic.ToolUnion>),
    ...(answer === undefined ? [] : [{
      name: answer.name,
      description: `Give the ${answer.name} answer: call this tool once, with the whole answer as its input.`,
      input_schema: answer.schema as Anthropic.Tool.InputSchema & JsonSchemaObject
    }])
  ]
  const body: Anthropic.MessageCreateParamsNonStreaming = {
    model,
    max_tokens: request.maxTokens + budget,
    messages: request.messages.map(toAnthropicMessage),
    ...(request.system !== "" ? { system: request.system } : {}),
    ...(thinking ? { thinking: { type: "enabled", budget_tokens: budget } } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    ...(answer === undefined ? {} : { tool_choice: { type: "tool", name: answer.name } })
  }
  return { body, reasoning: thinking ? request.reasoning : ("none" as const), answerTool: answer?.name }
}

/** A token count as reported; anything but a finite non-negative number counts 0 (it is untrusted). */
const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0)

/** Maps a Messages response; anything that is not one is an unusable answer. */
export const mapAnthropicResponse = (
  raw: unknown,
  reasoning: LlmResponse["reasoning"],
  answerTool?: string
): LlmResponse | undefined => {
  if (typeof raw !== "object" || raw === null) return undefined
  const message = raw as Partial<Anthropic.Message>
  if (!Array.isArray(message.content) || typeof message.model !== "string") return undefined
  const usage = (message.usage ?? {}) as Partial<Anthropic.Usage>
  // the forced tool call's input is the answer (as JSON text, for the stage's parser)
  const toolUse = answerTool === undefined ? undefined : message.content.find(
    (block): block is Anthropic.ToolUseBlock =>
      block?.type === "tool_use" && block.name === answerTool && typeof block.input === "object" &&
      block.input !== null
  )
  return {
    text: toolUse !== undefined ? JSON.stringify(toolUse.input) : message.content
      .filter((block): block is Anthropic.TextBlock => block?.type === "text" && typeof block.text === "string")
      .map((block) => block.text)
      .join(""),
    structuredMode: toolUse !== undefined ? "tool" : "none",
    model: message.model,
    provider: ANTHROPIC_PROVIDER,
    // untrusted: a non-string here would be stored as the inference's stop reason
    stopReason: typeof message.stop_reason === "string" ? message.stop_reason : "unknown",
    reasoning,
    usage: {
      inputTokens: num(usage.input_tokens),
      outputTokens: num(usage.output_tokens),
      cacheReadTokens: num(usage.cache_read_input_tokens),
      cacheWriteTokens: num(usage.cache_creation_input_tokens),
      webSearchRequests: num(usage.server_tool_use?.web_search_requests)
    },
    blocks: message.content
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
    const detail = [error.type, error.apiMessage ?? error.message].filter(Boolean).join(": ")
    return httpAttemptFailure(error, detail)
  }
  return new AttemptFailed({ message: describeUnexpected(error), retryable: false })
}

/** The Anthropic Messages adapter. The SDK never retries; the Effect schedule does. */
export const makeAnthropicLlm = (options: AnthropicLlmOptions): Context.Tag.Service<Llm> => {
  const client = new Anthropic({
    apiKey: Redacted.value(options.apiKey),
    baseURL: options.baseUrl,
    maxRetries: 0,
    // an explicit timeout also keeps the SDK from demanding streaming for large max_tokens
    timeout: options.timeoutMs
  })
  const complete = (request: LlmRequest) => {
    const model = request.model || options.defaultModel
    const { answerTool, body, reasoning } = buildAnthropicBody(request, model, options.structuredOutput)
    // the call's span (Llm.complete, with its tokens and cost) is made where it is recorded: src/pipeline/ModelCalls.ts
    return callWithRetries(
      async (signal) => {
        const raw: unknown = await client.messages.create(body, { signal })
        const response = mapAnthropicResponse(raw, reasoning, answerTool)
        if (response === undefined) {
          throw new AttemptFailed({ message: "the response is not a Messages response", retryable: false })
        }
        return response
      },
      classify(options.timeoutMs),
      { ...options, provider: ANTHROPIC_PROVIDER, stage: request.stage, model }
    )
  }
  return Llm.of({ provider: ANTHROPIC_PROVIDER, defaultModel: options.defaultModel, complete })
}

export const AnthropicLlmLive = (options: AnthropicLlmOptions): Layer.Layer<Llm> =>
  Layer.sync(Llm, () => makeAnthropicLlm(options))
