/**
 * The remember manager (spec/contracts.md section 19): every remember run goes through it.
 *
 * - A run is durable before it is acknowledged: its run-log row (`queued`) and its whole encoded
 *   request (gb_remember_queue) are written in one transaction (docs/INGESTION.md). The request
 *   leaves the queue in the transaction that stores the run's artifact, or when the run ends.
 * - A run holds its (user, dataset) lock for its reads and writes of the dataset (the pipeline's
 *   `apply`, or the whole pipeline when it has no `prepare`), taken in submission order (by run
 *   id: a run applies once every earlier run of its dataset, in any process, has ended), so
 *   reconciliation within a dataset is serial and deterministic; on PostgreSQL the lock is an
 *   advisory lock, so several processes on one database stay correct. The lock is taken before
 *   a global permit so a run waiting for a busy dataset never sits on one of the `concurrency`
 *   permits. Up to `lookahead` runs of a dataset (the one applying included) do their
 *   dataset-independent work (`prepare`: extraction, summaries, embeddings) meanwhile, each
 *   under a permit; such a run is `started` from then on.
 * - Runs are forked into the manager's scope: a client that disconnects does not cancel its run.
 * - At startup and after every heartbeat, the `queued` and `started` runs of a dead process are
 *   taken over: a run whose request is still queued runs again from the start (its `attempts`
 *   count, up to `maxAttempts`); one that had stored its artifact is failed `interrupted`, never
 *   stored twice. A run that fails on a transient cause (the provider's timeout, 429, 5xx) before
 *   anything of it is stored is queued again after a delay, up to `maxAttempts`. At shutdown,
 *   queued runs stay queued (the next start runs them) and in-flight runs get a grace period to
 *   finish; a log line says how many were queued, finished in the grace period and were cut.
 * - An Idempotency-Key names one run per user (`accept`): the same key and body again give that
 *   run, another body is an `IdempotencyConflict`.
 * - A run whose row a forget removed (its user or dataset forgotten, docs/FORGET.md) stores
 *   nothing: taking it finds no row, and a run already taken fails its store's commit hook. It
 *   ends with a NotFound (404), whatever broke first.
 * - A queued run can be cancelled (`cancel`, `cancelQueued`; the run log decides it against the
 *   take). Its waiters get a Conflict (409) at once when this process cancelled it, within a
 *   heartbeat when another process did, and at the latest when its turn comes and the take
 *   finds it cancelled. A started run is never cancelled.
 *
 * The manager coordinates; the parts are apart: `RunLanes` (a dataset's runs in order, across
 * processes), `RunAttempt` (one run's attempts as a state machine, its retry policy, the
 * queue-depth gauge), `runOutcome` (what a run's end writes and its waiters get), `RunTakeover`
 * (the heartbeat, and the runs of dead processes).
 */
import {
  Clock,
  Context,
  Deferred,
  type Duration,
  Effect,
  Either,
  FiberSet,
  HashMap,
  Layer,
  Option,
  Ref,
  Schedule
} from "effect"
import {
  type Conflict,
  IdempotencyConflict,
  InternalFailure,
  type InvalidRequest,
  type NotFound,
  type RememberError,
  type ServiceUnavailable
} from "../domain/Errors.js"
import {
  encodeRememberRequest,
  type RememberRequest,
  requestHash,
  runParams,
  validateRememberRequest
} from "../domain/Remember.js"
import type { RememberResult } from "../domain/Responses.js"
import type { CancelledRuns, CancelQueuedRequest, CancelRunRequest, RememberRun } from "../domain/runView.js"
import { toIso } from "../domain/time.js"
import { beforeCommit, Database, datasetLockKey } from "../services/Database.js"
import { RememberPipeline } from "../services/RememberPipeline.js"
import { type Enqueued, RunLogRepo, runRemoved } from "../services/RunLogRepo.js"
import type { RunObserver } from "../services/RunObserver.js"
import { cancelQueuedRuns, cancelRun, runCancelled } from "./cancelRuns.js"
import { isTaken, makeRunAttempts, type RunAttempt } from "./RunAttempt.js"
import { type LanePlace, RunLanes, RunLanesLive } from "./RunLanes.js"
import { outcomeOf, recordEnd, resultOf } from "./runOutcome.js"
import { RunScheduler } from "./RunScheduler.js"
import { keepAlive } from "./RunTakeover.js"

