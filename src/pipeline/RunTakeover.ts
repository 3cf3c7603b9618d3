/**
 * How a manager shows it is alive to the processes sharing its database, and takes over the runs
 * of those that died; kept apart from the manager because it is about processes, not runs.
 *
 * It beats every `heartbeatEvery`. A process that has not beaten for three periods is dead: its
 * queued and started runs are taken over, run again from the start when their request is still
 * queued and they have had fewer than `maxAttempts` starts, else failed `interrupted`. The sweep
 * runs at startup and after every beat: a process restarted right after a crash sees the dead
 * one as alive at first, and must still take its runs once its beats are stale. Expired
 * Idempotency-Keys are removed on the same beat, so their table stays small.
 */
import { Clock, Duration, Effect, Either, Schedule } from "effect"
import { InvalidRequest } from "../domain/Errors.js"
import { type RememberRequest, validateRememberRequest } from "../domain/Remember.js"
import { toIso } from "../domain/time.js"
import type { RunLogRepo } from "../services/RunLogRepo.js"

export interface TakeoverOptions {
  readonly instanceId: string
  readonly heartbeatEvery: Duration.DurationInput
  readonly maxAttempts: number
  readonly idempotencyTtlMs: number
  /** true once the manager shuts down: it beats and takes over no more */
  readonly closing: Effect.Effect<boolean>
}

/** A dead process's run to run again: its request, or none when it no longer decodes (it can only fail). */
export interface TakenOver {
  readonly runId: number
  readonly request: RememberRequest | undefined
  readonly at: number
}

const decodeQueued = (request: string): RememberRequest | undefined =>
  Either.getOrUndefined(Either.flatMap(
    Either.try({
      try: () => JSON.parse(request) as unknown,
      catch: () => new InvalidRequest({ message: "the queued request is not JSON" })
    }),
    validateRememberRequest
  ))

/** Beats and sweeps once now, then forks the beat into the caller's scope. */
export const keepAlive = (
  runLog: RunLogRepo["Type"],
  options: TakeoverOptions,
  launch: (run: TakenOver) => Effect.Effect<unknown>
) =>
  Effect.gen(function*() {
    const every = Duration.decode(options.heartbeatEvery)
    const heartbeat = Effect.unlessEffect(
      Effect.flatMap(Clock.currentTimeMillis, (now) => runLog.heartbeat(options.instanceId, toIso(now))),
      options.closing
    )
    const sweep = Effect.gen(function*() {
      if (yield* options.closing) return
      const now = yield* Clock.currentTimeMillis
      const staleBefore = toIso(now - Duration.toMillis(every) * 3)
      const recovered = yield* runLog.recoverOrphaned(
        options.instanceId,
        staleBefore,
        options.maxAttempts,
        "interrupted",
        toIso(now)
      )
      if (recovered.failed > 0) yield* Effect.logWarning("failed runs of a dead process", { runs: recovered.failed })
      if (recovered.requeued.length > 0) {
        yield* Effect.logWarning("running again the queued runs of a dead process", {
          runs: recovered.requeued.map((r) => r.id)
        })
      }
      // launched in submission order, as the run log gives them
      yield* Effect.forEach(
        recovered.requeued,
        ({ id, request }) => launch({ runId: id, request: decodeQueued(request), at: now }),
        { discard: true }
      )
    })
    const purgeKeys = Effect.gen(function*() {
      const before = toIso((yield* Clock.currentTimeMillis) - options.idempotencyTtlMs)
      const purged = yield* runLog.purgeIdempotencyKeys(before)
      if (purged > 0) yield* Effect.logDebug("expired Idempotency-Keys removed", { keys: purged })
    })
    yield* heartbeat
    yield* sweep
    yield* Effect.all([heartbeat, sweep, purgeKeys], { discard: true }).pipe(
      Effect.catchAllDefect((defect) => Effect.logWarning("heartbeat failed", defect)),
      Effect.repeat(Schedule.spaced(every)),
      Effect.forkScoped
    )
  })
