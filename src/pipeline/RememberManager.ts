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
 *   queued runs stay queued (the next start runs them) and in-flight
 *   runs get a grace period to finish.
 * - An Idempotency-Key names one run per user (`accept`): the same key and body again give that
 *   run, another body is an `IdempotencyConflict`.
 * - A run whose row a forget removed (its user or dataset forgotten, docs/FORGET.md) stores
 *   nothing: taking it finds no row, and a run already taken fails its store's commit hook. It
 *   ends with a NotFound (404), whatever broke first.
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
  Schedule,
  Schema
} from "effect"
import {
  IdempotencyConflict,
  InternalFailure,
  InvalidRequest,
  type RememberError,
  StoredRunError
} from "../domain/Errors.js"
import {
  encodeRememberRequest,
  type RememberRequest,
  requestHash,
  runParams,
  validateRememberRequest
} from "../domain/Remember.js"
import { decodeRememberBody, type RememberResult } from "../domain/Responses.js"
import type { RunRow } from "../domain/Rows.js"
import { toIso } from "../domain/time.js"
import { beforeCommit, Database, datasetLockKey } from "../services/Database.js"
import { RememberPipeline } from "../services/RememberPipeline.js"
import { type Enqueued, RunLogRepo, runRemoved } from "../services/RunLogRepo.js"
import type { RunObserver } from "../services/RunObserver.js"
import { rememberFinished, setQueueDepth } from "../telemetry/metrics.js"
import { RunScheduler } from "./RunScheduler.js"

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
export interface BatchIdempotencyConflict {
  readonly index: number
  readonly error: IdempotencyConflict
}

export class RememberManager extends Context.Tag("gligabao/RememberManager")<
  RememberManager,
  {
    /** queues a run (durably: its row and request are written now) and returns without waiting for it */
    readonly enqueue: (request: RememberRequest, options?: RunOptions) => Effect.Effect<SubmittedRun>
    /**
     * `enqueue` with an optional Idempotency-Key: a live key of the user with the same request
     * gives its run (nothing new is stored); with another request it is an IdempotencyConflict
     */
    readonly accept: (
      request: RememberRequest,
      options?: AcceptOptions
    ) => Effect.Effect<SubmittedRun, IdempotencyConflict>
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
  }
>() {}

const lockKey = datasetLockKey

const nowIso = Clock.currentTimeMillis.pipe(Effect.map(toIso))

const describeCause = (cause: Cause.Cause<unknown>): string =>
  Cause.isInterruptedOnly(cause) ? "interrupted" : `internal error: ${Cause.pretty(cause).split("\n")[0]}`

/** A cause a later attempt may not meet: the provider's own failure, not its answer or our input. */
const isTransient = (error: RememberError): boolean =>
  (error._tag === "LlmFailed" || error._tag === "EmbeddingFailed") && error.retryable === true

/** A finished run's error as its domain error again (a repeated submission fails the same way). */
const storedError = (tag: string | null, message: string): RememberError =>
  Either.getOrElse(
    Schema.decodeUnknownEither(StoredRunError)({ _tag: tag, message }),
    () => new InternalFailure({ message })
  )

