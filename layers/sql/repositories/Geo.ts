/** GeoRepo on SQL: gb_entity_geo, one row per entity (both dialects). */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { type EntityGeoRow, GeoRepo } from "../../../src/services/GeoRepo.js"
import { chunksOf, unique } from "./internal.js"

const COLUMNS = `entity_id, kind, query, resolved, latitude, longitude, display_name, country, country_code,
  region, provider, error, created_at`

/** `resolved` is 0/1 on both dialects (see the migration). */
type GeoRecord = Omit<EntityGeoRow, "resolved"> & { readonly resolved: number }

const decode = (record: GeoRecord): EntityGeoRow => ({
  ...record,
  resolved: Number(record.resolved) === 1,
  latitude: record.latitude === null ? null : Number(record.latitude),
  longitude: record.longitude === null ? null : Number(record.longitude)
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const findByEntityIds = (entityIds: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      const found: Array<EntityGeoRow> = []
      for (const chunk of chunksOf(unique(entityIds))) {
        const rows = yield* sql<GeoRecord>`SELECT ${sql.literal(COLUMNS)} FROM gb_entity_geo
          WHERE entity_id IN ${sql.in(chunk)}`
        found.push(...rows.map(decode))
      }
      return found
    }).pipe(Effect.orDie)

  const upsert = (row: EntityGeoRow) =>
    sql<GeoRecord>`INSERT INTO gb_entity_geo ${sql.insert({ ...row, resolved: row.resolved ? 1 : 0 })}
      ON CONFLICT (entity_id) DO UPDATE SET kind = excluded.kind, query = excluded.query,
        resolved = excluded.resolved, latitude = excluded.latitude, longitude = excluded.longitude,
        display_name = excluded.display_name, country = excluded.country,
        country_code = excluded.country_code, region = excluded.region, provider = excluded.provider,
        error = excluded.error, created_at = excluded.created_at
      RETURNING ${sql.literal(COLUMNS)}`.pipe(
      Effect.map((rows) => decode(rows[0]!)),
      Effect.orDie
    )

  return GeoRepo.of({ findByEntityIds, upsert })
})

export const GeoRepoLive: Layer.Layer<GeoRepo, never, SqlClient.SqlClient> = Layer.effect(GeoRepo, make)
