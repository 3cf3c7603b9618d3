/**
 * What one remember run hands from stage to stage. It is immutable: a stage that learns
 * something the later ones need (the first store creates the dataset) returns it, and the
 * program passes the next stages a new context.
 */
import type { RememberRequest } from "../../domain/Remember.js"
import type { CallContext, EmbedContext } from "../ModelCalls.js"
import type { RunRecorder } from "../RunRecorder.js"
import type { RememberDeps } from "./Deps.js"
import type { VectorCache } from "./embed.js"

export interface RunContext {
  readonly deps: RememberDeps
  readonly runId: number
  readonly request: RememberRequest
  readonly referenceTime: string
  readonly recorder: RunRecorder
  /** text -> vector, so a text is embedded once per run */
  readonly cache: VectorCache
  /** the dataset as far as the run knows it: null until the first store creates a new one */
  readonly datasetId: number | null
}

/** The context once the run has stored into dataset `datasetId`. */
export const inDataset = (ctx: RunContext, datasetId: number): RunContext =>
  ctx.datasetId === datasetId ? ctx : { ...ctx, datasetId }

/**
 * The context for work done on behalf of stage `stage` (web search, series): its inferences
 * are filed under that stage and its own stages write no run-log rows.
 */
export const onBehalfOf = (ctx: RunContext, stage: string): RunContext => ({
  ...ctx,
  recorder: ctx.recorder.within(stage)
})

/** How a model call of stage `runStage` is recorded. */
export const callContext = (ctx: RunContext, runStage: string): CallContext => ({
  llm: ctx.deps.llm,
  inferences: ctx.deps.inferences,
  prices: ctx.deps.settings.prices,
  type: "remember",
  runId: ctx.runId,
  datasetId: ctx.datasetId,
  recorder: ctx.recorder,
  runStage
})

/** How an embeddings request of stage `runStage` is recorded. */
export const embedContext = (ctx: RunContext, runStage: string): EmbedContext => ({
  embeddings: ctx.deps.embeddings,
  inferences: ctx.deps.inferences,
  prices: ctx.deps.settings.prices,
  type: "remember",
  runId: ctx.runId,
  datasetId: ctx.datasetId,
  recorder: ctx.recorder,
  runStage
})
