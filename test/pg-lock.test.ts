/**
 * The cross-process dataset lock on PostgreSQL (layers/sql/PgAdvisoryLock.ts): waiters queue
 * in PostgreSQL, so a process with a queue of runs for a dataset cannot keep the lock from
 * another process that asked first (issue 13, concurrency); a wait longer than one attempt's
 * lock_timeout queues again and still gets the lock; nothing is left held.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schedule } from "effect"
import { PgLive } from "../layers/sql/index.js"
import { Database } from "../src/services/Database.js"
import { freshPgUrl, pgSkipReason } from "./support/databases.js"

/** Two independent storage stacks (pools, in-process locks) on one database: two processes. */
const twoProcesses = <A, E>(
  body: (
    a: Database["Type"],
    b: Database["Type"],
    sql: SqlClient.SqlClient
  ) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const url = yield* freshPgUrl
    const [a, b] = yield* Effect.all([Layer.build(PgLive(url)), Layer.build(PgLive(url))], { concurrency: 2 })
    return yield* body(
      yield* Database.pipe(Effect.provide(Layer.succeedContext(a))),
      yield* Database.pipe(Effect.provide(Layer.succeedContext(b))),
      yield* SqlClient.SqlClient.pipe(Effect.provide(Layer.succeedContext(a)))
    )
  }).pipe(Effect.scoped, Effect.orDie)

const advisory = (sql: SqlClient.SqlClient, granted: boolean) =>
  sql<{ n: number }>`SELECT COUNT(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted = ${granted}`.pipe(
    Effect.map((rows) => rows[0]!.n),
    Effect.orDie
  )

/** Polls until `check` holds: waiting for the other process to be queued, not a timing. */
const until = (check: Effect.Effect<boolean>) =>
  Effect.repeat(check, { until: (ok) => ok, schedule: Schedule.spaced("10 millis") }).pipe(Effect.asVoid)

describe.skipIf(pgSkipReason() !== null)("pg: the dataset lock is fair across processes", () => {
  it.live("a process's queued runs do not overtake another process that asked first", () =>
    twoProcesses((a, b, sql) =>
      Effect.gen(function*() {
        const order: Array<string> = []
        const release = yield* Deferred.make<void>()
        const holding = yield* Deferred.make<void>()
        const entered = (name: string) => Effect.sync(() => order.push(name))
        const first = yield* Effect.fork(
          a.withLock("u1/main")(
            Effect.zipRight(
              entered("a1"),
              Effect.zipRight(Deferred.succeed(holding, undefined), Deferred.await(release))
            )
          )
        )
        yield* Deferred.await(holding)
        // process a queues two more runs for the dataset (they wait on its in-process lock) ...
        const more = yield* Effect.forEach(["a2", "a3"], (name) => Effect.fork(a.withLock("u1/main")(entered(name))))
        // ... and then process b asks: it waits in PostgreSQL's queue
        const other = yield* Effect.fork(b.withLock("u1/main")(entered("b1")))
        yield* until(Effect.map(advisory(sql, false), (n) => n === 1))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(first)
        yield* Fiber.join(other)
        yield* Effect.forEach(more, Fiber.join)
        expect(order).toEqual(["a1", "b1", "a2", "a3"])
        expect(yield* advisory(sql, true)).toBe(0)
      })
    ))

  it.live("a wait longer than one attempt's lock_timeout queues again and gets the lock; nothing stays held", () =>
    twoProcesses((a, b, sql) =>
      Effect.gen(function*() {
        const holding = yield* Deferred.make<void>()
        const holder = yield* Effect.fork(
          a.withLock("k")(Effect.zipRight(Deferred.succeed(holding, undefined), Effect.sleep("1300 millis")))
        )
        yield* Deferred.await(holding)
        expect(yield* b.withLock("k")(Effect.succeed("mine"))).toBe("mine")
        yield* Fiber.join(holder)
        expect(yield* advisory(sql, true)).toBe(0)
        expect(yield* advisory(sql, false)).toBe(0)
      })
    ))
})
