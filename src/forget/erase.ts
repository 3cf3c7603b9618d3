/**
 * Forget a user, hard-delete a dataset (docs/FORGET.md): whole datasets go, every row of the
 * name (the live one and the soft-deleted ones), with everything in them, the user's runs of
 * that name (stages, queued requests, Idempotency-Keys), their vectors (deletes through the
 * outbox; pending upserts dropped) and their image files. Model calls stay for cost accounting,
 * without their error text, their run and dataset references cleared.
 *
 * Each name under its dataset's lock, in one transaction: a run of it that is storing finishes
 * first; one that is queued or working ahead finds its row gone and stores nothing (the store's
 * commit hook checks it, see RunLogRepo `committed`). After the commit, the image files are
 * removed and the vector deletes written.
 */
import { Effect } from "effect"
import { NotFound } from "../domain/Errors.js"
import {
  chunkVectorId,
  edgeVectorId,
  entityVectorId,
  recordVectors,
  summaryVectorId,
  vectorDelete
} from "../pipeline/vectors.js"
import { EraseRepo } from "../services/EraseRepo.js"
import { ImageStore } from "../services/ImageStore.js"
import { type OutboxItem, VectorOutbox } from "../services/VectorOutbox.js"
import { VectorStore } from "../services/VectorStore.js"
import { afterForget, inDatasetTransaction } from "./envelope.js"
import type { HardDeleteRequest } from "./requests.js"
import type { ForgetUserResponse, HardDeletedDataset } from "./schemas.js"

type Deleted = ForgetUserResponse["deleted"]

interface Erased {
  readonly ids: ReadonlyArray<number>
  readonly deleted: Deleted
  /** vector deletes left in the outbox (the vector store failed) */
  readonly pending: number
}

const NOTHING: Deleted = { datasets: 0, artifacts: 0, entities: 0, facts: 0, vectors: 0, images: 0, runs: 0 }

const add = (a: Deleted, b: Deleted): Deleted => ({
  datasets: a.datasets + b.datasets,
  artifacts: a.artifacts + b.artifacts,
  entities: a.entities + b.entities,
  facts: a.facts + b.facts,
  vectors: a.vectors + b.vectors,
  images: a.images + b.images,
  runs: a.runs + b.runs
})

/** The rows of (user, name), in the caller's transaction: what they held, then gone. */
const eraseRows = (userId: string, name: string, now: string) =>
  Effect.gen(function*() {
    const erase = yield* EraseRepo
    const ids = yield* erase.datasetIds(userId, name)
    let deleted: Deleted = { ...NOTHING, datasets: ids.length }
    const deletes: Array<OutboxItem> = []
    const paths: Array<string> = []
    for (const id of ids) {
      const contents = yield* erase.contents(id)
      deleted = add(deleted, { ...NOTHING, ...contents })
      const vectors = yield* erase.vectors(id)
      for (const e of vectors.entityIds) deletes.push(vectorDelete(id, "entities", entityVectorId(e)))
      for (const e of vectors.edgeIds) deletes.push(vectorDelete(id, "edges", edgeVectorId(e)))
      for (const a of vectors.chunkIds) deletes.push(vectorDelete(id, "chunks", chunkVectorId(a)))
      for (const a of vectors.summaryIds) deletes.push(vectorDelete(id, "summaries", summaryVectorId(a)))
      paths.push(...(yield* erase.imagePaths(id)))
      yield* erase.dropPendingUpserts(id)
    }
    yield* erase.scrubInferences(ids, userId, name)
    const runs = yield* erase.deleteRuns(userId, name)
    for (const id of ids) yield* erase.deleteDataset(id)
    // a transactional store's deletes fail only with its database: a defect, as any SQL error here
    const vectors = { outbox: yield* VectorOutbox, vectors: yield* VectorStore }
    const outboxIds = yield* Effect.orDie(recordVectors(vectors, deletes, now))
    return { ids, deleted: { ...deleted, vectors: deletes.length, runs }, paths, outboxIds }
  })

/** Every row of (user, name) under the dataset's lock, then its files and vectors. */
const eraseName = (userId: string, name: string) =>
  Effect.gen(function*() {
    const committed = yield* inDatasetTransaction(
      { user_id: userId, dataset: name },
      (now) => eraseRows(userId, name, now)
    )
    // a dataset's id is never given again, so nothing written from here on can be in its files or indexes
    const { vectorsPending } = yield* afterForget({
      vectors: committed.outboxIds,
      files: { store: yield* ImageStore, paths: committed.paths }
    })
    return { ids: committed.ids, deleted: committed.deleted, pending: vectorsPending } satisfies Erased
  })

const withPending = (pending: number) => (pending > 0 ? { vectors_pending: pending } : {})

/**
 * `DELETE /v1/gb/datasets/{name}?hard=true`: every dataset of the name, live or soft-deleted,
 * and the user's runs of it. NotFound when there is neither.
 */
export const hardDeleteDataset = (request: HardDeleteRequest) =>
  Effect.gen(function*() {
    const erased = yield* eraseName(request.user_id, request.dataset)
    if (erased.deleted.datasets === 0 && erased.deleted.runs === 0) {
      return yield* new NotFound({ message: `no dataset ${JSON.stringify(request.dataset)} for this user` })
    }
    return {
      user_id: request.user_id,
      dataset: request.dataset,
      dataset_ids: erased.ids,
      deleted: erased.deleted,
      ...withPending(erased.pending)
    } satisfies HardDeletedDataset
  })

/** Names a user keeps submitting to while being forgotten are taken again, this many times at most. */
const MAX_ROUNDS = 4

/**
 * `DELETE /v1/gb/users/{user_id}`: every dataset name the user has rows or runs of, each as a
 * hard delete; a name that appears meanwhile (a run submitted during the forget) too. NotFound
 * when the user has nothing.
 */
export const forgetUser = (userId: string) =>
  Effect.gen(function*() {
    const erase = yield* EraseRepo
    let deleted = NOTHING
    let pending = 0
    let found = false
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const names = yield* erase.datasetNames(userId)
      if (names.length === 0) break
      found = true
      for (const name of names) {
        const erased = yield* eraseName(userId, name)
        deleted = add(deleted, erased.deleted)
        pending += erased.pending
      }
    }
    // every key names a run of the user, gone above: none is left unless one came meanwhile
    const keys = yield* erase.deleteIdempotencyKeys(userId)
    if (!found && keys === 0) return yield* new NotFound({ message: "this user has nothing stored" })
    return { user_id: userId, deleted, ...withPending(pending) } satisfies ForgetUserResponse
  })
