/**
 * PostgreSQL session advisory locks, held on a connection reserved for the holder, so that
 * several gligabao processes on one database serialize the same key.
 */
import type { SqlClient } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { Duration, Effect, Exit, Option, Ref, Schedule, Scope } from "effect"
import { createHash } from "node:crypto"

/** A deterministic signed 64-bit advisory lock id: the first 8 bytes of sha256(key). */
export const advisoryLockId = (key: string): bigint =>
  createHash("sha256").update(key, "utf8").digest().readBigInt64BE(0)

interface Held {
  readonly conn: Connection
  readonly scope: Scope.CloseableScope
}

// waiting is cheap polling: 10 ms, growing to at most 250 ms between tries
const retrySchedule = Schedule.exponential(Duration.millis(10), 1.5).pipe(
  Schedule.union(Schedule.spaced(Duration.millis(250)))
)

/**
 * Runs `effect` holding the advisory lock of `key`, taken through `sql`'s pool.
 *
 * The lock is polled with pg_try_advisory_lock rather than awaited with pg_advisory_lock: a
 * blocking lock query cut short by interruption can still be granted after its cancel and leak
 * with the pooled connection. A try never blocks, so each attempt (reserve a connection, try,
 * give the connection back on a miss) runs uninterruptibly and records what it holds; a waiter
 * holds no connection and stays interruptible between attempts; and the holder's connection is
 * unlocked and released in a finalizer, on success, failure or interruption alike.
 */
export const withPgAdvisoryLock =
  (sql: SqlClient.SqlClient, key: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.gen(function* () {
      const lockId = advisoryLockId(key).toString()
      const held = yield* Ref.make(Option.none<Held>())

      const attempt = Effect.gen(function* () {
        const scope = yield* Scope.make()
        const locked = yield* Effect.exit(
          Effect.flatMap(Scope.extend(sql.reserve, scope), (conn) =>
            conn
              .executeRaw("SELECT pg_try_advisory_lock(CAST($1 AS BIGINT)) AS locked", [lockId])
              .pipe(Effect.map((result) => ({ conn, locked: readLocked(result) })))
          )
        )
        if (Exit.isSuccess(locked) && locked.value.locked) {
          yield* Ref.set(held, Option.some({ conn: locked.value.conn, scope }))
          return true
        }
        yield* Scope.close(scope, Exit.void)
        return yield* Effect.orDie(Effect.as(locked, false))
      }).pipe(Effect.uninterruptible)

      const release = Effect.flatMap(
        Ref.getAndSet(held, Option.none()),
        Option.match({
          onNone: () => Effect.void,
          onSome: ({ conn, scope }) =>
            conn.executeRaw("SELECT pg_advisory_unlock(CAST($1 AS BIGINT))", [lockId]).pipe(
              // a broken connection ends its session, and the server drops the lock with it
              Effect.catchAll((error) => Effect.logWarning("pg_advisory_unlock failed", error)),
              Effect.ensuring(Scope.close(scope, Exit.void))
            )
        })
      )

      const acquire = Effect.repeat(attempt, { until: (locked) => locked, schedule: retrySchedule })
      return yield* Effect.ensuring(Effect.zipRight(acquire, effect), release)
    })

const readLocked = (result: unknown): boolean =>
  (result as { readonly rows?: ReadonlyArray<{ readonly locked?: unknown }> }).rows?.[0]?.locked === true
