/**
 * The pipeline's view of its run-log row: stage start and end, inference ids, details.
 * Writing the log never fails the call: a row that cannot be written is logged and skipped
 * (spec: Run log). Writes happen outside the store transaction (stages wrap it), so a
 * rolled-back store still leaves its failed stage in the log.
 *
 * A stage can run several times in one call (once per chunk, some concurrently): its row is
 * `started` from the first entry, `failed` as soon as one run fails, and `succeeded` when
 * the last one in flight ends with none failed; its duration spans them all.
 *
 * The same reports also go to the run's observer when it has one (eval mode: the ATIF
 * trajectory is built from them), so the run log and the trajectory are two views of one
 * mechanism. Without an observer nothing else happens.
 *
 * Each execution of a stage is also a span, `remember.<stage>`, and a sample of the stage
 * duration histogram: this is the one place every stage passes through.
 */
import { Cause, Clock, Effect, FiberRef, HashMap, Option, Ref, type Tracer } from "effect"
import { InternalFailure, type NotFound } from "../domain/Errors.js"
import type { InferenceRow } from "../domain/Rows.js"
import { toIso } from "../domain/time.js"
import { type RunLogRepo, RunRemoved } from "../services/RunLogRepo.js"
import type { ModelCall, RunObserver, StageRunRef, StageTrace } from "../services/RunObserver.js"
import { stageFinished } from "../telemetry/metrics.js"

export interface RunRecorder {
  readonly runId: number
  /**
   * runs `effect` as stage `name`: started before, succeeded or failed (with the error) after;
   * `detail` is what the run log keeps of the result, `trace` a fuller view for an observer
   */
  readonly stage: <A, E, R>(
    name: string,
    effect: Effect.Effect<A, E, R>,
    detail?: (a: A) => Record<string, unknown> | null,
    trace?: (a: A) => StageTrace
  ) => Effect.Effect<A, E | InternalFailure | NotFound, R>
  /** a model call (its gb_inferences row), filed under run-log stage `stage` */
  readonly modelCall: (stage: string, inference: InferenceRow, call: ModelCall) => Effect.Effect<void>
  /** chunked texts: how many chunks are done (shown on the chunk_text stage) */
  readonly progress: (done: number, total: number) => Effect.Effect<void>
  /**
   * A view of the log for work done on behalf of stage `stage` (web search, series
   * observations): its own stages write no rows, and every inference it records is filed
   * under `stage`, so each inference is in exactly one stage of one run.
   */
  readonly within: (stage: string) => RunRecorder
}

/** The innermost stage execution of the current fiber (only set for runs with an observer). */
const currentStageRun = FiberRef.unsafeMake<StageRunRef | null>(null)
const stepLabels = FiberRef.unsafeMake<Readonly<Record<string, unknown>>>({})

