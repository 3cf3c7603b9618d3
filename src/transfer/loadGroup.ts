/**
 * One group of a dump written into the target (docs/TRANSFER.md), inside the load's transaction
 * for the group: records are buffered by kind and written a batch at a time, each batch's rows
 * first given new ids (`TransferRepo.allocate`, in the source's order), then every reference
 * they hold followed through the group's maps. A reference to a row the dump does not hold
 * fails the group (the file is inconsistent), except where the schema itself lets the reference
 * go (a `SET NULL` foreign key, a run's artifact): there it becomes null.
 */
import { Effect, Either, Encoding } from "effect"
import type { DumpRecord, RecordKind, RecordOf } from "../domain/DumpFormat.js"
import { recordVectors } from "../pipeline/vectors.js"
import type { ImageStore } from "../services/ImageStore.js"
import type { IdKind, TransferRepo, TransferRows } from "../services/TransferRepo.js"
import type { OutboxItem, VectorOutbox } from "../services/VectorOutbox.js"
import type { VectorStore } from "../services/VectorStore.js"
import { type IdMaps, type IdTable, imagePathIn, remapJson, ROW_TABLE, vectorNameIn } from "./remap.js"
import { TransferFailed } from "./TransferFailed.js"

/** Records written in one batch (a multi-row insert, a vector write). */
export const LOAD_BATCH = 400

export interface GroupDeps {
  readonly repo: TransferRepo["Type"]
  readonly outbox: VectorOutbox["Type"]
  readonly vectors: VectorStore["Type"]
  readonly images: ImageStore["Type"]
  readonly now: string
}

/** What a group wrote: counts by record kind, the outbox rows to drain after commit, the image files it created. */
export interface GroupWritten {
  readonly counts: Record<string, number>
  readonly outboxIds: Array<number>
  readonly createdFiles: Array<string>
  readonly datasetIds: Array<number>
  imagesMissing: number
  idempotencyKeysKept: number
}

type Batch = { kind: RecordKind; records: Array<{ readonly record: DumpRecord; readonly line: number }> }

const ID_KINDS: Partial<Record<RecordKind, IdKind>> = {
  dataset: "dataset",
  run: "run",
  inference: "inference",
  series: "series",
  artifact: "artifact",
  entity: "entity",
  edge: "edge",
  edge_closure: "edge_closure",
  image: "image",
  image_extraction: "image_extraction",
  image_text_block: "image_text_block",
  series_anchor: "series_anchor"
}

const MAP_OF: Partial<Record<RecordKind, IdTable>> = {
  dataset: "datasets",
  run: "runs",
  inference: "inferences",
  series: "series",
  artifact: "artifacts",
  entity: "entities",
  edge: "edges",
  image: "images",
  image_extraction: "extractions"
}

