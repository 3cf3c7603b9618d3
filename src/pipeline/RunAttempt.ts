/**
 * One remember run's attempts in this process, as a small state machine, and its retry policy.
 *
 * An attempt is `Queued` (waiting for its place, a permit or the lock; the run log has it
 * `queued`), then `Taken` once the run log gave it to this process (`started`: a crash from here
 * runs it again elsewhere), then `Applying` once its reads and writes of the dataset began (cut
 * at shutdown now, it may have stored some chunks). A transient failure after the take (the
 * provider's timeout, 429, 5xx) that the run log could queue again (nothing was stored) makes it
 * `Requeued`, and the attempt runs again after the policy's delay: `retryDelay` doubled each
 * time, while the run has had fewer than `maxAttempts` starts, crashes of earlier processes
 * included. What happens when a run ends (finish its row, leave it queued) is read off the
 * state, not off flags kept beside it.
 *
 * The states of all the runs a manager holds are one map, and the queue-depth gauge is counted
 * from it on every change: queued (`Queued`, `Requeued`) and running (`Taken`, `Applying`).
 */
import { Data, Duration, Effect, HashMap, Option, Ref, Schedule } from "effect"
import type { RememberError } from "../domain/Errors.js"
import { setQueueDepth } from "../telemetry/metrics.js"

export type AttemptState = Data.TaggedEnum<{
  Queued: {}
  Taken: { readonly attempts: number }
  Applying: { readonly attempts: number }
  Requeued: { readonly attempts: number }
}>
export const AttemptState = Data.taggedEnum<AttemptState>()

/** The run log has the run `started` by this attempt (its attempts count this one). */
export const isTaken = (
  state: AttemptState
): state is Data.TaggedEnum.Value<AttemptState, "Taken" | "Applying"> =>
  state._tag === "Taken" || state._tag === "Applying"

/** A cause a later attempt may not meet: the provider's own failure, not its answer or our input. */
export const isTransient = (error: RememberError): boolean =>
  (error._tag === "LlmFailed" || error._tag === "EmbeddingFailed") && error.retryable === true

/** The waits between attempts: `retryDelay`, doubled each time, for at most `maxAttempts - 1` of them. */
export const retryPolicy = (retryDelay: Duration.DurationInput, maxAttempts: number) =>
  Schedule.exponential(retryDelay).pipe(Schedule.intersect(Schedule.recurs(Math.max(0, maxAttempts - 1))))

/** The queue-depth gauge's figures for these states. */
export const depthOf = (states: HashMap.HashMap<number, AttemptState>) => {
  let running = 0
  for (const state of HashMap.values(states)) if (isTaken(state)) running++
  return { queued: HashMap.size(states) - running, running }
}

export interface AttemptPolicy {
  /** starts of a run (any process's) after which a transient failure fails it for good */
  readonly maxAttempts: number
  readonly retryDelay: Duration.DurationInput
  /** true once the manager shuts down: a failed run is no longer queued again */
  readonly closing: Effect.Effect<boolean>
  /** queues the run again in the run log; false when it cannot be (something of it was stored) */
  readonly requeue: (runId: number, error: RememberError) => Effect.Effect<boolean>
}

export interface RunAttempt {
  readonly state: Effect.Effect<AttemptState>
  /** the run log gave the run to this attempt; `attempts` counts its starts, other processes' included */
  readonly taken: (attempts: number) => Effect.Effect<void>
  /** the run's ordered part (its reads and writes of the dataset) begins */
  readonly applying: Effect.Effect<void>
  /** `once`, run again after the policy's wait each time its failure queued the run again */
  readonly retried: <A>(once: Effect.Effect<A, RememberError>) => Effect.Effect<A, RememberError>
  /** the run has ended: it leaves the states (and the gauge) */
  readonly end: Effect.Effect<void>
}

export interface RunAttempts {
  /** the attempts of a run, `Queued` from now until `end` */
  readonly begin: (runId: number) => Effect.Effect<RunAttempt>
  /** the state of every run begun and not ended */
  readonly states: Effect.Effect<HashMap.HashMap<number, AttemptState>>
}

/** The attempts of one manager's runs; their states are the manager's, never shared. */
export const makeRunAttempts = (policy: AttemptPolicy): Effect.Effect<RunAttempts> =>
  Effect.map(Ref.make(HashMap.empty<number, AttemptState>()), (states) => {
    const schedule = retryPolicy(policy.retryDelay, policy.maxAttempts)
    const update = (runId: number, f: (state: Option.Option<AttemptState>) => Option.Option<AttemptState>) =>
      Ref.updateAndGet(states, HashMap.modifyAt(runId, f)).pipe(
        Effect.flatMap((all) => {
          const { queued, running } = depthOf(all)
          return setQueueDepth(queued, running)
        })
      )

    const attempt = (runId: number): RunAttempt => {
      const set = (state: AttemptState) => update(runId, () => Option.some(state))
      const state = Effect.map(
        Ref.get(states),
        (all) => Option.getOrElse(HashMap.get(all, runId), () => AttemptState.Queued())
      )
      /** after a failure: queued again in the run log when a later attempt may do better */
      const requeueIfTransient = (error: RememberError) =>
        Effect.gen(function*() {
          const now = yield* state
          if (!isTaken(now) || !isTransient(error) || now.attempts >= policy.maxAttempts) return
          if ((yield* policy.closing) || !(yield* policy.requeue(runId, error))) return
          yield* set(AttemptState.Requeued({ attempts: now.attempts }))
          // the schedule's next wait: exponential, so `retryDelay` × 2^(retries so far)
          const { recurrence } = yield* Schedule.CurrentIterationMetadata
          yield* Effect.logWarning("remember run failed on a transient cause; queued again", {
            error: error.message,
            attempts: now.attempts,
            retryIn: Duration.format(Duration.times(policy.retryDelay, 2 ** recurrence))
          })
        })
      return {
        state,
        taken: (attempts) => set(AttemptState.Taken({ attempts })),
        applying: update(runId, Option.map((s) => s._tag === "Taken" ? AttemptState.Applying(s) : s)),
        retried: (once) =>
          Effect.zipRight(set(AttemptState.Queued()), once).pipe(
            Effect.tapError(requeueIfTransient),
            Effect.retry({ schedule, while: () => Effect.map(state, (s) => s._tag === "Requeued") })
          ),
        end: update(runId, () => Option.none())
      }
    }

    return {
      begin: (runId) => Effect.as(update(runId, () => Option.some(AttemptState.Queued())), attempt(runId)),
      states: Ref.get(states)
    }
  })
