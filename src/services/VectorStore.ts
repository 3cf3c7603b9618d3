import { Context, Effect } from "effect"
import type { VectorWriteFailed } from "../domain/Errors.js"

export interface VectorItem {
  readonly id: string
  readonly values: ReadonlyArray<number>
  readonly metadata: Record<string, string | number | boolean>
}

export interface VectorMatch {
  readonly id: string
  /** cosine similarity, 1 = identical */
  readonly score: number
  readonly metadata: Record<string, string | number | boolean>
}

/** One search of `VectorStore.query`, for `queryMany`. */
export interface VectorQuery {
  readonly index: string
  readonly vector: ReadonlyArray<number>
  readonly k: number
  readonly minScore: number
}

/** What `GET /readyz` says of the store: its search (e.g. "pgvector hnsw", "sqlite-vec binary codes"). */
export interface VectorStoreHealth {
  readonly search: string
}

/** The vector store port: one index per dataset and kind (`dataset-<id>-entities`, ...). */
export class VectorStore extends Context.Tag("gligabao/VectorStore")<
  VectorStore,
  {
    readonly name: string
    /**
     * True when the store writes through the database's own connection, so an upsert or delete
     * called inside `Database.withTransaction` joins that transaction (commits or rolls back with
     * the rows). Such a store gets its vectors in the store transaction itself, never through the
     * outbox; absent means false.
     */
    readonly transactional?: boolean
    readonly upsert: (index: string, items: ReadonlyArray<VectorItem>) => Effect.Effect<void, VectorWriteFailed>
    readonly query: (
      index: string,
      vector: ReadonlyArray<number>,
      k: number,
      minScore: number
    ) => Effect.Effect<ReadonlyArray<VectorMatch>, VectorWriteFailed>
    /**
     * Several searches at once, each answered as `query` answers it, in order. A store that can
     * send them in one round trip implements it (sqlite-vec: one message to its reader thread);
     * `queryEach` calls `query` one by one for the others.
     */
    readonly queryMany?: (
      queries: ReadonlyArray<VectorQuery>
    ) => Effect.Effect<ReadonlyArray<ReadonlyArray<VectorMatch>>, VectorWriteFailed>
    readonly delete: (index: string, ids: ReadonlyArray<string>) => Effect.Effect<void, VectorWriteFailed>
    /**
     * The stored vectors of these ids (those it has, in no particular order), for `gligabao
     * dump`; absent when the store cannot give vectors back (then a dump holds none and the
     * load re-embeds).
     */
    readonly fetch?: (
      index: string,
      ids: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<VectorItem>, VectorWriteFailed>
    /**
     * Makes deleted vectors unreadable in the store's own files where it keeps any (sqlite-vec:
     * its WAL checkpointed and truncated); a no-op for a store in memory or a remote one. A
     * forget runs it once its vector deletes have drained, outside any transaction.
     */
    readonly compact: Effect.Effect<void, VectorWriteFailed>
    /**
     * One cheap call that reaches the store (no index is read or written), for `GET /readyz`:
     * fails when the store is not usable, and says which search is in use.
     */
    readonly health: Effect.Effect<VectorStoreHealth, VectorWriteFailed>
  }
>() {}

/**
 * The matches of every query, in order: through the store's `queryMany` when it has one,
 * otherwise `query` by query, at most `concurrency` at once.
 */
export const queryEach = (
  store: VectorStore["Type"],
  queries: ReadonlyArray<VectorQuery>,
  concurrency: number | "unbounded"
): Effect.Effect<ReadonlyArray<ReadonlyArray<VectorMatch>>, VectorWriteFailed> => {
  if (queries.length === 0) return Effect.succeed([])
  if (store.queryMany !== undefined) return store.queryMany(queries)
  return Effect.forEach(queries, (q) => store.query(q.index, q.vector, q.k, q.minScore), { concurrency })
}
