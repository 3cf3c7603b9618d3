import { Effect, Layer } from "effect"
import { ServiceUnavailable } from "../domain/Errors.js"
import { ComplexityClassifier } from "../services/ComplexityClassifier.js"
import { Database } from "../services/Database.js"
import { DatasetsRepo } from "../services/DatasetsRepo.js"
import { Embeddings } from "../services/Embeddings.js"
import { ForgetRepo } from "../services/ForgetRepo.js"
import { GeoRepo } from "../services/GeoRepo.js"
import { GeoResolver } from "../services/GeoResolver.js"
import { GraphRepo } from "../services/GraphRepo.js"
import { ImagesRepo } from "../services/ImagesRepo.js"
import { ImageStore } from "../services/ImageStore.js"
import { InferencesRepo } from "../services/InferencesRepo.js"
import { Llm } from "../services/Llm.js"
import { RememberPipeline } from "../services/RememberPipeline.js"
import { RunLogRepo } from "../services/RunLogRepo.js"
import { SeriesRepo } from "../services/SeriesRepo.js"
import { TimeseriesProviders } from "../services/TimeseriesProviders.js"
import { VectorOutbox } from "../services/VectorOutbox.js"
import { VectorStore } from "../services/VectorStore.js"
import { type ImageServices, rememberImage } from "./image/ImagePipeline.js"
import type { RememberServices } from "./remember/RunContext.js"
import { prepareText, rememberText, retryPendingVectors } from "./remember/TextPipeline.js"
import { RememberSettings } from "./Settings.js"

/**
 * The pipeline's services, taken from the composition once, when the layer is built: the text
 * and image programs close over them. Every one is required; a server without geo or
 * timeseries providers is composed with the "none" resolver and an empty provider list.
 */
export const makeRememberPipeline = Effect.gen(function*() {
  const text: RememberServices = {
    llm: yield* Llm,
    classifier: yield* ComplexityClassifier,
    database: yield* Database,
    datasets: yield* DatasetsRepo,
    graph: yield* GraphRepo,
    forget: yield* ForgetRepo,
    inferences: yield* InferencesRepo,
    runLog: yield* RunLogRepo,
    embeddings: yield* Embeddings,
    vectors: yield* VectorStore,
    outbox: yield* VectorOutbox,
    settings: yield* RememberSettings,
    geo: yield* GeoResolver,
    geoRepo: yield* GeoRepo,
    series: yield* SeriesRepo,
    timeseries: yield* TimeseriesProviders
  }
  const image: ImageServices = {
    llm: text.llm,
    database: text.database,
    datasets: text.datasets,
    images: yield* ImagesRepo,
    files: yield* ImageStore,
    inferences: text.inferences,
    runLog: text.runLog,
    settings: text.settings
  }
  // vectors a failed write left in the outbox, retried in the background from startup
  yield* Effect.forkScoped(retryPendingVectors(text))
  return RememberPipeline.of({
    // without an LLM no remember can run (a text or an image); the enrichments' providers are
    // checked by the run itself, which records the refusal as its failure
    refusal: () =>
      text.llm.unavailable === undefined ? undefined : new ServiceUnavailable({ message: text.llm.unavailable }),
    // an image has a pipeline of its own (seed-images.txt)
    run: (runId, request, observer) =>
      request.image !== undefined
        ? rememberImage(image, runId, request, observer)
        : rememberText(text, runId, request, observer),
    // a text's model work runs ahead of its in-order store (remember.lookahead); an image
    // keeps the whole pipeline, all of it run in order under the lock
    prepare: (runId, request, observer) =>
      request.image !== undefined
        ? Effect.succeed({ apply: rememberImage(image, runId, request, observer) })
        : prepareText(text, runId, request, observer)
  })
})

/**
 * The remember pipeline over the ports (`makeRememberPipeline`): Llm, Embeddings, VectorStore,
 * the repositories, the classifier, the geo resolver, the timeseries providers, settings and
 * the ImageStore (images go to a pipeline of their own). When built (server startup) it
 * retries, in the background, the vectors that a failed write left in the outbox.
 *
 * `prepare` (docs/INGESTION.md, Order and concurrency) runs a text's dataset-independent work
 * before the run's turn; an image run does all its work in `apply`.
 */
export const RememberPipelineLive = Layer.scoped(RememberPipeline, makeRememberPipeline)
