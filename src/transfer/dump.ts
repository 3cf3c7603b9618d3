/**
 * `gligabao dump`: everything, one user, or one user's dataset as the lines of the dump format
 * (src/domain/DumpFormat.ts, docs/TRANSFER.md), written as they are read: page by page, on one
 * snapshot of the database, so a dump never holds more than a page of rows and their vectors.
 *
 * Order, so that a load meets every row after the rows it names: the header, the models, then
 * each user's dataset name (a group): its dataset rows, runs, model calls, each dataset row's
 * contents (series, artifacts, entities, facts, links, decisions, places, images, anchors,
 * vectors after the page of rows they belong to), then what hangs on runs (stages, queue,
 * Idempotency-Keys, results); last, the model calls of no user (a whole dump only) and the end.
 */
import { Clock, Effect, Encoding } from "effect"
import {
  encodeLine,
  FORMAT_VERSION,
  type Header,
  type RecordKind,
  type RowOf,
  type VectorKindName
} from "../domain/DumpFormat.js"
import type { VectorWriteFailed } from "../domain/Errors.js"
import { toIso } from "../domain/time.js"
import { indexName } from "../pipeline/vectors.js"
import { ImageStore } from "../services/ImageStore.js"
import {
  type Cursor,
  type GroupKey,
  type Page,
  type TableKind,
  TransferRepo,
  type TransferRows,
  type Within
} from "../services/TransferRepo.js"
import { VectorStore } from "../services/VectorStore.js"
import { compactFloat, parseVectorName, vectorIdOf } from "./remap.js"
import { TransferFailed } from "./TransferFailed.js"

export interface DumpOptions {
  /** only this user's data (null: everything) */
  readonly userId: string | null
  /** only this dataset name of the user */
  readonly dataset: string | null
  /** false: `--no-vectors` (the load re-embeds) */
  readonly vectors: boolean
  readonly gligabaoVersion: string
  readonly embeddingModel: string
  readonly embeddingDimensions: number
}

export interface DumpSummary {
  readonly format_version: string
  readonly scope: { readonly user_id: string | null; readonly dataset: string | null }
  readonly groups: number
  readonly records: Readonly<Record<string, number>>
  readonly vectors: { readonly included: boolean; readonly reason: string | null }
  /** image rows whose file was not in the image store (dumped with `data: null`) */
  readonly images_missing: number
  /** entities and facts marked embedded whose vector the store did not have (dumped as not embedded) */
  readonly vectors_missing: number
  readonly warnings: ReadonlyArray<string>
}

/** Rows per page (and per vector fetch). */
export const DUMP_PAGE = 500

const dataset = (datasetId: number): Within => ({ _tag: "Dataset", datasetId })

