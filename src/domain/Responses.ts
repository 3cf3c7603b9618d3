/** Wire shapes of the remember response (spec: seed-remember.txt "Response"). */

export interface EntityOut {
  readonly id: number
  readonly name: string
  readonly type: string
  readonly description: string
}

export interface EdgeOut {
  readonly id: number
  readonly source: string
  readonly source_id: number
  readonly target: string
  readonly target_id: number
  readonly relation: string
  readonly description: string
  readonly valid_at: string
  /** omitted while the fact holds */
  readonly invalid_at?: string
  readonly created_at: string
  /** omitted while the edge is live */
  readonly expired_at?: string
  /** the artifact that created the edge (omitted if it was deleted) */
  readonly artifact_id?: number
  /** the gb_models id of the model that extracted the edge */
  readonly model_id?: number
}

export interface RememberResponse {
  readonly remember_run_id: number
  readonly artifact_id: number
  readonly kind: string
  readonly valid_at: string
  readonly created_at: string
  readonly session_id?: string
  readonly entities: ReadonlyArray<EntityOut>
  readonly edges: ReadonlyArray<EdgeOut>
  readonly invalidated_edges: ReadonlyArray<number>
  readonly embedded_entities?: number
  readonly embedded_edges?: number
  readonly [extra: string]: unknown
}

/** What a finished run hands back to the manager: the response and the ids for the run log. */
export interface RememberOutcome {
  readonly response: Record<string, unknown>
  readonly dataset_id: number | null
  readonly artifact_id: number | null
}
