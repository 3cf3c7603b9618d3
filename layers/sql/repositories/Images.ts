/** ImagesRepo on SQL: image artifacts, their extractions and text blocks (both dialects). */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { ImageArtifactRow, ImageExtractionRow, ImageTextBlock } from "../../../src/domain/Image.js"
import { ImagesRepo, type NewImageArtifact, type NewImageExtraction } from "../../../src/services/ImagesRepo.js"
import { chunksOf } from "./internal.js"

const ARTIFACT_COLUMNS = "id, dataset_id, session_id, sha256, path, media_type, bytes, valid_at, created_at"
const EXTRACTION_FIELDS = [
  "id",
  "image_artifact_id",
  "inference_id",
  "model",
  "provider",
  "reasoning",
  "theme",
  "title",
  "text",
  "input_tokens",
  "output_tokens",
  "cost_usd",
  "created_at"
]
const EXTRACTION_COLUMNS = EXTRACTION_FIELDS.join(", ")
/** the same columns of `gb_image_extractions x` in a join */
const EXTRACTION_COLUMNS_X = EXTRACTION_FIELDS.map((c) => `x.${c}`).join(", ")

type ExtractionRecord = Omit<ImageExtractionRow, "text_blocks">

interface BlockRecord extends ImageTextBlock {
  readonly extraction_id: number
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** the blocks of these extractions, in position order, attached to each */
  const withBlocks = (extractions: ReadonlyArray<ExtractionRecord>) =>
    Effect.gen(function*() {
      if (extractions.length === 0) return []
      const byExtraction = new Map<number, Array<ImageTextBlock>>()
      for (const chunk of chunksOf(extractions.map((e) => e.id))) {
        const blocks = yield* sql<BlockRecord>`SELECT extraction_id, kind, text FROM gb_image_text_blocks
          WHERE extraction_id IN ${sql.in(chunk)} ORDER BY extraction_id, position`
        for (const b of blocks) {
          const list = byExtraction.get(b.extraction_id) ?? []
          list.push({ kind: b.kind, text: b.text })
          byExtraction.set(b.extraction_id, list)
        }
      }
      return extractions.map((e): ImageExtractionRow => ({ ...e, text_blocks: byExtraction.get(e.id) ?? [] }))
    })

  const findBySha256 = (datasetId: number, sha256: string) =>
    sql<ImageArtifactRow>`SELECT ${sql.literal(ARTIFACT_COLUMNS)} FROM gb_image_artifacts
      WHERE dataset_id = ${datasetId} AND sha256 = ${sha256}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0])),
      Effect.orDie
    )

  const insertExtractionRows = (imageArtifactId: number, extraction: NewImageExtraction) =>
    Effect.gen(function*() {
      const { text_blocks, ...row } = extraction
      const [inserted] = yield* sql<ExtractionRecord>`INSERT INTO gb_image_extractions ${
        sql.insert({
          ...row,
          image_artifact_id: imageArtifactId
        })
      } RETURNING ${sql.literal(EXTRACTION_COLUMNS)}`
      const blocks = text_blocks.map((b, position) => ({
        extraction_id: inserted!.id,
        position,
        kind: b.kind,
        text: b.text
      }))
      for (const chunk of chunksOf(blocks)) {
        yield* sql`INSERT INTO gb_image_text_blocks ${sql.insert(chunk)}`
      }
      return { ...inserted!, text_blocks: text_blocks.map((b) => ({ kind: b.kind, text: b.text })) }
    })

  const insert = (artifact: NewImageArtifact, extraction: NewImageExtraction) =>
    Effect.gen(function*() {
      const [stored] = yield* sql<ImageArtifactRow>`INSERT INTO gb_image_artifacts ${sql.insert({ ...artifact })}
        RETURNING ${sql.literal(ARTIFACT_COLUMNS)}`
      const storedExtraction = yield* insertExtractionRows(stored!.id, extraction)
      return { artifact: stored!, extraction: storedExtraction }
    }).pipe(sql.withTransaction, Effect.orDie)

  const insertExtraction = (imageArtifactId: number, extraction: NewImageExtraction) =>
    insertExtractionRows(imageArtifactId, extraction).pipe(sql.withTransaction, Effect.orDie)

  const newestExtraction = (imageArtifactId: number) =>
    sql<ExtractionRecord>`SELECT ${sql.literal(EXTRACTION_COLUMNS)} FROM gb_image_extractions
      WHERE image_artifact_id = ${imageArtifactId} ORDER BY created_at DESC, id DESC LIMIT 1`.pipe(
      Effect.flatMap(withBlocks),
      Effect.map((rows) => Option.fromNullable(rows[0])),
      Effect.orDie
    )

  const getArtifact = (imageArtifactId: number) =>
    sql<ImageArtifactRow>`SELECT ${sql.literal(ARTIFACT_COLUMNS)} FROM gb_image_artifacts
      WHERE id = ${imageArtifactId}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0])),
      Effect.orDie
    )

  const listArtifacts = (datasetId: number) =>
    sql<ImageArtifactRow>`SELECT ${sql.literal(ARTIFACT_COLUMNS)} FROM gb_image_artifacts
      WHERE dataset_id = ${datasetId} ORDER BY id`.pipe(Effect.orDie)

  const listExtractions = (datasetId: number) =>
    sql<ExtractionRecord>`SELECT ${sql.literal(EXTRACTION_COLUMNS_X)}
      FROM gb_image_extractions x JOIN gb_image_artifacts a ON a.id = x.image_artifact_id
      WHERE a.dataset_id = ${datasetId} ORDER BY x.id`.pipe(Effect.flatMap(withBlocks), Effect.orDie)

  return ImagesRepo.of({
    findBySha256,
    insert,
    insertExtraction,
    newestExtraction,
    getArtifact,
    listArtifacts,
    listExtractions
  })
})

export const ImagesRepoLive: Layer.Layer<ImagesRepo, never, SqlClient.SqlClient> = Layer.effect(ImagesRepo, make)
