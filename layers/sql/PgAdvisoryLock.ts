/**
 * PostgreSQL session advisory locks, held on a connection reserved for the holder, so that
 * several gligabao processes on one database serialize the same key.
 */
import type { SqlClient } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { Cause, Effect, Exit, Option, Ref, Scope } from "effect"
import { createHash } from "node:crypto"

/** A deterministic signed 64-bit advisory lock id: the first 8 bytes of sha256(key). */
export const advisoryLockId = (key: string): bigint =>
  createHash("sha256").update(key, "utf8").digest().readBigInt64BE(0)

interface Held {
  readonly conn: Connection
  readonly scope: Scope.CloseableScope
}

/**
 * How long one attempt waits in PostgreSQL's lock queue before it gives up and queues again.
 * It bounds how long an interrupted waiter takes to notice (an attempt is uninterruptible).
 */
export const LOCK_WAIT = "500ms"

/** PostgreSQL's lock_not_available: the lock_timeout of an attempt ran out. */
const LOCK_NOT_AVAILABLE = "55P03"

/**
 * Runs `effect` holding the advisory lock of `key`, taken through `sql`'s pool.
 *
 * A waiter queues in PostgreSQL itself (pg_advisory_lock), so the lock goes to waiters in the
 * order they came, across processes; polling would let a process with a queue of runs re-take
 * the lock after each one and starve the others (docs/DECISIONS.md). Each attempt waits at most LOCK_WAIT
 * (lock_timeout, set for that statement only) and then queues again; it runs uninterruptibly,
 * so no cancelled lock query can be granted behind our back and leak with a pooled connection.
 * A timed-out attempt unlocks once on its connection before giving it back, because
 * PostgreSQL may grant the lock in the instant the timeout fires. The holder's connection is
 * unlocked and released in a finalizer, on success, failure or interruption alike.
 */
export const withPgAdvisoryLock =
  (sql: SqlClient.SqlClient, key: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.gen(function*() {
      const lockId = advisoryLockId(key).toString()
      const held = yield* Ref.make(Option.none<Held>())

      const attempt = Effect.gen(function*() {
        const scope = yield* Scope.make()
        const locked = yield* Effect.exit(
          Effect.flatMap(Scope.extend(sql.reserve, scope), (conn) =>
            conn
              .executeRaw(
                // the CTE is evaluated first, so the timeout is set when the lock is waited for
                "WITH t AS MATERIALIZED (SELECT set_config('lock_timeout', $2, true)) " +
                  "SELECT pg_advisory_lock(CAST($1 AS BIGINT)) IS NOT NULL AS locked FROM t",
                [lockId, LOCK_WAIT]
              )
              .pipe(
                Effect.as({ conn, locked: true }),
                Effect.catchIf(isLockTimeout, () =>
                  conn.executeRaw("SELECT pg_advisory_unlock(CAST($1 AS BIGINT))", [lockId]).pipe(
                    Effect.as({ conn, locked: false })
                  ))
              ))
        )
        if (Exit.isSuccess(locked) && locked.value.locked) {
          yield* Ref.set(held, Option.some({ conn: locked.value.conn, scope }))
          return true
        }
        yield* Scope.close(scope, Exit.void)
        if (Exit.isSuccess(locked)) return false
        return yield* Effect.die(Cause.squash(locked.cause))
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

      // a timed-out attempt queues again at once (an attempt that failed otherwise is a defect)
      const acquire = Effect.repeat(attempt, { until: (locked) => locked })
      return yield* Effect.ensuring(Effect.zipRight(acquire, effect), release)
    })

const isLockTimeout = (error: unknown): boolean => {
  const cause = (error as { readonly cause?: { readonly code?: unknown } }).cause
  return cause?.code === LOCK_NOT_AVAILABLE
}
