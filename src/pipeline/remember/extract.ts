/** Stage extract_graph: one LLM call, the answer parsed and normalized (contracts section 1). */
import { Effect, Either } from "effect"
import { LlmFailed, type LlmUnavailable } from "../../domain/Errors.js"
import type { ModelStage, ReasoningLevel, ReasoningStage } from "../../domain/Stages.js"
import { type CallContext, callLlm, type RecordedResponse } from "../ModelCalls.js"
import { type NormalizedGraph, normalizeExtraction } from "../normalize.js"
import { buildExtractGraphPrompt, EXTRACT_GRAPH_MAX_TOKENS, parseExtractGraph } from "../prompts/extractGraph.js"

export interface Extraction {
  readonly graph: NormalizedGraph
  readonly response: RecordedResponse
}

export interface ModelChoice {
  readonly models: Partial<Record<ModelStage, string>>
  readonly reasoning: Partial<Record<ReasoningStage, ReasoningLevel>>
}

export const extractGraph = (
  ctx: CallContext,
  input: { readonly text: string; readonly referenceTime: string } & ModelChoice
): Effect.Effect<Extraction, LlmFailed | LlmUnavailable> =>
  Effect.gen(function*() {
    const prompt = buildExtractGraphPrompt({ referenceTime: input.referenceTime, text: input.text })
    const response = yield* callLlm(ctx, {
      stage: "extract_graph",
      model: input.models.extract_graph,
      reasoning: input.reasoning.extract_graph ?? "none",
      system: prompt.system,
      messages: [{ role: "user", content: prompt.user }],
      maxTokens: EXTRACT_GRAPH_MAX_TOKENS
    })
    const parsed = parseExtractGraph(response.text, input.referenceTime)
    if (Either.isLeft(parsed)) {
      return yield* new LlmFailed({
        message: `extract_graph: unusable answer from the model: ${parsed.left}`,
        stage: "extract_graph"
      })
    }
    return { graph: normalizeExtraction(parsed.right), response }
  })
