/**
 * Rows as the repositories return them. Field names are the column names (snake_case),
 * which are also the wire names. Ids are integers; times are RFC 3339 UTC strings with
 * milliseconds (`2025-01-31T00:00:00.000Z`), stored as text on both dialects so that they
 * sort and compare the same everywhere (see docs/ARCHITECTURE.md). JSON columns are decoded.
 */
import type { ArtifactKind, ReasoningLevel, RunStatus, StageStatus, StructuredMode } from "./Stages.js"

export interface DatasetRow {
  readonly id: number
  readonly user_id: string
  readonly name: string
  readonly created_at: string
  readonly deleted_at: string | null
}

export interface ArtifactRow {
  readonly id: number
  readonly dataset_id: number
  readonly kind: ArtifactKind
  readonly text: string
  readonly parent_id: number | null
  readonly session_id: string | null
  readonly valid_at: string
  readonly created_at: string
  readonly inference_id: number | null
  readonly query: string | null
  readonly metadata: Record<string, unknown> | null
}

export interface EntityRow {
  readonly id: number
  readonly dataset_id: number
  readonly name: string
  /** lowercased, whitespace-collapsed name: the dedup key together with type */
  readonly name_key: string
  readonly type: string
  readonly description: string
  readonly model_id: number | null
  readonly created_at: string
  /** its attributes as stored (JSON text, src/kernel/datasetSchema.ts decodes it); null or absent: none */
  readonly attributes?: string | null | undefined
}

export interface EdgeRow {
  readonly id: number
  readonly dataset_id: number
  readonly source_id: number
  readonly target_id: number
  readonly relation: string
  readonly description: string
  /** null: the start is unknown (an end was stated without one); true at any time before invalid_at */
  readonly valid_at: string | null
  readonly invalid_at: string | null
  readonly created_at: string
  readonly expired_at: string | null
  readonly artifact_id: number | null
  readonly model_id: number | null
}

/** An edge with its endpoints' names, as candidate loading and responses need it. */
export interface EdgeWithNames extends EdgeRow {
  readonly source_name: string
  readonly target_name: string
}

export interface ModelRow {
  readonly id: number
  readonly provider: string
  readonly name: string
  readonly created_at: string
}

export type InferenceType = "remember" | "remember_image" | "query"

export interface InferenceInput {
  readonly type: InferenceType
  readonly stage: string
  readonly provider: string
  readonly model: string
  readonly reasoning: ReasoningLevel
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_read_tokens: number
  readonly cache_write_tokens: number
  readonly web_search_requests: number
  readonly cost_usd: number
  readonly latency_ms: number
  readonly started_at: string
  readonly error: string | null
  readonly run_id: number | null
  readonly dataset_id: number | null
  /**
   * how the answer was constrained (json_schema, json_object, tool, none); null for an
   * embeddings request, a failed call, and rows recorded before migration 0011
   */
  readonly structured_mode?: StructuredMode | null | undefined
}

export interface InferenceRow extends InferenceInput {
  readonly id: number
  readonly model_id: number | null
  readonly structured_mode: StructuredMode | null
}

export interface RunStageRow {
  readonly stage: string
  readonly status: StageStatus
  readonly started_at: string | null
  readonly finished_at: string | null
  readonly duration_ms: number | null
  readonly error: string | null
  readonly inference_ids: ReadonlyArray<number>
  /** chunked texts: { chunks_done, chunks_total } */
  readonly progress: { readonly chunks_done: number; readonly chunks_total: number } | null
  /** stage-specific facts (e.g. the complexity class), free-form */
  readonly detail: Record<string, unknown> | null
}

export interface RunRow {
  readonly id: number
  readonly pipeline: "text" | "image"
  readonly user_id: string
  readonly dataset: string
  readonly dataset_id: number | null
  readonly artifact_id: number | null
  readonly status: RunStatus
  readonly error: string | null
  /** kind, session_id, models, reasoning, flags, text length; never the text */
  readonly params: Record<string, unknown>
  readonly queued_at: string
  readonly instance_id: string
  readonly started_at: string | null
  readonly finished_at: string | null
  readonly duration_ms: number | null
  /** times a worker took the run (a crash of its process makes it run again, docs/INGESTION.md) */
  readonly attempts: number
  /** the body the synchronous call answered, once the run succeeded (JSON, decoded) */
  readonly response: unknown
  /** the domain error's tag of a failed run, so a repeated submission fails the same way */
  readonly error_tag: string | null
}

export interface RunWithStages extends RunRow {
  readonly stages: ReadonlyArray<RunStageRow>
}
