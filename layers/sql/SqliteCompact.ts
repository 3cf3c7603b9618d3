/**
 * What SQLite needs, beyond `secure_delete` (set on every connection, Sqlite.ts), so that
 * deleted rows leave nothing readable in its files (docs/SECURITY.md, "Deleted data on disk"):
 *
 * - FTS5 'optimize' on the two full-text tables (FullTextIndex.compact, FullText.ts). A delete
 *   from an FTS5 index only writes a tombstone; the deleted terms stay in the old segments
 *   (`gb_fts_*_data`, `gb_fts_*_idx`) until those are merged away. 'optimize' merges every
 *   segment into one, and the rows of the old segments are then deleted, which secure_delete
 *   zeroes. It rewrites the whole index, every dataset's (BENCHMARKS.md, "No trace").
 * - `wal_checkpoint(TRUNCATE)`. The WAL keeps every page image written since it was last
 *   reset, the pages as they were before a delete among them, and a checkpoint that does not
 *   truncate leaves those frames in the file until later writes overwrite them. TRUNCATE copies
 *   every frame into the database and cuts the WAL to zero bytes. It waits (the busy timeout)
 *   for readers on older snapshots, such as the vector reader's worker, and reports `busy` when
 *   one outlasts it: it is then tried again a few times.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { Data, Effect, Option, Schedule } from "effect"

/** Tries of a checkpoint that reports busy, after the first. */
const CHECKPOINT_RETRIES = 3

class WalBusy extends Data.TaggedError("WalBusy")<{ readonly log: number; readonly checkpointed: number }> {}

/**
 * Dies when run inside a transaction: a checkpoint there fails ("database table is locked"),
 * and 'optimize' would rewrite both indexes inside the caller's transaction, holding it long.
 */
export const outsideTransaction = (operation: string): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.serviceOption(SqlClient.TransactionConnection),
    Option.match({
      onNone: () => Effect.void,
      onSome: () => Effect.dieMessage(`${operation} must not run inside a transaction`)
    })
  )

/**
 * `PRAGMA wal_checkpoint(TRUNCATE)`, tried again while it reports busy. True when the WAL was
 * emptied (or the database has none, `:memory:`); false when a reader kept it busy every time,
 * which is logged: the frames then stay until a later checkpoint.
 */
export const truncateWal = (sql: SqlClient.SqlClient): Effect.Effect<boolean, SqlError.SqlError> =>
  sql.unsafe<{ busy: number; log: number; checkpointed: number }>(`PRAGMA wal_checkpoint(TRUNCATE)`).pipe(
    Effect.flatMap(([row]) =>
      row === undefined || row.busy === 0
        ? Effect.succeed(true)
        : Effect.fail(new WalBusy({ log: row.log, checkpointed: row.checkpointed }))
    ),
    Effect.retry({
      while: (error) => error._tag === "WalBusy",
      schedule: Schedule.intersect(Schedule.exponential("50 millis"), Schedule.recurs(CHECKPOINT_RETRIES))
    }),
    Effect.catchTag("WalBusy", (busy) =>
      Effect.as(
        Effect.logWarning(
          "the WAL could not be truncated: a reader kept it busy; its frames stay until a later checkpoint",
          {
            frames: busy.log,
            checkpointed: busy.checkpointed
          }
        ),
        false
      ))
  )
