/**
 * Vector naming (spec/contracts.md section 10), embedding texts, and the outbox drain that
 * keeps the vector store in step with the database.
 */
import { Effect } from "effect"
import { VectorWriteFailed } from "../domain/Errors.js"
import type { OutboxItem, VectorOutbox } from "../services/VectorOutbox.js"
import type { VectorStore } from "../services/VectorStore.js"

export type VectorKind = "entities" | "edges" | "chunks" | "summaries"

export const indexName = (datasetId: number, kind: VectorKind): string => `dataset-${datasetId}-${kind}`

/** An outbox entry that removes one vector (a forget's deletes converge through the outbox). */
export const vectorDelete = (datasetId: number, kind: VectorKind, vectorId: string): OutboxItem => ({
  dataset_id: datasetId,
  index_name: indexName(datasetId, kind),
  vector_id: vectorId,
  values: [],
  metadata: {},
  op: "delete"
})

export const entityVectorId = (id: number) => `entity-${id}`
export const edgeVectorId = (id: number) => `edge-${id}`
export const chunkVectorId = (artifactId: number) => `chunk-${artifactId}`
export const summaryVectorId = (artifactId: number) => `summary-${artifactId}`

/** An entity is embedded as `Name (type): description` (seed: Embed). */
export const entityText = (e: { readonly name: string; readonly type: string; readonly description: string }) =>
  `${e.name} (${e.type}): ${e.description}`

/** Pending vectors drained per call: bounded, so one remember never carries a huge backlog. */
export const OUTBOX_DRAIN_LIMIT = 500

/**
 * Writes outbox rows to the vector store, one upsert per index, and removes them. `ids`
 * selects rows (this call's); without it the oldest pending rows are retried. A failure leaves
 * the rows (with the error and an attempt count) for the next drain.
 */
export const drainOutbox = (
  deps: { readonly outbox: VectorOutbox["Type"]; readonly vectors: VectorStore["Type"] },
  ids?: ReadonlyArray<number>
): Effect.Effect<number, VectorWriteFailed> =>
  Effect.gen(function*() {
    if (ids !== undefined && ids.length === 0) return 0
    const rows = yield* deps.outbox.pending(ids?.length ?? OUTBOX_DRAIN_LIMIT, ids)
    if (rows.length === 0) return 0
    const byIndex = new Map<string, Array<(typeof rows)[number]>>()
    for (const row of rows) {
      const list = byIndex.get(row.index_name) ?? []
      list.push(row)
      byIndex.set(row.index_name, list)
    }
    let written = 0
    for (const [index, list] of byIndex) {
      // a later row for the same vector id wins (it was queued later): a delete after an upsert deletes
      const latest = [...new Map(list.map((r) => [r.vector_id, r] as const)).values()]
      const deletes = latest.filter((r) => r.op === "delete").map((r) => r.vector_id)
      const upserts = latest.filter((r) => r.op !== "delete")
      const outcome = yield* Effect.either(
        Effect.zipRight(
          deletes.length === 0 ? Effect.void : deps.vectors.delete(index, deletes),
          upserts.length === 0 ? Effect.void : deps.vectors.upsert(
            index,
            upserts.map((r) => ({ id: r.vector_id, values: r.values, metadata: r.metadata }))
          )
        )
      )
      if (outcome._tag === "Left") {
        yield* deps.outbox.recordFailure(list.map((r) => r.id), outcome.left.message)
        return yield* new VectorWriteFailed({ message: `vector write to ${index} failed: ${outcome.left.message}` })
      }
      yield* deps.outbox.remove(list.map((r) => r.id))
      written += list.length
    }
    return written
  })
