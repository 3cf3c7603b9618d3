/** SeriesRepo on SQL: gb_series, gb_series_points, gb_series_anchors (both dialects). */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { EdgeWithNames } from "../../../src/domain/Rows.js"
import {
  type NewAnchor,
  type SeriesAnchorRow,
  SeriesRepo,
  type SeriesRow,
  type StoredPoint
} from "../../../src/services/SeriesRepo.js"
import { chunksOf, unique } from "./internal.js"

const SERIES_COLUMNS = "id, dataset_id, key, unit, created_at"
const EDGE_WITH_NAMES_COLUMNS = `e.id, e.dataset_id, e.source_id, e.target_id, e.relation, e.description, e.valid_at,
  e.invalid_at, e.created_at, e.expired_at, e.artifact_id, e.model_id, s.name AS source_name, t.name AS target_name`

/** Matches one edge selector can anchor to: a selector naming only a busy source stays bounded. */
export const MAX_ANCHOR_EDGES = 100

// times are fixed-width RFC 3339 text: these bound every stored time
const EARLIEST = "0000-01-01T00:00:00.000Z"
const LATEST = "9999-12-31T23:59:59.999Z"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const findByKey = (datasetId: number, key: string) =>
    sql<SeriesRow>`SELECT ${
      sql.literal(SERIES_COLUMNS)
    } FROM gb_series WHERE dataset_id = ${datasetId} AND key = ${key}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0])),
      Effect.orDie
    )

  const get = (id: number) =>
    sql<SeriesRow>`SELECT ${sql.literal(SERIES_COLUMNS)} FROM gb_series WHERE id = ${id}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0])),
      Effect.orDie
    )

  const list = (datasetId: number) =>
    sql<SeriesRow>`SELECT ${sql.literal(SERIES_COLUMNS)} FROM gb_series WHERE dataset_id = ${datasetId} ORDER BY key`
      .pipe(
        Effect.orDie
      )

  const upsertSeries = (datasetId: number, key: string, unit: string | null, now: string) =>
    Effect.gen(function*() {
      const inserted = yield* sql<SeriesRow>`INSERT INTO gb_series ${
        sql.insert({ dataset_id: datasetId, key, unit, created_at: now })
      }
        ON CONFLICT (dataset_id, key) DO NOTHING
        RETURNING ${sql.literal(SERIES_COLUMNS)}`
      if (inserted[0] !== undefined) return { series: inserted[0], created: true }
      const existing = (yield* sql<SeriesRow>`SELECT ${sql.literal(SERIES_COLUMNS)} FROM gb_series
        WHERE dataset_id = ${datasetId} AND key = ${key}`)[0]!
      if (unit === null || unit === existing.unit) return { series: existing, created: false }
      yield* sql`UPDATE gb_series SET unit = ${unit} WHERE id = ${existing.id}`
      return { series: { ...existing, unit }, created: false }
    }).pipe(Effect.orDie)

  const upsertPoints = (seriesId: number, points: ReadonlyArray<StoredPoint>) =>
    Effect.forEach(
      chunksOf(points),
      (chunk) =>
        sql`INSERT INTO gb_series_points ${
          sql.insert(chunk.map((p) => ({ series_id: seriesId, ts: p.ts, value: p.value })))
        }
          ON CONFLICT (series_id, ts) DO UPDATE SET value = excluded.value`,
      { discard: true }
    ).pipe(Effect.orDie)

  // the unique index of migration 0003 makes a repeated anchor a no-op
  const addAnchors = (seriesId: number, anchors: ReadonlyArray<NewAnchor>) =>
    Effect.forEach(
      chunksOf(anchors),
      (chunk) =>
        sql`INSERT INTO gb_series_anchors ${
          sql.insert(chunk.map((a) => ({
            series_id: seriesId,
            artifact_id: "artifact_id" in a ? a.artifact_id : null,
            entity_id: "entity_id" in a ? a.entity_id : null,
            edge_id: "edge_id" in a ? a.edge_id : null
          })))
        } ON CONFLICT DO NOTHING`,
      { discard: true }
    ).pipe(Effect.orDie)

  const points = (
    seriesId: number,
    range: { readonly from?: string | undefined; readonly to?: string | undefined } = {}
  ) =>
    sql<StoredPoint>`SELECT ts, value FROM gb_series_points
      WHERE series_id = ${seriesId} AND ts >= ${range.from ?? EARLIEST} AND ts <= ${range.to ?? LATEST}
      ORDER BY ts`.pipe(
      Effect.map((rows) => rows.map((r) => ({ ts: r.ts, value: Number(r.value) }))),
      Effect.orDie
    )

  const countPoints = (seriesId: number) =>
    sql<{ n: number }>`SELECT COUNT(*) AS n FROM gb_series_points WHERE series_id = ${seriesId}`.pipe(
      Effect.map((rows) => Number(rows[0]?.n ?? 0)),
      Effect.orDie
    )

  const anchors = (seriesId: number) =>
    sql<SeriesAnchorRow>`SELECT series_id, artifact_id, entity_id, edge_id FROM gb_series_anchors
      WHERE series_id = ${seriesId} ORDER BY id`.pipe(Effect.orDie)

  const findAnchorEdges = (
    datasetId: number,
    selector: {
      readonly sourceKey: string
      readonly relation?: string | undefined
      readonly targetKey?: string | undefined
    },
    alsoIds: ReadonlyArray<number>
  ) => {
    const also = unique(alsoIds)
    return sql<EdgeWithNames>`SELECT ${sql.literal(EDGE_WITH_NAMES_COLUMNS)}
      FROM gb_entities s
      JOIN gb_edges e ON e.source_id = s.id
      JOIN gb_entities t ON t.id = e.target_id
      WHERE s.dataset_id = ${datasetId} AND s.name_key = ${selector.sourceKey}
        ${selector.relation === undefined ? sql`` : sql`AND e.relation = ${selector.relation}`}
        ${selector.targetKey === undefined ? sql`` : sql`AND t.name_key = ${selector.targetKey}`}
        AND (e.expired_at IS NULL ${also.length === 0 ? sql`` : sql`OR e.id IN ${sql.in(also)}`})
      ORDER BY e.id
      LIMIT ${MAX_ANCHOR_EDGES}`.pipe(Effect.orDie)
  }

  return SeriesRepo.of({
    upsertSeries,
    upsertPoints,
    addAnchors,
    get,
    findByKey,
    list,
    points,
    countPoints,
    anchors,
    findAnchorEdges
  })
})

export const SeriesRepoLive: Layer.Layer<SeriesRepo, never, SqlClient.SqlClient> = Layer.effect(SeriesRepo, make)
