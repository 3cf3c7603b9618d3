import { Context, type Effect, type Option } from "effect"
import type { DatasetRow } from "../domain/Rows.js"

export interface DatasetCounts extends DatasetRow {
  readonly artifacts: number
  readonly entities: number
  readonly edges: number
  readonly live_edges: number
}

/** Datasets are per user and name; a soft-deleted name can be created afresh. Infra errors are defects. */
export class DatasetsRepo extends Context.Tag("gligabao/DatasetsRepo")<
  DatasetsRepo,
  {
    /** the live (not deleted) dataset of that user and name */
    readonly find: (userId: string, name: string) => Effect.Effect<Option.Option<DatasetRow>>
    /** `find`, with the dataset's schema as stored (its JSON; null: none; docs/SCHEMA.md) */
    readonly findWithSchema: (
      userId: string,
      name: string
    ) => Effect.Effect<Option.Option<DatasetRow & { readonly schema: string | null }>>
    /** sets the live dataset's schema (null: none), creating the dataset when there is none yet */
    readonly setSchema: (userId: string, name: string, schema: string | null, now: string) => Effect.Effect<DatasetRow>
    readonly getOrCreate: (userId: string, name: string, now: string) => Effect.Effect<DatasetRow>
    readonly list: (userId: string) => Effect.Effect<ReadonlyArray<DatasetCounts>>
    /** every live dataset of every user (maintenance commands) */
    readonly listLive: () => Effect.Effect<ReadonlyArray<DatasetRow>>
    /** true when a live dataset was deleted */
    readonly softDelete: (userId: string, name: string, now: string) => Effect.Effect<boolean>
  }
>() {}
