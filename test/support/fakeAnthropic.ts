import {
  type FakeHandler,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
  roughTokens,
  startFakeServer
} from "./fakeLlmServer.js"
import { jsonSchemaInstance } from "./jsonSchemaInstance.js"

export type { FakeHandler, FakeReply, FakeServer, RecordedRequest } from "./fakeLlmServer.js"

/** The empty extraction: a valid answer for any stage that expects a graph. */
export const EMPTY_GRAPH_TEXT = JSON.stringify({ entities: [], edges: [] })

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error"
}

/** An error reply in the API's shape: `{type: "error", error: {type, message}, request_id}`. */
export const anthropicError = (
  status: number,
  message: string,
  options: { readonly type?: string; readonly headers?: Record<string, string>; readonly delayMs?: number } = {}
): FakeReply => ({
  status,
  headers: options.headers ?? {},
  json: {
    type: "error",
    error: { type: options.type ?? ERROR_TYPES[status] ?? "api_error", message },
    request_id: "req_fake_error"
  },
  ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {})
})

export const rateLimited = (retryAfterSeconds = 0): FakeReply =>
  anthropicError(429, "Number of request tokens has exceeded your per-minute rate limit", {
    headers: { "retry-after": String(retryAfterSeconds), "anthropic-ratelimit-requests-remaining": "0" }
  })

export const overloaded = (): FakeReply => anthropicError(529, "Overloaded")

export interface AnthropicUsageFields {
  readonly input_tokens?: number
  readonly output_tokens?: number
  readonly cache_read_input_tokens?: number
  readonly cache_creation_input_tokens?: number
  readonly server_tool_use?: { readonly web_search_requests: number } | null
}

/** A Messages response. */
export const anthropicMessage = (options: {
  readonly text?: string
  readonly model?: string
  readonly stopReason?: string
  readonly usage?: AnthropicUsageFields
  /** replaces the content (the text is then ignored) */
  readonly content?: ReadonlyArray<unknown>
  readonly delayMs?: number
}): FakeReply => ({
  json: {
    id: "msg_01Fake",
    type: "message",
    role: "assistant",
    model: options.model ?? "claude-haiku-4-5-20251001",
    content: options.content ?? [{ type: "text", text: options.text ?? EMPTY_GRAPH_TEXT, citations: null }],
    stop_reason: options.stopReason ?? "end_turn",
    stop_sequence: null,
    usage: {
      input_tokens: 10,
      output_tokens: 10,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      server_tool_use: null,
      service_tier: "standard",
      ...options.usage
    }
  },
  ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {})
})

/** A 200 whose body is not JSON although it says it is. */
export const malformedBody = (): FakeReply => ({ raw: "<html>upstream error</html>" })

export interface FakeAnthropicOptions {
  /** the text of the default answer: a string or a function of the request */
  readonly text?: string | ((request: RecordedRequest) => string)
  /** the model the default answer reports for a requested one (e.g. an alias to a dated snapshot) */
  readonly reportModel?: (requested: string) => string
  readonly latencyMs?: number
  /**
   * counts the tokens of a text for `usage` (the bench passes the project's tokenizer);
   * default: a rough 4 characters a token over the JSON of the request
   */
  readonly countTokens?: (text: string) => number
  /**
   * the input of a forced tool call (`tool_choice: {type: "tool"}`), e.g. `forcedToolSchemaInstance`;
   * default: the answer text when it is a JSON object (so scripted answers keep working); a text
   * that is not a JSON object is answered as a text block (a model ignoring the tool)
   */
  readonly toolInput?: (request: RecordedRequest) => unknown
}

/** A toolInput: an instance of the forced tool's input_schema (a model that follows it). */
export const forcedToolSchemaInstance = (request: RecordedRequest): unknown =>
  jsonSchemaInstance(request.body.tools.find((t: any) => t?.name === request.body.tool_choice.name)?.input_schema)