/** The outcome of a finished run as its row tells it; None while it is not finished. */
const outcomeOf = (run: RunRow): Option.Option<Either.Either<RememberResult, RememberError>> => {
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

export const makeRememberManager = (options: RememberManagerOptions) =>
  Effect.gen(function*() {
    const runLog = yield* RunLogRepo
    const database = yield* Database
    const pipeline = yield* RememberPipeline
    const scheduler = yield* RunScheduler
    const permits = yield* Effect.makeSemaphore(Math.max(1, options.concurrency))
    const runs = yield* FiberSet.make<unknown, unknown>()
    /** the outcomes of the runs this process runs, for a repeated submission's wait */
    const outcomes = new Map<number, Deferred.Deferred<RememberResult, RememberError>>()
    // the queue depth gauge: this process's unfinished runs, waiting their turn or taken
    const runStates = new Map<number, "queued" | "running">()
    const depth = { queued: 0, running: 0 }
    const trackRun = (runId: number, to: "queued" | "running" | null) =>
      Effect.suspend(() => {
        const from = runStates.get(runId)
        if (from === to) return Effect.void
        if (from !== undefined) depth[from]--
        if (to === null) runStates.delete(runId)
        else {
          depth[to]++
          runStates.set(runId, to)
        }
        return setQueueDepth(depth.queued, depth.running)
      })
    const maxAttempts = Math.max(1, options.maxAttempts ?? 3)
    const lookaheadRuns = Math.max(1, Math.floor(options.lookahead ?? 4))
    const idempotencyTtlMs = (options.idempotencyTtlHours ?? 24) * 3_600_000
    const retryDelay = Duration.decode(options.retryDelay ?? "1 second")
    let closing = false

    const heartbeat = Effect.suspend(() =>
      closing ? Effect.void : nowIso.pipe(Effect.flatMap((at) => runLog.heartbeat(options.instanceId, at)))
    )
    yield* heartbeat

    /**
     * The unfinished runs of each dataset in this process, by run id (submission order): run n's
     * dataset-independent work (`prepare`) starts once the run `lookahead` places before it has
     * ended, and its ordered part once every run before it has ended, here and (asked of the
     * run log) in every other process, so the dataset sees its runs one at a time in submission
     * order. A run taken over from a dead process joins with its old id, before newer ones.
     */
    const lanes = new Map<string, Array<{ readonly id: number; readonly done: Deferred.Deferred<void> }>>()
    const joinLane = (
      key: string,
      runId: number,
      dataset: { readonly user_id: string; readonly dataset: string } | undefined
    ) =>
      Effect.gen(function*() {
        const done = yield* Deferred.make<void>()
        const entry = { id: runId, done }
        const entries = lanes.get(key) ?? []
        lanes.set(key, entries)
        let at = entries.length
        while (at > 0 && entries[at - 1]!.id > runId) at--
        entries.splice(at, 0, entry)
        const window = at >= lookaheadRuns ? entries[at - lookaheadRuns] : undefined
        const earlierHere = Effect.suspend(() =>
          Effect.forEach((lanes.get(key) ?? []).filter((e) => e.id < runId), (e) => Deferred.await(e.done), {
            discard: true
          })
        )
        /** every run of the dataset before this one has ended; another process's are polled */
        const turn: Effect.Effect<void> = dataset === undefined ? earlierHere : Effect.zipRight(
          earlierHere,
          Effect.flatMap(
            runLog.earlierUnfinished(dataset.user_id, dataset.dataset, runId),
            (waiting) => waiting ? Effect.zipRight(Effect.sleep("50 millis"), Effect.suspend(() => turn)) : Effect.void
          )
        )
        return {
          window: window === undefined ? Effect.void : Deferred.await(window.done),
          previous: turn,
          leave: Effect.suspend(() => {
            const current = lanes.get(key)
            if (current !== undefined) {
              const i = current.indexOf(entry)
              if (i >= 0) current.splice(i, 1)
              if (current.length === 0) lanes.delete(key)
            }
            return Deferred.succeed(done, undefined)
          })
        }
      })
    type Lane = Effect.Effect.Success<ReturnType<typeof joinLane>>

    const execute = (
      runId: number,
      request: RememberRequest | undefined,
      key: string,
      startedMs: number,
      observer: RunObserver | undefined,
      lane: Lane
    ) => {
      /** set once this worker took the run (this attempt): before that, the run is left queued */
      let taken = false
      /** the run's attempts so far, crashes of earlier processes included */
      let attempts = 0
      /** set once the run's ordered part (its reads and writes of the dataset) began */
      let applying = false
      const takeRun = Effect.gen(function*() {
        if (closing) return yield* Effect.interrupt
        const claim = yield* runLog.take(runId, options.instanceId, toIso(yield* Clock.currentTimeMillis))
        if (Option.isNone(claim)) {
          if (!(yield* runLog.exists(runId))) return yield* runRemoved(runId)
          return yield* Effect.dieMessage(`remember run ${runId} is no longer queued`)
        }
        taken = true
        attempts = claim.value.attempts
        yield* trackRun(runId, "running")
        // a run taken over from a dead process has its request from the queue, decoded again
        const stored = claim.value.request
        const req: RememberRequest = request ?? (stored === null
          ? yield* new InternalFailure({ message: `remember run ${runId} has no queued request` })
          : yield* validateRememberRequest(JSON.parse(stored)))
        return req
      })
      // the request leaves the queue in the transaction that stores the artifact
      const inOrder = <A, E>(effect: Effect.Effect<A, E>) =>
        effect.pipe(
          Effect.locally(beforeCommit, [runLog.committed(runId)]),
          permits.withPermits(1),
          database.withLock(key)
        )
      const prepare = pipeline.prepare
      const attempt = prepare === undefined
        ? Effect.zipRight(
          lane.previous,
          inOrder(Effect.gen(function*() {
            const req = yield* takeRun
            applying = true
            return yield* pipeline.run(runId, req, observer)
          }))
        )
        : Effect.gen(function*() {
          // taken (started) when its work ahead starts: a crash from here runs it again from the start
          yield* lane.window
          const req = yield* takeRun
          const prepared = yield* permits.withPermits(1)(prepare(runId, req, observer))
          yield* lane.previous
          // a run taken before shutdown finishes within the grace period, as any run in flight
          return yield* inOrder(Effect.suspend(() => {
            applying = true
            return prepared.apply
          }))
        }).pipe(Effect.scoped)
      // A transient failure before anything is stored queues the run again, after a delay
      // doubled each time, until max_attempts; the dataset's later runs wait for it meanwhile.
      const program = Effect.gen(function*() {
        for (let retry = 0;; retry++) {
          taken = false
          applying = false
          const exit = yield* Effect.exit(attempt)
          if (Exit.isSuccess(exit)) return exit.value
          const failure = Cause.failureOption(exit.cause)
          if (
            Option.isSome(failure) && isTransient(failure.value) && taken && !closing && attempts < maxAttempts &&
            (yield* runLog.requeue(runId, failure.value.message, yield* nowIso))
          ) {
            const delay = Duration.times(retryDelay, 2 ** retry)
            yield* Effect.logWarning("remember run failed on a transient cause; queued again", {
              error: failure.value.message,
              attempts,
              retryIn: Duration.format(delay)
            })
            taken = false
            yield* trackRun(runId, "queued")
            yield* Effect.sleep(delay)
            continue
          }
          return yield* Effect.failCause(exit.cause)
        }
      })
      return program.pipe(
        Effect.onExit((exit) =>
          Effect.gen(function*() {
            if (!taken) return
            // nothing of it is stored and its request is still queued: left started, it is taken
            // over (run again from the start) like a run of a dead process once this one has left
            const interrupted = closing && Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
            if (interrupted && !applying) return
            // cut at shutdown while storing: queued again when nothing, or only some chunks, committed
            if (interrupted && (yield* runLog.requeue(runId, "interrupted at shutdown", yield* nowIso))) return
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
              yield* rememberFinished("succeeded")
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
                error_tag: Option.isSome(failure) ? failure.value._tag : "InternalFailure",
                dataset_id: stored?.dataset_id ?? null,
                artifact_id: stored?.artifact_id ?? null
              })
              yield* rememberFinished("failed")
            }
          }).pipe(
            Effect.catchAllDefect((defect) =>
              // a run a forget removed has no row to finish
              Effect.flatMap(runLog.exists(runId), (found) =>
                found ? Effect.logError("could not finish run log row", { runId, defect }) : Effect.void)
            )
          )
        ),
        // after its row is finished: a later run of the dataset asks the run log whether it may go
        Effect.ensuring(lane.leave),
        Effect.annotateLogs({ runId })
      )
    }

    /** Forks a queued run into the manager's scope; its outcome completes the returned Deferred. */
    const launch = (
      runId: number,
      request: RememberRequest | undefined,
      key: string,
      startedMs: number,
      observer: RunObserver | undefined
    ) =>
      Effect.gen(function*() {
        const done = yield* Deferred.make<RememberResult, RememberError>()
        outcomes.set(runId, done)
        yield* trackRun(runId, "queued")
        // joined now, in the caller's order: the dataset's runs are applied in this order
        const lane = yield* joinLane(key, runId, request)
        yield* execute(runId, request, key, startedMs, observer, lane).pipe(
          // A forget of the run's user or dataset removed its row: whatever broke (its stage
          // writes, the store's commit hook), it stored nothing and ends as that.
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause)
              ? Effect.failCause(cause)
              : Effect.flatMap(
                runLog.exists(runId),
                (found): Effect.Effect<never, RememberError> =>
                  found ? Effect.failCause(cause) : runRemoved(runId)
              )
          ),
          // the response as the contract types it; one that does not match is a bug of ours (a 500)
          Effect.flatMap((outcome) =>
            Either.match(decodeRememberBody(outcome.response), {
              onLeft: (problem) =>
                Effect.dieMessage(`the response of run ${runId} does not match its schema: ${problem}`),
              onRight: (response): Effect.Effect<RememberResult> =>
                Effect.succeed({
                  runId,
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
                Effect.fail(new InternalFailure({ message: `remember run ${runId} failed with an internal error` }))
              )
            )
          ),
          // completes the waiters even when shutdown interrupts the run (Effect.exit would not)
          Effect.intoDeferred(done),
          Effect.ensuring(Effect.zipRight(Effect.sync(() => outcomes.delete(runId)), trackRun(runId, null))),
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

    // A process that has not beaten for three periods is dead; its queued and started runs are
    // taken over. Swept at startup and after every beat: a process restarted right after a
    // crash sees the dead one as alive at first, and must still take its runs once its beats
    // are stale.
    const every = Duration.decode(options.heartbeatEvery ?? "5 seconds")
    const sweepOrphans = Effect.gen(function*() {
      if (closing) return
      const now = yield* Clock.currentTimeMillis
      const staleBefore = toIso(now - Duration.toMillis(every) * 3)
      const recovered = yield* runLog.recoverOrphaned(
        options.instanceId,
        staleBefore,
        maxAttempts,
        "interrupted",
        toIso(now)
      )
      if (recovered.failed > 0) yield* Effect.logWarning("failed runs of a dead process", { runs: recovered.failed })
      if (recovered.requeued.length > 0) {
        yield* Effect.logWarning("running again the queued runs of a dead process", {
          runs: recovered.requeued.map((r) => r.id)
        })
      }
      for (const { id, request } of recovered.requeued) {
        const decoded = Either.flatMap(
          Either.try({
            try: () => JSON.parse(request) as unknown,
            catch: () => new InvalidRequest({ message: "the queued request is not JSON" })
          }),
          validateRememberRequest
        )
        if (Either.isLeft(decoded)) {
          // taken only to be failed: a request that no longer decodes can never run
          yield* launch(id, undefined, `remember-invalid\u0000${id}`, now, undefined)
          continue
        }
        yield* launch(id, decoded.right, lockKey(decoded.right), now, undefined)
      }
    })
    // an expired key names its run no longer (enqueue reuses it); removed so the table stays small
    const purgeKeys = Effect.gen(function*() {
      const before = toIso((yield* Clock.currentTimeMillis) - idempotencyTtlMs)
      const purged = yield* runLog.purgeIdempotencyKeys(before)
      if (purged > 0) yield* Effect.logDebug("expired Idempotency-Keys removed", { keys: purged })
    })
    yield* sweepOrphans
    yield* Effect.all([heartbeat, sweepOrphans, purgeKeys], { discard: true }).pipe(
      Effect.catchAllDefect((defect) => Effect.logWarning("heartbeat failed", defect)),
      Effect.repeat(Schedule.spaced(every)),
      Effect.forkScoped
    )

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
          launch(enqueued.run.id, request, lockKey(request), queuedMs, observer),
          (done) => ({ runId: enqueued.run.id, created: true, await: Deferred.await(done) })
        )

    const accept = (
      request: RememberRequest,
      runOptions: AcceptOptions = {}
    ): Effect.Effect<SubmittedRun, IdempotencyConflict> =>
      Effect.gen(function*() {
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

    const enqueue = (request: RememberRequest, runOptions: RunOptions = {}): Effect.Effect<SubmittedRun> =>
      accept(request, { observer: runOptions.observer }).pipe(Effect.orDie)

    // Shutdown: refuse new work, leave what is queued queued, give in-flight runs a grace period.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        closing = true
        const all = yield* FiberSet.awaitEmpty(runs).pipe(
          // finalizers are uninterruptible: without this the timeout could never cut the wait
          Effect.interruptible,
          Effect.timeout(options.shutdownGrace ?? "30 seconds"),
          Effect.option
        )
        if (Option.isNone(all)) {
          yield* Effect.logWarning("interrupting runs still in flight at shutdown")
          yield* FiberSet.clear(runs)
        }
        // no beat after this: another process takes over this one's queued runs at once
        yield* runLog.leave(options.instanceId)
      }).pipe(Effect.catchAllDefect((defect) => Effect.logError("manager shutdown", defect)))
    )

    return RememberManager.of({
      enqueue,
      accept,
      acceptMany,
      submit: (request, runOptions) => Effect.flatMap(enqueue(request, runOptions), (run) => run.await)
    })
  })

export const RememberManagerLive = (options: RememberManagerOptions) =>
  Layer.scoped(RememberManager, makeRememberManager(options))
