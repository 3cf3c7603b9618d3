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
    /** the given rows, or (no ids) the oldest pending rows, at most `limit` */
    readonly pending: (limit: number, ids?: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<OutboxRow>>
    readonly remove: (ids: ReadonlyArray<number>) => Effect.Effect<void>
    readonly recordFailure: (ids: ReadonlyArray<number>, error: string) => Effect.Effect<void>
    readonly count: () => Effect.Effect<number>
  }
>() {}
