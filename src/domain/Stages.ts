/**
 * Stage names of the remember pipelines, in pipeline order (spec: Run log), and
 * the stages that run a model (spec: Choosing the model of each stage, Reasoning).
 */

export const TEXT_STAGES = [
  "classify_complexity",
  "chunk_text",
  "extract_graph",
  "summarize_chunk",
  "load_candidates",
  "resolve_edges",
  "store",
  "store_series",
  "resolve_geo",
  "web_search",
  "fetch_series",
  "observe_series"
] as const

export const IMAGE_STAGES = ["find_existing_image", "extract_image", "store_image"] as const

export type TextStage = (typeof TEXT_STAGES)[number]
export type ImageStage = (typeof IMAGE_STAGES)[number]
export type RunStage = TextStage | ImageStage

/** Stages a request may pick a model for (`models`). */
export const MODEL_STAGES = [
  "extract_graph",
  "summarize_chunk",
  "resolve_edges",
  "resolve_series",
  "detect_geo",
  "extract_image",
  "web_search"
] as const
export type ModelStage = (typeof MODEL_STAGES)[number]

/** Stages a request may pick a reasoning level for (`reasoning`); web_search cannot think. */
export const REASONING_STAGES = [
  "extract_graph",
  "summarize_chunk",
  "resolve_edges",
  "resolve_series",
  "detect_geo",
  "extract_image"
] as const
export type ReasoningStage = (typeof REASONING_STAGES)[number]

export const REASONING_LEVELS = ["none", "low", "medium", "high"] as const
export type ReasoningLevel = (typeof REASONING_LEVELS)[number]

/** Extended-thinking budgets, added on top of a call's own max_tokens. */
export const THINKING_BUDGET: Record<ReasoningLevel, number> = {
  none: 0,
  low: 1024,
  medium: 4096,
  high: 16384
}

/** Every stage name a model call can be recorded under (gb_inferences.stage). */
export type InferenceStage = ModelStage | "embed" | "query" | "classify_complexity"

export const ARTIFACT_KINDS = [
  "knowledge",
  "episode",
  "chunk",
  "chunk_summary",
  "web_search",
  "series_observation"
] as const
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number]

/** The kinds a caller may choose for a remembered text. */
export const REQUEST_KINDS = ["knowledge", "episode"] as const
export type RequestKind = (typeof REQUEST_KINDS)[number]

export type StageStatus = "not_started" | "started" | "succeeded" | "failed"
/**
 * A run is `queued` (its request in the durable queue) until a worker takes it (docs/INGESTION.md);
 * `cancelled` is a queued run that was cancelled before any worker took it (nothing stored).
 */
export const RUN_STATUSES = ["queued", "started", "succeeded", "failed", "cancelled"] as const
export type RunStatus = (typeof RUN_STATUSES)[number]

/**
 * How the answer was constrained: OpenAI-compatible `json_schema` or `json_object`
 * response_format, Anthropic's forced `tool` call, or `none` (the prompt alone).
 */
export const STRUCTURED_MODES = ["json_schema", "json_object", "tool", "none"] as const
export type StructuredMode = (typeof STRUCTURED_MODES)[number]

/** What `llm.structured_output` may force on the OpenAI-compatible adapter. */
export const STRUCTURED_OUTPUTS = ["json_schema", "json_object", "none"] as const
export type StructuredOutput = (typeof STRUCTURED_OUTPUTS)[number]