/** Labels the stages and model calls of `effect` for observers (e.g. the chunk index). */
export const withStepLabels =
  (labels: Readonly<Record<string, unknown>>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.locallyWith(effect, stepLabels, (outer) => ({ ...outer, ...labels }))

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

/** A stage's executions so far: how many are in flight, when the first began, whether one failed. */
interface StageState {
  readonly active: number
  readonly firstStartMs: number
  readonly failed: boolean
}

/**
 * An infrastructure defect fails the call with a 500 that names the stage, never a trace; a
 * store whose run a forget removed fails as that run's 404.
 */
const defectAsFailure =
  (logLabel: string, label: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | InternalFailure | NotFound, R> =>
    effect.pipe(
      Effect.catchAllDefect((defect): Effect.Effect<never, InternalFailure | NotFound> =>
        defect instanceof RunRemoved ? Effect.fail(defect.notFound) : Effect.zipRight(
          Effect.logError(`stage ${logLabel} died`, defect),
          Effect.fail(new InternalFailure({ message: `${label} failed with an internal error` }))
        )
      )
    )

/** What the observer side of a recorder needs: the observer and the run's stage counter. */
interface Observing {
  readonly observer: RunObserver
  /** the id of the run's next stage execution */
  readonly nextStageRun: Ref.Ref<number>
}

const notify = (what: string, f: () => void) => safely(what, Effect.sync(f))

/**
 * Runs `effect` as one execution of a stage for the observer: the current stage run is set
 * for what happens inside, and the end is reported with the detail and the trace.
 */
const observed = <A, E, R>(
  observing: Observing,
  name: string,
  within: string | null,
  effect: Effect.Effect<A, E, R>,
  detail: ((a: A) => Record<string, unknown> | null) | undefined,
  trace: ((a: A) => StageTrace) | undefined
): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    const startedMs = yield* Clock.currentTimeMillis
    const run: StageRunRef = {
      id: yield* Ref.getAndUpdate(observing.nextStageRun, (n) => n + 1),
      stage: name,
      within,
      labels: yield* FiberRef.get(stepLabels)
    }
    return yield* effect.pipe(
      Effect.locally(currentStageRun, run),
      Effect.onExit((exit) =>
        Effect.flatMap(Clock.currentTimeMillis, (endMs) =>
          notify("report a stage to the observer", () => {
            const ok = exit._tag === "Success"
            observing.observer.stageFinished({
              run,
              startedAt: toIso(startedMs),
              finishedAt: toIso(endMs),
              durationMs: endMs - startedMs,
              status: ok ? "succeeded" : "failed",
              error: ok ? null : errorMessage(exit.cause),
              detail: ok && detail !== undefined ? detail(exit.value) : null,
              trace: ok && trace !== undefined ? trace(exit.value) : null
            })
          }))
      )
    )
  })

const reportCall = (observing: Observing | null, runStage: string, inference: InferenceRow, call: ModelCall) =>
  observing === null
    ? Effect.void
    : Effect.flatMap(
      FiberRef.get(currentStageRun),
      (run) =>
        notify(
          "report a model call to the observer",
          () => observing.observer.modelCalled({ run, runStage, inference, call })
        )
    )

/** See RunRecorder.within. */
const scopedTo = (parent: RunRecorder, stage: string, observing: Observing | null): RunRecorder => {
  const view: RunRecorder = {
    runId: parent.runId,
    // no stage rows, but the same defect handling as a real stage
    stage: (name, effect, detail, trace) => {
      const guarded = defectAsFailure(`${stage}/${name}`, `${stage} (${name})`)(effect)
      return observing === null ? guarded : observed(observing, name, stage, guarded, detail, trace)
    },
    modelCall: (_, inference, call) => parent.modelCall(stage, inference, call),
    progress: () => Effect.void,
    within: () => view
  }
  return view
}

/** What a stage's span says of its run: ids and names, never a text. */
export type StageSpanAttributes = Readonly<Record<string, string | number>>

/**
 * `effect` in the span `remember.<name>`. Several stages are already an `Effect.fn` of that very
 * name around their recorder call; those spans get the attributes instead of a twin nested in them.
 */
const inStageSpan = <A, E, R>(name: string, attributes: StageSpanAttributes, effect: Effect.Effect<A, E, R>) => {
  const spanName = `remember.${name}`
  return Effect.flatMap(
    Effect.option(Effect.currentSpan),
    (current: Option.Option<Tracer.Span>) =>
      Option.isSome(current) && current.value.name === spanName
        ? Effect.zipRight(Effect.annotateCurrentSpan({ ...attributes, stage: name }), effect)
        : Effect.withSpan(effect, spanName, { attributes: { ...attributes, stage: name } })
  )
}

/** An execution of stage `name` begins: whether it is the only one in flight (its row starts). */
const enter = (states: Ref.Ref<HashMap.HashMap<string, StageState>>, name: string, startedMs: number) =>
  Ref.modify(states, (all) => {
    const state = Option.getOrElse(
      HashMap.get(all, name),
      () => ({ active: 0, firstStartMs: startedMs, failed: false })
    )
    const next = { ...state, active: state.active + 1 }
    return [next.active === 1, HashMap.set(all, name, next)] as const
  })

/**
 * An execution of stage `name` ends: whether its row is written now, and from when. A success
 * is written only when nothing else of the stage is in flight or failed; a failure always is.
 */
