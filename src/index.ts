/**
 * gligabao as a library: the domain, the ports, the remember machinery and the HTTP app, to
 * compose into another Effect application with your own layers (see README "Embedding").
 * Adapters (SQL, LLM providers, testing doubles) are exported from `layers/index.ts`.
 */
export * from "./domain/DatasetSchema.js"
export * from "./domain/Errors.js"
export * from "./domain/Image.js"
export * from "./domain/Remember.js"
export * from "./domain/Responses.js"
export type * from "./domain/Rows.js"
export * from "./domain/Stages.js"
export * from "./domain/Timeseries.js"

export * from "./services/ComplexityClassifier.js"
export * from "./services/Database.js"
export * from "./services/DatasetsRepo.js"
export * from "./services/Embeddings.js"
export * from "./services/EraseRepo.js"
export * from "./services/GeoRepo.js"
export * from "./services/GeoResolver.js"
export * from "./services/GraphRepo.js"
export * from "./services/ImagesRepo.js"
export * from "./services/ImageStore.js"
export * from "./services/InferencesRepo.js"
export * from "./services/Llm.js"
export * from "./services/RememberPipeline.js"
export * from "./services/RunLogRepo.js"
export type * from "./services/RunObserver.js"
export * from "./services/SearchRepo.js"
export * from "./services/SeriesRepo.js"
export * from "./services/TimeseriesProviders.js"
export * from "./services/VectorStore.js"

export { DEFAULT_PRICES, type PriceTable } from "./kernel/cost.js"
export {
  getImageArtifact,
  type ImageMissing,
  listImageArtifacts,
  listImageExtractions,
  type LoadedImage,
  loadImage
} from "./pipeline/image/library.js"
export { type ImageReading, normalizeImageAnswer, parseImageAnswer } from "./pipeline/image/prompt.js"
export {
  RememberManager,
  RememberManagerLive,
  type RememberManagerOptions,
  type RunOptions,
  type SubmittedRun
} from "./pipeline/RememberManager.js"
export { RememberPipelineLive } from "./pipeline/RememberPipelineLive.js"
export type { AnchorMatch, AnchorOutcome, FetchItem, ObservationItem, SeriesItem } from "./pipeline/series/index.js"
export { listSeries, readSeries, type SeriesRange, type SeriesRef, type SeriesView } from "./pipeline/series/library.js"
export { type SeriesStats, seriesStats } from "./pipeline/series/stats.js"
export { RememberSettings, type RememberSettingsShape } from "./pipeline/Settings.js"

export {
  Corrections,
  CorrectionsLive,
  type CorrectionsService,
  Forgets,
  ForgetsLive,
  type ForgetsService,
  makeCorrections,
  makeForgets
} from "./forget/Forgets.js"
export { Images, ImagesLive, type ImagesService, makeImages } from "./images/Images.js"
export * from "./query/index.js"
// both define a FactView: here it is the fact view's schema (GET /v1/gb/facts/{id}), and
// SearchRepo's row of a fact is FactRowView
export { FactView } from "./query/index.js"
export type { FactView as FactRowView } from "./services/SearchRepo.js"

export * from "./eval/index.js"

export { GligabaoApi } from "./http/Api.js"
export { type EncodedRequest, type GligabaoClient, makeGligabaoClient } from "./http/effectClient.js"
export { ApiLive, HttpAppLive } from "./http/Http.js"
export { ReadGroup } from "./http/ReadApi.js"

export { type AppConfig, AppConfigTag, defaultConfig, loadConfig } from "./Config.js"

export * from "./domain/Wire.js"
export * from "./operations.js"
