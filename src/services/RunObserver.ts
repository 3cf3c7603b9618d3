/**
 * A second listener on a remember run's own reports (eval mode builds its ATIF trajectory from
 * them). The pipeline reports every stage end and every model call to its run recorder; the
 * recorder writes the run log and, when the run has an observer, tells it the same things with
 * more detail. Callbacks are synchronous and must not throw (a throw is logged and ignored).
 */
import type { InferenceRow } from "../domain/Rows.js"
import type { LlmRequest, LlmResponse } from "./Llm.js"

/** One execution of a stage (a stage can run several times in a call: once per chunk). */
export interface StageRunRef {
  /** unique within the run, in start order */
  readonly id: number
  readonly stage: string
  /** the stage this work is done on behalf of (web_search, observe_series, ...), or null */
  readonly within: string | null
  /** labels the pipeline put on the work, e.g. `{ chunk: 2 }` */
  readonly labels: Readonly<Record<string, unknown>>
}

/** A fuller view of a stage's result than the run log keeps, computed only for observers. */
export interface StageTrace {
  readonly arguments?: Record<string, unknown> | undefined
  readonly observation?: unknown
}

export interface StageReport {
  readonly run: StageRunRef
  readonly startedAt: string
  readonly finishedAt: string
  /** of this execution only (the run log's duration spans all executions of the stage) */
  readonly durationMs: number
  readonly status: "succeeded" | "failed"
  readonly error: string | null
  /** what the run log records for the stage (null when it failed) */
  readonly detail: Record<string, unknown> | null
  readonly trace: StageTrace | null
}

export type ModelCall =
  | {
    readonly kind: "llm"
    readonly request: LlmRequest
    /** null when the call failed */
    readonly response: LlmResponse | null
  }
  | {
    readonly kind: "embeddings"
    readonly texts: ReadonlyArray<string>
    /** vectors returned (0 when the call failed) */
    readonly vectors: number
  }

export interface ModelCallReport {
  /** the innermost stage execution the call was made in */
  readonly run: StageRunRef | null
  /** the run-log stage the inference is filed under */
  readonly runStage: string
  /** the gb_inferences row, as recorded */
  readonly inference: InferenceRow
  readonly call: ModelCall
}

export interface RunObserver {
  readonly stageFinished: (report: StageReport) => void
  readonly modelCalled: (report: ModelCallReport) => void
}
