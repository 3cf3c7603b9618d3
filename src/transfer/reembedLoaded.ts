/**
 * What a load of a dump without vectors (`--no-vectors`, or a store that could not give them
 * back) does once the rows are in: the loaded datasets' entities and facts are embedded by
 * `reembed` (their `embedded_at` is null in such a dump), and their chunks and chunk summaries
 * here, with the metadata the store stage gives them. Embeddings, not model (LLM) calls; each
 * batch is recorded in gb_inferences like any embedding call.
 */
import { Clock, Effect, Option } from "effect"
import type { EmbeddingFailed, VectorWriteFailed } from "../domain/Errors.js"
import { toIso } from "../domain/time.js"
import { callEmbeddings } from "../pipeline/ModelCalls.js"
import { reembed, type ReembedPorts } from "../pipeline/reembed.js"
import { RememberSettings } from "../pipeline/Settings.js"
import { chunkVectorId, drainOutbox, indexName, recordVectors, summaryVectorId } from "../pipeline/vectors.js"
import { Database } from "../services/Database.js"
import { DatasetsRepo } from "../services/DatasetsRepo.js"
import { Embeddings } from "../services/Embeddings.js"
import { InferencesRepo } from "../services/InferencesRepo.js"
import { type Cursor, type GroupKey, type Page, TransferRepo, type TransferRows } from "../services/TransferRepo.js"
import { type OutboxItem, VectorOutbox } from "../services/VectorOutbox.js"
import { VectorStore } from "../services/VectorStore.js"

export interface Reembedded {
  readonly entities: number
  readonly edges: number
  readonly chunks: number
  readonly summaries: number
}

const BATCH = 100

type Artifact = TransferRows["artifact"]

const itemOf = (datasetId: number, a: Artifact, values: ReadonlyArray<number>): OutboxItem =>
  a.kind === "chunk"
    ? {
      dataset_id: datasetId,
      index_name: indexName(datasetId, "chunks"),
      vector_id: chunkVectorId(a.id),
      values,
      metadata: {
        dataset_id: datasetId,
        kind: "chunk",
        artifact_id: a.id,
        index: Number((a.metadata as { index?: unknown } | null)?.index ?? 0)
      }
    }
    : {
      dataset_id: datasetId,
      index_name: indexName(datasetId, "summaries"),
      vector_id: summaryVectorId(a.id),
      values,
      metadata: { dataset_id: datasetId, kind: "summary", artifact_id: a.id, chunk_artifact_id: a.parent_id ?? 0 }
    }

/** The chunks and chunk summaries of a dataset, embedded a batch at a time. */
const embedArtifacts = (datasetId: number) =>
  Effect.gen(function*() {
    const repo = yield* TransferRepo
    const ports = yield* Effect.all({ database: Database, outbox: VectorOutbox, vectors: VectorStore })
    const context = {
      embeddings: yield* Embeddings,
      inferences: yield* InferencesRepo,
      prices: (yield* RememberSettings).prices,
      type: "remember" as const,
      runId: null,
      datasetId,
      recorder: null,
      runStage: "embed"
    }
    let chunks = 0
    let summaries = 0
    let after: Cursor | null = null
    for (;;) {
      const page: Page<Artifact> = yield* repo.page("artifact", { _tag: "Dataset", datasetId }, after, BATCH)
      const wanted = page.rows.filter((a) => a.kind === "chunk" || a.kind === "chunk_summary")
      if (wanted.length > 0) {
        const batch = yield* callEmbeddings(context, wanted.map((a) => a.text))
        const now = toIso(yield* Clock.currentTimeMillis)
        const ids = yield* ports.database.withTransaction(
          recordVectors(ports, wanted.map((a, i) => itemOf(datasetId, a, batch.vectors[i]!)), now)
        )
        yield* drainOutbox(ports, ids)
        chunks += wanted.filter((a) => a.kind === "chunk").length
        summaries += wanted.filter((a) => a.kind === "chunk_summary").length
      }
      if (page.next === null) return { chunks, summaries }
      after = page.next
    }
  })

/** Embeds the live datasets of these groups: entities and facts without a vector, and (`withArtifacts`) chunks and summaries. */
export const reembedLoaded = (
  groups: ReadonlyArray<GroupKey & { readonly withArtifacts: boolean }>
): Effect.Effect<Reembedded, EmbeddingFailed | VectorWriteFailed, ReembedPorts | TransferRepo> =>
  Effect.gen(function*() {
    const datasets = yield* DatasetsRepo
    let total: Reembedded = { entities: 0, edges: 0, chunks: 0, summaries: 0 }
    for (const group of groups) {
      const found = yield* datasets.find(group.user_id, group.dataset)
      if (Option.isNone(found)) continue
      const rows = yield* reembed({ userId: group.user_id, dataset: group.dataset })
      const artifacts = group.withArtifacts ? yield* embedArtifacts(found.value.id) : { chunks: 0, summaries: 0 }
      total = {
        entities: total.entities + rows.entities,
        edges: total.edges + rows.edges,
        chunks: total.chunks + artifacts.chunks,
        summaries: total.summaries + artifacts.summaries
      }
    }
    return total
  })
