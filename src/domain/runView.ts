import { Schema } from "effect"
import type { RunWithStages } from "./Rows.js"
import { IMAGE_STAGES, RUN_STATUSES, TEXT_STAGES } from "./Stages.js"

const RunStage = Schema.Struct({
  status: Schema.Literal("not_started", ...RUN_STATUSES),
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String),
  duration_ms: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  inference_ids: Schema.Array(Schema.Number),
  progress: Schema.optional(Schema.Struct({ chunks_done: Schema.Number, chunks_total: Schema.Number })),
  detail: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "RunStage" })

/** A remember run as the run log shows it (`GET /v1/gb/runs/{id}`, the admin API). */
export const RememberRun = Schema.Struct({
  id: Schema.Number,
  pipeline: Schema.Literal("text", "image"),
  user_id: Schema.String,
  dataset: Schema.String,
  dataset_id: Schema.NullOr(Schema.Number),
  artifact_id: Schema.NullOr(Schema.Number),
  status: Schema.Literal(...RUN_STATUSES),
  error: Schema.NullOr(Schema.String),
  params: Schema.Unknown,
  queued_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String),
  duration_ms: Schema.NullOr(Schema.Number),
  stages: Schema.Record({ key: Schema.String, value: RunStage })
}).annotations({ identifier: "RememberRun" })
export type RememberRun = typeof RememberRun.Type
type RunStageView = typeof RunStage.Type

const NOT_STARTED: RunStageView = {
  status: "not_started",
  started_at: null,
  finished_at: null,
  duration_ms: null,
  error: null,
  inference_ids: []
}

/** A run as the API shows it: every stage of its pipeline keyed by name, in pipeline order. */
export const runView = (run: RunWithStages): RememberRun => {
  const names: ReadonlyArray<string> = run.pipeline === "image" ? IMAGE_STAGES : TEXT_STAGES
  const byName = new Map(run.stages.map((s) => [s.stage, s]))
  const stages: Record<string, RunStageView> = {}
  for (const name of names) {
    const s = byName.get(name)
    stages[name] = s === undefined ? NOT_STARTED : {
      status: s.status,
      started_at: s.started_at,
      finished_at: s.finished_at,
      duration_ms: s.duration_ms,
      error: s.error,
      inference_ids: s.inference_ids,
      ...(s.progress === null ? {} : { progress: s.progress }),
      ...(s.detail === null ? {} : { detail: s.detail })
    }
  }
  // instance_id is the process that owns the run: internal bookkeeping, not part of the API
  const { stages: _, instance_id: __, ...row } = run
  return { ...row, stages }
}
