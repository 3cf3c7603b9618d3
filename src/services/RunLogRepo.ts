import { Context, Data, type Effect, type Either, type Option } from "effect"
import { NotFound } from "../domain/Errors.js"
import type { RunRow, RunStageRow, RunWithStages } from "../domain/Rows.js"
import type { CancelledRuns } from "../domain/runView.js"
import type { RunStatus, StageStatus } from "../domain/Stages.js"

/**
 * The defect of a store whose run a forget of its user or dataset removed (`committed`,
 * `chunkStored`): the transaction rolls back, and the run ends as `notFound` says.
 */
export class RunRemoved extends Data.TaggedError("RunRemoved")<{ readonly runId: number }> {
  get notFound(): NotFound {
    return runRemoved(this.runId)
  }
}

/** What a run a forget removed answers (a 404): nothing of it is stored. */
export const runRemoved = (runId: number): NotFound =>
  new NotFound({
    message: `remember run ${runId} was removed: its user or dataset was forgotten before it was stored`
  })

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
  readonly status: Exclude<RunStatus, "started" | "queued" | "cancelled">
  readonly error: string | null
  readonly dataset_id: number | null
  readonly artifact_id: number | null
  readonly finished_at: string
  readonly duration_ms: number
  /** a succeeded run's response body (stored as JSON) */
  readonly response?: unknown
  /** a failed run's domain error tag */
  readonly error_tag?: string | null | undefined
}

/** An Idempotency-Key of a submission: `hash` is the sha256 of its canonical encoded request. */
export interface IdempotencyClaim {
  readonly key: string
  readonly hash: string
  /** a stored key created before this has expired and is given to the new submission */
  readonly expiredBefore: string
}

/** What `enqueue` did: a new queued run, or the run an Idempotency-Key already names. */
export type Enqueued =
  | { readonly _tag: "Created"; readonly run: RunRow }
  | { readonly _tag: "Existing"; readonly runId: number; readonly sameRequest: boolean }

/** What the sweep did with a run of a dead process. */
export interface RecoveredRuns {
  /** queued again, each with its encoded request, in submission order */
  readonly requeued: ReadonlyArray<{ readonly id: number; readonly request: string }>
  /** failed for good: nothing to run again (stored already) or max_attempts reached */
  readonly failed: number
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
  /** only runs with a smaller id (paging newest first) */
  readonly before_id?: number | undefined
  /** newest first by queue time (default) or by id (what `before_id` pages on) */
  readonly order?: "queued_at" | "id" | undefined
}

export interface RunCounts {
  readonly total: number
  readonly queued: number
  readonly started: number
  readonly succeeded: number
  readonly failed: number
  readonly cancelled: number
}

/** What a cancel of one run did: cancelled it now, or found it in another status, or found no run of the user. */
export type CancelOutcome =
  | { readonly _tag: "Cancelled"; readonly run: RunRow }
  | { readonly _tag: "NotQueued"; readonly run: RunRow }
  | { readonly _tag: "Missing" }

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
    /** a run row as already started (status `started`); the manager uses `enqueue` */
    readonly create: (run: NewRun) => Effect.Effect<RunRow>
    /**
     * writes a `queued` run with its whole encoded request in the durable queue, in one
     * transaction; with an Idempotency-Key, a live key of the user names its run instead
     * (the UNIQUE (user_id, key) makes two concurrent submissions one run)
     */
    readonly enqueue: (
      run: NewRun,
      request: string,
      idempotency: IdempotencyClaim | undefined
    ) => Effect.Effect<Enqueued>
    /**
     * `enqueue` for many runs in one transaction, in order: the Right has each one's outcome;
     * the Left is the index of the first whose Idempotency-Key names another request (then
     * nothing is written)
     */
    readonly enqueueMany: (
      runs: ReadonlyArray<{
        readonly run: NewRun
        readonly request: string
        readonly idempotency: IdempotencyClaim | undefined
      }>
    ) => Effect.Effect<Either.Either<ReadonlyArray<Enqueued>, number>>
    /**
     * a worker takes a queued run: `started`, attempts + 1, owned by `instanceId`; its encoded
     * request (read unless `withRequest` is false: the process that queued it holds it), or None when
     * the run is not queued (taken by another process, or finished)
     */
    readonly take: (
      runId: number,
      instanceId: string,
      at: string,
      withRequest?: boolean
    ) => Effect.Effect<Option.Option<{ readonly request: string | null; readonly attempts: number }>>
    /**
     * the run's artifact is stored: its request leaves the queue (called inside the store
     * transaction, so a crash after it never stores the artifact twice). Dies when the run's
     * row is gone (a forget of its user or dataset removed it), which rolls the store back: a
     * forgotten run never stores anything.
     */
    readonly committed: (runId: number) => Effect.Effect<void>
    /**
     * whether the run's row is still there (false once a forget of its user or dataset removed
     * it; what the run held unwritten is then dropped)
     */
    readonly exists: (runId: number) => Effect.Effect<boolean>
    /**
     * takes over the `queued` and `started` runs of dead processes (as `failOrphaned` finds
     * them): a run whose request is still queued and has had fewer than `maxAttempts` attempts
     * is queued again for `instanceId`; any other is failed with `error`
     */
    readonly recoverOrphaned: (
      instanceId: string,
      staleBefore: string,
      maxAttempts: number,
      error: string,
      at: string
    ) => Effect.Effect<RecoveredRuns>
    /**
     * whether a run of the dataset submitted before `runId` is still queued or started (in any
     * process): a run applies only once none is, so the order holds across processes
     */
    readonly earlierUnfinished: (userId: string, dataset: string, runId: number) => Effect.Effect<boolean>
    /**
     * a started run that failed on a transient cause is queued again for another attempt, when
     * nothing of it is stored yet (its request is still in the queue); its running stages end
     * failed with `error`. False when it cannot be (something was stored).
     */
    readonly requeue: (runId: number, error: string, at: string) => Effect.Effect<boolean>
    /**
     * a chunked text's chunk is stored (called inside its store transaction): the queue keeps
     * the document and the count, and the run's request until its last chunk is stored. Dies,
     * as `committed`, when the run's row is gone.
     */
    readonly chunkStored: (runId: number, documentId: number, storedChunks: number) => Effect.Effect<void>
    /** where a chunked text's run goes on: its document and the chunks already stored (None: from the start) */
    readonly storedChunks: (
      runId: number
    ) => Effect.Effect<Option.Option<{ readonly documentId: number; readonly storedChunks: number }>>
    /** removes the Idempotency-Keys created before `before`; how many */
    readonly purgeIdempotencyKeys: (before: string) => Effect.Effect<number>
    /** a process that stops: its beats end now, so another takes over its queued runs at once */
    readonly leave: (instanceId: string) => Effect.Effect<void>
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
    /**
     * cancels the user's run if it is still `queued`, in one statement that a worker's `take`
     * races in the database: `cancelled`, finished at `at`, its request out of the queue and its
     * Idempotency-Key released (a later submission with the key is a new run)
     */
    readonly cancel: (runId: number, userId: string, at: string) => Effect.Effect<CancelOutcome>
    /** `cancel` for every queued run of the user (in the dataset, when given) */
    readonly cancelQueued: (userId: string, dataset: string | undefined, at: string) => Effect.Effect<CancelledRuns>
    /** which of these runs are `cancelled` (a process holding them queued answers their waiters) */
    readonly cancelledAmong: (runIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<number>>
  }
>() {}