export interface RememberManagerOptions {
  /** global permits: how many runs execute at once across datasets */
  readonly concurrency: number
  /** this process's id in the run log (heartbeats tell live processes from dead ones) */
  readonly instanceId: string
  /** how long in-flight runs may take to finish at shutdown before they are interrupted */
  readonly shutdownGrace?: Duration.DurationInput
  readonly heartbeatEvery?: Duration.DurationInput
  /**
   * times a run is started before a crash of its process or a transient failure (a provider
   * timing out, 429, 5xx) fails it for good (default 3)
   */
  readonly maxAttempts?: number
  /** the wait before a run that failed on a transient cause runs again; doubled each time (default 1 s) */
  readonly retryDelay?: Duration.DurationInput
  /**
   * runs of one dataset whose dataset-independent work (the pipeline's `prepare`) runs ahead
   * of their in-order part, the run before them included (default 4; 1 is one run after another)
   */
  readonly lookahead?: number | undefined
  /** hours an Idempotency-Key names its run (default 24) */
  readonly idempotencyTtlHours?: number
}

export interface RunOptions {
  /** hears the run's stage and model-call reports (eval mode); the run log notes `eval: true` */
  readonly observer?: RunObserver | undefined
}

export interface AcceptOptions extends RunOptions {
  /** the same key and body again give the same run (see `accept`) */
  readonly idempotencyKey?: string | undefined
}

export interface SubmittedRun {
  readonly runId: number
  /** false when an Idempotency-Key named a run submitted before */
  readonly created: boolean
  /** waits for the run's outcome; interrupting the wait does not interrupt the run */
  readonly await: Effect.Effect<RememberResult, RememberError>
}

/** The batch item (its index) whose Idempotency-Key names another request. */
/** A request this server cannot serve (the pipeline's refusal): nothing is queued. */
export type Refusal = ServiceUnavailable | InvalidRequest

/** A batch item that stops the whole batch: its key names another request, or it is refused. */
export interface BatchIdempotencyConflict {
  readonly index: number
  readonly error: IdempotencyConflict | Refusal
}

export class RememberManager extends Context.Tag("gligabao/RememberManager")<
  RememberManager,
  {
    /**
     * queues a run (durably: its row and request are written now) and returns without waiting
     * for it; a request this server cannot serve is refused, with nothing written
     */
    readonly enqueue: (request: RememberRequest, options?: RunOptions) => Effect.Effect<SubmittedRun, Refusal>
    /**
     * `enqueue` with an optional Idempotency-Key: a live key of the user with the same request
     * gives its run (nothing new is stored); with another request it is an IdempotencyConflict
     */
    readonly accept: (
      request: RememberRequest,
      options?: AcceptOptions
    ) => Effect.Effect<SubmittedRun, IdempotencyConflict | Refusal>
    /**
     * `accept` for many requests, written in one transaction and launched in order; an item
     * whose key names another request fails the whole batch (nothing is queued)
     */
    readonly acceptMany: (
      submissions: ReadonlyArray<{ readonly request: RememberRequest; readonly idempotencyKey?: string | undefined }>
    ) => Effect.Effect<ReadonlyArray<SubmittedRun>, BatchIdempotencyConflict>
    /** queues a run and waits for its outcome */
    readonly submit: (
      request: RememberRequest,
      options?: RunOptions
    ) => Effect.Effect<RememberResult, RememberError>
    /**
     * cancels the user's queued run (`POST /v1/gb/runs/{id}/cancel`); its waiters here are
     * answered at once. A started or finished run is a Conflict naming its status.
     */
    readonly cancel: (
      request: CancelRunRequest & { readonly id: number }
    ) => Effect.Effect<RememberRun, NotFound | Conflict>
    /** cancels every queued run of the user (in the dataset, when given) */
    readonly cancelQueued: (request: CancelQueuedRequest) => Effect.Effect<CancelledRuns>
  }
>() {}

const nowIso = Clock.currentTimeMillis.pipe(Effect.map(toIso))

/** A run this process runs: its request (none for a taken-over run whose request no longer decodes). */
interface Launched {
  readonly runId: number
  readonly request: RememberRequest | undefined
  /** its dataset's lock key, the key of its lane */
  readonly key: string
  readonly startedMs: number
  readonly observer?: RunObserver | undefined
}

