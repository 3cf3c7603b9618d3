/**
 * Jev, TypeSafe's system 1 model, as the ComplexityClassifier (spec/contracts.md section 14):
 * `POST {url}/v1/systemone` with a Bearer key and one choice question about the text. One
 * attempt with a short timeout and no retries: the answer is advisory, and a slow classifier
 * must not hold up the remember it precedes.
 */
import { Clock, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { describeParseError } from "../../src/kernel/json.js"
import {
  ClassifierFailed,
  type Complexity,
  ComplexityClassifier,
  type ComplexityResult
} from "../../src/services/ComplexityClassifier.js"
import { scrubSecret } from "../llm/retry.js"

export interface JevClassifierOptions {
  /** without the path, e.g. https://api.typesafe.ai */
  readonly url: string
  readonly apiKey: Redacted.Redacted<string>
  readonly timeoutMs?: number | undefined
}

export const JEV_DEFAULT_TIMEOUT_MS = 10_000

export const JEV_CHOICES: ReadonlyArray<Complexity> = ["simple", "medium", "complex"]

export const JEV_QUESTION = "How many entities will a knowledge-graph extraction yield from this text? " +
  "simple: up to 5 entities; medium: 6 to 20; complex: more than 20."

const Answer = Schema.Struct({
  choice: Schema.Literal(...JEV_CHOICES),
  confidence: Schema.Number.pipe(Schema.between(0, 1)),
  probabilities: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Number }))
})

const endpoint = (url: string) => `${url.replace(/\/+$/, "")}/v1/systemone`

/** Jev's own error text when it sent one (`{"error": "..."}` or `{"error": {"message": "..."}}`), else the body's start. */
const errorText = (body: string): string => {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown }
    const e = parsed.error
    if (typeof e === "string") return e
    if (typeof e === "object" && e !== null && typeof (e as { message?: unknown }).message === "string") {
      return (e as { message: string }).message
    }
    if (typeof parsed.message === "string") return parsed.message
  } catch {
    // not JSON: the raw text below
  }
  return body.slice(0, 200)
}

export const makeJevClassifier = (options: JevClassifierOptions): ComplexityClassifier["Type"] => {
  const timeoutMs = options.timeoutMs ?? JEV_DEFAULT_TIMEOUT_MS
  const url = endpoint(options.url)
  const classify = (text: string) =>
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      const response = yield* Effect.tryPromise({
        try: (signal) =>
          fetch(url, {
            method: "POST",
            signal,
            headers: {
              authorization: `Bearer ${Redacted.value(options.apiKey)}`,
              "content-type": "application/json",
              accept: "application/json"
            },
            body: JSON.stringify({ question: JEV_QUESTION, choices: JEV_CHOICES, input: text })
          }).then(async (res) => ({ status: res.status, body: await res.text() })),
        catch: (e) =>
          new ClassifierFailed({
            message: `jev: request failed: ${scrubSecret(e instanceof Error ? e.message : String(e), options.apiKey)}`
          })
      }).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(timeoutMs),
          onTimeout: () => new ClassifierFailed({ message: `jev: timed out after ${timeoutMs}ms` })
        })
      )
      const latency_ms = (yield* Clock.currentTimeMillis) - started
      if (response.status < 200 || response.status >= 300) {
        // Jev's text is untrusted: it may echo the key it was sent
        return yield* new ClassifierFailed({
          message: `jev: HTTP ${response.status}: ${scrubSecret(errorText(response.body), options.apiKey)}`
        })
      }
      const json = yield* Effect.try({
        try: () => JSON.parse(response.body) as unknown,
        catch: () => new ClassifierFailed({ message: "jev: the answer is not JSON" })
      })
      const answer = yield* Schema.decodeUnknown(Answer)(json).pipe(
        Effect.mapError((e) => new ClassifierFailed({ message: `jev: unusable answer: ${describeParseError(e)}` }))
      )
      return Option.some<ComplexityResult>({
        complexity: answer.choice,
        confidence: answer.confidence,
        probabilities: answer.probabilities ?? {},
        latency_ms
      })
    }).pipe(Effect.withSpan("ComplexityClassifier.classify", { attributes: { provider: "jev" } }))
  return ComplexityClassifier.of({ enabled: true, classify })
}

/** The Jev classifier: classify_complexity runs on every remembered text. */
export const JevClassifierLive = (options: JevClassifierOptions): Layer.Layer<ComplexityClassifier> =>
  Layer.sync(ComplexityClassifier, () => makeJevClassifier(options))
