import { Effect, Layer } from "effect"
import { RememberPipeline } from "../services/RememberPipeline.js"
import { ImageDeps } from "./image/Deps.js"
import { rememberImage } from "./image/ImagePipeline.js"
import { RememberDeps } from "./remember/Deps.js"
import { prepareText, rememberText, retryPendingVectors } from "./remember/TextPipeline.js"

/**
 * The remember pipeline over the ports: needs Llm, Embeddings, VectorStore, the repositories,
 * the classifier, settings and the ImageStore (images go to a pipeline of their own). When
 * built (server startup) it retries, in the background, the vectors that a failed write left
 * in the outbox.
 *
 * `prepare` (docs/INGESTION.md, Order and concurrency) runs a text's dataset-independent work
 * before the run's turn; an image run does all its work in `apply`.
 */
export const RememberPipelineLive = Layer.scoped(
  RememberPipeline,
  Effect.gen(function*() {
    const deps = yield* RememberDeps
    const imageDeps = yield* ImageDeps
    yield* Effect.forkScoped(retryPendingVectors(deps))
    return RememberPipeline.of({
      // an image has a pipeline of its own (seed-images.txt)
      run: (runId, request, observer) =>
        request.image !== undefined
          ? rememberImage(imageDeps, runId, request, observer)
          : rememberText(deps, runId, request, observer),
      // a text's model work runs ahead of its in-order store (remember.lookahead); an image
      // keeps the whole pipeline, all of it run in order under the lock
      prepare: (runId, request, observer) =>
        request.image !== undefined
          ? Effect.succeed({ apply: rememberImage(imageDeps, runId, request, observer) })
          : prepareText(deps, runId, request, observer)
    })
  })
)