export const makeGroupWriter = (deps: GroupDeps, maps: IdMaps) => {
  const written: GroupWritten = {
    counts: {},
    outboxIds: [],
    createdFiles: [],
    datasetIds: [],
    imagesMissing: 0,
    idempotencyKeysKept: 0
  }
  let batch: Batch | null = null
  let line = 0

  const inconsistent = (message: string) =>
    new TransferFailed({ message: `the batch from line ${line}: the dump is inconsistent: ${message}` })

  /** a reference the row cannot do without */
  const must = (table: IdTable, id: number, what: string): number => {
    const to = maps[table].get(id)
    if (to === undefined) throw inconsistent(`${what} names ${table} row ${id}, which the dump does not hold before it`)
    return to
  }
  /** a nullable reference that must resolve when set (a CASCADE foreign key) */
  const mustOrNull = (table: IdTable, id: number | null, what: string) => id === null ? null : must(table, id, what)
  /** a reference the schema lets go (SET NULL, or no foreign key) */
  const orNull = (table: IdTable, id: number | null) => id === null ? null : maps[table].get(id) ?? null

  /** the rows of a batch as the target stores them (a throw of TransferFailed names the first bad reference) */
  const convert = (
    kind: RecordKind,
    records: ReadonlyArray<DumpRecord>,
    ids: ReadonlyArray<number>
  ): ReadonlyArray<any> => {
    // the batch's records are all of `kind`: their fields are that table's row
    const rows = records.map((record, i) => {
      const { record: _, ...fields } = record as any
      return { fields, id: ids[i], what: `${kind} ${fields.id ?? ""}`.trim() }
    })
    switch (kind) {
      case "dataset":
        return rows.map(({ fields, id }) => ({ ...fields, id }))
      case "run":
        return rows.map(({ fields, id }) => ({ ...fields, id, dataset_id: orNull("datasets", fields.dataset_id) }))
      case "inference":
        return rows.map(({ fields, id }) => ({
          ...fields,
          id,
          model_id: orNull("models", fields.model_id),
          run_id: orNull("runs", fields.run_id),
          dataset_id: orNull("datasets", fields.dataset_id)
        }))
      case "series":
        return rows.map(({ fields, id, what }) => ({
          ...fields,
          id,
          dataset_id: must("datasets", fields.dataset_id, what)
        }))
      case "series_point":
        return rows.map(({ fields }) => ({ ...fields, series_id: must("series", fields.series_id, "a series point") }))
      case "artifact":
        return rows.map(({ fields, id, what }) => ({
          ...fields,
          id,
          dataset_id: must("datasets", fields.dataset_id, what),
          parent_id: mustOrNull("artifacts", fields.parent_id, what),
          inference_id: orNull("inferences", fields.inference_id),
          metadata: remapJson(fields.metadata, maps)
        }))
      case "entity":
        return rows.map(({ fields, id, what }) => ({
          ...fields,
          id,
          dataset_id: must("datasets", fields.dataset_id, what),
          model_id: orNull("models", fields.model_id)
        }))
      case "edge":
        return rows.map(({ fields, id, what }) => ({
          ...fields,
          id,
          dataset_id: must("datasets", fields.dataset_id, what),
          source_id: must("entities", fields.source_id, what),
          target_id: must("entities", fields.target_id, what),
          artifact_id: orNull("artifacts", fields.artifact_id),
          model_id: orNull("models", fields.model_id)
        }))
      case "entity_artifact":
      case "entity_session":
      case "entity_geo":
        return rows.map(({ fields }) => ({
          ...fields,
          entity_id: must("entities", fields.entity_id, kind),
          ...("artifact_id" in fields ? { artifact_id: must("artifacts", fields.artifact_id, kind) } : {})
        }))
      case "edge_artifact":
      case "edge_session":
        return rows.map(({ fields }) => ({
          ...fields,
          edge_id: must("edges", fields.edge_id, kind),
          ...("artifact_id" in fields ? { artifact_id: must("artifacts", fields.artifact_id, kind) } : {})
        }))
      case "edge_closure":
        return rows.map(({ fields, id, what }) => ({
          ...fields,
          id,
          edge_id: must("edges", fields.edge_id, what),
          by_edge_id: mustOrNull("edges", fields.by_edge_id, what),
          artifact_id: orNull("artifacts", fields.artifact_id)
        }))
      case "image":
        return rows.map(({ fields, id, what }) => {
          const datasetId = must("datasets", fields.dataset_id, what)
          const path = imagePathIn(datasetId, fields.path)
          maps.imagePaths.set(fields.path, path)
          return { ...fields, id, dataset_id: datasetId, path }
        })
      case "image_extraction":
        return rows.map(({ fields, id, what }) => ({
          ...fields,
          id,
          image_artifact_id: must("images", fields.image_artifact_id, what),
          inference_id: orNull("inferences", fields.inference_id)
        }))
      case "image_text_block":
        return rows.map(({ fields, id, what }) => ({
          ...fields,
          id,
          extraction_id: must("extractions", fields.extraction_id, what)
        }))
      case "series_anchor":
        return rows.map(({ fields, id, what }) => ({
          ...fields,
          id,
          series_id: must("series", fields.series_id, what),
          artifact_id: mustOrNull("artifacts", fields.artifact_id, what),
          entity_id: mustOrNull("entities", fields.entity_id, what),
          edge_id: mustOrNull("edges", fields.edge_id, what)
        }))
      case "run_stage":
        return rows.map(({ fields }) => ({
          ...fields,
          run_id: must("runs", fields.run_id, "a run stage"),
          inference_ids: (fields.inference_ids as ReadonlyArray<number>).flatMap((i) =>
            maps.inferences.has(i) ? [maps.inferences.get(i)!] : []
          ),
          detail: remapJson(fields.detail, maps)
        }))
      case "run_queue":
        return rows.map(({ fields }) => ({
          ...fields,
          run_id: must("runs", fields.run_id, "a queued run"),
          document_id: orNull("artifacts", fields.document_id)
        }))
      case "idempotency_key":
        return rows.map(({ fields }) => ({ ...fields, run_id: must("runs", fields.run_id, "an Idempotency-Key") }))
      case "run_result":
        return rows.map(({ fields }) => ({
          run_id: must("runs", fields.run_id, "a run's result"),
          artifact_id: orNull("artifacts", fields.artifact_id),
          response: remapJson(fields.response, maps)
        }))
      case "vector":
      case "vector_pending":
        return rows.flatMap(({ fields }): Array<OutboxItem> => {
          const datasetId = maps.datasets.get(fields.dataset_id)
          const rowId = maps[ROW_TABLE[fields.kind as keyof typeof ROW_TABLE]].get(fields.row_id)
          // a pending change of a row gone before the dump has nothing to change
          if (datasetId === undefined || rowId === undefined) {
            if (kind === "vector") {
              throw inconsistent(`a vector names ${fields.kind} row ${fields.row_id}, which it does not hold`)
            }
            return []
          }
          const name = vectorNameIn(datasetId, fields.kind, rowId)
          return [{
            dataset_id: datasetId,
            index_name: name.index,
            vector_id: name.id,
            values: fields.values,
            metadata: remapJson(fields.metadata, maps) as OutboxItem["metadata"],
            op: kind === "vector_pending" ? fields.op : "upsert"
          }]
        })
      default:
        throw inconsistent(`a record of kind ${kind} inside a group`)
    }
  }

  /** writes the image files of a batch (their new paths), remembering the files it created */
  const writeFiles = (records: ReadonlyArray<RecordOf<"image">>, rows: ReadonlyArray<{ readonly path: string }>) =>
    Effect.forEach(records, (record, i) => {
      if (record.data === null) return Effect.sync(() => void written.imagesMissing++)
      const bytes = Encoding.decodeBase64(record.data)
      if (Either.isLeft(bytes)) return Effect.fail(inconsistent(`image ${record.id}'s data is not base64`))
      const path = rows[i]!.path
      return deps.images.write(path, bytes.right).pipe(
        Effect.tap((created) => created ? Effect.sync(() => void written.createdFiles.push(path)) : Effect.void),
        Effect.mapError((e) => new TransferFailed({ message: `line ${line}: ${e.message}` }))
      )
    }, { discard: true })

  const flush = Effect.suspend(() => {
    const current = batch
    batch = null
    if (current === null || current.records.length === 0) return Effect.void
    const { kind } = current
    const records = current.records.map((r) => r.record)
    line = current.records[0]!.line
    return Effect.gen(function*() {
      const idKind = ID_KINDS[kind]
      const ids = idKind === undefined ? [] : yield* deps.repo.allocate(idKind, records.length)
      const table = MAP_OF[kind]
      if (table !== undefined) {
        records.forEach((r, i) => maps[table].set((r as { id: number }).id, ids[i]!))
      }
      const rows = yield* Effect.try({
        try: () => convert(kind, records, ids),
        catch: (e) => e instanceof TransferFailed ? e : new TransferFailed({ message: `line ${line}: ${String(e)}` })
      })
      written.counts[kind] = (written.counts[kind] ?? 0) + records.length
      switch (kind) {
        case "dataset":
          written.datasetIds.push(...ids)
          return yield* deps.repo.insert("dataset", rows)
        case "run_result":
          return yield* deps.repo.setRunResults(rows)
        case "vector":
        case "vector_pending": {
          // a transactional store writes them in this transaction; any other gets outbox rows, drained after commit
          const outboxIds = yield* recordVectors(deps, rows, deps.now).pipe(
            Effect.mapError((e) => new TransferFailed({ message: `line ${line}: ${e.message}` }))
          )
          written.outboxIds.push(...outboxIds)
          return
        }
        case "image":
          yield* writeFiles(records as ReadonlyArray<RecordOf<"image">>, rows)
          return yield* deps.repo.insert("image", rows)
        case "idempotency_key": {
          const kept = yield* deps.repo.insert("idempotency_key", rows)
          written.idempotencyKeysKept += rows.length - kept
          return
        }
        default:
          return yield* deps.repo.insert(kind as Exclude<keyof TransferRows, "model" | "run_result">, rows)
      }
    })
  })

  /** buffers a record of the group; a batch is written when the kind changes or it is full */
  const add = (record: DumpRecord, at: number) =>
    Effect.gen(function*() {
      if (batch !== null && (batch.kind !== record.record || batch.records.length >= LOAD_BATCH)) yield* flush
      if (batch === null) batch = { kind: record.record, records: [] }
      batch.records.push({ record, line: at })
    })

  return { add, flush, written }
}