export const dump = <E>(
  options: DumpOptions,
  write: (line: string) => Effect.Effect<void, E>
): Effect.Effect<DumpSummary, E | VectorWriteFailed | TransferFailed, TransferRepo | VectorStore | ImageStore> =>
  Effect.gen(function*() {
    const repo = yield* TransferRepo
    const store = yield* VectorStore
    const images = yield* ImageStore
    const fetch = store.fetch
    const included = options.vectors && fetch !== undefined
    const reason = !options.vectors
      ? "dumped with --no-vectors"
      : fetch === undefined
      ? `the ${store.name} vector store cannot give its vectors back`
      : null
    const counts: Record<string, number> = {}
    let total = 0
    let inGroup = 0
    let imagesMissing = 0
    let vectorsMissing = 0

    const emit = <K extends RecordKind>(kind: K, row: RowOf<K>) => {
      counts[kind] = (counts[kind] ?? 0) + 1
      total++
      inGroup++
      return write(encodeLine(kind, row))
    }
    const emitAll = <K extends RecordKind>(kind: K, rows: ReadonlyArray<RowOf<K>>) =>
      Effect.forEach(rows, (row) => emit(kind, row), { discard: true })

    /** every page of a table in the scope, each handed to `each` */
    const eachPage = <K extends TableKind, E2, R2>(
      kind: K,
      within: Within,
      each: (rows: ReadonlyArray<TransferRows[K]>) => Effect.Effect<void, E2, R2>
    ) =>
      Effect.gen(function*() {
        let after: Cursor | null = null
        for (;;) {
          const page: Page<TransferRows[K]> = yield* repo.page(kind, within, after, DUMP_PAGE)
          if (page.rows.length > 0) yield* each(page.rows)
          if (page.next === null) return
          after = page.next
        }
      })
    const copy = <K extends TableKind & RecordKind>(kind: K, within: Within) =>
      eachPage(kind, within, (rows) => emitAll(kind, rows as unknown as ReadonlyArray<RowOf<K>>))

    /** the vectors of these rows the store has (values at float32's shortest), as records */
    const vectorsOf = (datasetId: number, kind: VectorKindName, rowIds: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        if (!included || rowIds.length === 0) return []
        const byVectorId = new Map(rowIds.map((id) => [vectorIdOf(kind, id), id] as const))
        const found = yield* fetch!(indexName(datasetId, kind), [...byVectorId.keys()])
        return found.flatMap((item): Array<RowOf<"vector">> => {
          const rowId = byVectorId.get(item.id)
          return rowId === undefined
            ? []
            : [{
              dataset_id: datasetId,
              kind,
              row_id: rowId,
              values: item.values.map(compactFloat),
              metadata: item.metadata
            }]
        }).sort((a, b) => a.row_id - b.row_id)
      })

    /** entities or facts with their vectors; a row whose vector is not in the dump says it is not embedded */
    const embeddedRows = <K extends "entity" | "edge">(kind: K, vectorKind: VectorKindName, datasetId: number) =>
      eachPage(kind, dataset(datasetId), (rows) =>
        Effect.gen(function*() {
          const embedded = rows.filter((r) => r.embedded_at !== null).map((r) => r.id)
          const vectors = yield* vectorsOf(datasetId, vectorKind, embedded)
          const withVector = new Set(vectors.map((v) => v.row_id))
          if (included) vectorsMissing += embedded.length - withVector.size
          yield* emitAll(
            kind,
            rows.map((r) => ({
              ...r,
              embedded_at: withVector.has(r.id) ? r.embedded_at : null
            })) as unknown as ReadonlyArray<
              RowOf<K>
            >
          )
          yield* emitAll("vector", vectors)
        }))

    const artifacts = (datasetId: number) =>
      eachPage("artifact", dataset(datasetId), (rows) =>
        Effect.gen(function*() {
          yield* emitAll("artifact", rows)
          yield* emitAll(
            "vector",
            yield* vectorsOf(datasetId, "chunks", rows.filter((r) => r.kind === "chunk").map((r) => r.id))
          )
          yield* emitAll(
            "vector",
            yield* vectorsOf(datasetId, "summaries", rows.filter((r) => r.kind === "chunk_summary").map((r) => r.id))
          )
        }))

    const imageFiles = (datasetId: number) =>
      eachPage("image", dataset(datasetId), (rows) =>
        Effect.forEach(rows, (row) =>
          images.read(row.path).pipe(
            Effect.map((bytes): string | null => Encoding.encodeBase64(bytes)),
            Effect.catchAll(() => Effect.sync(() => (imagesMissing++, null))),
            Effect.flatMap((data) => emit("image", { ...row, data }))
          ), { discard: true }))

    const pendingVectors = (datasetId: number) =>
      Effect.gen(function*() {
        if (!included) return
        let after = 0
        for (;;) {
          const rows = yield* repo.pendingVectors(datasetId, after, DUMP_PAGE)
          for (const row of rows) {
            const name = parseVectorName(row.index_name, row.vector_id)
            if (name === undefined) continue
            yield* emit("vector_pending", {
              dataset_id: datasetId,
              kind: name.kind,
              row_id: name.rowId,
              op: row.op,
              values: row.values.map(compactFloat),
              metadata: row.metadata
            })
          }
          if (rows.length < DUMP_PAGE) return
          after = rows.at(-1)!.id
        }
      })

    const contents = (datasetId: number) =>
      Effect.gen(function*() {
        const within = dataset(datasetId)
        yield* copy("series", within)
        yield* copy("series_point", within)
        yield* artifacts(datasetId)
        yield* embeddedRows("entity", "entities", datasetId)
        yield* embeddedRows("edge", "edges", datasetId)
        for (const kind of ["entity_artifact", "edge_artifact", "entity_session", "edge_session"] as const) {
          yield* copy(kind, within)
        }
        yield* copy("edge_closure", within)
        yield* copy("entity_geo", within)
        yield* imageFiles(datasetId)
        yield* copy("image_extraction", within)
        yield* copy("image_text_block", within)
        yield* copy("series_anchor", within)
        yield* pendingVectors(datasetId)
      })

    const group = (key: GroupKey) =>
      Effect.gen(function*() {
        const within: Within = { _tag: "Group", group: key }
        const existing = yield* repo.existing(key)
        yield* emit("group", {
          user_id: key.user_id,
          dataset: key.dataset,
          dataset_created_at: existing.datasetCreatedAt,
          runs: existing.runs
        })
        inGroup = 0
        const datasets: Array<number> = []
        yield* eachPage("dataset", within, (rows) => {
          datasets.push(...rows.map((r) => r.id))
          return emitAll("dataset", rows)
        })
        yield* copy("run", within)
        yield* copy("inference", within)
        for (const id of datasets) yield* copy("inference", dataset(id))
        for (const id of datasets) yield* contents(id)
        yield* copy("run_stage", within)
        yield* copy("run_queue", within)
        yield* copy("idempotency_key", within)
        yield* eachPage("run_result", within, (rows) =>
          emitAll(
            "run_result",
            rows.filter((r) => r.artifact_id !== null || r.response !== null)
          ))
        yield* emit("group_end", { user_id: key.user_id, dataset: key.dataset, records: inGroup })
      })

    return yield* repo.snapshot(Effect.gen(function*() {
      const groups = (yield* repo.groups(options.userId)).filter((g) =>
        options.dataset === null || g.dataset === options.dataset
      )
      if (options.dataset !== null && groups.length === 0) {
        return yield* new TransferFailed({
          message: `${JSON.stringify(options.userId)} has no dataset ${
            JSON.stringify(options.dataset)
          }: nothing to dump`
        })
      }
      const header: Omit<Header, "record"> = {
        format: "gligabao-dump",
        format_version: FORMAT_VERSION,
        gligabao_version: options.gligabaoVersion,
        created_at: toIso(yield* Clock.currentTimeMillis),
        scope: { user_id: options.userId, dataset: options.dataset },
        source: { dialect: repo.dialect, vector_store: store.name },
        vectors: {
          included,
          reason,
          embedding_model: options.embeddingModel,
          embedding_dimensions: options.embeddingDimensions
        }
      }
      yield* write(encodeLine("header", header))
      yield* copy("model", { _tag: "All" })
      for (const key of groups) yield* group(key)
      // the model calls no user's data holds any more (a forgotten user's, scrubbed): a whole dump only
      if (options.userId === null) yield* copy("inference", { _tag: "All" })
      yield* write(encodeLine("end", { groups: groups.length, records: total }))
      return {
        format_version: FORMAT_VERSION,
        scope: { user_id: options.userId, dataset: options.dataset },
        groups: groups.length,
        records: counts,
        vectors: { included, reason },
        images_missing: imagesMissing,
        vectors_missing: vectorsMissing,
        warnings: vectorsMissing === 0 ? [] : [
          `${vectorsMissing} entities and facts are marked embedded but the ${store.name} store has no vector ` +
          `of them at ${options.embeddingDimensions} dimensions: they are dumped as not embedded ` +
          `(\`gligabao reembed\` embeds them after the load); if the source's embedding_dimensions is another, ` +
          `dump again with it`
        ]
      }
    }))
  })
