/** DatasetsRepo on SQL: datasets per user and name, soft-deleted. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { DatasetRow } from "../../../src/domain/Rows.js"
import { type DatasetCounts, DatasetsRepo } from "../../../src/services/DatasetsRepo.js"

/** The user's live dataset of that name, on `sql` (the writer's connection, or a reader's). */
export const datasetByName = (sql: SqlClient.SqlClient) => (userId: string, name: string) =>
  sql<DatasetRow>`SELECT id, user_id, name, created_at, deleted_at FROM gb_datasets
    WHERE user_id = ${userId} AND name = ${name} AND deleted_at IS NULL`.pipe(
    Effect.map((rows) => Option.fromNullable(rows[0])),
    Effect.orDie
  )

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const find = datasetByName(sql)

  // the common case is one read; a concurrent creator makes our insert a no-op, then we read its row
  const getOrCreate = (userId: string, name: string, now: string) =>
    Effect.gen(function*() {
      const found = yield* find(userId, name)
      if (Option.isSome(found)) return found.value
      const inserted = yield* sql<DatasetRow>`INSERT INTO gb_datasets ${
        sql.insert({
          user_id: userId,
          name,
          created_at: now
        })
      }
        ON CONFLICT (user_id, name) WHERE deleted_at IS NULL DO NOTHING
        RETURNING id, user_id, name, created_at, deleted_at`.pipe(Effect.orDie)
      if (inserted[0] !== undefined) return inserted[0]
      return Option.getOrThrowWith(yield* find(userId, name), () => new Error(`dataset ${name} vanished`))
    })

  const list = (userId: string) =>
    sql<DatasetCounts>`SELECT d.id, d.user_id, d.name, d.created_at, d.deleted_at,
        (SELECT COUNT(*) FROM gb_artifacts a WHERE a.dataset_id = d.id) AS artifacts,
        (SELECT COUNT(*) FROM gb_entities n WHERE n.dataset_id = d.id) AS entities,
        (SELECT COUNT(*) FROM gb_edges e WHERE e.dataset_id = d.id) AS edges,
        (SELECT COUNT(*) FROM gb_edges e WHERE e.dataset_id = d.id AND e.expired_at IS NULL) AS live_edges
      FROM gb_datasets d
      WHERE d.user_id = ${userId} AND d.deleted_at IS NULL
      ORDER BY d.name`.pipe(Effect.orDie)

  const softDelete = (userId: string, name: string, now: string) =>
    sql<{ id: number }>`UPDATE gb_datasets SET deleted_at = ${now}
      WHERE user_id = ${userId} AND name = ${name} AND deleted_at IS NULL
      RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  const listLive = () =>
    sql<DatasetRow>`SELECT id, user_id, name, created_at, deleted_at FROM gb_datasets
      WHERE deleted_at IS NULL ORDER BY id`.pipe(Effect.orDie)

  const findWithSchema = (userId: string, name: string) =>
    sql<DatasetRow & { readonly schema: string | null }>`SELECT id, user_id, name, created_at, deleted_at, schema
      FROM gb_datasets WHERE user_id = ${userId} AND name = ${name} AND deleted_at IS NULL`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0])),
      Effect.orDie
    )

  const setSchema = (userId: string, name: string, schema: string | null, now: string) =>
    Effect.gen(function*() {
      const dataset = yield* getOrCreate(userId, name, now)
      yield* sql`UPDATE gb_datasets SET schema = ${schema} WHERE id = ${dataset.id}`.pipe(Effect.orDie)
      return dataset
    })

  return DatasetsRepo.of({ find, findWithSchema, getOrCreate, list, listLive, setSchema, softDelete })
})

export const DatasetsRepoLive: Layer.Layer<DatasetsRepo, never, SqlClient.SqlClient> = Layer.effect(DatasetsRepo, make)
