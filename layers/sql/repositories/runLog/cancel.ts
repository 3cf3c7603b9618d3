/**
 * Cancelling queued runs (docs/INGESTION.md, Cancelling). A cancel and a worker's `take` are
 * both one `UPDATE ... WHERE status = 'queued'`, so the database decides which one wins: a run
 * is either taken (and finishes) or cancelled (and never runs), never both. The cancel's
 * transaction also takes the request out of the queue and releases the run's Idempotency-Key.
 */
import type { SqlClient, SqlError } from "@effect/sql"
import { Effect } from "effect"
import type { RunRow } from "../../../../src/domain/Rows.js"
import type { CancelledRuns } from "../../../../src/domain/runView.js"
import type { CancelOutcome } from "../../../../src/services/RunLogRepo.js"
import { chunksOf } from "../internal.js"

/** The unfinished runs' partial index (migration 0007) serves a lookup that repeats its predicate. */
const UNFINISHED = "status IN ('queued', 'started')"

export const makeCancels = (
  sql: SqlClient.SqlClient,
  readRun: (runId: number) => Effect.Effect<RunRow | undefined, SqlError.SqlError>
) => {
  /** The cancelled runs leave the queue; their keys name nothing any more. */
  const release = (runIds: ReadonlyArray<number>) =>
    Effect.forEach(chunksOf(runIds), (ids) =>
      Effect.zipRight(
        sql`DELETE FROM gb_remember_queue WHERE run_id IN ${sql.in(ids)}`,
        sql`DELETE FROM gb_remember_idempotency WHERE run_id IN ${sql.in(ids)}`
      ), { discard: true })

  const cancel = (runId: number, userId: string, at: string): Effect.Effect<CancelOutcome> =>
    sql.withTransaction(Effect.gen(function*() {
      const cancelled = yield* sql<{ id: number }>`UPDATE gb_remember_runs SET status = 'cancelled', finished_at = ${at}
        WHERE id = ${runId} AND user_id = ${userId} AND status = 'queued' RETURNING id`
      if (cancelled.length > 0) yield* release([runId])
      const run = yield* readRun(runId)
      // another user's run is as absent as a missing one
      if (run === undefined || run.user_id !== userId) return { _tag: "Missing" } satisfies CancelOutcome
      return (cancelled.length > 0 ? { _tag: "Cancelled", run } : { _tag: "NotQueued", run }) satisfies CancelOutcome
    })).pipe(Effect.orDie)

  const cancelQueued = (userId: string, dataset: string | undefined, at: string): Effect.Effect<CancelledRuns> =>
    sql.withTransaction(Effect.gen(function*() {
      const where = (status: "queued" | "started") =>
        sql.and([
          sql`user_id = ${userId}`,
          ...(dataset === undefined ? [] : [sql`dataset = ${dataset}`]),
          UNFINISHED,
          `status = '${status}'`
        ])
      const cancelled = yield* sql<{ id: number }>`UPDATE gb_remember_runs SET status = 'cancelled', finished_at = ${at}
        WHERE ${where("queued")} RETURNING id`
      const ids = cancelled.map((r) => Number(r.id)).sort((a, b) => a - b)
      yield* release(ids)
      // no ORDER BY: SQLite would trade the partial index for the order (sorted here instead)
      const started = yield* sql<{ id: number }>`SELECT id FROM gb_remember_runs WHERE ${where("started")}`
      return {
        cancelled: ids,
        started: started.map((r) => Number(r.id)).sort((a, b) => a - b)
      } satisfies CancelledRuns
    })).pipe(Effect.orDie)

  const cancelledAmong = (runIds: ReadonlyArray<number>): Effect.Effect<ReadonlyArray<number>> =>
    Effect.forEach(
      chunksOf(runIds),
      (ids) => sql<{ id: number }>`SELECT id FROM gb_remember_runs WHERE id IN ${sql.in(ids)} AND status = 'cancelled'`
    ).pipe(
      Effect.map((chunks) => chunks.flat().map((r) => Number(r.id))),
      Effect.orDie
    )

  return { cancel, cancelQueued, cancelledAmong }
}
