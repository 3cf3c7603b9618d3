/**
 * OpenAI (and OpenAI-compatible) embeddings: one `POST /embeddings` per `embed(texts)`.
 *
 * Choices:
 * - `dimensions` is sent for text-embedding-3-* models only (they can shorten their
 *   vectors; ada-002 rejects the parameter and local models have a fixed size), unless
 *   `sendDimensions` says otherwise. Every answer is checked against `dimensions` anyway.
 * - `encoding_format: "base64"` is asked for explicitly (the SDK's own default, a third of
 *   the bytes of JSON floats) and decoded here rather than by the SDK, so a compatible
 *   server that ignores the parameter and answers JSON floats still works.
 */
import { type Context, Effect, Layer, Redacted } from "effect"
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai"
import { EmbeddingFailed } from "../../src/domain/Errors.js"
import { type EmbeddingBatch, Embeddings } from "../../src/services/Embeddings.js"
import { AttemptFailed, callWithRetries, describeUnexpected, httpAttemptFailure } from "../llm/retry.js"

export interface OpenAiEmbeddingsOptions {
  readonly apiKey: Redacted.Redacted<string>
  /** with `/v1`; the SDK's default (or OPENAI_BASE_URL) when absent */
  readonly baseUrl?: string | undefined
  readonly model: string
  readonly dimensions: number
  /** per attempt */
  readonly timeoutMs: number
  readonly maxRetries: number
  readonly retryBaseDelayMs?: number | undefined
  /** recorded as the provider: "openai", "ollama", ... */
  readonly provider?: string | undefined
  /** default: true for text-embedding-3-* models, false for others */
  readonly sendDimensions?: boolean | undefined
}

/** text-embedding-3-small and -large (with or without an `openai/` style prefix) take `dimensions`. */
export const acceptsDimensions = (model: string): boolean =>
  model.slice(model.lastIndexOf("/") + 1).startsWith("text-embedding-3")

/** An embedding as the wire has it: base64 of little-endian float32, or JSON numbers. */
export const decodeEmbedding = (raw: unknown): ReadonlyArray<number> | undefined => {
  if (Array.isArray(raw)) return raw.every((x) => typeof x === "number") ? (raw as Array<number>) : undefined
  if (typeof raw !== "string") return undefined
  const bytes = Buffer.from(raw, "base64")
  if (bytes.length % 4 !== 0) return undefined
  const out = new Array<number>(bytes.length / 4)
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4)
  return out
}

const fail = (message: string) => new AttemptFailed({ message, retryable: false })

/** An indexed loop: `every(Number.isFinite)` boxes each float to pass it (190 kB a remember). */
const allFinite = (vector: ReadonlyArray<number>) => {
  for (let i = 0; i < vector.length; i++) if (!Number.isFinite(vector[i])) return false
  return true
}

/** The batch of an embeddings answer, in input order; an AttemptFailed naming what is wrong otherwise. */
export const mapEmbeddingsResponse = (
  raw: unknown,
  count: number,
  dimensions: number,
  requestedModel: string
): EmbeddingBatch | AttemptFailed => {
  if (typeof raw !== "object" || raw === null) return fail("the response is not an embeddings list")
  const body = raw as { data?: unknown; model?: unknown; usage?: { prompt_tokens?: unknown } }
  if (!Array.isArray(body.data)) return fail("the response has no data array")
  if (body.data.length !== count) {
    return fail(`the response has ${body.data.length} embeddings for ${count} input${count === 1 ? "" : "s"}`)
  }
  const vectors = new Array<ReadonlyArray<number>>(count)
  for (const entry of body.data as Array<{ index?: unknown; embedding?: unknown }>) {
    const index = entry?.index
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= count) {
      return fail(`an embedding has index ${JSON.stringify(index)} (expected 0..${count - 1})`)
    }
    if (vectors[index] !== undefined) return fail(`two embeddings have index ${index}`)
    const vector = decodeEmbedding(entry.embedding)
    if (vector === undefined) return fail(`embedding ${index} is neither base64 float32 nor a list of numbers`)
    if (vector.length !== dimensions) {
      return fail(
        `embedding ${index} has ${vector.length} dimensions, ${dimensions} are configured (embedding_dimensions)`
      )
    }
    if (!allFinite(vector)) return fail(`embedding ${index} contains a number that is not finite`)
    vectors[index] = vector
  }
  const tokens = body.usage?.prompt_tokens
  return {
    vectors,
    model: typeof body.model === "string" && body.model !== "" ? body.model : requestedModel,
    inputTokens: typeof tokens === "number" && Number.isFinite(tokens) ? tokens : 0
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
    const body = error.error as { message?: unknown } | undefined
    const detail = typeof body?.message === "string" ? body.message : error.message
    return httpAttemptFailure(error, detail)
  }
  return new AttemptFailed({ message: describeUnexpected(error), retryable: false })
}

export const makeOpenAiEmbeddings = (options: OpenAiEmbeddingsOptions): Context.Tag.Service<Embeddings> => {
  const provider = options.provider ?? "openai"
  const { model, dimensions } = options
  const client = new OpenAI({
    apiKey: Redacted.value(options.apiKey),
    baseURL: options.baseUrl,
    maxRetries: 0,
    timeout: options.timeoutMs
  })
  const sendDimensions = options.sendDimensions ?? acceptsDimensions(model)

  const embed = (texts: ReadonlyArray<string>): Effect.Effect<EmbeddingBatch, EmbeddingFailed> => {
    if (texts.length === 0) return Effect.succeed({ vectors: [], model, inputTokens: 0 })
    const body = {
      model,
      input: [...texts],
      encoding_format: "base64" as const,
      ...(sendDimensions ? { dimensions } : {})
    }
    return callWithRetries(
      async (signal) => {
        const raw: unknown = await client.embeddings.create(body, { signal })
        const batch = mapEmbeddingsResponse(raw, texts.length, dimensions, model)
        if (batch instanceof AttemptFailed) throw batch
        return batch
      },
      classify(options.timeoutMs),
      { ...options, provider, stage: "embed", model }
    ).pipe(
      Effect.mapError((failure) =>
        new EmbeddingFailed({ message: failure.message, retryable: failure.retryable ?? false })
      ),
      Effect.withSpan("Embeddings.embed", { attributes: { provider, model, texts: texts.length } })
    )
  }
  return Embeddings.of({ enabled: true, provider, model, dimensions, embed })
}

export const OpenAiEmbeddingsLive = (options: OpenAiEmbeddingsOptions): Layer.Layer<Embeddings> =>
  Layer.sync(Embeddings, () => makeOpenAiEmbeddings(options))

export interface DisabledEmbeddingsOptions {
  readonly model?: string
  readonly dimensions?: number
}

/** No provider configured: `enabled` is false and every call fails. */
export const DisabledEmbeddingsLive = (options: DisabledEmbeddingsOptions = {}): Layer.Layer<Embeddings> =>
  Layer.succeed(
    Embeddings,
    Embeddings.of({
      enabled: false,
      provider: "none",
      model: options.model ?? "",
      dimensions: options.dimensions ?? 0,
      embed: () => Effect.fail(new EmbeddingFailed({ message: "embeddings are not configured" }))
    })
  )
