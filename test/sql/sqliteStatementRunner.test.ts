/**
 * gligabao's SQLite client without statement spans (sqliteClient.ts, `statementSpans: false`,
 * the server's setting when it exports no traces) runs statements straight on the connection.
 * It must answer exactly as the library's way does: the same rows through every kind of
 * statement and fragment, inside and outside transactions, rollbacks and savepoints included;
 * a statement outside a transaction still waits for another fiber's transaction (one
 * connection); a statement transformer still applies; and no `sql.execute` span is made, while
 * the default client still makes one.
 */
import { SqlClient, Statement } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Tracer } from "effect"
import { SqliteClientLive } from "../../layers/sql/Sqlite.js"

const client = (statementSpans: boolean) =>
  Effect.map(
    Layer.build(SqliteClientLive(":memory:", { mmapBytes: 0, statementSpans })),
    (context) => Context.get(context, SqlClient.SqlClient)
  )

/** Every kind of statement the repositories write, and what each answered. */
const workload = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    yield* sql`CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER)`
    yield* sql`INSERT INTO people ${sql.insert([{ id: 1, name: "Alice", age: 30 }, { id: 2, name: "Bob", age: 41 }])}`
    const inserted = yield* sql`INSERT INTO people ${
      sql.insert({ id: 3, name: "Chloé", age: null })
    } RETURNING id, name`
    yield* sql`UPDATE people SET ${sql.update({ age: 31 })} WHERE id = ${1}`
    const byIn = yield* sql`SELECT id, name FROM people WHERE ${sql.in("id", [1, 3])} ORDER BY id`
    const byAnd = yield* sql`SELECT name FROM people WHERE ${sql.and([sql`age > ${30}`, sql`name <> ${"Bob"}`])}`
    const fragment = sql`name = ${"Bob"}`
    const nested = yield* sql`SELECT id FROM people WHERE ${fragment}`
    const unsafe = yield* sql.unsafe<{ n: number }>("SELECT count(*) AS n FROM people WHERE age IS NOT NULL")
    const values = yield* sql`SELECT id, name FROM people ORDER BY id`.values
    const committed = yield* sql.withTransaction(
      Effect.zipRight(sql`INSERT INTO people (id, name) VALUES (${4}, ${"Dan"})`, sql`SELECT count(*) AS n FROM people`)
    )
    const rolledBack = yield* sql.withTransaction(
      Effect.zipRight(sql`INSERT INTO people (id, name) VALUES (${5}, ${"Eve"})`, Effect.fail("undo" as const))
    ).pipe(Effect.flip)
    const savepoint = yield* sql.withTransaction(
      Effect.gen(function*() {
        yield* sql`INSERT INTO people (id, name) VALUES (${6}, ${"Fay"})`
        yield* sql.withTransaction(
          Effect.zipRight(sql`INSERT INTO people (id, name) VALUES (${7}, ${"Gus"})`, Effect.fail("inner" as const))
        ).pipe(Effect.ignore)
        return yield* sql`SELECT name FROM people WHERE id >= ${5} ORDER BY id`
      })
    )
    const failed = yield* sql`INSERT INTO people (id, name) VALUES (${1}, ${"Again"})`.pipe(Effect.flip)
    const after = yield* sql`SELECT id, name, age FROM people ORDER BY id`
    return {
      inserted,
      byIn,
      byAnd,
      nested,
      unsafe,
      values,
      committed,
      rolledBack,
      savepoint,
      failed: failed._tag,
      after
    }
  })

/** The names of the spans `effect` makes. */
const recordingSpans = Effect.map(Effect.tracer, (native) => {
  const names: Array<string> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      names.push(name)
      return native.span(name, parent, context, links, startTime, kind, options)
    },
    context: native.context
  })
  return { names, tracer }
})

describe("the SQLite client without statement spans", () => {
  it.scoped("answers every kind of statement as the library's client does", () =>
    Effect.gen(function*() {
      const withSpans = yield* workload(yield* client(true))
      const without = yield* workload(yield* client(false))
      expect(without).toEqual(withSpans)
      expect(without.after).toEqual([
        { id: 1, name: "Alice", age: 31 },
        { id: 2, name: "Bob", age: 41 },
        { id: 3, name: "Chloé", age: null },
        { id: 4, name: "Dan", age: null },
        { id: 6, name: "Fay", age: null }
      ])
      expect(without.failed).toBe("SqlError")
    }))

  it.scoped("makes no sql.execute span, where the default client makes one a statement", () =>
    Effect.gen(function*() {
      for (const statementSpans of [true, false]) {
        const sql = yield* client(statementSpans)
        const { names, tracer } = yield* recordingSpans
        yield* Effect.withTracer(
          Effect.zipRight(sql`SELECT 1 AS one`, sql.withTransaction(sql`SELECT 2 AS two`)),
          tracer
        )
        expect(names.filter((n) => n === "sql.execute")).toHaveLength(statementSpans ? 2 : 0)
        // a transaction keeps its span either way
        expect(names).toContain("sql.transaction")
      }
    }))

  it.scoped("a statement outside a transaction waits for another fiber's transaction to end", () =>
    Effect.gen(function*() {
      const sql = yield* client(false)
      yield* sql`CREATE TABLE t (id INTEGER PRIMARY KEY)`
      const inside = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const writer = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO t (id) VALUES (1)`
        yield* Deferred.succeed(inside, undefined)
        yield* Deferred.await(release)
        yield* sql`INSERT INTO t (id) VALUES (2)`
      })))
      yield* Deferred.await(inside)
      // one connection: read in the writer's transaction it would see the first row alone
      const reader = yield* Effect.fork(sql<{ n: number }>`SELECT count(*) AS n FROM t`)
      yield* Effect.yieldNow()
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(writer)
      expect(yield* Fiber.join(reader)).toEqual([{ n: 2 }])
    }))

  it.scoped("a statement transformer still applies", () =>
    Effect.gen(function*() {
      const sql = yield* client(false)
      const rows = yield* sql`SELECT 1 AS answer`.pipe(
        Statement.withTransformer((_statement, make) => Effect.succeed(make`SELECT 42 AS answer`))
      )
      expect(rows).toEqual([{ answer: 42 }])
    }))
})
