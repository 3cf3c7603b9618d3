import { Context, type Effect } from "effect"
import type { LlmFailed, LlmUnavailable } from "../domain/Errors.js"
import type { ReasoningLevel, StructuredMode } from "../domain/Stages.js"

export { STRUCTURED_MODES, STRUCTURED_OUTPUTS, type StructuredMode, type StructuredOutput } from "../domain/Stages.js"

export type LlmContentBlock =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image"; readonly mediaType: string; readonly data: string }

export interface LlmMessage {
  readonly role: "user" | "assistant"
  readonly content: string | ReadonlyArray<LlmContentBlock>
}

/** A JSON Schema document (an object at the top). */
export type JsonSchemaObject = Readonly<Record<string, unknown>>

/**
 * A stage's answer form: `name` (the stage; OpenAI's json_schema name, Anthropic's tool name)
 * and the JSON Schema derived from the stage's own Effect Schema (src/kernel/answerSchema.ts).
 */
export interface LlmAnswerSchema {
  readonly name: string
  readonly schema: JsonSchemaObject
}

export interface LlmRequest {
  /** the pipeline stage the call serves (for logs and errors) */
  readonly stage: string
  /** the model to call; the adapter's default model when absent */
  readonly model?: string | undefined
  readonly reasoning: ReasoningLevel
  readonly system: string
  readonly messages: ReadonlyArray<LlmMessage>
  /** the answer's own output budget; a thinking budget is added on top */
  readonly maxTokens: number
  /** provider-specific tool definitions (Anthropic's server web search) */
  readonly tools?: ReadonlyArray<unknown> | undefined
  /** the answer's JSON Schema, for a stage that answers JSON (absent: a prose answer) */
  readonly answerSchema?: LlmAnswerSchema | undefined
}

export interface LlmUsage {
  readonly inputTokens: number
  /** thinking included */
  readonly outputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWriteTokens: number
  readonly webSearchRequests: number
}

export interface LlmResponse {
  /** the answer's text blocks, joined */
  readonly text: string
  /** the model as the provider's API reports it */
  readonly model: string
  readonly provider: string
  /** `end_turn`, `max_tokens`, ... (OpenAI's `stop`/`length` are mapped to these) */
  readonly stopReason: string
  /** the level the call actually ran with (`none` for a model without thinking) */
  readonly reasoning: ReasoningLevel
  readonly usage: LlmUsage
  /** the raw content blocks, for callers that need more than text (web search) */
  readonly blocks: ReadonlyArray<unknown>
  /** how the answer was constrained; `none` when absent */
  readonly structuredMode?: StructuredMode | undefined
  /** the model's visible thinking (`<think>` blocks) removed from `text`, if any */
  readonly thinking?: string | undefined
}

/**
 * The LLM port. `complete` never needs anything from the context; a missing key is
 * `LlmUnavailable` (503), a provider failure after retries is `LlmFailed` (502).
 */
export class Llm extends Context.Tag("gligabao/Llm")<
  Llm,
  {
    readonly provider: string
    readonly defaultModel: string
    /**
     * Why no call can be made on this server (no key configured), said before any work: a
     * remember is then refused before it is queued. Absent: calls can be made.
     */
    readonly unavailable?: string | undefined
    readonly complete: (request: LlmRequest) => Effect.Effect<LlmResponse, LlmUnavailable | LlmFailed>
  }
>() {}
