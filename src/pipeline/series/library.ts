/**
 * Reading stored series back, by user and dataset name, and the series' key or id (the
 * library API). Datasets are isolated: an id of another dataset (or user) is not found.
 */
import { Effect, Option } from "effect"
import { DatasetsRepo } from "../../services/DatasetsRepo.js"
import { type SeriesAnchorRow, SeriesRepo, type SeriesRow, type StoredPoint } from "../../services/SeriesRepo.js"
import { type SeriesStats, seriesStats } from "./stats.js"

/** A series with its points (within the range asked for), their stats, and its anchors. */
export interface SeriesView {
  readonly series: SeriesRow
  readonly points: ReadonlyArray<StoredPoint>
  /** over `points` */
  readonly stats: SeriesStats
  /** points of the series in all, whatever the range */
  readonly point_count: number
  readonly anchors: ReadonlyArray<SeriesAnchorRow>
}

/** Both bounds inclusive, canonical RFC 3339 UTC (`2025-01-31T00:00:00.000Z`). */
export interface SeriesRange {
  readonly from?: string | undefined
  readonly to?: string | undefined
}

export type SeriesRef = { readonly key: string } | { readonly id: number }

const view = (row: SeriesRow, range: SeriesRange) =>
  Effect.gen(function*() {
    const repo = yield* SeriesRepo
    const points = yield* repo.points(row.id, range)
    return {
      series: row,
      points,
      stats: seriesStats(points),
      point_count: range.from === undefined && range.to === undefined ? points.length : yield* repo.countPoints(row.id),
      anchors: yield* repo.anchors(row.id)
    } satisfies SeriesView
  })

/** One series of a user's dataset, by key or id, with its points in `range` and their stats. */
export const readSeries = (
  userId: string,
  dataset: string,
  ref: SeriesRef,
  range: SeriesRange = {}
): Effect.Effect<Option.Option<SeriesView>, never, DatasetsRepo | SeriesRepo> =>
  Effect.gen(function*() {
    const found = yield* (yield* DatasetsRepo).find(userId, dataset)
    if (Option.isNone(found)) return Option.none()
    const repo = yield* SeriesRepo
    const row = "key" in ref
      ? yield* repo.findByKey(found.value.id, ref.key)
      : Option.filter(yield* repo.get(ref.id), (s) => s.dataset_id === found.value.id)
    if (Option.isNone(row)) return Option.none()
    return Option.some(yield* view(row.value, range))
  })

/** The series of a user's dataset, by key (empty if the dataset does not exist). */
export const listSeries = (
  userId: string,
  dataset: string
): Effect.Effect<ReadonlyArray<SeriesRow>, never, DatasetsRepo | SeriesRepo> =>
  Effect.gen(function*() {
    const found = yield* (yield* DatasetsRepo).find(userId, dataset)
    if (Option.isNone(found)) return []
    return yield* (yield* SeriesRepo).list(found.value.id)
  })
