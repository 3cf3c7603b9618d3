/** InferencesRepo on SQL: gb_inferences and the models registered in gb_models. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { InferenceInput, InferenceRow, ModelRow } from "../../../src/domain/Rows.js"
import { InferencesRepo } from "../../../src/services/InferencesRepo.js"
import { SCRUBBED_ERROR } from "./Erase.js"

const INFERENCE_COLUMNS = `id, type, stage, provider, model, model_id, reasoning, input_tokens, output_tokens,
  cache_read_tokens, cache_write_tokens, web_search_requests, cost_usd, latency_ms, started_at, error,
  run_id, dataset_id, structured_mode`

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const findModel = (provider: string, name: string) =>
    sql<ModelRow>`SELECT id, provider, name, created_at FROM gb_models
      WHERE provider = ${provider} AND name = ${name}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

  // read first (a model is new once); a concurrent registration makes the insert a no-op
  const lookUpModel = (provider: string, name: string, now: string) =>
    Effect.gen(function*() {
      const found = yield* findModel(provider, name)
      if (Option.isSome(found)) return found.value
      const inserted = yield* sql<ModelRow>`INSERT INTO gb_models ${sql.insert({ provider, name, created_at: now })}
        ON CONFLICT (provider, name) DO NOTHING
        RETURNING id, provider, name, created_at`
      if (inserted[0] !== undefined) return inserted[0]
      return Option.getOrThrowWith(yield* findModel(provider, name), () => new Error(`model ${name} vanished`))
    })

  // A model row is never updated nor deleted, so once committed its id holds for this layer's
  // life: kept per instance, it spares a read per model call (issue 39). A row read inside a
  // transaction is not kept, since a rollback may take it away.
  const models = new Map<string, ModelRow>()
  const registerModel = (provider: string, name: string, now: string) =>
    Effect.suspend(() => {
      const key = `${provider}\u0000${name}`
      const known = models.get(key)
      if (known !== undefined) return Effect.succeed(known)
      return Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (tx) =>
        Effect.tap(lookUpModel(provider, name, now), (row) => {
          if (Option.isNone(tx)) {
            models.set(key, row)
          }
        }))
    }).pipe(Effect.orDie)

  const exists = (table: "gb_remember_runs" | "gb_datasets", id: number | null) =>
    id === null
      ? Effect.succeed(false)
      : Effect.map(sql<{ id: number }>`SELECT id FROM ${sql(table)} WHERE id = ${id}`, (rows) => rows.length > 0)

  const insert = (inference: InferenceInput, modelId: number) =>
    Effect.gen(function*() {
      const rows = yield* sql<InferenceRow>`INSERT INTO gb_inferences ${
        sql.insert({
          type: inference.type,
          stage: inference.stage,
          provider: inference.provider,
          model: inference.model,
          model_id: modelId,
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
          dataset_id: inference.dataset_id,
          structured_mode: inference.structured_mode ?? null
        })
      } RETURNING ${sql.literal(INFERENCE_COLUMNS)}`
      return rows[0]!
    })

  const record = (inference: InferenceInput): Effect.Effect<InferenceRow> =>
    Effect.gen(function*() {
      const model = yield* registerModel(inference.provider, inference.model, inference.started_at)
      return yield* insert(inference, model.id).pipe(
        // a forget removed the call's run or dataset while it ran: it is kept, for its cost, without them
        Effect.catchAll((error) =>
          Effect.gen(function*() {
            const run = yield* exists("gb_remember_runs", inference.run_id)
            const dataset = yield* exists("gb_datasets", inference.dataset_id)
            const cleared = {
              ...inference,
              run_id: run ? inference.run_id : null,
              dataset_id: dataset ? inference.dataset_id : null,
              // scrubbed as the forget scrubbed the others: it may quote the model's answer
              error: inference.error === null ? null : SCRUBBED_ERROR
            }
            if (cleared.run_id === inference.run_id && cleared.dataset_id === inference.dataset_id) {
              return yield* Effect.fail(error)
            }
            return yield* insert(cleared, model.id)
          })
        ),
        Effect.orDie
      )
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
