import { hashEmbedding } from "../../layers/testing/HashEmbeddings.js"
import {
  type FakeHandler,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
  roughTokens,
  startFakeServer
} from "./fakeLlmServer.js"
import { jsonSchemaInstance, strictSchemaViolation } from "./jsonSchemaInstance.js"

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

/** Little-endian float32 bytes in base64, as the API sends `encoding_format: "base64"`. */
export const toBase64Float32 = (vector: ReadonlyArray<number>): string => {
  const bytes = Buffer.alloc(vector.length * 4)
  vector.forEach((x, i) => bytes.writeFloatLE(x, i * 4))
  return bytes.toString("base64")
}

/** An embeddings list; `encoding` "base64" encodes each vector as the API does. */
export const embeddingsList = (options: {
  readonly vectors: ReadonlyArray<ReadonlyArray<number>>
  readonly model?: string
  readonly encoding?: "float" | "base64"
  readonly promptTokens?: number
  /** the order of the data entries (default: input order); `index` always names the input */
  readonly order?: ReadonlyArray<number>
}): FakeReply => {
  const order = options.order ?? options.vectors.map((_, i) => i)
  const promptTokens = options.promptTokens ?? 8
  return {
    json: {
      object: "list",
      data: order.map((index) => ({
        object: "embedding",
        index,
        embedding: options.encoding === "base64"
          ? toBase64Float32(options.vectors[index]!)
          : [...options.vectors[index]!]
      })),
      model: options.model ?? "text-embedding-3-small",
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens }
    }
  }
}

/** The size a model's vectors have when `dimensions` is not sent. */
export const nativeDimensions = (model: string): number => (model.endsWith("text-embedding-3-large") ? 3072 : 1536)

export interface FakeOpenAiOptions {
  readonly text?: string | ((request: RecordedRequest) => string)
  readonly reportModel?: (requested: string) => string
  readonly latencyMs?: number
  /** the vector of one input (default: `hashEmbedding`, so similar texts get similar vectors) */
  readonly embeddingFor?: (text: string, dimensions: number) => ReadonlyArray<number>
  /**
   * counts the tokens of a text for `usage` (the bench passes the project's tokenizer);
   * default: a rough 4 characters a token
   */
  readonly countTokens?: (text: string) => number
  /**
   * the response_format types the server accepts (default both, as OpenAI); another one is
   * refused with a 400 naming response_format, as servers without structured outputs do
   */
  readonly responseFormats?: ReadonlyArray<"json_schema" | "json_object">
  /** the default answer (no `text` option) to a json_schema request is an instance of the schema sent */
  readonly honourSchema?: boolean
  /**
   * the default answer to a json_object request: `echo` answers with a JSON Schema instead of an
   * answer (as small models shown a schema do); default the empty graph
   */
  readonly jsonObjectAnswer?: "echo" | "empty"
  /** wraps every answer in `<think>...</think>` (as DeepSeek R1 / Qwen3 servers do) */
  readonly thinkAloud?: boolean
  /** the delay of one default answer, ms; undefined: the server's latency */
  readonly delayFor?: (request: RecordedRequest) => number | undefined
}

/** What a model that echoes the schema it was shown answers in json_object mode. */
export const ECHOED_SCHEMA_TEXT = JSON.stringify({
  type: "object",
  properties: { answer: { type: "string" } },
  required: ["answer"]
})

/** The default answer for a request, by its response_format (see FakeOpenAiOptions). */
const formatAnswer = (options: FakeOpenAiOptions, body: any): string => {
  const format = body.response_format
  if (format?.type === "json_schema" && options.honourSchema === true) {
    return JSON.stringify(jsonSchemaInstance(format.json_schema?.schema))
  }
  if (format?.type === "json_object" && options.jsonObjectAnswer === "echo") return ECHOED_SCHEMA_TEXT
  return EMPTY_GRAPH_TEXT
}

/** The texts of a chat message's content: a string, or content parts. */
const contentTexts = (content: unknown): Array<string> =>
  typeof content === "string"
    ? [content]
    : Array.isArray(content)
    ? content.flatMap((part) => (typeof part?.text === "string" ? [part.text] : []))
    : []

const isReasoningModel = (model: string) => /^o\d+(-|$)/.test(model) || model.startsWith("gpt-5")

