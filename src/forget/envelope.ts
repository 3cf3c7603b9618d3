/**
 * The envelope every forget and correction shares (docs/FORGET.md): the writes run under the
 * dataset's lock (the lock a remember's store holds, so neither loses the other's rows) in one
 * transaction; after the commit come the outbox's vector writes, the files and the re-embedding
 * of rows whose words changed (store and model calls, never inside the transaction), and last the
 * compaction that takes the deleted bytes out of the files (docs/SECURITY.md).
 */
import { Clock, Effect, Option } from "effect"
import { NotFound } from "../domain/Errors.js"
import type { DatasetRow } from "../domain/Rows.js"
import { toIso } from "../domain/time.js"
import { drainOutbox, OUTBOX_DRAIN_LIMIT } from "../pipeline/vectors.js"
import { Database, datasetLockKey } from "../services/Database.js"
import { DatasetsRepo } from "../services/DatasetsRepo.js"
import type { ImageStore } from "../services/ImageStore.js"
import { VectorOutbox } from "../services/VectorOutbox.js"
import { VectorStore } from "../services/VectorStore.js"

/** The user and dataset a forget or correction is scoped to (another user's row is a 404). */
export interface ForgetScope {
  readonly user_id: string
  readonly dataset: string
}

/** `f` under the scope's dataset lock, in one transaction, with the time the forget began. */
export const inDatasetTransaction = <A, E, R>(
  scope: ForgetScope,
  f: (now: string) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | Database> =>
  Effect.flatMap(Database, (database) =>
    Effect.flatMap(
      Clock.currentTimeMillis,
      (millis) => database.withLock(datasetLockKey(scope))(database.withTransaction(f(toIso(millis))))
    ))

/** `f` with the scope's dataset, as inDatasetTransaction; a missing dataset is `${what} not found`. */
export const inDataset = <A, E, R>(
  scope: ForgetScope,
  what: string,
  f: (dataset: DatasetRow, now: string) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | NotFound, R | Database | DatasetsRepo> =>
  inDatasetTransaction(scope, (now) =>
    Effect.flatMap(
      Effect.flatMap(DatasetsRepo, (datasets) => datasets.find(scope.user_id, scope.dataset)),
      (found): Effect.Effect<A, E | NotFound, R> =>
        Option.isNone(found) ? new NotFound({ message: `${what} not found` }) : f(found.value, now)
    ))

/** What is left to do once a forget has committed. */
export interface Aftermath<R = never> {
  /** the outbox rows the transaction queued, or every pending row ("pending": a correction drains the backlog too) */
  readonly vectors: ReadonlyArray<number> | "pending"
  /** files nothing refers to any more, and the store that holds them */
  readonly files?: { readonly store: ImageStore["Type"]; readonly paths: ReadonlyArray<string> }
  /** the vectors of rows whose words changed, written again (a model call) */
  readonly reembed?: Effect.Effect<unknown, { readonly message: string }, R>
}

/** The ports the outbox drain writes through. */
const outboxPorts = Effect.all({ database: Database, outbox: VectorOutbox, vectors: VectorStore })

/**
 * After the commit: the files, the vector writes, the re-embedding, the compaction. A failure
 * of any of them is logged and leaves the rows as committed (a vector write stays in the
 * outbox, written by the next remember or at startup); the count of vector writes left, and of
 * files removed.
 */
export const afterForget = <R = never>(
  after: Aftermath<R>
): Effect.Effect<
  { readonly vectorsPending: number; readonly filesRemoved: number },
  never,
  R | Database | VectorOutbox | VectorStore
> =>
  Effect.gen(function*() {
    const ports = yield* outboxPorts
    let filesRemoved = 0
    if (after.files !== undefined) {
      const { paths, store } = after.files
      for (const path of paths) {
        filesRemoved += yield* store.remove(path).pipe(
          Effect.as(1),
          Effect.catchAll((e) =>
            Effect.logWarning("forget: an image file could not be removed", { error: e.message }).pipe(Effect.as(0))
          )
        )
      }
    }
    const vectorsPending = after.vectors === "pending"
      ? yield* drainOutbox(ports).pipe(
        Effect.as(0),
        Effect.catchAll((e) =>
          Effect.logWarning("forget: vector writes stay in the outbox", { error: e.message }).pipe(Effect.as(0))
        )
      )
      : yield* writeQueued(ports, after.vectors)
    if (after.reembed !== undefined) {
      yield* after.reembed.pipe(
        Effect.catchAll((e) => Effect.logWarning("forget: re-embedding changed rows failed", { error: e.message }))
      )
    }
    yield* ports.database.compact
    yield* ports.vectors.compact.pipe(
      Effect.catchAll((e) => Effect.logWarning("forget: compacting the vector store failed", { error: e.message }))
    )
    return { vectorsPending, filesRemoved }
  })

/** The queued vector writes in bounded batches; those a failure leaves stay in the outbox (how many). */
const writeQueued = (
  ports: Parameters<typeof drainOutbox>[0],
  outboxIds: ReadonlyArray<number>
): Effect.Effect<number> =>
  Effect.gen(function*() {
    for (let at = 0; at < outboxIds.length; at += OUTBOX_DRAIN_LIMIT) {
      const failed = yield* drainOutbox(ports, outboxIds.slice(at, at + OUTBOX_DRAIN_LIMIT)).pipe(
        Effect.as(false),
        Effect.catchAll((e) =>
          Effect.logWarning("forget: vector deletes stay in the outbox", { error: e.message }).pipe(Effect.as(true))
        )
      )
      if (failed) return outboxIds.length - at
    }
    return 0
  })
