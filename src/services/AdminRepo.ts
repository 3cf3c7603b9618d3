import { Context, type Effect, type Option } from "effect"
import type { EdgeRow } from "../domain/Rows.js"

/**
 * What the admin UI reads beyond the run log: model usage over a period, every user's datasets,
 * and a bounded slice of one dataset's graph to draw. Operator views: nothing here is scoped by
 * user (the admin API is behind an admin token when `[auth]` is configured).
 */

export interface UsageTotals {
  readonly calls: number
  /** calls that ended in an error (they are recorded, and priced by what they consumed) */
  readonly failed: number
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cost_usd: number
}

export type UsageBucket = "hour" | "day"

export interface UsageQuery {
  /** inclusive, RFC 3339 with milliseconds, compared with gb_inferences.started_at */
  readonly from: string
  /** exclusive */
  readonly to: string
  readonly bucket: UsageBucket
}

export interface InferenceUsage {
  readonly totals: UsageTotals
  /** by cost, highest first */
  readonly by_stage: ReadonlyArray<{ readonly stage: string } & UsageTotals>
  /** by cost, highest first */
  readonly by_model: ReadonlyArray<{ readonly provider: string; readonly model: string } & UsageTotals>
  /**
   * per bucket start (`YYYY-MM-DDTHH:00:00.000Z` or `YYYY-MM-DDT00:00:00.000Z`), stage and model,
   * in bucket order; buckets without calls are absent
   */
  readonly buckets: ReadonlyArray<
    { readonly start: string; readonly stage: string; readonly model: string } & UsageTotals
  >
}

export interface AdminDataset {
  readonly id: number
  readonly user_id: string
  readonly name: string
  readonly created_at: string
  /** set when the dataset was deleted (soft delete keeps its rows) */
  readonly deleted_at: string | null
  readonly artifacts: number
  readonly entities: number
  readonly edges: number
}

export interface AdminGraphEntity {
  readonly id: number
  readonly name: string
  readonly type: string
  readonly description: string
  readonly created_at: string
}

/** An edge row without its dataset, creator and model ids, and with all its supporting artifacts. */
export interface AdminGraphEdge extends Omit<EdgeRow, "dataset_id" | "artifact_id" | "model_id"> {
  /** every artifact that supports the fact (gb_edge_artifacts), ascending */
  readonly artifact_ids: ReadonlyArray<number>
}

export interface AdminGraphArtifact {
  readonly id: number
  readonly kind: string
  /** at most the first 2,000 characters */
  readonly text: string
  readonly text_truncated: boolean
  readonly session_id: string | null
  readonly valid_at: string
  readonly created_at: string
}

export interface AdminGraph {
  readonly dataset: { readonly id: number; readonly user_id: string; readonly name: string }
  /** true when the dataset has more edges than were returned */
  readonly truncated: boolean
  /** the endpoints of the returned edges, then other entities of the dataset (newest first) up to the limit */
  readonly entities: ReadonlyArray<AdminGraphEntity>
  /** the most recently created edges (closed ones included), at most `limit` */
  readonly edges: ReadonlyArray<AdminGraphEdge>
  /** the artifacts the returned edges cite */
  readonly artifacts: ReadonlyArray<AdminGraphArtifact>
}

export class AdminRepo extends Context.Tag("gligabao/AdminRepo")<
  AdminRepo,
  {
    readonly inferenceUsage: (query: UsageQuery) => Effect.Effect<InferenceUsage>
    /** newest first */
    readonly datasets: (page: { readonly limit: number; readonly offset: number }) => Effect.Effect<{
      readonly datasets: ReadonlyArray<AdminDataset>
      readonly total: number
    }>
    /** None when there is no dataset with this id */
    readonly graph: (datasetId: number, limit: number) => Effect.Effect<Option.Option<AdminGraph>>
  }
>() {}
