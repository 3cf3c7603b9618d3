/**
 * The remember manager (spec/contracts.md section 19): every remember run goes through it.
 *
 * - The run-log row is written when the run is queued, so a queued run can be watched.
 * - A run holds its (user, dataset) lock for the whole pipeline, so reconciliation within a
 *   dataset is serial and deterministic; on PostgreSQL the lock is an advisory lock, so several
 *   processes on one database stay correct. The lock is taken before a global permit so a run
 *   waiting for a busy dataset never sits on one of the `concurrency` permits.
 * - Runs are forked into the manager's scope: a client that disconnects does not cancel its run.
 * - At startup, runs left `started` by a dead process are failed (`interrupted`); at shutdown,
 *   queued runs are failed and in-flight runs get a grace period to finish.
 */
import {
  Cause,
  Clock,
  Context,
  Deferred,
  Duration,
  Effect,
  Either,
  Exit,
  FiberSet,
  Layer,
  Option,
  Schedule
} from "effect"
import { InternalFailure, type RememberError } from "../domain/Errors.js"
import { type RememberRequest, runParams } from "../domain/Remember.js"
import { decodeRememberBody, type RememberResult } from "../domain/Responses.js"
import { toIso } from "../domain/time.js"
import { Database } from "../services/Database.js"
import { RememberPipeline } from "../services/RememberPipeline.js"
import { RunLogRepo } from "../services/RunLogRepo.js"
import type { RunObserver } from "../services/RunObserver.js"

export interface RememberManagerOptions {
  /** global permits: how many runs execute at once across datasets */
  readonly concurrency: number
  /** this process's id in the run log (heartbeats tell live processes from dead ones) */
  readonly instanceId: string
  /** how long in-flight runs may take to finish at shutdown before they are interrupted */
  readonly shutdownGrace?: Duration.DurationInput
  readonly heartbeatEvery?: Duration.DurationInput
}

export interface RunOptions {
  /** hears the run's stage and model-call reports (eval mode); the run log notes `eval: true` */
  readonly observer?: RunObserver | undefined
}

export interface SubmittedRun {
  readonly runId: number
  /** waits for the run's outcome; interrupting the wait does not interrupt the run */
  readonly await: Effect.Effect<RememberResult, RememberError>
}

export class RememberManager extends Context.Tag("gligabao/RememberManager")<
  RememberManager,
  {
    /** queues a run (its row is written now) and returns without waiting for it */
    readonly enqueue: (request: RememberRequest, options?: RunOptions) => Effect.Effect<SubmittedRun>
    /** queues a run and waits for its outcome */
    readonly submit: (
      request: RememberRequest,
      options?: RunOptions
    ) => Effect.Effect<RememberResult, RememberError>
  }
>() {}

const lockKey = (request: RememberRequest): string => `remember\u0000${request.user_id}\u0000${request.dataset}`

const nowIso = Clock.currentTimeMillis.pipe(Effect.map(toIso))

const describeCause = (cause: Cause.Cause<unknown>): string =>
  Cause.isInterruptedOnly(cause) ? "interrupted" : `internal error: ${Cause.pretty(cause).split("\n")[0]}`

