/**
 * EraseRepo on SQL: forgetting a user or hard-deleting a dataset (docs/FORGET.md). Every read
 * and every cascade goes through an index: datasets by (user_id, name), runs by (user_id,
 * dataset), the rows of a dataset by dataset_id, and each child table by its foreign key
 * (migration 0010 adds the ones that were missing).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { type DatasetContents, EraseRepo } from "../../../src/services/EraseRepo.js"
import { FullTextIndex } from "../../../src/services/FullTextIndex.js"
import { chunksOf } from "./internal.js"

/** The error text a scrubbed model call keeps: it failed, and what it said is gone. */
export const SCRUBBED_ERROR = "removed: its user or dataset was forgotten"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const fullText = yield* FullTextIndex
  const ids = (rows: ReadonlyArray<{ readonly id: number }>) => rows.map((r) => Number(r.id))

  const datasetNames = (userId: string) =>
    sql<{ name: string }>`SELECT name FROM gb_datasets WHERE user_id = ${userId}
      UNION SELECT dataset AS name FROM gb_remember_runs WHERE user_id = ${userId}`.pipe(
      Effect.map((rows) => [...new Set(rows.map((r) => r.name))].sort()),
      Effect.orDie
    )

  const datasetIds = (userId: string, name: string) =>
    sql<{ id: number }>`SELECT id FROM gb_datasets WHERE user_id = ${userId} AND name = ${name} ORDER BY id`.pipe(
      Effect.map(ids),
      Effect.orDie
    )

  const contents = (datasetId: number) =>
    sql<DatasetContents>`SELECT
        (SELECT COUNT(*) FROM gb_artifacts WHERE dataset_id = ${datasetId}) AS artifacts,
        (SELECT COUNT(*) FROM gb_entities WHERE dataset_id = ${datasetId}) AS entities,
        (SELECT COUNT(*) FROM gb_edges WHERE dataset_id = ${datasetId}) AS facts,
        (SELECT COUNT(*) FROM gb_image_artifacts WHERE dataset_id = ${datasetId}) AS images`.pipe(
      Effect.map((rows) => {
        const row = rows[0]!
        return {
          artifacts: Number(row.artifacts),
          entities: Number(row.entities),
          facts: Number(row.facts),
          images: Number(row.images)
        }
      }),
      Effect.orDie
    )

  const vectors = (datasetId: number) =>
    Effect.all({
      entityIds: sql<{ id: number }>`SELECT id FROM gb_entities
        WHERE dataset_id = ${datasetId} AND embedded_at IS NOT NULL ORDER BY id`.pipe(Effect.map(ids)),
      edgeIds: sql<{ id: number }>`SELECT id FROM gb_edges
        WHERE dataset_id = ${datasetId} AND embedded_at IS NOT NULL ORDER BY id`.pipe(Effect.map(ids)),
      chunkIds: sql<{ id: number }>`SELECT id FROM gb_artifacts
        WHERE dataset_id = ${datasetId} AND kind = 'chunk' ORDER BY id`.pipe(Effect.map(ids)),
      summaryIds: sql<{ id: number }>`SELECT id FROM gb_artifacts
        WHERE dataset_id = ${datasetId} AND kind = 'chunk_summary' ORDER BY id`.pipe(Effect.map(ids))
    }).pipe(Effect.orDie)

  const imagePaths = (datasetId: number) =>
    sql<{ path: string }>`SELECT path FROM gb_image_artifacts WHERE dataset_id = ${datasetId} ORDER BY id`.pipe(
      Effect.map((rows) => rows.map((r) => r.path)),
      Effect.orDie
    )

  const dropPendingUpserts = (datasetId: number) =>
    sql`DELETE FROM gb_vector_outbox WHERE dataset_id = ${datasetId} AND op <> 'delete'`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

  const scrubInferences = (datasetIds: ReadonlyArray<number>, userId: string, name: string) =>
    Effect.gen(function*() {
      for (const chunk of chunksOf(datasetIds)) {
        yield* sql`UPDATE gb_inferences SET error = ${SCRUBBED_ERROR}
          WHERE dataset_id IN ${sql.in(chunk)} AND error IS NOT NULL`
      }
      yield* sql`UPDATE gb_inferences SET error = ${SCRUBBED_ERROR}
        WHERE run_id IN (SELECT id FROM gb_remember_runs WHERE user_id = ${userId} AND dataset = ${name})
          AND error IS NOT NULL`
    }).pipe(Effect.orDie)

  const deleteRuns = (userId: string, name: string) =>
    sql<{ id: number }>`DELETE FROM gb_remember_runs WHERE user_id = ${userId} AND dataset = ${name}
      RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie)

  // the cascade queued its rows' deletes from the full-text index: applied, with its statistics gone
  const deleteDataset = (datasetId: number) =>
    sql`DELETE FROM gb_datasets WHERE id = ${datasetId}`.pipe(
      Effect.zipRight(fullText.drop(datasetId)),
      Effect.asVoid,
      Effect.orDie
    )

  const deleteIdempotencyKeys = (userId: string) =>
    sql<{ run_id: number }>`DELETE FROM gb_remember_idempotency WHERE user_id = ${userId} RETURNING run_id`.pipe(
      Effect.map((rows) => rows.length),
      Effect.orDie
    )

  return EraseRepo.of({
    datasetNames,
    datasetIds,
    contents,
    vectors,
    imagePaths,
    dropPendingUpserts,
    scrubInferences,
    deleteRuns,
    deleteDataset,
    deleteIdempotencyKeys
  })
})

/** Needs the writer's FullTextIndex (FullText.ts's FullTextIndexLive). */
export const EraseRepoLive: Layer.Layer<EraseRepo, never, SqlClient.SqlClient | FullTextIndex> = Layer.effect(
  EraseRepo,
  make
)
