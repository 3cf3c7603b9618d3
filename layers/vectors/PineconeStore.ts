/**
 * The managed VectorStore: one Pinecone index (given by its host, which skips the control
 * plane), one namespace per gligabao index: `${namespacePrefix}${index}`. The index must use
 * the cosine metric and the configured dimensions; gligabao does not create it.
 *
 * Retries are ours, not the SDK's: its own retry only covers 5xx and, once exhausted,
 * replaces the provider's status and message with "max retries exceeded". Its fetch is
 * wrapped so a non-2xx answer surfaces with its status and Pinecone's `{code, message}`.
 */
import { Pinecone, type PineconeRecord, type RecordMetadata } from "@pinecone-database/pinecone"
import { type Context, Duration, Effect, Layer, Redacted } from "effect"
import { VectorWriteFailed } from "../../src/domain/Errors.js"
import { type VectorItem, type VectorMatch, VectorStore } from "../../src/services/VectorStore.js"
import { AttemptFailed, isRetryableStatus, parseRetryAfter, retrySchedule, scrubSecret } from "../llm/retry.js"
import { bestMatches, checkItems, checkQuery, chunksOf, lastPerId, toMetadata } from "./common.js"

export interface PineconeStoreOptions {
  readonly apiKey: Redacted.Redacted<string>
  /** the index host; https:// is assumed when it has no scheme */
  readonly indexHost: string
  readonly namespacePrefix: string
  /** retries after the first attempt on 429, 5xx, connection errors and timeouts (default 3) */
  readonly maxRetries?: number | undefined
  readonly retryBaseDelayMs?: number | undefined
  /** per attempt (default 30s) */
  readonly timeoutMs?: number | undefined
}

const NAME = "pinecone"
/** Pinecone's limits: 1000 records and 2 MB per upsert, 1000 ids per delete, topK <= 10,000 */
export const MAX_UPSERT_RECORDS = 1000
/** below 2 MB, leaving room for the envelope around the records */
export const MAX_UPSERT_BYTES = 2 * 1024 * 1024 - 16 * 1024
export const MAX_DELETE_IDS = 1000
export const MAX_TOP_K = 10_000

export const namespaceFor = (prefix: string, index: string) => `${prefix}${index}`

/** Consecutive batches within both upsert limits (a record is measured as the JSON sent). */
export const upsertBatches = (records: ReadonlyArray<PineconeRecord>): ReadonlyArray<ReadonlyArray<PineconeRecord>> => {
  const batches: Array<Array<PineconeRecord>> = []
  let current: Array<PineconeRecord> = []
  let bytes = 0
  for (const record of records) {
    const size = Buffer.byteLength(JSON.stringify(record)) + 1
    if (current.length > 0 && (current.length === MAX_UPSERT_RECORDS || bytes + size > MAX_UPSERT_BYTES)) {
      batches.push(current)
      current = []
      bytes = 0
    }
    current.push(record)
    bytes += size
  }
  if (current.length > 0) batches.push(current)
  return batches
}

/** A non-2xx answer, thrown by our fetch. (Not `status`: the SDK would take it for its own retryable error.) */
class PineconeHttpFailure extends Error {
  constructor(
    readonly httpStatus: number,
    message: string,
    readonly retryAfterMs: number | undefined
  ) {
    super(message)
    this.name = "PineconeHttpFailure"
  }
}

const describeBody = (status: number, text: string): string => {
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown }
    if (typeof body.message === "string") {
      return `HTTP ${status} ${body.message}${body.code !== undefined ? ` (code ${String(body.code)})` : ""}`
    }
  } catch {
    // not JSON: the text itself says what went wrong
  }
  return `HTTP ${status}${text.trim() === "" ? "" : ` ${text.trim().slice(0, 500)}`}`
}

const failingFetch =
  (timeoutMs: number) => async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const timeout = AbortSignal.timeout(timeoutMs)
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout
    const response = await fetch(url, { ...init, signal })
    if (response.ok) return response
    const text = await response.text()
    throw new PineconeHttpFailure(
      response.status,
      describeBody(response.status, text),
      parseRetryAfter(response.headers)
    )
  }

/** Follows `cause` links (the SDK wraps what our fetch throws). */
const causes = (error: unknown): ReadonlyArray<unknown> => {
  const out: Array<unknown> = []
  let current: unknown = error
  while (current !== undefined && current !== null && out.length < 10) {
    out.push(current)
    current = (current as { cause?: unknown }).cause
  }
  return out
}

