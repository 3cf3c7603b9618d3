import { Context, type Effect } from "effect"
import type { RowOf } from "../domain/DumpFormat.js"

/** A user's dataset name: the unit a dump groups and a load writes in one transaction. */
export interface GroupKey {
  readonly user_id: string
  readonly dataset: string
}

/** The rows of each table a dump reads and a load writes, as the dump format names them. */
export interface TransferRows {
  readonly model: RowOf<"model">
  readonly dataset: RowOf<"dataset">
  readonly run: RowOf<"run">
  readonly inference: RowOf<"inference">
  readonly series: RowOf<"series">
  readonly series_point: RowOf<"series_point">
  readonly artifact: RowOf<"artifact">
  readonly entity: RowOf<"entity">
  readonly edge: RowOf<"edge">
  readonly entity_artifact: RowOf<"entity_artifact">
  readonly edge_artifact: RowOf<"edge_artifact">
  readonly entity_session: RowOf<"entity_session">
  readonly edge_session: RowOf<"edge_session">
  readonly edge_closure: RowOf<"edge_closure">
  readonly entity_geo: RowOf<"entity_geo">
  /** the row alone; its file is the ImageStore's */
  readonly image: Omit<RowOf<"image">, "data">
  readonly image_extraction: RowOf<"image_extraction">
  readonly image_text_block: RowOf<"image_text_block">
  readonly series_anchor: RowOf<"series_anchor">
  readonly run_stage: RowOf<"run_stage">
  readonly run_queue: RowOf<"run_queue">
  readonly idempotency_key: RowOf<"idempotency_key">
  readonly run_result: RowOf<"run_result">
}
export type TableKind = keyof TransferRows

/** The tables whose rows have an id of their own, which a load allocates anew. */
export type IdKind =
  | "dataset"
  | "run"
  | "inference"
  | "series"
  | "artifact"
  | "entity"
  | "edge"
  | "edge_closure"
  | "image"
  | "image_extraction"
  | "image_text_block"
  | "series_anchor"

/**
 * Which rows a page reads: every row (models, and model calls of no user), a user's dataset name
 * (its datasets, runs and what hangs on runs, model calls of its runs that name no dataset), or
 * one dataset row's contents (its model calls among them).
 */
export type Within =
  | { readonly _tag: "All" }
  | { readonly _tag: "Group"; readonly group: GroupKey }
  | { readonly _tag: "Dataset"; readonly datasetId: number }

/** Where the next page starts: the last row's key, opaque to the caller. */
export type Cursor = ReadonlyArray<string | number>

export interface Page<A> {
  readonly rows: ReadonlyArray<A>
  /** null: this was the last page */
  readonly next: Cursor | null
}

/** A change the outbox holds for a dataset's vector store, as stored. */
export interface PendingVector {
  readonly id: number
  readonly index_name: string
  readonly vector_id: string
  readonly op: "upsert" | "delete"
  readonly values: ReadonlyArray<number>
  readonly metadata: Record<string, string | number | boolean>
}

/** What the target already holds of a user's dataset name. */
export interface ExistingGroup {
  /** created_at of each dataset row of the name, oldest first */
  readonly datasetCreatedAt: ReadonlyArray<string>
  readonly runs: number
}

/**
 * The storage side of `gligabao dump` and `gligabao load` (docs/TRANSFER.md): the tables read in
 * pages by key, and rows written with the ids the load gives them. Infrastructure errors are
 * defects, as in every repository.
 */
export class TransferRepo extends Context.Tag("gligabao/TransferRepo")<
  TransferRepo,
  {
    readonly dialect: "sqlite" | "pg"
    /** runs `effect` on one consistent snapshot of the database (a read-only transaction) */
    readonly snapshot: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /** the user's dataset names (datasets and runs), or every user's, sorted */
    readonly groups: (userId: string | null) => Effect.Effect<ReadonlyArray<GroupKey>>
    readonly page: <K extends TableKind>(
      kind: K,
      within: Within,
      after: Cursor | null,
      limit: number
    ) => Effect.Effect<Page<TransferRows[K]>>
    readonly pendingVectors: (
      datasetId: number,
      afterId: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<PendingVector>>

    readonly existing: (group: GroupKey) => Effect.Effect<ExistingGroup>
    /** `count` new ids of the table, ascending, taken for the caller (in its transaction) */
    readonly allocate: (kind: IdKind, count: number) => Effect.Effect<ReadonlyArray<number>>
    /** inserts rows as given, ids included; an Idempotency-Key the target has already is kept (returns how many were written) */
    readonly insert: <K extends Exclude<TableKind, "model" | "run_result">>(
      kind: K,
      rows: ReadonlyArray<TransferRows[K]>
    ) => Effect.Effect<number>
    /** the target's id of the model (provider, name), inserted when new */
    readonly upsertModel: (model: TransferRows["model"]) => Effect.Effect<number>
    readonly setRunResults: (results: ReadonlyArray<TransferRows["run_result"]>) => Effect.Effect<void>
    /** rebuilds gb_entity_words (derived) for the dataset's entities, from their names and statements */
    readonly rebuildEntityWords: (datasetId: number) => Effect.Effect<void>
    /** whether a model call of no user with these values is stored already (a load run again) */
    readonly hasInference: (row: TransferRows["inference"]) => Effect.Effect<boolean>
  }
>() {}
