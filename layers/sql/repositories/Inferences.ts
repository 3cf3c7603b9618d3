/** InferencesRepo on SQL: gb_inferences and the models registered in gb_models. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { InferenceInput, InferenceRow, ModelRow } from "../../../src/domain/Rows.js"
import { InferencesRepo } from "../../../src/services/InferencesRepo.js"

const INFERENCE_COLUMNS = `id, type, stage, provider, model, model_id, reasoning, input_tokens, output_tokens,
  cache_read_tokens, cache_write_tokens, web_search_requests, cost_usd, latency_ms, started_at, error,
  run_id, dataset_id`

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const findModel = (provider: string, name: string) =>
    sql<ModelRow>`SELECT id, provider, name, created_at FROM gb_models
      WHERE provider = ${provider} AND name = ${name}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

  // read first (a model is new once); a concurrent registration makes the insert a no-op
  const registerModel = (provider: string, name: string, now: string) =>
    Effect.gen(function*() {
      const found = yield* findModel(provider, name)
      if (Option.isSome(found)) return found.value
      const inserted = yield* sql<ModelRow>`INSERT INTO gb_models ${sql.insert({ provider, name, created_at: now })}
        ON CONFLICT (provider, name) DO NOTHING
        RETURNING id, provider, name, created_at`
      if (inserted[0] !== undefined) return inserted[0]
      return Option.getOrThrowWith(yield* findModel(provider, name), () => new Error(`model ${name} vanished`))
    }).pipe(Effect.orDie)

  const record = (inference: InferenceInput) =>
    Effect.gen(function*() {
      const model = yield* registerModel(inference.provider, inference.model, inference.started_at)
      const rows = yield* sql<InferenceRow>`INSERT INTO gb_inferences ${
        sql.insert({
          type: inference.type,
          stage: inference.stage,
          provider: inference.provider,
          model: inference.model,
          model_id: model.id,
          reasoning: inference.reasoning,
          input_tokens: inference.input_tokens,
          output_tokens: inference.output_tokens,
          cache_read_tokens: inference.cache_read_tokens,
          cache_write_tokens: inference.cache_write_tokens,
          web_search_requests: inference.web_search_requests,
          cost_usd: inference.cost_usd,
          // integer column on both dialects; PostgreSQL would reject a fraction
          latency_ms: Math.round(inference.latency_ms),
          started_at: inference.started_at,
          error: inference.error,
          run_id: inference.run_id,
          dataset_id: inference.dataset_id
        })
      } RETURNING ${sql.literal(INFERENCE_COLUMNS)}`.pipe(Effect.orDie)
      return rows[0]!
    })

  const listByRun = (runId: number) =>
    sql<InferenceRow>`SELECT ${sql.literal(INFERENCE_COLUMNS)} FROM gb_inferences
      WHERE run_id = ${runId} ORDER BY id`.pipe(Effect.orDie)

  return InferencesRepo.of({ registerModel, record, listByRun })
})

export const InferencesRepoLive: Layer.Layer<InferencesRepo, never, SqlClient.SqlClient> = Layer.effect(
  InferencesRepo,
  make
)