/** The forced tool call's content: a tool_use block (or the text, when it is not a JSON object). */
const forcedToolContent = (options: FakeAnthropicOptions, request: RecordedRequest, text: string) => {
  const body = request.body
  const tool = body.tools.find((t: any) => t?.name === body.tool_choice.name)
  let input: unknown
  if (options.toolInput !== undefined) input = options.toolInput(request)
  else {
    try {
      input = JSON.parse(text)
    } catch {
      input = undefined
    }
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return { content: [{ type: "text", text, citations: null }], stopReason: "end_turn", output: text }
    }
  }
  return {
    content: [{ type: "tool_use", id: "toolu_01Fake", name: tool.name, input }],
    stopReason: "tool_use",
    output: JSON.stringify(input)
  }
}

/** The texts of a `system` or message `content`: a string, or text blocks. */
const blockTexts = (value: unknown): Array<string> =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
    ? value.flatMap((block) => (typeof block?.text === "string" ? [block.text] : []))
    : []

/** Input tokens as counted by `count`: the system prompt and every message's text. */
export const promptTokens = (count: (text: string) => number, body: any): number =>
  [...blockTexts(body.system), ...body.messages.flatMap((m: any) => blockTexts(m?.content))]
    .reduce((sum: number, text: string) => sum + count(text), 0)

/** The checks the real API makes that an adapter could get wrong (errors as the API words them). */
const validate = (body: any): string | undefined => {
  if (typeof body !== "object" || body === null) return "request body must be a JSON object"
  if (typeof body.model !== "string") return "model: Field required"
  if (typeof body.max_tokens !== "number") return "max_tokens: Field required"
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages: Field required"
  const thinking = body.thinking
  if (thinking?.type === "enabled") {
    if (!(thinking.budget_tokens >= 1024)) {
      return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    }
    if (!(body.max_tokens > thinking.budget_tokens)) return "`max_tokens` must be greater than `thinking.budget_tokens`"
    if (body.temperature !== undefined && body.temperature !== 1) {
      return "`temperature` may only be set to 1 when thinking is enabled"
    }
    if (body.tool_choice?.type === "tool" || body.tool_choice?.type === "any") {
      return "Thinking may not be enabled when tool_choice forces tool use."
    }
  }
  if (body.tool_choice !== undefined) {
    if (body.tool_choice.type === "tool" && !(body.tools ?? []).some((t: any) => t?.name === body.tool_choice.name)) {
      return `tool_choice: tool '${body.tool_choice.name}' not found in tools`
    }
  }
  for (const tool of body.tools ?? []) {
    if (tool?.type === undefined && tool?.input_schema?.type !== "object") {
      return "tools.0.custom.input_schema.type: Input should be 'object'"
    }
  }
  return undefined
}

const defaultHandler = (options: FakeAnthropicOptions): FakeHandler => (request) => {
  if (request.method !== "POST" || request.path !== "/v1/messages") {
    return anthropicError(404, `Not found: ${request.method} ${request.path}`)
  }
  // SDK 1.x sends the key as a Bearer token; older clients (and curl examples) use x-api-key
  if (!request.headers["x-api-key"] && !String(request.headers.authorization ?? "").startsWith("Bearer ")) {
    return anthropicError(401, "x-api-key header is required")
  }
  const invalid = validate(request.body)
  if (invalid !== undefined) return anthropicError(400, invalid)
  const body = request.body
  const text = typeof options.text === "function" ? options.text(request) : (options.text ?? EMPTY_GRAPH_TEXT)
  const thinking = body.thinking?.type === "enabled"
  const thinkingTokens = thinking ? Math.min(body.thinking.budget_tokens, 200) : 0
  const forced = body.tool_choice?.type === "tool"
    ? forcedToolContent(options, request, text)
    : undefined
  return anthropicMessage({
    text,
    model: options.reportModel?.(body.model) ?? body.model,
    content: [
      ...(thinking ? [{ type: "thinking", thinking: "Let me think.", signature: "EqQBfake" }] : []),
      ...(forced?.content ?? [{ type: "text", text, citations: null }])
    ],
    ...(forced === undefined ? {} : { stopReason: forced.stopReason }),
    usage: {
      input_tokens: options.countTokens === undefined
        ? roughTokens([body.system, body.messages])
        : promptTokens(options.countTokens, body),
      output_tokens: (options.countTokens ?? roughTokens)(forced?.output ?? text) + thinkingTokens
    }
  })
}

