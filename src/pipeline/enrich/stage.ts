/**
 * The stages that run after the text is stored (resolve_geo, web_search) never fail the call
 * (seed: Run log): whatever goes wrong is recorded on their stage (failed, with the error)
 * and in the items of the response, and the call goes on.
 */
import { Cause, Data, Effect, Option } from "effect"
import type { RunRecorder } from "../RunRecorder.js"

/** What an optional stage produced; `error` (one line) is recorded when some of it failed. */
export interface StageOutcome<A> {
  readonly value: A
  readonly error: string | null
  readonly detail: Record<string, unknown>
}

class PartlyFailed extends Data.TaggedError("PartlyFailed")<{ readonly message: string; readonly value: unknown }> {}

/** One line for a failure: the error's message, or the defect's; never a stack trace. */
export const describeCause = (cause: Cause.Cause<unknown>): string => {
  const failure = Option.orElse(Cause.failureOption(cause), () => Cause.dieOption(cause))
  if (Option.isNone(failure)) return Cause.isInterruptedOnly(cause) ? "interrupted" : "internal error"
  const e = failure.value as { readonly message?: unknown }
  return typeof e?.message === "string" ? e.message : String(failure.value)
}

/**
 * Runs `work` as stage `name`: succeeded when its outcome has no error, failed (with it)
 * otherwise; either way the outcome's value is returned. If the work itself fails or dies,
 * the stage is failed and `fallback` is returned.
 */
export const optionalStage = <A>(
  recorder: RunRecorder,
  name: string,
  work: Effect.Effect<StageOutcome<A>, unknown>,
  fallback: A
): Effect.Effect<A> =>
  recorder.stage(
    name,
    Effect.flatMap(work, (outcome) =>
      outcome.error === null
        ? Effect.succeed(outcome)
        : Effect.fail(new PartlyFailed({ message: outcome.error, value: outcome.value }))),
    (outcome) => outcome.detail
  ).pipe(
    Effect.map((outcome) => outcome.value),
    Effect.catchAllCause((cause) => {
      const failure = Cause.failureOption(cause)
      if (Option.isSome(failure) && failure.value instanceof PartlyFailed) {
        return Effect.as(
          Effect.logWarning(`${name} partly failed; continuing`, { error: failure.value.message }),
          failure.value.value as A
        )
      }
      return Effect.as(Effect.logWarning(`${name} failed; continuing`, { error: describeCause(cause) }), fallback)
    })
  )