export const makeRememberManager = (options: RememberManagerOptions) =>
  Effect.gen(function*() {
    const runLog = yield* RunLogRepo
    const database = yield* Database
    const pipeline = yield* RememberPipeline
    const scheduler = yield* RunScheduler
    const lanes = yield* RunLanes
    const permits = yield* Effect.makeSemaphore(Math.max(1, options.concurrency))
    const runs = yield* FiberSet.make<unknown, unknown>()
    /** set at shutdown: from then on no run is taken, queued again or taken over */
    const closing = yield* Ref.make(false)
    const maxAttempts = Math.max(1, options.maxAttempts ?? 3)
    const idempotencyTtlMs = (options.idempotencyTtlHours ?? 24) * 3_600_000
    const attempts = yield* makeRunAttempts({
      maxAttempts,
      retryDelay: options.retryDelay ?? "1 second",
      closing: Ref.get(closing),
      requeue: (runId, error) => Effect.flatMap(nowIso, (at) => runLog.requeue(runId, error.message, at))
    })
    /** the outcomes of the runs this process runs, for a repeated submission's wait */
    const outcomes = new Map<number, Deferred.Deferred<RememberResult, RememberError>>()
    /** completed when the run log says a run this process holds was cancelled: its wait ends */
    const cancelSignals = new Map<number, Deferred.Deferred<void>>()
    const heartbeatEvery = options.heartbeatEvery ?? "5 seconds"

    /** One run: attempted until it succeeds or fails for good, then its end written in its row. */
    const execute = (run: Launched, place: LanePlace, attempt: RunAttempt, cancelled: Deferred.Deferred<void>) => {
      const { runId } = run
      // a wait for its turn ends when the run log cancelled the run, since no take can succeed then
      const orCancelled = (wait: Effect.Effect<void>) =>
        Effect.raceFirst(wait, Effect.zipRight(Deferred.await(cancelled), Effect.fail(runCancelled(runId))))
      const takeRun = Effect.gen(function*() {
        if (yield* Ref.get(closing)) return yield* Effect.interrupt
        const claim = yield* runLog.take(runId, options.instanceId, yield* nowIso, run.request === undefined)
        if (Option.isNone(claim)) {
          if ((yield* runLog.cancelledAmong([runId])).length > 0) return yield* runCancelled(runId)
          if (!(yield* runLog.exists(runId))) return yield* runRemoved(runId)
          return yield* Effect.dieMessage(`remember run ${runId} is no longer queued`)
        }
        yield* attempt.taken(claim.value.attempts)
        // a run taken over from a dead process has its request from the queue, decoded again
        const stored = claim.value.request
        return run.request ?? (stored === null
          ? yield* new InternalFailure({ message: `remember run ${runId} has no queued request` })
          : yield* validateRememberRequest(JSON.parse(stored)))
      })
      // the request leaves the queue in the transaction that stores the artifact
      const inOrder = <A, E>(effect: Effect.Effect<A, E>) =>
        effect.pipe(
          Effect.locally(beforeCommit, [runLog.committed(runId)]),
          permits.withPermits(1),
          database.withLock(run.key)
        )
      const prepare = pipeline.prepare
      const once = prepare === undefined
        ? Effect.zipRight(
          orCancelled(place.turn),
          inOrder(Effect.gen(function*() {
            const request = yield* takeRun
            yield* attempt.applying
            return yield* pipeline.run(runId, request, run.observer)
          }))
        )
        : Effect.gen(function*() {
          // taken (started) when its work ahead starts: a crash from here runs it again from the start
          yield* orCancelled(place.window)
          const request = yield* takeRun
          const prepared = yield* permits.withPermits(1)(prepare(runId, request, run.observer))
          yield* place.turn
          // a run taken before shutdown finishes within the grace period, as any run in flight
          return yield* inOrder(Effect.zipRight(attempt.applying, prepared.apply))
        }).pipe(Effect.scoped)
      // the dataset's later runs wait for a run being retried: it keeps its place in the lane
      return attempt.retried(once).pipe(
        Effect.onExit((exit) =>
          Effect.flatMap(
            Effect.all([attempt.state, Ref.get(closing)]),
            ([state, closing]) => recordEnd(runLog, runId, run.startedMs, state, closing, exit)
          )
        ),
        // after its row is finished: a later run of the dataset asks the run log whether it may go
        Effect.ensuring(place.leave),
        Effect.annotateLogs({ runId })
      )
    }

    /** Forks a queued run into the manager's scope; its outcome completes the returned Deferred. */
    const launch = (run: Launched) =>
      Effect.gen(function*() {
        const { runId } = run
        const done = yield* Deferred.make<RememberResult, RememberError>()
        const cancelled = yield* Deferred.make<void>()
        outcomes.set(runId, done)
        cancelSignals.set(runId, cancelled)
        const attempt = yield* attempts.begin(runId)
        // joined before it is forked, at its place by id: the dataset's runs apply in submission order
        const place = yield* lanes.join({ id: runId, key: run.key, dataset: run.request })
        yield* execute(run, place, attempt, cancelled).pipe(
          resultOf(runLog, runId),
          // completes the waiters even when shutdown interrupts the run (Effect.exit would not)
          Effect.intoDeferred(done),
          Effect.ensuring(Effect.zipRight(
            Effect.sync(() => {
              outcomes.delete(runId)
              cancelSignals.delete(runId)
            }),
            attempt.end
          )),
          scheduler.runs,
          FiberSet.run(runs)
        )
        return done
      })

    /** A run of another process (or finished): its row is polled until it is finished. */
    const awaitRun = (runId: number): Effect.Effect<RememberResult, RememberError> =>
      Effect.suspend(() => {
        const local = outcomes.get(runId)
        if (local !== undefined) return Deferred.await(local)
        return runLog.get(runId).pipe(
          Effect.flatMap((run) =>
            Option.isNone(run) ? runRemoved(runId) : Option.match(outcomeOf(run.value), {
              onNone: () => Effect.zipRight(Effect.sleep("100 millis"), awaitRun(runId)),
              onSome: (outcome): Effect.Effect<RememberResult, RememberError> => outcome
            })
          )
        )
      })

    /** Ends the waits of the runs this process holds that the run log has cancelled. */
    const cancelledHere = (runIds: ReadonlyArray<number>) =>
      Effect.forEach(runIds, (runId) => {
        const signal = cancelSignals.get(runId)
        return signal === undefined ? Effect.void : Deferred.succeed(signal, undefined)
      }, { discard: true })

    // a cancel by another process (`gligabao runs cancel`, another server): asked about on every
    // beat for the runs this process holds and has not taken (a taken run is never cancelled)
    yield* Effect.gen(function*() {
      const held = [...HashMap.filter(yield* attempts.states, (state) => !isTaken(state)).pipe(HashMap.keys)]
      if (held.length > 0) yield* cancelledHere(yield* runLog.cancelledAmong(held))
    }).pipe(
      Effect.catchAllDefect((defect) => Effect.logWarning("could not look for cancelled runs", defect)),
      Effect.repeat(Schedule.spaced(heartbeatEvery)),
      Effect.forkScoped
    )

    // the runs of dead processes are launched like new ones; one whose request no longer
    // decodes can never run, and is taken only to be failed
    yield* keepAlive(runLog, {
      instanceId: options.instanceId,
      heartbeatEvery,
      maxAttempts,
      idempotencyTtlMs,
      closing: Ref.get(closing)
    }, ({ at, request, runId }) =>
      launch({
        runId,
        request,
        key: request === undefined ? `remember-invalid\u0000${runId}` : datasetLockKey(request),
        startedMs: at
      }))

    /** What the run log writes for a submission. */
    const entryOf = (request: RememberRequest, runOptions: AcceptOptions, queuedMs: number) => {
      const encoded = encodeRememberRequest(request)
      const key = runOptions.idempotencyKey
      return {
        run: {
          pipeline: request.image === undefined ? "text" as const : "image" as const,
          user_id: request.user_id,
          dataset: request.dataset,
          params: runOptions.observer === undefined ? runParams(request) : { ...runParams(request), eval: true },
          queued_at: toIso(queuedMs),
          instance_id: options.instanceId
        },
        request: JSON.stringify(encoded),
        idempotency: key === undefined
          ? undefined
          : { key, hash: requestHash(encoded), expiredBefore: toIso(queuedMs - idempotencyTtlMs) }
      }
    }

    const conflict = (key: string | undefined) =>
      new IdempotencyConflict({ message: `Idempotency-Key ${JSON.stringify(key)} was used for another request` })

    /** The written run launched (a new one) or named (one a key gave). */
    const submitted = (
      enqueued: Enqueued,
      request: RememberRequest,
      queuedMs: number,
      observer: RunObserver | undefined
    ): Effect.Effect<SubmittedRun> =>
      enqueued._tag === "Existing"
        ? Effect.succeed({ runId: enqueued.runId, created: false, await: awaitRun(enqueued.runId) })
        : Effect.map(
          launch({ runId: enqueued.run.id, request, key: datasetLockKey(request), startedMs: queuedMs, observer }),
          (done) => ({ runId: enqueued.run.id, created: true, await: Deferred.await(done) })
        )

    /** the pipeline's refusal of a request this server cannot serve, before anything is written */
    const refused = (request: RememberRequest): Refusal | undefined => pipeline.refusal?.(request)

    const accept = (
      request: RememberRequest,
      runOptions: AcceptOptions = {}
    ): Effect.Effect<SubmittedRun, IdempotencyConflict | Refusal> =>
      Effect.gen(function*() {
        const refusal = refused(request)
        if (refusal !== undefined) return yield* refusal
        const queuedMs = yield* Clock.currentTimeMillis
        const entry = entryOf(request, runOptions, queuedMs)
        const enqueued = yield* runLog.enqueue(entry.run, entry.request, entry.idempotency)
        if (enqueued._tag === "Existing" && !enqueued.sameRequest) {
          return yield* Effect.fail(conflict(runOptions.idempotencyKey))
        }
        return yield* submitted(enqueued, request, queuedMs, runOptions.observer)
      })

    const acceptMany = (
      submissions: ReadonlyArray<{ readonly request: RememberRequest; readonly idempotencyKey?: string | undefined }>
    ): Effect.Effect<ReadonlyArray<SubmittedRun>, BatchIdempotencyConflict> =>
      Effect.gen(function*() {
        for (const [index, { request }] of submissions.entries()) {
          const refusal = refused(request)
          if (refusal !== undefined) return yield* Effect.fail({ index, error: refusal })
        }
        const queuedMs = yield* Clock.currentTimeMillis
        const written = yield* runLog.enqueueMany(
          submissions.map((s) => entryOf(s.request, { idempotencyKey: s.idempotencyKey }, queuedMs))
        )
        if (Either.isLeft(written)) {
          return yield* Effect.fail({
            index: written.left,
            error: conflict(submissions[written.left]!.idempotencyKey)
          })
        }
        // launched in item order: runs of one dataset run in that order (the lock is FIFO)
        return yield* Effect.forEach(
          written.right,
          (enqueued, i) => submitted(enqueued, submissions[i]!.request, queuedMs, undefined)
        )
      })

    // without a key no conflict can arise: what is left is the refusal
    const enqueue = (request: RememberRequest, runOptions: RunOptions = {}): Effect.Effect<SubmittedRun, Refusal> =>
      accept(request, { observer: runOptions.observer }).pipe(Effect.catchTag("IdempotencyConflict", Effect.die))

    // Shutdown: refuse new work, leave what is queued queued, give in-flight runs a grace period,
    // and say what was left (an operator reads it in the stop's log line).
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* Ref.set(closing, true)
        const inFlight = yield* FiberSet.size(runs)
        const all = yield* FiberSet.awaitEmpty(runs).pipe(
          // finalizers are uninterruptible: without this the timeout could never cut the wait
          Effect.interruptible,
          Effect.timeout(options.shutdownGrace ?? "30 seconds"),
          Effect.option
        )
        const cut = Option.isNone(all) ? yield* FiberSet.size(runs) : 0
        if (cut > 0) {
          yield* Effect.logWarning("interrupting runs still in flight at shutdown")
          yield* FiberSet.clear(runs)
        }
        // no beat after this: another process takes over this one's queued runs at once
        yield* runLog.leave(options.instanceId)
        const { queued } = yield* runLog.counts()
        yield* Effect.logInfo("remember runs at shutdown").pipe(Effect.annotateLogs({
          queued,
          finished_in_grace: inFlight - cut,
          cut_at_shutdown: cut
        }))
      }).pipe(Effect.catchAllDefect((defect) => Effect.logError("manager shutdown", defect)))
    )

    return RememberManager.of({
      enqueue,
      accept,
      acceptMany,
      submit: (request, runOptions) => Effect.flatMap(enqueue(request, runOptions), (run) => run.await),
      cancel: (request) =>
        Effect.tap(cancelRun(runLog, request), (run) =>
          run.status === "cancelled" ? cancelledHere([run.id]) : Effect.void),
      cancelQueued: (request) =>
        Effect.tap(cancelQueuedRuns(runLog, request), (done) => cancelledHere(done.cancelled))
    })
  })

/** The manager with lanes of its own (`remember.lookahead` runs of a dataset work ahead at once). */
export const RememberManagerLive = (options: RememberManagerOptions) =>
  Layer.scoped(RememberManager, makeRememberManager(options)).pipe(
    Layer.provide(RunLanesLive(Math.max(1, Math.floor(options.lookahead ?? 4))))
  )