export type FakeAnthropic = FakeServer

/**
 * A fake Anthropic Messages API. `url` is the SDK's baseURL (no `/v1`). By default every
 * `POST /v1/messages` is answered with `options.text` (the empty graph) and usage
 * estimated from the request; enqueue replies or set a handler to script it.
 */
export const startFakeAnthropic = (options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> =>
  startFakeServer({
    defaultHandler: defaultHandler(options),
    requestIdHeader: "request-id",
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {})
  })

/** One search as the server-side web search tool reports it: its query and its results (or an error code). */
export interface FakeWebSearch {
  readonly query: string
  readonly results?: ReadonlyArray<{ readonly url: string; readonly title: string; readonly page_age?: string | null }>
  /** the tool's error instead of results (max_uses_exceeded, too_many_requests, unavailable, ...) */
  readonly errorCode?: string
}

/**
 * The content blocks of an answer that used Anthropic's server-side web search: an optional
 * preamble, then per search a `server_tool_use` and its `web_search_tool_result` (or a
 * `web_search_tool_result_error` inside the 200), then the answer's text blocks (the first
 * one citing the first result).
 */
export const webSearchBlocks = (options: {
  readonly searches: ReadonlyArray<FakeWebSearch>
  readonly text: ReadonlyArray<string> | string
  readonly preamble?: string
}): ReadonlyArray<unknown> => {
  const blocks: Array<unknown> = []
  if (options.preamble !== undefined) blocks.push({ type: "text", text: options.preamble, citations: null })
  options.searches.forEach((search, i) => {
    const id = `srvtoolu_01Fake${i}`
    blocks.push({ type: "server_tool_use", id, name: "web_search", input: { query: search.query } })
    blocks.push({
      type: "web_search_tool_result",
      tool_use_id: id,
      content: search.errorCode !== undefined
        ? { type: "web_search_tool_result_error", error_code: search.errorCode }
        : (search.results ?? []).map((r) => ({
          type: "web_search_result",
          url: r.url,
          title: r.title,
          encrypted_content: "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2Ma",
          page_age: r.page_age ?? null
        }))
    })
  })
  const texts = typeof options.text === "string" ? [options.text] : options.text
  const cited = options.searches.flatMap((s) => s.results ?? [])[0]
  texts.forEach((text, i) => {
    blocks.push({
      type: "text",
      text,
      citations: i === 0 && cited !== undefined
        ? [{
          type: "web_search_result_location",
          url: cited.url,
          title: cited.title,
          encrypted_index: "Eo8BCioIAhgB",
          cited_text: text.slice(0, 150)
        }]
        : null
    })
  })
  return blocks
}

/**
 * A Messages response that used the web search tool; usage.server_tool_use counts the
 * searches that did not fail (failed searches are not billed).
 */
export const webSearchMessage = (options: {
  readonly searches: ReadonlyArray<FakeWebSearch>
  readonly text: ReadonlyArray<string> | string
  readonly preamble?: string
  readonly model?: string
  readonly usage?: AnthropicUsageFields
}): FakeReply =>
  anthropicMessage({
    content: webSearchBlocks(options),
    ...(options.model === undefined ? {} : { model: options.model }),
    usage: {
      input_tokens: 2000,
      output_tokens: 300,
      server_tool_use: { web_search_requests: options.searches.filter((s) => s.errorCode === undefined).length },
      ...options.usage
    }
  })
