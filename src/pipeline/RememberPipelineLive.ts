import { Effect, Layer } from "effect"
import { RememberPipeline } from "../services/RememberPipeline.js"
import { RememberDeps } from "./remember/Deps.js"
import { rememberText, retryPendingVectors } from "./remember/TextPipeline.js"

/**
 * The remember pipeline over the ports: needs Llm, Embeddings, VectorStore, the repositories,
 * the classifier and settings. When built (server startup) it retries, in the background, the
 * vectors that a failed write left in the outbox.
 */
export const RememberPipelineLive = Layer.scoped(
  RememberPipeline,
  Effect.gen(function*() {
    const deps = yield* RememberDeps
    yield* Effect.forkScoped(retryPendingVectors(deps))
    return RememberPipeline.of({
      run: (runId, request) => rememberText(deps, runId, request)
    })
  })
)
