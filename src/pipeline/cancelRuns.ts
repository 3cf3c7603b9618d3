/**
 * Cancelling queued remember runs (docs/INGESTION.md, Cancelling): the program behind
 * `POST /v1/gb/runs/{id}/cancel`, `gligabao runs cancel` and the library. Only a queued run can
 * be cancelled; the run log decides it in one statement against the worker that would take the
 * run (`RunLogRepo.cancel`). A run already started is never interrupted: it finishes, and the
 * cancel says so (409). It needs the run log only, so `gligabao runs cancel` works on a database
 * without starting a manager (which would take over and run those very runs).
 */
import { Clock, Effect } from "effect"
import { Conflict, NotFound } from "../domain/Errors.js"
import type { RunRow } from "../domain/Rows.js"
import {
  type CancelledRuns,
  type CancelQueuedRequest,
  type CancelRunRequest,
  type RememberRun,
  runView
} from "../domain/runView.js"
import { toIso } from "../domain/time.js"
import type { RunLogRepo } from "../services/RunLogRepo.js"
import { rememberFinished } from "../telemetry/metrics.js"

/** What the waiters of a cancelled run get (409): the run never ran, nothing of it is stored. */
export const runCancelled = (runId: number): Conflict =>
  new Conflict({ message: `remember run ${runId} was cancelled before it started: nothing of it was stored` })

/** Why a run that is not queued cannot be cancelled, naming its status. */
const notQueued = (run: RunRow): Conflict =>
  new Conflict({
    message: run.status === "started"
      ? `remember run ${run.id} is running (started): a started run is not cancelled, it runs to its end`
      : `remember run ${run.id} has already ${run.status}: only a queued run can be cancelled`
  })

/**
 * Cancels the user's run if it is queued, and answers it as `GET /v1/gb/runs/{id}` shows it (a
 * run cancelled before answers the same: the cancel holds). Another user's run, or none, is a
 * 404; a started or finished one a 409 naming its status.
 */
export const cancelRun = (
  runLog: RunLogRepo["Type"],
  request: CancelRunRequest & { readonly id: number }
): Effect.Effect<RememberRun, NotFound | Conflict> =>
  Effect.gen(function*() {
    const at = toIso(yield* Clock.currentTimeMillis)
    const outcome = yield* runLog.cancel(request.id, request.user_id, at)
    if (outcome._tag === "Missing") return yield* new NotFound({ message: `no remember run with id ${request.id}` })
    if (outcome._tag === "NotQueued" && outcome.run.status !== "cancelled") return yield* notQueued(outcome.run)
    if (outcome._tag === "Cancelled") yield* rememberFinished("cancelled")
    const run = yield* runLog.get(request.id)
    if (run._tag === "None") return yield* new NotFound({ message: `no remember run with id ${request.id}` })
    return runView(run.value)
  })

/** Cancels every queued run of the user (of the dataset, when given); the started ones are named, and finish. */
export const cancelQueuedRuns = (
  runLog: RunLogRepo["Type"],
  request: CancelQueuedRequest
): Effect.Effect<CancelledRuns> =>
  Effect.gen(function*() {
    const at = toIso(yield* Clock.currentTimeMillis)
    const outcome = yield* runLog.cancelQueued(request.user_id, request.dataset, at)
    yield* rememberFinished("cancelled", outcome.cancelled.length)
    return { cancelled: [...outcome.cancelled], started: [...outcome.started] }
  })
