/**
 * The events of `GET /v1/gb/runs/{id}/events`: what changed between two reads of a run. The
 * stream polls the run log and emits `diffRun(previous, current)`; pure, so it is tested alone.
 */
import type { RunStageRow, RunWithStages } from "./Rows.js"
import { type RememberRun, runView } from "./runView.js"

/** A stage row as its `stage` event carries it. */
export interface StageEventData {
  readonly stage: string
  readonly status: RunStageRow["status"]
  readonly started_at: string | null
  readonly finished_at: string | null
  readonly duration_ms: number | null
  readonly error: string | null
}

export interface ProgressEventData {
  readonly stage: string
  readonly chunks_done: number
  readonly chunks_total: number
}

/** The events that end a stream: the run's final status. */
export type FinalEvent = "succeeded" | "failed" | "cancelled"

export type RunEvent =
  | { readonly event: "queued" | "started" | FinalEvent; readonly data: RememberRun }
  | { readonly event: "stage"; readonly data: StageEventData }
  | { readonly event: "progress"; readonly data: ProgressEventData }

export const RUN_EVENT_NAMES = ["queued", "started", "stage", "progress", "succeeded", "failed", "cancelled"] as const

/** A run in a final status: succeeded, failed, or cancelled while it was queued. */
export const isFinished = (run: RunWithStages) =>
  run.status === "succeeded" || run.status === "failed" || run.status === "cancelled"

const stageData = (s: RunStageRow): StageEventData => ({
  stage: s.stage,
  status: s.status,
  started_at: s.started_at,
  finished_at: s.finished_at,
  duration_ms: s.duration_ms,
  error: s.error
})

/**
 * The events that lead from `previous` (undefined: the stream just opened) to `current`, in
 * order: the run's `queued`/`started`, then its stages (pipeline order), their progress, and
 * last the final `succeeded`/`failed`/`cancelled`. A run already finished when the stream opens gives its
 * final event only. A stage that started and ended between two reads gives its start (the row
 * with `status: "started"` and no end yet) and then its end, so every stage has both.
 */
export const diffRun = (previous: RunWithStages | undefined, current: RunWithStages): ReadonlyArray<RunEvent> => {
  if (previous === undefined && isFinished(current)) {
    return [{ event: current.status as FinalEvent, data: runView(current) }]
  }
  const out: Array<RunEvent> = []
  const prevStatus = previous?.status
  if (current.status === "queued") {
    if (prevStatus !== "queued") out.push({ event: "queued", data: runView(current) })
    return out
  }
  // started or finished: it started since the last read (or a run taken over started again)
  const restarted = previous !== undefined && current.attempts > previous.attempts
  if (
    (prevStatus === undefined || prevStatus === "queued" || restarted) &&
    current.started_at !== null
  ) {
    out.push({ event: "started", data: runView({ ...current, status: "started" }) })
  }
  const before = new Map((restarted ? [] : previous?.stages ?? []).map((s) => [s.stage, s]))
  for (const stage of current.stages) {
    if (stage.status === "not_started") continue
    const was = before.get(stage.stage)
    const ended = stage.status !== "started"
    if (was === undefined) {
      // its start; a stage that started and ended between two reads shows its start first too
      out.push({
        event: "stage",
        data: ended
          ? { ...stageData(stage), status: "started", finished_at: null, duration_ms: null, error: null }
          : stageData(stage)
      })
    }
    const progress = stage.progress
    if (
      progress !== null &&
      (was?.progress?.chunks_done !== progress.chunks_done || was?.progress?.chunks_total !== progress.chunks_total)
    ) {
      out.push({ event: "progress", data: { stage: stage.stage, ...progress } })
    }
    if (ended && (was === undefined || was.status !== stage.status)) {
      out.push({ event: "stage", data: stageData(stage) })
    }
  }
  if (isFinished(current)) out.push({ event: current.status as FinalEvent, data: runView(current) })
  return out
}

/**
 * An event's id: where it stands in the run, `attempt.stage.phase.chunks` (the stage by its place
 * in the pipeline; phase 1 its start, 2 its progress, 3 its end). The same event gets the same id
 * on every connection, so a client reconnecting with `Last-Event-ID` is sent what comes after it.
 */
export const eventId = (e: RunEvent, run: RunWithStages): string => {
  const stageIndex = (stage: string) => run.stages.findIndex((s) => s.stage === stage) + 1
  switch (e.event) {
    case "queued":
      return "0.0.0.0"
    case "started":
      return `${run.attempts}.0.0.0`
    case "stage":
      return `${run.attempts}.${stageIndex(e.data.stage)}.${e.data.status === "started" ? 1 : 3}.0`
    case "progress":
      return `${run.attempts}.${stageIndex(e.data.stage)}.2.${e.data.chunks_done}`
    case "succeeded":
    case "failed":
    case "cancelled":
      return `${run.attempts}.${run.stages.length + 1}.0.0`
  }
}

/** Orders event ids (see eventId); an id that is not one sorts first, so everything is sent after it. */
export const compareEventIds = (a: string, b: string): number => {
  const parts = (id: string) => (/^\d+\.\d+\.\d+\.\d+$/.test(id) ? id.split(".").map(Number) : [-1, 0, 0, 0])
  const [x, y] = [parts(a), parts(b)]
  for (let i = 0; i < 4; i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return 0
}

/** How long a client waits before it reconnects (the stream's first line). */
export const SSE_RETRY_MS = 3000

/** One event on the wire: `id: <id>\nevent: <name>\ndata: <json>\n\n`. */
export const sseFrame = (e: RunEvent, id: string): string =>
  `id: ${id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`
