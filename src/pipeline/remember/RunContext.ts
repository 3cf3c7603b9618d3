/**
 * What one remember run hands from stage to stage. It is immutable: a stage that learns
 * something the later ones need (the first store creates the dataset) returns it, and the
 * program passes the next stages a new context.
 */
import type { DatasetSchema } from "../../domain/DatasetSchema.js"
import type { RememberRequest } from "../../domain/Remember.js"
import type { DatasetRow } from "../../domain/Rows.js"
import type { ComplexityClassifier } from "../../services/ComplexityClassifier.js"
import type { Database } from "../../services/Database.js"
import type { DatasetsRepo } from "../../services/DatasetsRepo.js"
import type { Embeddings } from "../../services/Embeddings.js"
import type { ForgetRepo } from "../../services/ForgetRepo.js"
import type { GeoRepo } from "../../services/GeoRepo.js"
import type { GeoResolver } from "../../services/GeoResolver.js"
import type { GraphRepo } from "../../services/GraphRepo.js"
import type { InferencesRepo } from "../../services/InferencesRepo.js"
import type { Llm } from "../../services/Llm.js"
import type { RunLogRepo } from "../../services/RunLogRepo.js"
import type { SeriesRepo } from "../../services/SeriesRepo.js"
import type { TimeseriesProviders } from "../../services/TimeseriesProviders.js"
import type { VectorOutbox } from "../../services/VectorOutbox.js"
import type { VectorStore } from "../../services/VectorStore.js"
import type { CallContext, EmbedContext } from "../ModelCalls.js"
import type { RunRecorder } from "../RunRecorder.js"
import type { RememberSettingsShape } from "../Settings.js"
import type { VectorCache } from "./embed.js"

/**
 * The services a text run uses. The pipeline's `make` (RememberPipelineLive.ts) takes them from
 * the composition once; every one is required: a server without geo or timeseries providers is
 * composed with the "none" resolver and an empty provider list, which the stages read as "no
 * geo stage" and "timeseries.fetch is a 503".
 */
export interface RememberServices {
  readonly llm: Llm["Type"]
  readonly classifier: ComplexityClassifier["Type"]
  readonly database: Database["Type"]
  readonly datasets: DatasetsRepo["Type"]
  readonly graph: GraphRepo["Type"]
  /** a repeat that moves a fact's start decides its closings again, as a forget does */
  readonly forget: ForgetRepo["Type"]
  readonly inferences: InferencesRepo["Type"]
  readonly runLog: RunLogRepo["Type"]
  readonly embeddings: Embeddings["Type"]
  readonly vectors: VectorStore["Type"]
  readonly outbox: VectorOutbox["Type"]
  readonly settings: RememberSettingsShape
  readonly geo: GeoResolver["Type"]
  readonly geoRepo: GeoRepo["Type"]
  readonly series: SeriesRepo["Type"]
  readonly timeseries: TimeseriesProviders["Type"]
}

export interface RunContext {
  readonly deps: RememberServices
  readonly runId: number
  readonly request: RememberRequest
  readonly referenceTime: string
  readonly recorder: RunRecorder
  /** text -> vector, so a text is embedded once per run */
  readonly cache: VectorCache
  /** the dataset as far as the run knows it: null until the first store creates a new one */
  readonly datasetId: number | null
  /**
   * the dataset's row once the run has seen it under the dataset's lock (which a forget takes
   * too, so it stays live): the store then writes into it without reading it again
   */
  readonly dataset: DatasetRow | null
  /** the dataset's schema as the run read it when it started (docs/SCHEMA.md); EMPTY_SCHEMA: none */
  readonly schema: DatasetSchema
}

/** The context once the run has seen, under the dataset's lock, or stored into `dataset`. */
export const inDataset = (ctx: RunContext, dataset: DatasetRow): RunContext =>
  ctx.dataset === dataset ? ctx : { ...ctx, datasetId: dataset.id, dataset }

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
