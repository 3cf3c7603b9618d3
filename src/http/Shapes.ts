/** Field sets the contract's documented shapes share (remember and the read side). */
import { Schema } from "effect"

/** An edge as the remember response and the read side show it; null fields are omitted. */
export const edgeFields = {
  id: Schema.Number,
  source: Schema.String,
  source_id: Schema.Number,
  target: Schema.String,
  target_id: Schema.Number,
  relation: Schema.String,
  description: Schema.String,
  valid_at: Schema.String,
  invalid_at: Schema.optional(Schema.String),
  created_at: Schema.String,
  expired_at: Schema.optional(Schema.String),
  artifact_id: Schema.optional(Schema.Number),
  model_id: Schema.optional(Schema.Number)
}

const StageDoc = Schema.Struct({
  status: Schema.Literal("not_started", "started", "succeeded", "failed"),
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String),
  duration_ms: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  inference_ids: Schema.Array(Schema.Number),
  progress: Schema.optional(Schema.Struct({ chunks_done: Schema.Number, chunks_total: Schema.Number })),
  detail: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "RunStage" })

/** A remember run as the run log shows it (`GET /v1/gb/runs/{id}`, the admin API). */
export const RunDoc = Schema.Struct({
  id: Schema.Number,
  pipeline: Schema.Literal("text", "image"),
  user_id: Schema.String,
  dataset: Schema.String,
  dataset_id: Schema.NullOr(Schema.Number),
  artifact_id: Schema.NullOr(Schema.Number),
  status: Schema.Literal("started", "succeeded", "failed"),
  error: Schema.NullOr(Schema.String),
  params: Schema.Unknown,
  queued_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String),
  duration_ms: Schema.NullOr(Schema.Number),
  stages: Schema.Record({ key: Schema.String, value: StageDoc })
}).annotations({ identifier: "RememberRun" })
