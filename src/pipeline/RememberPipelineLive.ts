import { Effect, Layer } from "effect"
import { RememberPipeline } from "../services/RememberPipeline.js"
import { RememberDeps } from "./remember/Deps.js"
import { rememberText } from "./remember/TextPipeline.js"

/** The remember pipeline over the ports: needs Llm, the repositories, the classifier and settings. */
export const RememberPipelineLive = Layer.effect(
  RememberPipeline,
  Effect.map(RememberDeps, (deps) =>
    RememberPipeline.of({
      run: (runId, request) => rememberText(deps, runId, request)
    }))
)
