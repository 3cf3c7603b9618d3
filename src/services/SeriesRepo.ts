import { Context, type Effect, type Option } from "effect"
import type { EdgeWithNames } from "../domain/Rows.js"

/** A gb_series row: one series of a dataset, unique on (dataset_id, key). */
export interface SeriesRow {
  readonly id: number
  readonly dataset_id: number
  readonly key: string
  readonly unit: string | null
  readonly created_at: string
}

export interface StoredPoint {
  readonly ts: string
  readonly value: number
}

/** A gb_series_anchors row: exactly one of artifact_id, entity_id, edge_id is set. */
export interface SeriesAnchorRow {
  readonly series_id: number
  readonly artifact_id: number | null
  readonly entity_id: number | null
  readonly edge_id: number | null
}

export type NewAnchor =
  | { readonly artifact_id: number }
  | { readonly entity_id: number }
  | { readonly edge_id: number }

/**
 * gb_series, gb_series_points, gb_series_anchors (spec/contracts.md section 11). Writes are
 * meant to run inside `Database.withTransaction`; infrastructure errors are defects.
 */
export class SeriesRepo extends Context.Tag("gligabao/SeriesRepo")<
  SeriesRepo,
  {
    /**
     * the dataset's series of that key, created if new (`created`); a given unit replaces the
     * stored one, an absent (null) unit keeps it
     */
    readonly upsertSeries: (
      datasetId: number,
      key: string,
      unit: string | null,
      now: string
    ) => Effect.Effect<{ readonly series: SeriesRow; readonly created: boolean }>
    /** writes the points; a point at a time the series already has overwrites its value */
    readonly upsertPoints: (seriesId: number, points: ReadonlyArray<StoredPoint>) => Effect.Effect<void>
    /** idempotent: an anchor the series already has is not added twice */
    readonly addAnchors: (seriesId: number, anchors: ReadonlyArray<NewAnchor>) => Effect.Effect<void>
    readonly get: (id: number) => Effect.Effect<Option.Option<SeriesRow>>
    readonly findByKey: (datasetId: number, key: string) => Effect.Effect<Option.Option<SeriesRow>>
    /** the dataset's series, by key */
    readonly list: (datasetId: number) => Effect.Effect<ReadonlyArray<SeriesRow>>
    /** the points in time order, within [from, to] when given (both inclusive) */
    readonly points: (
      seriesId: number,
      range?: { readonly from?: string | undefined; readonly to?: string | undefined }
    ) => Effect.Effect<ReadonlyArray<StoredPoint>>
    readonly countPoints: (seriesId: number) => Effect.Effect<number>
    readonly anchors: (seriesId: number) => Effect.Effect<ReadonlyArray<SeriesAnchorRow>>
    /**
     * Edges of the dataset for an edge anchor: source entity named `sourceKey` (a name key),
     * and when given the relation (normalized) and the target's name key. Live edges, plus
     * those among `alsoIds` (the facts of the text, which may be stored already closed).
     */
    readonly findAnchorEdges: (
      datasetId: number,
      selector: {
        readonly sourceKey: string
        readonly relation?: string | undefined
        readonly targetKey?: string | undefined
      },
      alsoIds: ReadonlyArray<number>
    ) => Effect.Effect<ReadonlyArray<EdgeWithNames>>
  }
>() {}
