import { Data, Duration, Effect, Redacted, Schedule } from "effect"
import { LlmFailed } from "../../src/domain/Errors.js"

/** One failed attempt at a provider call, classified for the retry policy. */
export class AttemptFailed extends Data.TaggedError("AttemptFailed")<{
  readonly message: string
  readonly status?: number | undefined
  readonly retryable: boolean
  /** the provider's `retry-after-ms` / `retry-after`, when it sent one */
  readonly retryAfterMs?: number | undefined
}> {}

/** Shorter keys (a placeholder such as "x" for a local server) are not searched for: they would mangle messages. */
const MIN_SCRUBBED_KEY_LENGTH = 8

/**
 * `text` with every occurrence of `key` replaced by `<redacted>`. A provider (or a proxy in
 * front of it) may echo the key it was sent in its error message, and that message goes into
 * errors, logs, run logs and trajectories.
 */
export const scrubSecret = (text: string, key: Redacted.Redacted<string> | undefined): string => {
  if (key === undefined) return text
  const value = Redacted.value(key)
  return value.length < MIN_SCRUBBED_KEY_LENGTH ? text : text.split(value).join("<redacted>")
}

/** The backoff ceiling (the official SDKs use the same). */
export const MAX_BACKOFF_MS = 8_000
/** A provider's retry-after is honoured up to this (the SDKs ignore longer ones too). */
export const MAX_RETRY_AFTER_MS = 60_000
export const DEFAULT_RETRY_BASE_DELAY_MS = 500

export interface RetryOptions {
  readonly maxRetries: number
  readonly retryBaseDelayMs?: number | undefined
  readonly timeoutMs: number
}

/** 429, every 5xx (529 overloaded included); connection errors and timeouts are classified by the caller. */
export const isRetryableStatus = (status: number): boolean => status === 429 || status >= 500

/** `retry-after-ms` (milliseconds) wins over `retry-after` (seconds or an HTTP date). */
export const parseRetryAfter = (headers: { get(name: string): string | null } | undefined): number | undefined => {
  if (headers === undefined) return undefined
  const ms = parseFloat(headers.get("retry-after-ms") ?? "")
  if (Number.isFinite(ms) && ms >= 0) return ms
  const raw = headers.get("retry-after")
  if (raw === null) return undefined
  const seconds = parseFloat(raw)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(raw)
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined
}

/**
 * Exponential backoff (jittered) from the base delay capped at 8s; a provider's
 * retry-after replaces the backoff, capped at 60s. Stops on a non-retryable failure.
 */
/** An HTTP error answer of a provider SDK, as an attempt failure (retryable on 429 and 5xx). */
export const httpAttemptFailure = (error: {
  readonly status: number
  readonly requestID?: string | null | undefined
  readonly headers?: { get(name: string): string | null } | undefined
}, detail: string): AttemptFailed =>
  new AttemptFailed({
    message: `HTTP ${error.status} ${detail}${error.requestID ? ` (request-id ${error.requestID})` : ""}`,
    status: error.status,
    retryable: isRetryableStatus(error.status),
    retryAfterMs: parseRetryAfter(error.headers)
  })

export const retrySchedule = (options: RetryOptions) =>
  Schedule.intersect(
    Schedule.identity<AttemptFailed>(),
    Schedule.exponential(Duration.millis(options.retryBaseDelayMs ?? DEFAULT_RETRY_BASE_DELAY_MS)).pipe(
      Schedule.jittered
    )
  ).pipe(
    Schedule.modifyDelay(([failure], backoff) =>
      failure.retryAfterMs !== undefined
        ? Duration.millis(Math.min(failure.retryAfterMs, MAX_RETRY_AFTER_MS))
        : Duration.min(backoff, Duration.millis(MAX_BACKOFF_MS))
    ),
    Schedule.intersect(Schedule.recurs(Math.max(0, options.maxRetries))),
    Schedule.whileInput((failure: AttemptFailed) => failure.retryable)
  )

/**
 * One attempt: `call` with a signal aborted at the attempt's deadline or when the fiber is
 * interrupted; past the deadline the attempt fails at once, "timed out", retryable. The deadline
 * is a timer of the event loop rather than Effect.timeoutFail, whose race forks two fibers an
 * attempt, a third of a remember's (BENCHMARKS.md, the CPU budget).
 */
export const attemptWithDeadline = <A>(
  call: (signal: AbortSignal) => Promise<A>,
  classify: (error: unknown) => AttemptFailed,
  timeoutMs: number
): Effect.Effect<A, AttemptFailed> =>
  Effect.async<A, AttemptFailed>((resume) => {
    const controller = new AbortController()
    let settled = false
    const settle = (outcome: Effect.Effect<A, AttemptFailed>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(outcome)
    }
    const timer = setTimeout(() => {
      settle(Effect.fail(new AttemptFailed({ message: `timed out after ${timeoutMs}ms`, retryable: true })))
      controller.abort()
    }, timeoutMs)
    try {
      call(controller.signal).then(
        (value) => settle(Effect.succeed(value)),
        (error: unknown) => settle(Effect.fail(classify(error)))
      )
    } catch (error) {
      settle(Effect.fail(classify(error)))
    }
    // interrupted: the request is cancelled, and what it answers later goes nowhere
    return Effect.sync(() => {
      settled = true
      clearTimeout(timer)
      controller.abort()
    })
  })

/**
 * Runs one provider call with a per-attempt timeout and the retry policy; the final
 * failure becomes `LlmFailed` naming the provider, stage, model, status and attempts.
 * `call` gets an AbortSignal so a timed-out or interrupted attempt cancels its request.
 */
export const callWithRetries = <A>(
  call: (signal: AbortSignal) => Promise<A>,
  classify: (error: unknown) => AttemptFailed,
  options: RetryOptions & {
    readonly provider: string
    readonly stage: string
    readonly model: string
    /** scrubbed from the failure's message (see scrubSecret) */
    readonly apiKey?: Redacted.Redacted<string> | undefined
  }
): Effect.Effect<A, LlmFailed> =>
  Effect.suspend(() => {
    let attempts = 0
    const attempt = Effect.suspend(() => {
      attempts++
      return attemptWithDeadline(call, classify, options.timeoutMs)
    })
    return attempt.pipe(
      Effect.retry(retrySchedule(options)),
      Effect.mapError(
        (failure) =>
          new LlmFailed({
            message: `${options.provider} call for ${options.stage} (model ${options.model}) failed${
              attempts > 1 ? ` after ${attempts} attempts` : ""
            }: ${scrubSecret(failure.message, options.apiKey)}`,
            stage: options.stage,
            retryable: failure.retryable,
            ...(failure.status !== undefined ? { status: failure.status } : {})
          })
      )
    )
  })

/** The message of an error that is not the SDK's APIError (bad JSON, a bug, ...). */
export const describeUnexpected = (error: unknown): string =>
  error instanceof SyntaxError
    ? `the provider's response is not valid JSON (${error.message})`
    : error instanceof Error
    ? `${error.name}: ${error.message}`
    : String(error)
