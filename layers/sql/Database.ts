/**
 * The `Database` port from a SqlClient: transactions, and the per-key lock the remember manager
 * holds for a whole pipeline run (an in-process lock always, plus a PostgreSQL session advisory
 * lock so that several processes on one database stay serial).
 */
import { SqlClient, SqlError } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { Duration, Effect, Layer, Schedule } from "effect"
import { createHash } from "node:crypto"
import { Database } from "../../src/services/Database.js"

/** A deterministic signed 64-bit advisory lock id: the first 8 bytes of sha256(key). */
export const advisoryLockId = (key: string): bigint =>
  createHash("sha256").update(key, "utf8").digest().readBigInt64BE(0)

/**
 * In-process keyed mutual exclusion: one 1-permit semaphore per key, dropped when no fiber
 * holds or waits for it, so the map does not grow with the number of datasets ever seen.
 */
export const makeKeyedLock = () => {
  const entries = new Map<string, { readonly semaphore: Effect.Semaphore; users: number }>()
  const acquire = (key: string) =>
    Effect.sync(() => {
      let entry = entries.get(key)
      if (entry === undefined) {
        entry = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0 }
        entries.set(key, entry)
      }
      entry.users++
      return entry
    })
  const release = (key: string, entry: { users: number }) =>
    Effect.sync(() => {
      entry.users--
      if (entry.users === 0) entries.delete(key)
    })
  return {
    withLock:
      (key: string) =>
      <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
        Effect.acquireUseRelease(
          acquire(key),
          (entry) => entry.semaphore.withPermits(1)(effect),
          (entry) => release(key, entry)
        ),
    /** how many keys are held or awaited (for tests) */
    size: () => entries.size
  }
}

/**
 * Holds a PostgreSQL session advisory lock on a connection reserved for it, for as long as
 * `effect` runs. The lock is polled with pg_try_advisory_lock rather than awaited with
 * pg_advisory_lock: a blocking lock query cut short by interruption could still be granted
 * after its cancel and leak with the pooled connection, while a try never blocks, so every
 * attempt runs uninterruptibly and we always know whether we hold the lock.
 */
export const withPgAdvisoryLock =
  (sql: SqlClient.SqlClient, key: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    const lockId = advisoryLockId(key).toString()
    const tryLock = (conn: Connection) =>
      conn.executeRaw("SELECT pg_try_advisory_lock(CAST($1 AS BIGINT)) AS locked", [lockId]).pipe(
        Effect.map((result) => (result as { rows: Array<{ locked: boolean }> }).rows[0]?.locked === true),
        Effect.uninterruptible
      )
    const unlock = (conn: Connection) =>
      conn.executeRaw("SELECT pg_advisory_unlock(CAST($1 AS BIGINT))", [lockId]).pipe(
        // a broken connection ends its session, and the server drops the lock with it
        Effect.catchAll((error) => Effect.logWarning("pg_advisory_unlock failed", error))
      )
    const acquire = Effect.gen(function* () {
      const conn = yield* sql.reserve
      yield* Effect.acquireRelease(
        tryLock(conn).pipe(
          Effect.flatMap((locked) => (locked ? Effect.void : Effect.fail("busy" as const))),
          Effect.retry({
            while: (reason) => reason === "busy",
            schedule: Schedule.exponential(Duration.millis(10), 1.5).pipe(
              Schedule.union(Schedule.spaced(Duration.millis(250)))
            )
          })
        ),
        () => unlock(conn)
      )
    })
    return Effect.scoped(Effect.zipRight(Effect.orDie(acquire), effect))
  }

const isSqlError = (u: unknown): u is SqlError.SqlError => u instanceof SqlError.SqlError

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })
  const local = makeKeyedLock()

  return Database.of({
    dialect,
    // begin/commit failures are infrastructure errors: defects, like the repositories' own
    withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      sql.withTransaction(effect).pipe(
        Effect.catchIf(isSqlError, (error) => Effect.die(error))
      ) as Effect.Effect<A, E, R>,
    withLock:
      (key: string) =>
      <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        (dialect === "pg" ? effect : local.withLock(key)(effect))
  })
})

export const DatabaseLive: Layer.Layer<Database, never, SqlClient.SqlClient> = Layer.effect(Database, make)
