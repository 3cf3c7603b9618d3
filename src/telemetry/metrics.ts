/**
 * gligabao's metrics, all in Effect's global registry: `GET /metrics` renders them and the OTLP
 * exporter (when configured) sends them. Each one is updated at the single place its fact is
 * established, so the figures are the recorded ones: a run's final status where the run log
 * row is finished, a model call's tokens and cost from its gb_inferences row.
 */
import { Effect, Metric, MetricBoundaries } from "effect"
import type { InferenceRow } from "../domain/Rows.js"

export const remembersTotal = Metric.counter("gligabao_remembers_total", {
  description: "Remember runs finished, by final status (succeeded, failed, cancelled)"
})

/** 5 ms to about 11 minutes: a store takes milliseconds, a long extraction minutes */
export const stageDuration = Metric.histogram(
  "gligabao_stage_duration_seconds",
  MetricBoundaries.exponential({ start: 0.005, factor: 2, count: 18 }),
  "Duration of one execution of a remember stage (per chunk when the text is chunked)"
)

export const modelCallsTotal = Metric.counter("gligabao_model_calls_total", {
  description: "Model calls (LLM and embeddings), by model, stage and status (ok, error)"
})

export const modelTokensTotal = Metric.counter("gligabao_model_tokens_total", {
  description: "Tokens of model calls, by model, stage and type (input, output, cache_read, cache_write)"
})

export const modelCostUsdTotal = Metric.counter("gligabao_model_cost_usd_total", {
  description: "Cost of model calls in USD as recorded in gb_inferences, by model and stage"
})

export const queueDepth = Metric.gauge("gligabao_remember_queue_depth", {
  description: "Remember runs of this process not finished, by state (queued: waiting their turn, running)"
})

export const rememberFinished = (status: "succeeded" | "failed" | "cancelled", runs = 1): Effect.Effect<void> =>
  runs === 0 ? Effect.void : Metric.incrementBy(Metric.tagged(remembersTotal, "status", status), runs)

export const stageFinished = (stage: string, durationMs: number): Effect.Effect<void> =>
  Metric.update(Metric.tagged(stageDuration, "stage", stage), durationMs / 1000)

/** The figures of a recorded model call, exactly as its row holds them. */
export const modelCallRecorded = (row: InferenceRow): Effect.Effect<void> => {
  const tagged = <T, I, O>(metric: Metric.Metric<T, I, O>) =>
    metric.pipe(Metric.tagged("model", row.model), Metric.tagged("stage", row.stage))
  const tokens = (type: string, n: number) =>
    n === 0 ? Effect.void : Metric.incrementBy(Metric.tagged(tagged(modelTokensTotal), "type", type), n)
  return Effect.all([
    Metric.increment(Metric.tagged(tagged(modelCallsTotal), "status", row.error === null ? "ok" : "error")),
    tokens("input", row.input_tokens),
    tokens("output", row.output_tokens),
    tokens("cache_read", row.cache_read_tokens),
    tokens("cache_write", row.cache_write_tokens),
    Metric.incrementBy(tagged(modelCostUsdTotal), row.cost_usd)
  ], { discard: true })
}

export const setQueueDepth = (queued: number, running: number): Effect.Effect<void> =>
  Effect.all([
    Metric.set(Metric.tagged(queueDepth, "state", "queued"), queued),
    Metric.set(Metric.tagged(queueDepth, "state", "running"), running)
  ], { discard: true })