const classify = (timeoutMs: number) => (error: unknown): AttemptFailed => {
  const chain = causes(error)
  const http = chain.find((e): e is PineconeHttpFailure => e instanceof PineconeHttpFailure)
  if (http !== undefined) {
    return new AttemptFailed({
      message: http.message,
      status: http.httpStatus,
      retryable: isRetryableStatus(http.httpStatus),
      retryAfterMs: http.retryAfterMs
    })
  }
  if (chain.some((e) => e instanceof Error && e.name === "TimeoutError")) {
    return new AttemptFailed({ message: `timed out after ${timeoutMs}ms`, retryable: true })
  }
  const first = chain[0]
  if (first instanceof Error && first.name === "PineconeArgumentError") {
    return new AttemptFailed({ message: first.message, retryable: false })
  }
  // the innermost message names the network problem (ECONNREFUSED, ENOTFOUND, ...)
  const innermost = chain.at(-1)
  const detail = innermost instanceof Error ? `${innermost.name}: ${innermost.message}` : String(innermost)
  return new AttemptFailed({ message: `connection failed: ${detail}`, retryable: true })
}

export const makePineconeStore = (options: PineconeStoreOptions): Context.Tag.Service<VectorStore> => {
  const timeoutMs = options.timeoutMs ?? 30_000
  const retry = { maxRetries: options.maxRetries ?? 3, retryBaseDelayMs: options.retryBaseDelayMs, timeoutMs }
  const client = new Pinecone({
    apiKey: Redacted.value(options.apiKey),
    maxRetries: 0,
    fetchApi: failingFetch(timeoutMs)
  })
  const host = /^https?:\/\//.test(options.indexHost) ? options.indexHost : `https://${options.indexHost}`
  const index = client.index<RecordMetadata>({ host })

  /** One SDK call with retries; the last failure becomes VectorWriteFailed. */
  const call = <A>(operation: string, namespace: string, run: () => Promise<A>) =>
    Effect.suspend(() => {
      let attempts = 0
      const attempt = Effect.suspend(() => {
        attempts++
        return Effect.tryPromise({ try: run, catch: classify(timeoutMs) }).pipe(
          // a backstop: the fetch's own signal normally ends the attempt first
          Effect.timeoutFail({
            duration: Duration.millis(timeoutMs + 1_000),
            onTimeout: () => new AttemptFailed({ message: `timed out after ${timeoutMs}ms`, retryable: true })
          })
        )
      })
      return attempt.pipe(
        Effect.retry(retrySchedule(retry)),
        Effect.mapError(
          (failure) =>
            new VectorWriteFailed({
              message: `${NAME} ${operation} in namespace ${namespace} failed${
                attempts > 1 ? ` after ${attempts} attempts` : ""
              }: ${scrubSecret(failure.message, options.apiKey)}`
            })
        ),
        Effect.withSpan(`PineconeStore.${operation}`, { attributes: { namespace } })
      )
    })

  const toRecord = (item: VectorItem): PineconeRecord => ({
    id: item.id,
    values: [...item.values],
    metadata: { ...item.metadata }
  })

  return VectorStore.of({
    name: NAME,
    upsert: (name, items) =>
      Effect.suspend(() => {
        const invalid = checkItems(NAME, name, items, undefined)
        if (invalid !== undefined) return Effect.fail(invalid)
        const namespace = namespaceFor(options.namespacePrefix, name)
        return Effect.forEach(
          upsertBatches(lastPerId(items).map(toRecord)),
          (records) => call("upsert", namespace, () => index.upsert({ records: [...records], namespace })),
          { discard: true }
        )
      }),
    query: (name, vector, k, minScore) =>
      Effect.suspend(() => {
        const invalid = checkQuery(NAME, name, vector, undefined)
        if (invalid !== undefined) return Effect.fail(invalid)
        const topK = Math.min(MAX_TOP_K, Math.floor(k))
        if (!(topK > 0)) return Effect.succeed([])
        const namespace = namespaceFor(options.namespacePrefix, name)
        return call("query", namespace, () =>
          index.query({ namespace, vector: [...vector], topK, includeMetadata: true, includeValues: false })).pipe(
            Effect.map((response) =>
              bestMatches(
                response.matches.flatMap((match): Array<VectorMatch> =>
                  typeof match.score === "number"
                    ? [{ id: match.id, score: match.score, metadata: toMetadata(match.metadata) }]
                    : []
                ),
                topK,
                minScore
              )
            )
          )
      }),
    delete: (name, ids) =>
      Effect.suspend(() => {
        const namespace = namespaceFor(options.namespacePrefix, name)
        return Effect.forEach(
          chunksOf([...new Set(ids)], MAX_DELETE_IDS),
          (batch) => call("delete", namespace, () => index.deleteMany({ ids: [...batch], namespace })),
          { discard: true }
        )
      }),
    // what Pinecone keeps of deleted records is Pinecone's (docs/SECURITY.md)
    compact: Effect.void,
    // the index's statistics: reaches the index host with the key, reads no record
    health: call("describe_index_stats", "(all)", () => index.describeIndexStats()).pipe(
      Effect.as({ search: "pinecone" })
    )
  })
}

export const PineconeStoreLive = (options: PineconeStoreOptions): Layer.Layer<VectorStore> =>
  Layer.sync(VectorStore, () => makePineconeStore(options))
