/** Stage extract_graph: one LLM call, the answer parsed and normalized (contracts section 1). */
import { Effect, Either } from "effect"
import { LlmFailed } from "../../domain/Errors.js"
import { speakerOf } from "../../domain/Messages.js"
import type { ModelStage, ReasoningLevel, ReasoningStage } from "../../domain/Stages.js"
import { withinSchema } from "../../kernel/datasetSchema.js"
import { type NormalizedGraph, normalizeExtraction } from "../../kernel/normalize.js"
import { callLlm, type RecordedResponse } from "../ModelCalls.js"
import {
  buildExtractGraphPrompt,
  EXTRACT_GRAPH_MAX_TOKENS,
  extractGraphAnswerFor,
  parseExtractGraph,
  type Speaker
} from "../prompts/extractGraph.js"
import { callContext, type RunContext } from "./RunContext.js"

export interface Extraction {
  readonly graph: NormalizedGraph
  readonly response: RecordedResponse
}

export interface ModelChoice {
  readonly models: Partial<Record<ModelStage, string>>
  readonly reasoning: Partial<Record<ReasoningStage, ReasoningLevel>>
}

/** A conversation's speakers, each once, in the order they first speak. */
const speakersOf = (request: RunContext["request"]): ReadonlyArray<Speaker> | undefined => {
  if (request.messages === undefined) return undefined
  const seen = new Map<string, Speaker>()
  for (const m of request.messages) {
    const name = speakerOf(m, request.user_id)
    if (!seen.has(name)) seen.set(name, { name, role: m.role })
  }
  return [...seen.values()]
}

const extract = Effect.fnUntraced(function*(ctx: RunContext, text: string) {
  const { request, referenceTime, schema } = ctx
  const prompt = buildExtractGraphPrompt({
    referenceTime,
    text,
    speakers: speakersOf(request),
    schema,
    instructions: request.instructions
  })
  const response = yield* callLlm(callContext(ctx, "extract_graph"), {
    stage: "extract_graph",
    model: request.models.extract_graph,
    reasoning: request.reasoning.extract_graph ?? "none",
    system: prompt.system,
    messages: [{ role: "user", content: prompt.user }],
    maxTokens: EXTRACT_GRAPH_MAX_TOKENS,
    answerSchema: extractGraphAnswerFor(schema)
  })
  const parsed = parseExtractGraph(response.text, referenceTime, schema)
  if (Either.isLeft(parsed)) {
    return yield* new LlmFailed({
      message: `extract_graph: unusable answer from the model: ${parsed.left}`,
      stage: "extract_graph"
    })
  }
  // a schema that allows no other types or relations drops what is not of its own
  return { graph: withinSchema(normalizeExtraction(parsed.right), schema), response } satisfies Extraction
})

export const extractGraph = Effect.fn("remember.extract_graph")(function*(ctx: RunContext, text: string) {
  return yield* ctx.recorder.stage(
    "extract_graph",
    extract(ctx, text),
    (x) => ({ entities: x.graph.entities.length, edges: x.graph.edges.length, model: x.response.model }),
    (x) => ({ observation: { entities: x.graph.entities, edges: x.graph.edges } })
  )
})