const leave = (states: Ref.Ref<HashMap.HashMap<string, StageState>>, name: string, failed: boolean) =>
  Ref.modify(states, (all) => {
    const state = Option.getOrThrow(HashMap.get(all, name))
    const next = { ...state, active: state.active - 1, failed: state.failed || failed }
    const write = failed || (!state.failed && next.active === 0)
    return [{ write, firstStartMs: state.firstStartMs }, HashMap.set(all, name, next)] as const
  })

const rememberMode = (
  modes: Ref.Ref<HashMap.HashMap<string, ReadonlyArray<string>>>,
  stage: string,
  inference: InferenceRow
) => {
  const mode = inference.structured_mode
  if (mode === null || mode === undefined) return Effect.void
  return Ref.update(modes, (all) => {
    const seen: ReadonlyArray<string> = Option.getOrElse(HashMap.get(all, stage), () => [])
    return seen.includes(mode) ? all : HashMap.set(all, stage, [...seen, mode])
  })
}

/**
 * The stage's detail with `structured_mode`: how its model calls' answers were constrained (one
 * mode, or the list when calls of the stage differed, e.g. a fallback taken mid-run).
 */
const withStructuredMode = (
  detail: Record<string, unknown> | null,
  stageModes: ReadonlyArray<string>
): Record<string, unknown> | null =>
  stageModes.length === 0
    ? detail
    : { ...detail, structured_mode: stageModes.length === 1 ? stageModes[0] : stageModes }

export const makeRunRecorder = (
  runLog: RunLogRepo["Type"],
  runId: number,
  observer?: RunObserver,
  spanAttributes: StageSpanAttributes = {}
): RunRecorder => {
  const attributes = { ...spanAttributes, run_id: runId }
  // Refs, since a run's stages execute concurrently; made unsafely because a recorder is made
  // outside an effect (the image pipeline's too)
  const states = Ref.unsafeMake(HashMap.empty<string, StageState>())
  // the structured modes of the model calls filed under each stage, in the order first seen
  const modes = Ref.unsafeMake(HashMap.empty<string, ReadonlyArray<string>>())
  const observing: Observing | null = observer === undefined
    ? null
    : { observer, nextStageRun: Ref.unsafeMake(1) }
  const recorder: RunRecorder = {
    runId,
    stage: (name, effect, detail, trace) =>
      inStageSpan(
        name,
        attributes,
        Effect.gen(function*() {
          const startedMs = yield* Clock.currentTimeMillis
          if (yield* enter(states, name, startedMs)) {
            yield* safely("start stage", runLog.stageStarted(runId, name, toIso(startedMs)))
          }
          const finish = (status: "succeeded" | "failed", error: string | null, d: Record<string, unknown> | null) =>
            Effect.gen(function*() {
              const endMs = yield* Clock.currentTimeMillis
              yield* stageFinished(name, endMs - startedMs)
              const { firstStartMs, write } = yield* leave(states, name, status === "failed")
              if (!write) return
              const stageModes: ReadonlyArray<string> = Option.getOrElse(
                HashMap.get(yield* Ref.get(modes), name),
                () => []
              )
              yield* safely(
                "finish stage",
                runLog.stageFinished(runId, name, {
                  status,
                  finished_at: toIso(endMs),
                  duration_ms: endMs - firstStartMs,
                  error,
                  detail: withStructuredMode(d, stageModes)
                })
              )
            })
          const guarded = defectAsFailure(name, name)(effect)
          return yield* (observing === null ? guarded : observed(observing, name, null, guarded, detail, trace)).pipe(
            Effect.onExit((exit) =>
              exit._tag === "Success"
                ? finish("succeeded", null, detail === undefined ? null : detail(exit.value))
                : finish("failed", errorMessage(exit.cause), null)
            )
          )
        })
      ),
    modelCall: (stage, inference, call) =>
      Effect.zipRight(
        Effect.zipRight(
          rememberMode(modes, stage, inference),
          safely("add inference", runLog.addInference(runId, stage, inference.id))
        ),
        reportCall(observing, stage, inference, call)
      ),
    progress: (done, total) =>
      safely("set progress", runLog.setProgress(runId, "chunk_text", { chunks_done: done, chunks_total: total })),
    within: (stage) => scopedTo(recorder, stage, observing)
  }
  return recorder
}
