/**
 * A remember run's outcome, three ways: what its waiters get, what its run-log row says when it
 * ends, and what a waiter reads back from the row when another process runs the run (or it has
 * finished), so a repeated submission gets what the first one got, its domain error included.
 * Kept apart from the manager, which only decides when a run runs.
 */
import { Cause, Clock, Effect, Either, Exit, Option, Schema } from "effect"
import { InternalFailure, type RememberError, StoredRunError } from "../domain/Errors.js"
import { decodeRememberBody, type RememberOutcome, type RememberResult } from "../domain/Responses.js"
import type { RunRow } from "../domain/Rows.js"
import { toIso } from "../domain/time.js"
import { type RunLogRepo, runRemoved } from "../services/RunLogRepo.js"
import { rememberFinished } from "../telemetry/metrics.js"
import { runCancelled } from "./cancelRuns.js"
import { type AttemptState, isTaken } from "./RunAttempt.js"

const describeCause = (cause: Cause.Cause<unknown>): string =>
  Cause.isInterruptedOnly(cause) ? "interrupted" : `internal error: ${Cause.pretty(cause).split("\n")[0]}`

/** A finished run's error as its domain error again (a repeated submission fails the same way). */
const storedError = (tag: string | null, message: string): RememberError =>
  Either.getOrElse(
    Schema.decodeUnknownEither(StoredRunError)({ _tag: tag, message }),
    () => new InternalFailure({ message })
  )

/** The outcome of a finished run as its row tells it; None while it is not finished. */
export const outcomeOf = (run: RunRow): Option.Option<Either.Either<RememberResult, RememberError>> => {
  if (run.status === "cancelled") return Option.some(Either.left(runCancelled(run.id)))
  if (run.status === "failed") {
    const message = run.error ?? `remember run ${run.id} failed`
    return Option.some(Either.left(storedError(run.error_tag ?? null, message)))
  }
  if (run.status !== "succeeded") return Option.none()
  const { remember_run_id: _, ...body } = (run.response ?? {}) as Record<string, unknown>
  return Option.some(Either.match(decodeRememberBody(body), {
    onLeft: () =>
      Either.left(new InternalFailure({ message: `remember run ${run.id} succeeded but its response was not kept` })),
    onRight: (response) =>
      Either.right({ runId: run.id, response, dataset_id: run.dataset_id, artifact_id: run.artifact_id })
  }))
}

/**
 * A run's outcome as its waiters get it. A run whose row a forget removed stored nothing and
 * ends as that, whatever broke first; a response the contract does not type, or a defect, is a
 * 500 whose message names no stack trace (the run log has the detail).
 */
export const resultOf =
  (runLog: RunLogRepo["Type"], runId: number) =>
  <R>(run: Effect.Effect<RememberOutcome, RememberError, R>): Effect.Effect<RememberResult, RememberError, R> =>
    run.pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : Effect.flatMap(
            runLog.exists(runId),
            (found): Effect.Effect<never, RememberError> => found ? Effect.failCause(cause) : runRemoved(runId)
          )
      ),
      Effect.flatMap((outcome) =>
        Either.match(decodeRememberBody(outcome.response), {
          onLeft: (problem) => Effect.dieMessage(`the response of run ${runId} does not match its schema: ${problem}`),
          onRight: (response): Effect.Effect<RememberResult> =>
            Effect.succeed({ runId, response, dataset_id: outcome.dataset_id, artifact_id: outcome.artifact_id })
        })
      ),
      Effect.catchAllDefect((defect) =>
        Effect.zipRight(
          Effect.logError("remember run died", defect),
          Effect.fail(new InternalFailure({ message: `remember run ${runId} failed with an internal error` }))
        )
      )
    )

/**
 * Writes a run's end into its row, as its attempt's state tells. An attempt that never took the
 * run leaves it as it is (queued). Cut at shutdown: left `started` when it had not begun storing
 * (the next process takes it over from the start, like a dead process's run), queued again when
 * nothing or only some chunks committed, else finished.
 */
export const recordEnd = (
  runLog: RunLogRepo["Type"],
  runId: number,
  startedMs: number,
  state: AttemptState,
  closing: boolean,
  exit: Exit.Exit<RememberOutcome, RememberError>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (!isTaken(state)) return
    const interrupted = closing && Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
    if (interrupted && state._tag === "Taken") return
    const at = toIso(yield* Clock.currentTimeMillis)
    if (interrupted && (yield* runLog.requeue(runId, "interrupted at shutdown", at))) return
    yield* finishRun(runLog, runId, startedMs, exit)
  }).pipe(
    Effect.catchAllDefect((defect) =>
      // a run a forget removed has no row to finish
      Effect.flatMap(
        runLog.exists(runId),
        (found) => found ? Effect.logError("could not finish run log row", { runId, defect }) : Effect.void
      )
    )
  )

/** A taken run's row finished: succeeded with its response, or failed with its error. */
const finishRun = (
  runLog: RunLogRepo["Type"],
  runId: number,
  startedMs: number,
  exit: Exit.Exit<RememberOutcome, RememberError>
) =>
  Effect.gen(function*() {
    const finishedMs = yield* Clock.currentTimeMillis
    const base = { finished_at: toIso(finishedMs), duration_ms: finishedMs - startedMs }
    if (Exit.isSuccess(exit)) {
      yield* runLog.finish(runId, {
        ...base,
        status: "succeeded",
        error: null,
        dataset_id: exit.value.dataset_id,
        artifact_id: exit.value.artifact_id,
        response: { remember_run_id: runId, ...exit.value.response }
      })
      return yield* rememberFinished("succeeded")
    }
    const failure = Cause.failureOption(exit.cause)
    const error = Option.isSome(failure) ? failure.value.message : describeCause(exit.cause)
    // a failure after commit (a vector write) still names what was stored
    const stored = Option.isSome(failure) && failure.value._tag === "VectorWriteFailed" ? failure.value : undefined
    yield* runLog.finish(runId, {
      ...base,
      status: "failed",
      error,
      error_tag: Option.isSome(failure) ? failure.value._tag : "InternalFailure",
      dataset_id: stored?.dataset_id ?? null,
      artifact_id: stored?.artifact_id ?? null
    })
    yield* rememberFinished("failed")
  })
