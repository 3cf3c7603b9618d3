/**
 * Vector naming (spec/contracts.md section 10), embedding texts, and the outbox drain that
 * keeps the vector store in step with the database.
 */
import { Effect } from "effect"
import { VectorWriteFailed } from "../domain/Errors.js"
import { beforeCommit, type Database } from "../services/Database.js"
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

/** Changes of one index, the last one of each vector id winning (a delete after an upsert deletes). */
const applyChanges = (
  vectors: VectorStore["Type"],
  index: string,
  changes: ReadonlyArray<OutboxItem>
): Effect.Effect<void, VectorWriteFailed> => {
  const latest = [...new Map(changes.map((c) => [c.vector_id, c] as const)).values()]
  const deletes = latest.filter((c) => c.op === "delete").map((c) => c.vector_id)
  const upserts = latest.filter((c) => c.op !== "delete")
  return Effect.zipRight(
    deletes.length === 0 ? Effect.void : vectors.delete(index, deletes),
    upserts.length === 0 ? Effect.void : vectors.upsert(
      index,
      upserts.map((c) => ({ id: c.vector_id, values: c.values, metadata: c.metadata }))
    )
  )
}

const byIndex = <A extends { readonly index_name: string }>(items: ReadonlyArray<A>) => {
  const groups = new Map<string, Array<A>>()
  for (const item of items) {
    const list = groups.get(item.index_name) ?? []
    list.push(item)
    groups.set(item.index_name, list)
  }
  return groups
}

/**
 * Records vector changes in the caller's transaction and returns the outbox ids to drain after
 * commit. A transactional store gets them right here (they commit or roll back with the rows,
 * and no outbox row is written), and the pending outbox rows of the same vectors are settled in
 * the same transaction, so that an older one drained later cannot write an older vector back.
 */
export const recordVectors = (
  deps: { readonly outbox: VectorOutbox["Type"]; readonly vectors: VectorStore["Type"] },
  items: ReadonlyArray<OutboxItem>,
  now: string
): Effect.Effect<ReadonlyArray<number>, VectorWriteFailed> =>
  deps.vectors.transactional === true
    ? Effect.gen(function*() {
      if (items.length === 0) return []
      yield* deps.outbox.settle(items)
      for (const [index, changes] of byIndex(items)) yield* applyChanges(deps.vectors, index, changes)
      return []
    })
    : deps.outbox.enqueue(items, now)

/**
 * Writes outbox rows to the vector store, one upsert per index, and removes them. `ids`
 * selects rows (this call's); without it the oldest pending rows are retried. A failure leaves
 * the rows (with the error and an attempt count) for the next drain. For a transactional store
 * (a database migrated from another store may hold some rows) the rows are read locked, written
 * and removed in one transaction, so a store transaction settling the same vectors is ordered
 * with the drain, never overwritten by it.
 */
export const drainOutbox = (
  deps: {
    readonly database: Database["Type"]
    readonly outbox: VectorOutbox["Type"]
    readonly vectors: VectorStore["Type"]
  },
  ids?: ReadonlyArray<number>
): Effect.Effect<number, VectorWriteFailed> => {
  if (ids !== undefined && ids.length === 0) return Effect.succeed(0)
  const locked = deps.vectors.transactional === true
  const drain = Effect.gen(function*() {
    const rows = yield* deps.outbox.pending(ids?.length ?? OUTBOX_DRAIN_LIMIT, ids, locked)
    let written = 0
    for (const [index, list] of byIndex(rows)) {
      const outcome = yield* Effect.either(applyChanges(deps.vectors, index, list))
      if (outcome._tag === "Left") {
        yield* deps.outbox.recordFailure(list.map((r) => r.id), outcome.left.message)
        return { written, failed: `vector write to ${index} failed: ${outcome.left.message}` }
      }
      yield* deps.outbox.remove(list.map((r) => r.id))
      written += list.length
    }
    return { written, failed: null }
  })
  // a transaction of its own, without the hooks of a run's store transaction (a drain runs in
  // the run's fiber, and its commit is not the run's); the failure is committed before it is raised
  // the common case, nothing pending, is one plain read: no write transaction on every remember
  const run = locked
    ? Effect.flatMap(deps.outbox.pending(1, ids, false), (some) =>
      some.length === 0
        ? Effect.succeed({ written: 0, failed: null })
        : Effect.locally(deps.database.withTransaction(drain), beforeCommit, []))
    : drain
  return Effect.flatMap(
    run,
    ({ failed, written }) =>
      failed === null ? Effect.succeed(written) : Effect.fail(new VectorWriteFailed({ message: failed }))
  )
}
