import { Context, type Effect, type Option } from "effect"
import type { RunRow, RunStageRow, RunWithStages } from "../domain/Rows.js"
import type { RunStatus, StageStatus } from "../domain/Stages.js"

export interface NewRun {
  readonly pipeline: "text" | "image"
  readonly user_id: string
  readonly dataset: string
  readonly params: Record<string, unknown>
  readonly queued_at: string
  /** the server process that owns the run (see `heartbeat`) */
  readonly instance_id: string
}

export interface RunFinish {
  readonly status: Exclude<RunStatus, "started">
  readonly error: string | null
  readonly dataset_id: number | null
  readonly artifact_id: number | null
  readonly finished_at: string
  readonly duration_ms: number
}

export interface StageFinish {
  readonly status: Exclude<StageStatus, "not_started" | "started">
  readonly finished_at: string
  readonly duration_ms: number
  readonly error: string | null
  readonly detail?: Record<string, unknown> | null | undefined
}

export interface RunFilter {
  readonly status?: RunStatus | undefined
  readonly dataset?: string | undefined
  readonly user_id?: string | undefined
  readonly limit: number
  readonly offset: number
}

export interface RunCounts {
  readonly total: number
  readonly started: number
  readonly succeeded: number
  readonly failed: number
}

/**
 * gb_remember_runs and its stages. A stage row exists once the stage started; stages without
 * a row are `not_started`. Infrastructure errors are defects.
 *
 * A stage start is written when it is reported. A stage's end and its inference ids may be
 * held and written with the run's next write (a stage start, progress, `finish`); `get` and
 * `list` show them, so nothing reported is ever missing from a read.
 */
export class RunLogRepo extends Context.Tag("gligabao/RunLogRepo")<
  RunLogRepo,
  {
    readonly create: (run: NewRun) => Effect.Effect<RunRow>
    readonly markStarted: (runId: number, at: string) => Effect.Effect<void>
    readonly stageStarted: (runId: number, stage: string, at: string) => Effect.Effect<void>
    readonly stageFinished: (runId: number, stage: string, finish: StageFinish) => Effect.Effect<void>
    readonly addInference: (runId: number, stage: string, inferenceId: number) => Effect.Effect<void>
    readonly setProgress: (
      runId: number,
      stage: string,
      progress: NonNullable<RunStageRow["progress"]>
    ) => Effect.Effect<void>
    readonly finish: (runId: number, finish: RunFinish) => Effect.Effect<void>
    readonly get: (runId: number) => Effect.Effect<Option.Option<RunWithStages>>
    readonly list: (
      filter: RunFilter
    ) => Effect.Effect<{ readonly runs: ReadonlyArray<RunWithStages>; readonly total: number }>
    readonly counts: () => Effect.Effect<RunCounts>
    /**
     * records that a server process is alive; processes beat every few seconds, so several
     * processes can share one PostgreSQL database and tell their own runs from a dead one's
     */
    readonly heartbeat: (instanceId: string, at: string) => Effect.Effect<void>
    /**
     * marks failed with `error` every run still `started` whose process is not `instanceId` and
     * whose last heartbeat is older than `staleBefore` (or missing): the runs of a dead process
     */
    readonly failOrphaned: (instanceId: string, staleBefore: string, error: string, at: string) => Effect.Effect<number>
    /** marks the given runs failed if they are still queued (never started) */
    readonly failQueued: (runIds: ReadonlyArray<number>, error: string, at: string) => Effect.Effect<void>
  }
>() {}
