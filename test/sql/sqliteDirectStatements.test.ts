/**
 * The one-step statements of gligabao's SQLite client (sqliteClient.ts, `statementSpans: false`):
 * a statement runs at once when no transaction holds the connection, or in its own fiber's
 * transaction. What must hold besides the library's answers (sqliteStatementRunner.test.ts):
 * safe integers still apply; a statement that cannot be prepared fails as a SqlError; and a
 * transaction that fails, dies or is interrupted gives the connection back, so later statements
 * run at once again and a later transaction's rows stay its own.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer } from "effect"
import { SqliteClientLive } from "../../layers/sql/Sqlite.js"

const client = Effect.map(
  Layer.build(SqliteClientLive(":memory:", { mmapBytes: 0, statementSpans: false })),
  (context) => Context.get(context, SqlClient.SqlClient)
)

describe("SQLite statements in one step", () => {
  it.scoped("safe integers apply, and a statement that cannot be prepared fails as a SqlError", () =>
    Effect.gen(function*() {
      const sql = yield* client
      const big = 2n ** 60n + 1n
      const [plain] = yield* sql<{ n: unknown }>`SELECT ${big} AS n`
      const [safe] = yield* sql<{ n: unknown }>`SELECT ${big} AS n`.pipe(
        Effect.provideService(SqlClient.SafeIntegers, true)
      )
      expect(typeof plain!.n).toBe("number")
      expect(safe!.n).toBe(big)
      const error = yield* sql`SELEC nothing`.pipe(Effect.flip)
      expect(error).toBeInstanceOf(SqlError.SqlError)
      const inTransaction = yield* sql.withTransaction(sql`SELEC nothing`).pipe(Effect.flip)
      expect(inTransaction).toBeInstanceOf(SqlError.SqlError)
    }))

  it.scoped("a transaction that fails, dies or is interrupted gives the connection back", () =>
    Effect.gen(function*() {
      const sql = yield* client
      yield* sql`CREATE TABLE t (id INTEGER PRIMARY KEY)`
      yield* sql.withTransaction(Effect.zipRight(sql`INSERT INTO t (id) VALUES (1)`, Effect.fail("no"))).pipe(
        Effect.ignore
      )
      yield* sql.withTransaction(Effect.zipRight(sql`INSERT INTO t (id) VALUES (2)`, Effect.die("boom"))).pipe(
        Effect.catchAllDefect(() => Effect.void)
      )
      const inside = yield* Deferred.make<void>()
      const held = yield* Effect.fork(
        sql.withTransaction(Effect.zipRight(
          Effect.zipRight(sql`INSERT INTO t (id) VALUES (3)`, Deferred.succeed(inside, undefined)),
          Effect.never
        ))
      )
      yield* Deferred.await(inside)
      yield* Fiber.interrupt(held)
      // none of the three committed, and a statement now runs without waiting for anyone
      expect(yield* sql`SELECT count(*) AS n FROM t`).toEqual([{ n: 0 }])
      // the next transaction's rows are its own, and a reader outside waits for its end
      const writing = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const writer = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO t (id) VALUES (4)`
        yield* Deferred.succeed(writing, undefined)
        yield* Deferred.await(release)
        yield* sql`INSERT INTO t (id) VALUES (5)`
      })))
      yield* Deferred.await(writing)
      const reader = yield* Effect.fork(sql<{ n: number }>`SELECT count(*) AS n FROM t`)
      yield* Effect.yieldNow()
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(writer)
      expect(yield* Fiber.join(reader)).toEqual([{ n: 2 }])
      expect(yield* sql`SELECT id FROM t ORDER BY id`).toEqual([{ id: 4 }, { id: 5 }])
    }))
})
