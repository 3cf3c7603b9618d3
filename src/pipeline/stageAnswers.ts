/**
 * The answer schema of every stage that answers JSON, by stage name. The stages set
 * theirs on the request; `callLlm` fills in a missing one from here, so a JSON-answering stage is
 * never called unconstrained. summarize_chunk answers prose and web_search answers with cited
 * text: neither has a schema.
 */
import type { LlmAnswerSchema } from "../services/Llm.js"
import { DETECT_GEO_ANSWER } from "./enrich/detectGeo.js"
import { EXTRACT_IMAGE_ANSWER } from "./image/prompt.js"
import { EXTRACT_GRAPH_ANSWER } from "./prompts/extractGraph.js"
import { QUERY_ANSWER } from "./prompts/queryAnswer.js"
import { RESOLVE_EDGES_ANSWER } from "./prompts/resolveEdges.js"
import { RESOLVE_SERIES_ANSWER } from "./series/resolveSeries.js"

export const STAGE_ANSWERS: Readonly<Record<string, LlmAnswerSchema>> = {
  extract_graph: EXTRACT_GRAPH_ANSWER,
  resolve_edges: RESOLVE_EDGES_ANSWER,
  resolve_series: RESOLVE_SERIES_ANSWER,
  detect_geo: DETECT_GEO_ANSWER,
  extract_image: EXTRACT_IMAGE_ANSWER,
  query: QUERY_ANSWER
}

/** The stage's answer schema; undefined for a stage that answers prose. */
export const answerSchemaFor = (stage: string): LlmAnswerSchema | undefined =>
  Object.hasOwn(STAGE_ANSWERS, stage) ? STAGE_ANSWERS[stage] : undefined
