/**
 * `gligabao reembed`: embeds the entities and edges stored before embeddings were configured
 * (their `embedded_at` is null), through the outbox like a remember, batch by batch, so an
 * interrupted run resumes where it stopped.
 */
import { Clock, Effect, Option } from "effect"
import type { EmbeddingFailed, VectorWriteFailed } from "../domain/Errors.js"
import type { DatasetRow, EdgeRow, EntityRow } from "../domain/Rows.js"
import { toIso } from "../domain/time.js"
import { Database } from "../services/Database.js"
import { DatasetsRepo } from "../services/DatasetsRepo.js"
import { Embeddings } from "../services/Embeddings.js"
import { GraphRepo } from "../services/GraphRepo.js"
import { InferencesRepo } from "../services/InferencesRepo.js"
import { type OutboxItem, VectorOutbox } from "../services/VectorOutbox.js"
import { VectorStore } from "../services/VectorStore.js"
import { callEmbeddings } from "./ModelCalls.js"
import { RememberSettings } from "./Settings.js"
import { drainOutbox, edgeVectorId, entityText, entityVectorId, indexName, recordVectors } from "./vectors.js"

/** What a re-embedding reads and writes through; the model calls are priced with the settings' prices. */
export type ReembedPorts =
  | Database
  | DatasetsRepo
  | GraphRepo
  | InferencesRepo
  | Embeddings
  | VectorStore
  | VectorOutbox
  | RememberSettings

/** The tags of ReembedPorts, for a service that keeps exactly these of its composition. */
export const REEMBED_PORTS = [
  Database,
  DatasetsRepo,
  GraphRepo,
  InferencesRepo,
  Embeddings,
  VectorStore,
  VectorOutbox,
  RememberSettings
] as const

export interface ReembedResult {
  readonly datasets: number
  readonly entities: number
  readonly edges: number
}

const BATCH = 100

const entityItem = (d: DatasetRow, e: EntityRow, values: ReadonlyArray<number>): OutboxItem => ({
  dataset_id: d.id,
  index_name: indexName(d.id, "entities"),
  vector_id: entityVectorId(e.id),
  values,
  metadata: { dataset_id: d.id, kind: "entity", entity_id: e.id, name: e.name, name_key: e.name_key, type: e.type }
})

const edgeItem = (d: DatasetRow, e: EdgeRow, values: ReadonlyArray<number>): OutboxItem => ({
  dataset_id: d.id,
  index_name: indexName(d.id, "edges"),
  vector_id: edgeVectorId(e.id),
  values,
  metadata: { dataset_id: d.id, kind: "edge", edge_id: e.id, relation: e.relation }
})

/** One batch of rows: embed (outside any transaction), queue and mark (one transaction), write. */
const embedBatch = <R extends { readonly id: number }>(
  dataset: DatasetRow,
  rows: ReadonlyArray<R>,
  text: (r: R) => string,
  item: (d: DatasetRow, r: R, v: ReadonlyArray<number>) => OutboxItem,
  mark: (ids: ReadonlyArray<number>, at: string) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const ports = yield* Effect.all({ database: Database, outbox: VectorOutbox, vectors: VectorStore })
    const batch = yield* callEmbeddings({
      embeddings: yield* Embeddings,
      inferences: yield* InferencesRepo,
      prices: (yield* RememberSettings).prices,
      type: "remember",
      runId: null,
      datasetId: dataset.id,
      recorder: null,
      runStage: "embed"
    }, rows.map(text))
    const now = toIso(yield* Clock.currentTimeMillis)
    const ids = yield* ports.database.withTransaction(
      Effect.flatMap(
        recordVectors(ports, rows.map((r, i) => item(dataset, r, batch.vectors[i]!)), now),
        (ids) => Effect.as(mark(rows.map((r) => r.id), now), ids)
      )
    )
    yield* drainOutbox(ports, ids)
  })

export const reembed = (
  filter: { readonly userId?: string | undefined; readonly dataset?: string | undefined }
): Effect.Effect<ReembedResult, EmbeddingFailed | VectorWriteFailed, ReembedPorts> =>
  Effect.gen(function*() {
    const datasets = yield* DatasetsRepo
    const graph = yield* GraphRepo
    const all = filter.userId !== undefined && filter.dataset !== undefined
      ? Option.toArray(yield* datasets.find(filter.userId, filter.dataset))
      : (yield* datasets.listLive()).filter((d) =>
        (filter.userId === undefined || d.user_id === filter.userId) &&
        (filter.dataset === undefined || d.name === filter.dataset)
      )
    let entities = 0
    let edges = 0
    for (const dataset of all) {
      let after = 0
      for (;;) {
        const rows = yield* graph.entitiesWithoutVectors(dataset.id, after, BATCH)
        if (rows.length === 0) break
        yield* embedBatch(dataset, rows, entityText, entityItem, (ids, at) => graph.markEmbedded(ids, [], at))
        entities += rows.length
        after = rows[rows.length - 1]!.id
      }
      after = 0
      for (;;) {
        const rows = yield* graph.edgesWithoutVectors(dataset.id, after, BATCH)
        if (rows.length === 0) break
        yield* embedBatch(dataset, rows, (e) => e.description, edgeItem, (ids, at) => graph.markEmbedded([], ids, at))
        edges += rows.length
        after = rows[rows.length - 1]!.id
      }
      if (entities + edges > 0) yield* Effect.logInfo("reembedded", { dataset: dataset.name, user_id: dataset.user_id })
    }
    return { datasets: all.length, entities, edges }
  })
