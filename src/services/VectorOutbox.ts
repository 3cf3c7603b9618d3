import { Context, type Effect } from "effect"

export interface OutboxItem {
  readonly dataset_id: number
  readonly index_name: string
  readonly vector_id: string
  readonly values: ReadonlyArray<number>
  readonly metadata: Record<string, string | number | boolean>
  /** default upsert; a delete (a forget) carries no values */
  readonly op?: "upsert" | "delete"
}

/** One vector of one index. */
export interface VectorKey {
  readonly index_name: string
  readonly vector_id: string
}

export interface OutboxRow extends OutboxItem {
  readonly id: number
  readonly attempts: number
}

/**
 * Vectors waiting to be written to the vector store (spec/contracts.md section 10): recorded in
 * the same transaction as the rows they describe, removed once written, so the database and
 * the vector store converge even when a write fails. Infrastructure errors are defects.
 */
export class VectorOutbox extends Context.Tag("gligabao/VectorOutbox")<
  VectorOutbox,
  {
    /** returns the outbox ids, in input order */
    readonly enqueue: (items: ReadonlyArray<OutboxItem>, now: string) => Effect.Effect<ReadonlyArray<number>>
    /**
     * the given rows, or (no ids) the oldest pending rows, at most `limit`; with `lock`, locked
     * until the caller's transaction ends (PostgreSQL `FOR UPDATE`), so a transaction that
     * settles them waits for this drain, or this drain skips what it settled
     */
    readonly pending: (
      limit: number,
      ids?: ReadonlyArray<number>,
      lock?: boolean
    ) => Effect.Effect<ReadonlyArray<OutboxRow>>
    /**
     * Removes the pending rows of these vectors (upserts and deletes alike), in the caller's
     * transaction: their vectors were just written in it, and an older row drained later would
     * write an older vector back.
     */
    readonly settle: (vectors: ReadonlyArray<VectorKey>) => Effect.Effect<void>
    readonly remove: (ids: ReadonlyArray<number>) => Effect.Effect<void>
    readonly recordFailure: (ids: ReadonlyArray<number>, error: string) => Effect.Effect<void>
    readonly count: () => Effect.Effect<number>
  }
>() {}
