import { Either, Schema } from "effect"
import { RememberSuccess } from "./Responses.js"
import type { RunWithStages } from "./Rows.js"
import { IMAGE_STAGES, RUN_STATUSES, TEXT_STAGES } from "./Stages.js"
import { UrlParams } from "./UrlParams.js"
import { Dataset, documented, IntegerIn, OneOf, optional, required, STRICT, UserId, withDefault } from "./Wire.js"

const RunStage = Schema.Struct({
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
  attempts: Schema.Number.annotations({
    description: "times a worker took the run (a crash of its process runs it again, up to remember.max_attempts)"
  }),
  response: Schema.optional(RememberSuccess).annotations({
    description: "once the run succeeded: the body the synchronous POST /v1/gb/remember answered"
  }),
  stages: Schema.Record({ key: Schema.String, value: RunStage })
}).annotations({ identifier: "RememberRun" })
export type RememberRun = typeof RememberRun.Type
type RunStageView = typeof RunStage.Type

const decodeResponse = Schema.decodeUnknownEither(RememberSuccess)

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
  // instance_id is the process that owns the run, error_tag what a repeated submission fails
  // with: internal bookkeeping, not part of the API
  const { error_tag: ___, instance_id: __, response, stages: _, ...row } = run
  const body = response === null ? undefined : Either.getOrUndefined(decodeResponse(response))
  return { ...row, ...(body === undefined ? {} : { response: body }), stages }
}

export const DEFAULT_RUNS_LIMIT = 20
export const MAX_RUNS_LIMIT = 100

/** `GET /v1/gb/runs`: a user's runs, newest first, paged by `before_id`. */
export const RunsParams = UrlParams(
  Schema.Struct({
    user_id: required(documented(UserId, "the user whose runs are listed")),
    dataset: optional(documented(Dataset, "only this dataset's runs")),
    status: optional(documented(OneOf(RUN_STATUSES), "only runs in this state")),
    limit: withDefault(
      documented(
        IntegerIn(1, MAX_RUNS_LIMIT),
        `at most this many runs, 1..${MAX_RUNS_LIMIT} (default ${DEFAULT_RUNS_LIMIT})`
      ),
      () => DEFAULT_RUNS_LIMIT
    ),
    before_id: optional(
      documented(
        IntegerIn(1, Number.MAX_SAFE_INTEGER),
        "only runs with a smaller id (the previous page's next_before_id)"
      )
    )
  }),
  { examples: [{ user_id: "alice", dataset: "main", status: "succeeded", limit: 20 }] }
)
export type RunsParams = typeof RunsParams.Type

export const RunsResponse = Schema.Struct({
  runs: Schema.Array(RememberRun),
  next_before_id: Schema.NullOr(Schema.Number).annotations({
    description: "the before_id of the next page; null on the last page"
  })
}).annotations({ identifier: "RunsResponse" })
export type RunsResponse = typeof RunsResponse.Type

/**
 * `POST /v1/gb/runs/{id}/cancel`: the user whose queued run is cancelled (another user's run is
 * a 404, as if it did not exist).
 */
export const CancelRunRequest = Schema.Struct({
  user_id: required(documented(UserId, "the user whose run it is"))
}).annotations({ ...STRICT, identifier: "CancelRunRequest", examples: [{ user_id: "alice" }] })
export type CancelRunRequest = typeof CancelRunRequest.Type

/** Every queued run of a user, or of one dataset of theirs (`gligabao runs cancel --queued`). */
export const CancelQueuedRequest = Schema.Struct({
  user_id: required(documented(UserId, "the user whose queued runs are cancelled")),
  dataset: optional(documented(Dataset, "only this dataset's runs (default: every dataset of the user)"))
}).annotations({ ...STRICT, identifier: "CancelQueuedRequest", examples: [{ user_id: "alice", dataset: "main" }] })
export type CancelQueuedRequest = typeof CancelQueuedRequest.Type

/** What a cancel of many runs did. */
export const CancelledRuns = Schema.Struct({
  cancelled: Schema.Array(Schema.Number).annotations({ description: "the runs cancelled: nothing of them is stored" }),
  started: Schema.Array(Schema.Number).annotations({
    description: "the runs already started: a started run is not interrupted, it finishes"
  })
}).annotations({ identifier: "CancelledRuns" })
export type CancelledRuns = typeof CancelledRuns.Type