export const makeRememberManager = (options: RememberManagerOptions) =>
  Effect.gen(function*() {
    const runLog = yield* RunLogRepo
    const database = yield* Database
    const pipeline = yield* RememberPipeline
    const permits = yield* Effect.makeSemaphore(Math.max(1, options.concurrency))
    const runs = yield* FiberSet.make<unknown, unknown>()
    /** runs queued but not yet started, so shutdown can fail them */
    const queued = new Set<number>()
    let closing = false

    const heartbeat = nowIso.pipe(Effect.flatMap((at) => runLog.heartbeat(options.instanceId, at)))
    yield* heartbeat
    // A process that has not beaten for three periods is dead; its started runs are orphans.
    // Swept at startup and after every beat: a process restarted right after a crash sees the
    // dead one as alive at first, and must still fail its runs once its beats are stale.
    const every = Duration.decode(options.heartbeatEvery ?? "5 seconds")
    const sweepOrphans = Effect.gen(function*() {
      const staleBefore = toIso((yield* Clock.currentTimeMillis) - Duration.toMillis(every) * 3)
      const orphans = yield* runLog.failOrphaned(options.instanceId, staleBefore, "interrupted", yield* nowIso)
      if (orphans > 0) yield* Effect.logWarning("marked runs of a dead process as failed", { runs: orphans })
    })
    yield* sweepOrphans
    yield* Effect.zipRight(heartbeat, sweepOrphans).pipe(
      Effect.catchAllDefect((defect) => Effect.logWarning("heartbeat failed", defect)),
      Effect.repeat(Schedule.spaced(every)),
      Effect.forkScoped
    )

    const execute = (runId: number, request: RememberRequest, startedMs: number, observer: RunObserver | undefined) =>
      Effect.gen(function*() {
        queued.delete(runId)
        if (closing) return yield* Effect.interrupt
        yield* runLog.markStarted(runId, toIso(yield* Clock.currentTimeMillis))
        return yield* pipeline.run(runId, request, observer)
      }).pipe(
        permits.withPermits(1),
        database.withLock(lockKey(request)),
        Effect.onExit((exit) =>
          Effect.gen(function*() {
            queued.delete(runId)
            const finishedMs = yield* Clock.currentTimeMillis
            const base = { finished_at: toIso(finishedMs), duration_ms: finishedMs - startedMs }
            if (Exit.isSuccess(exit)) {
              yield* runLog.finish(runId, {
                ...base,
                status: "succeeded",
                error: null,
                dataset_id: exit.value.dataset_id,
                artifact_id: exit.value.artifact_id
              })
            } else {
              const failure = Cause.failureOption(exit.cause)
              const error = Option.isSome(failure) ? failure.value.message : describeCause(exit.cause)
              // a failure after commit (a vector write) still names what was stored
              const stored = Option.isSome(failure) && failure.value._tag === "VectorWriteFailed"
                ? failure.value
                : undefined
              yield* runLog.finish(runId, {
                ...base,
                status: "failed",
                error,
                dataset_id: stored?.dataset_id ?? null,
                artifact_id: stored?.artifact_id ?? null
              })
            }
          }).pipe(Effect.catchAllDefect((defect) => Effect.logError("could not finish run log row", { runId, defect })))
        ),
        Effect.annotateLogs({ runId })
      )

    const enqueue = (request: RememberRequest, runOptions: RunOptions = {}): Effect.Effect<SubmittedRun> =>
      Effect.gen(function*() {
        const queuedMs = yield* Clock.currentTimeMillis
        const row = yield* runLog.create({
          pipeline: request.image === undefined ? "text" : "image",
          user_id: request.user_id,
          dataset: request.dataset,
          params: runOptions.observer === undefined ? runParams(request) : { ...runParams(request), eval: true },
          queued_at: toIso(queuedMs),
          instance_id: options.instanceId
        })
        queued.add(row.id)
        const done = yield* Deferred.make<RememberResult, RememberError>()
        yield* execute(row.id, request, queuedMs, runOptions.observer).pipe(
          // the response as the contract types it; one that does not match is a bug of ours (a 500)
          Effect.flatMap((outcome) =>
            Either.match(decodeRememberBody(outcome.response), {
              onLeft: (problem) =>
                Effect.dieMessage(`the response of run ${row.id} does not match its schema: ${problem}`),
              onRight: (response): Effect.Effect<RememberResult> =>
                Effect.succeed({
                  runId: row.id,
                  response,
                  dataset_id: outcome.dataset_id,
                  artifact_id: outcome.artifact_id
                })
            })
          ),
          // A defect becomes a 500 whose message names no stack trace; the run log has the detail.
          Effect.catchAllDefect((defect) =>
            Effect.logError("remember run died", defect).pipe(
              Effect.zipRight(
                Effect.fail(new InternalFailure({ message: `remember run ${row.id} failed with an internal error` }))
              )
            )
          ),
          // completes the waiters even when shutdown interrupts the run (Effect.exit would not)
          Effect.intoDeferred(done),
          FiberSet.run(runs)
        )
        return { runId: row.id, await: Deferred.await(done) }
      })

    // Shutdown: refuse new work, fail what is queued, give in-flight runs a grace period.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        closing = true
        const pending = [...queued]
        if (pending.length > 0) {
          yield* runLog.failQueued(pending, "server shut down before the run started", yield* nowIso)
        }
        const all = yield* FiberSet.awaitEmpty(runs).pipe(
          // finalizers are uninterruptible: without this the timeout could never cut the wait
          Effect.interruptible,
          Effect.timeout(options.shutdownGrace ?? "30 seconds"),
          Effect.option
        )
        if (Option.isNone(all)) yield* Effect.logWarning("interrupting runs still in flight at shutdown")
      }).pipe(Effect.catchAllDefect((defect) => Effect.logError("manager shutdown", defect)))
    )

    return RememberManager.of({
      enqueue,
      submit: (request, runOptions) => Effect.flatMap(enqueue(request, runOptions), (run) => run.await)
    })
  })

export const RememberManagerLive = (options: RememberManagerOptions) =>
  Layer.scoped(RememberManager, makeRememberManager(options))
