import {
  type FakeHandler,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
  roughTokens,
  startFakeServer
} from "./fakeLlmServer.js"

export type { FakeHandler, FakeReply, FakeServer, RecordedRequest } from "./fakeLlmServer.js"

export const EMPTY_GRAPH_TEXT = JSON.stringify({ entities: [], edges: [] })

/** An error reply in the API's shape: `{error: {message, type, param, code}}`. */
export const openAiError = (
  status: number,
  message: string,
  options: {
    readonly type?: string
    readonly code?: string | null
    readonly headers?: Record<string, string>
  } = {}
): FakeReply => ({
  status,
  headers: options.headers ?? {},
  json: {
    error: {
      message,
      type: options.type ?? (status === 429 ? "requests" : status >= 500 ? "server_error" : "invalid_request_error"),
      param: null,
      code: options.code ?? null
    }
  }
})

export const openAiRateLimited = (retryAfterSeconds = 0): FakeReply =>
  openAiError(429, "Rate limit reached for requests", {
    code: "rate_limit_exceeded",
    headers: { "retry-after": String(retryAfterSeconds) }
  })

/** A chat completion. */
export const chatCompletion = (options: {
  readonly text?: string | null
  readonly model?: string
  readonly finishReason?: string
  readonly promptTokens?: number
  readonly completionTokens?: number
  readonly cachedTokens?: number
  readonly reasoningTokens?: number
  readonly delayMs?: number
}): FakeReply => {
  const promptTokens = options.promptTokens ?? 10
  const completionTokens = options.completionTokens ?? 10
  return {
    json: {
      id: "chatcmpl-fake",
      object: "chat.completion",
      created: 1_760_000_000,
      model: options.model ?? "gpt-4o-mini-2024-07-18",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: options.text === undefined ? EMPTY_GRAPH_TEXT : options.text,
            refusal: null
          },
          logprobs: null,
          finish_reason: options.finishReason ?? "stop"
        }
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
        prompt_tokens_details: { cached_tokens: options.cachedTokens ?? 0 },
        completion_tokens_details: { reasoning_tokens: options.reasoningTokens ?? 0 }
      }
    },
    ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {})
  }
}

export interface FakeOpenAiOptions {
  readonly text?: string | ((request: RecordedRequest) => string)
  readonly reportModel?: (requested: string) => string
  readonly latencyMs?: number
}

const isReasoningModel = (model: string) => /^o\d+(-|$)/.test(model) || model.startsWith("gpt-5")

/** The checks OpenAI makes that an adapter could get wrong (errors as the API words them). */
const validate = (body: any): string | undefined => {
  if (typeof body !== "object" || body === null) return "We could not parse the JSON body of your request."
  if (typeof body.model !== "string") return "you must provide a model parameter"
  if (!Array.isArray(body.messages)) return "Missing required parameter: 'messages'."
  if (isReasoningModel(body.model) && body.max_tokens !== undefined)
    return "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
  if (body.response_format?.type === "json_object" && !/json/i.test(JSON.stringify(body.messages)))
    return "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'."
  return undefined
}

const defaultHandler =
  (options: FakeOpenAiOptions): FakeHandler =>
  (request) => {
    if (request.method !== "POST" || request.path !== "/v1/chat/completions")
      return openAiError(404, `Invalid URL (${request.method} ${request.path})`)
    if (!String(request.headers.authorization ?? "").startsWith("Bearer "))
      return openAiError(401, "You didn't provide an API key.")
    const invalid = validate(request.body)
    if (invalid !== undefined) return openAiError(400, invalid)
    const text = typeof options.text === "function" ? options.text(request) : (options.text ?? EMPTY_GRAPH_TEXT)
    return chatCompletion({
      text,
      model: options.reportModel?.(request.body.model) ?? request.body.model,
      promptTokens: roughTokens(request.body.messages),
      completionTokens: roughTokens(text)
    })
  }

export type FakeOpenAi = FakeServer

/**
 * A fake OpenAI-compatible chat completions API. `url` is the SDK's baseURL
 * (it ends in `/v1`). By default every `POST /v1/chat/completions` is answered with
 * `options.text` (the empty graph); enqueue replies or set a handler to script it.
 */
export const startFakeOpenAi = (options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> =>
  startFakeServer({
    defaultHandler: defaultHandler(options),
    requestIdHeader: "x-request-id",
    urlSuffix: "/v1",
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {})
  })