/** The checks OpenAI makes that an adapter could get wrong (errors as the API words them). */
const validate = (body: any, options: FakeOpenAiOptions): string | undefined => {
  if (typeof body !== "object" || body === null) return "We could not parse the JSON body of your request."
  if (typeof body.model !== "string") return "you must provide a model parameter"
  if (!Array.isArray(body.messages)) return "Missing required parameter: 'messages'."
  if (isReasoningModel(body.model) && body.max_tokens !== undefined) {
    return "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
  }
  const format = body.response_format
  if (format !== undefined) {
    const accepted = options.responseFormats ?? ["json_schema", "json_object"]
    if (!accepted.includes(format.type)) {
      return `Invalid parameter: 'response_format' of type '${format.type}' is not supported with this model.`
    }
    if (format.type === "json_schema") {
      if (typeof format.json_schema?.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(format.json_schema.name)) {
        return "Invalid 'response_format.json_schema.name': string does not match pattern '^[a-zA-Z0-9_-]+$'."
      }
      if (format.json_schema.strict === true) {
        const violation = strictSchemaViolation(format.json_schema.name, format.json_schema.schema)
        if (violation !== undefined) return violation
      }
    }
  }
  if (body.response_format?.type === "json_object" && !/json/i.test(JSON.stringify(body.messages))) {
    return "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'."
  }
  return undefined
}

/** `POST /v1/embeddings`, checked as the API checks it. */
const embeddingsHandler = (options: FakeOpenAiOptions, request: RecordedRequest): FakeReply => {
  const body = request.body
  if (typeof body !== "object" || body === null) {
    return openAiError(400, "We could not parse the JSON body of your request.")
  }
  if (typeof body.model !== "string") return openAiError(400, "you must provide a model parameter")
  const input: unknown = body.input
  const texts = typeof input === "string" ? [input] : input
  if (!Array.isArray(texts) || texts.length === 0 || !texts.every((t) => typeof t === "string")) {
    return openAiError(400, "'input' : input must be a string or a non-empty array of strings")
  }
  if (texts.length > 2048) return openAiError(400, "'input' : maximum input length is 2048")
  if (texts.some((t) => t === "")) return openAiError(400, "'$.input' is invalid: an input is empty")
  let dimensions = nativeDimensions(body.model)
  if (body.dimensions !== undefined) {
    if (!body.model.includes("text-embedding-3")) {
      return openAiError(400, "This model does not support specifying dimensions.")
    }
    if (!Number.isInteger(body.dimensions) || body.dimensions < 1) {
      return openAiError(400, "Invalid value for 'dimensions': must be a positive integer.")
    }
    dimensions = body.dimensions
  }
  const encoding = body.encoding_format ?? "float"
  if (encoding !== "float" && encoding !== "base64") {
    return openAiError(400, `Invalid value for 'encoding_format': '${encoding}' is not one of ['float', 'base64'].`)
  }
  const embeddingFor = options.embeddingFor ?? hashEmbedding
  return embeddingsList({
    vectors: texts.map((text: string) => embeddingFor(text, dimensions)),
    model: body.model,
    encoding,
    promptTokens: texts.reduce((sum: number, text: string) => sum + (options.countTokens ?? roughTokens)(text), 0)
  })
}

const defaultHandler = (options: FakeOpenAiOptions): FakeHandler => (request) => {
  const reply = defaultReply(options, request)
  const delayMs = options.delayFor?.(request)
  return delayMs === undefined ? reply : { ...reply, delayMs }
}

const defaultReply = (options: FakeOpenAiOptions, request: RecordedRequest): FakeReply => {
  const route = `${request.method} ${request.path}`
  if (route !== "POST /v1/chat/completions" && route !== "POST /v1/embeddings") {
    return openAiError(404, `Invalid URL (${request.method} ${request.path})`)
  }
  if (!String(request.headers.authorization ?? "").startsWith("Bearer ")) {
    return openAiError(401, "You didn't provide an API key.")
  }
  if (route === "POST /v1/embeddings") return embeddingsHandler(options, request)
  const invalid = validate(request.body, options)
  if (invalid !== undefined) return openAiError(400, invalid)
  const answer = typeof options.text === "function"
    ? options.text(request)
    : (options.text ?? formatAnswer(options, request.body))
  const text = options.thinkAloud === true
    ? `<think>\nThe user wants {json}. Let me think.\n</think>\n${answer}`
    : answer
  return chatCompletion({
    text,
    model: options.reportModel?.(request.body.model) ?? request.body.model,
    promptTokens: options.countTokens === undefined
      ? roughTokens(request.body.messages)
      : request.body.messages.flatMap((m: any) => contentTexts(m?.content))
        .reduce((sum: number, t: string) => sum + options.countTokens!(t), 0),
    completionTokens: (options.countTokens ?? roughTokens)(text)
  })
}

export type FakeOpenAi = FakeServer

/**
 * A fake OpenAI-compatible API: chat completions and embeddings. `url` is the SDK's baseURL
 * (it ends in `/v1`). By default every `POST /v1/chat/completions` is answered with
 * `options.text` (the empty graph) and every `POST /v1/embeddings` with deterministic
 * vectors (`embeddingFor`, in float or base64 as asked); enqueue replies or set a handler
 * to script it (the queue serves both routes, in arrival order).
 */
export const startFakeOpenAi = (options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> =>
  startFakeServer({
    defaultHandler: defaultHandler(options),
    requestIdHeader: "x-request-id",
    urlSuffix: "/v1",
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {})
  })
