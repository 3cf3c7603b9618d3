/**
 * The pipeline's view of its run-log row: stage start and end, inference ids, details.
 * Writing the log never fails the call: a row that cannot be written is logged and skipped
 * (spec: Run log). Writes happen outside the store transaction (stages wrap it), so a
 * rolled-back store still leaves its failed stage in the log.
 *
 * A stage can run several times in one call (once per chunk, some concurrently): its row is
 * `started` from the first entry, `failed` as soon as one run fails, and `succeeded` when
 * the last one in flight ends with none failed; its duration spans them all.
 */
import { Cause, Clock, Effect, Option } from "effect"
import { InternalFailure } from "../domain/Errors.js"
import { toIso } from "../domain/time.js"
import type { RunLogRepo } from "../services/RunLogRepo.js"

export interface RunRecorder {
  readonly runId: number
  /** runs `effect` as stage `name`: started before, succeeded or failed (with the error) after */
  readonly stage: <A, E, R>(
    name: string,
    effect: Effect.Effect<A, E, R>,
    detail?: (a: A) => Record<string, unknown> | null
  ) => Effect.Effect<A, E | InternalFailure, R>
  readonly addInference: (stage: string, inferenceId: number) => Effect.Effect<void>
  /** chunked texts: how many chunks are done (shown on the chunk_text stage) */
  readonly progress: (done: number, total: number) => Effect.Effect<void>
  /**
   * A view of the log for work done on behalf of stage `stage` (web search, series
   * observations): its own stages write no rows, and every inference it records is filed
   * under `stage`, so each inference is in exactly one stage of one run.
   */
  readonly within: (stage: string) => RunRecorder
}

const safely = <R>(what: string, effect: Effect.Effect<void, never, R>) =>
  effect.pipe(Effect.catchAllDefect((defect) => Effect.logWarning(`run log: could not ${what}`, defect)))

const errorMessage = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const e = failure.value as { message?: unknown }
    return typeof e?.message === "string" ? e.message : String(failure.value)
  }
  if (Cause.isInterruptedOnly(cause)) return "interrupted"
  return "internal error"
}

interface StageState {
  active: number
  firstStartMs: number
  failed: boolean
}

/** See RunRecorder.within. */
const scopedTo = (parent: RunRecorder, stage: string): RunRecorder => {
  const view: RunRecorder = {
    runId: parent.runId,
    // no stage rows, but the same defect handling as a real stage
    stage: (name, effect) =>
      effect.pipe(
        Effect.catchAllDefect((defect) =>
          Effect.zipRight(
            Effect.logError(`stage ${stage}/${name} died`, defect),
            Effect.fail(new InternalFailure({ message: `${stage} (${name}) failed with an internal error` }))
          )
        )
      ),
    addInference: (_, inferenceId) => parent.addInference(stage, inferenceId),
    progress: () => Effect.void,
    within: () => view
  }
  return view
}

export const makeRunRecorder = (runLog: RunLogRepo["Type"], runId: number): RunRecorder => {
  const states = new Map<string, StageState>()
  const recorder: RunRecorder = {
    runId,
    stage: (name, effect, detail) =>
      Effect.gen(function*() {
        const startedMs = yield* Clock.currentTimeMillis
        const state = states.get(name) ?? { active: 0, firstStartMs: startedMs, failed: false }
        states.set(name, state)
        state.active++
        if (state.active === 1) yield* safely("start stage", runLog.stageStarted(runId, name, toIso(startedMs)))
        const finish = (status: "succeeded" | "failed", error: string | null, d: Record<string, unknown> | null) =>
          Effect.flatMap(Clock.currentTimeMillis, (endMs) => {
            state.active--
            // a success is written only when nothing else of this stage is in flight or failed
            if (status === "succeeded" && (state.failed || state.active > 0)) return Effect.void
            if (status === "failed") state.failed = true
            return safely(
              "finish stage",
              runLog.stageFinished(runId, name, {
                status,
                finished_at: toIso(endMs),
                duration_ms: endMs - state.firstStartMs,
                error,
                detail: d
              })
            )
          })
        return yield* effect.pipe(
          // An infrastructure defect fails the call with a 500 that names the stage, never a trace.
          Effect.catchAllDefect((defect) =>
            Effect.zipRight(
              Effect.logError(`stage ${name} died`, defect),
              Effect.fail(new InternalFailure({ message: `${name} failed with an internal error` }))
            )
          ),
          Effect.onExit((exit) =>
            exit._tag === "Success"
              ? finish("succeeded", null, detail === undefined ? null : detail(exit.value))
              : finish("failed", errorMessage(exit.cause), null)
          )
        )
      }),
    addInference: (stage, inferenceId) => safely("add inference", runLog.addInference(runId, stage, inferenceId)),
    progress: (done, total) =>
      safely("set progress", runLog.setProgress(runId, "chunk_text", { chunks_done: done, chunks_total: total })),
    within: (stage) => scopedTo(recorder, stage)
  }
  return recorder
}
