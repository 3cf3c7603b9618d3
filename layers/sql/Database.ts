/**
 * The `Database` port from a SqlClient: transactions, the per-key lock the remember manager
 * holds for a whole pipeline run (an in-process lock always, plus a PostgreSQL session advisory
 * lock so that several processes on one database stay serial), and compaction (SQLite only,
 * SqliteCompact.ts). The storage's PreCommitHooks (the full-text flush, FullText.ts) run before
 * the outermost commit.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient, SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, FiberRef, Layer, Option } from "effect"
import { beforeCommit, Database, DatabaseNotReady, PreCommitHooks } from "../../src/services/Database.js"
import { FullTextIndex } from "../../src/services/FullTextIndex.js"
import { migrations } from "./migrations/index.js"
import { withPgAdvisoryLock } from "./PgAdvisoryLock.js"
import { outsideTransaction, truncateWal } from "./SqliteCompact.js"

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
    withLock: (key: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.acquireUseRelease(
        acquire(key),
        (entry) => entry.semaphore.withPermits(1)(effect),
        (entry) => release(key, entry)
      ),
    /** how many keys are held or awaited (for tests) */
    size: () => entries.size
  }
}

const isSqlError = (u: unknown): u is SqlError.SqlError => u instanceof SqlError.SqlError

/** Lock holders at once per process; more wait for a connection of the lock pool. */
export const LOCK_POOL_SIZE = 64

/**
 * Lock connections come from a pool of their own: a holder keeps its connection for a whole
 * pipeline run (the remember manager takes the lock before its permit), so drawing them from
 * the query pool would let enough queued datasets starve the running pipelines of connections.
 */
const makeLockClient = (sql: SqlClient.SqlClient) =>
  Effect.flatMap(Effect.serviceOption(PgClient.PgClient), (pg) =>
    Option.match(pg, {
      onNone: () => Effect.succeed(sql),
      onSome: ({ config }) =>
        PgClient.make({
          ...config,
          maxConnections: LOCK_POOL_SIZE,
          minConnections: 0,
          applicationName: "gligabao-locks"
        }).pipe(
          Effect.provide(Reactivity.layer),
          Effect.orDie
        )
    }))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })
  const local = makeKeyedLock()
  const lockSql = dialect === "pg" ? yield* makeLockClient(sql) : sql
  const fullText = yield* FullTextIndex
  const hooks = Option.getOrElse(yield* Effect.serviceOption(PreCommitHooks), () => [])
  const runHooks = Effect.all(hooks, { discard: true })
  // what plain SQL queued while no server ran (FullText.ts)
  if (dialect === "sqlite") yield* sql.withTransaction(fullText.flush).pipe(Effect.orDie)
  // PostgreSQL: a VACUUM would make the dead tuples' space reusable without zeroing it, and
  // VACUUM FULL rewrites whole tables under an exclusive lock: neither is a forget's to run
  const compact = dialect === "pg"
    ? outsideTransaction("Database.compact")
    : outsideTransaction("Database.compact").pipe(
      Effect.zipRight(fullText.compact),
      Effect.zipRight(truncateWal(sql)),
      Effect.asVoid,
      Effect.orDie,
      Effect.withSpan("Database.compact")
    )

  const health = Effect.gen(function*() {
    const notReady = (check: "database" | "migrations") => (error: SqlError.SqlError) =>
      new DatabaseNotReady({
        check,
        message: String(error.cause instanceof Error ? error.cause.message : error.message)
      })
    yield* sql.unsafe(`SELECT 1 AS one`).pipe(Effect.mapError(notReady("database")))
    // the Migrator's own table (its default name), read as it reads it: the highest id
    const rows = yield* sql.unsafe<{ id: number | string; name: string }>(
      `SELECT migration_id AS id, name FROM effect_sql_migrations ORDER BY migration_id DESC LIMIT 1`
    ).pipe(Effect.mapError(notReady("migrations")))
    const applied = rows[0] === undefined ? undefined : `${String(rows[0].id).padStart(4, "0")}_${rows[0].name}`
    if (applied !== LATEST_MIGRATION) {
      return yield* new DatabaseNotReady({
        check: "migrations",
        message: `the latest migration applied is ${applied ?? "none"}, this build needs ${LATEST_MIGRATION}`
      })
    }
    return { migration: applied }
  })

  return Database.of({
    dialect,
    health,
    // begin/commit failures are infrastructure errors: defects, like the repositories' own
    withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.flatMap(
        Effect.serviceOption(SqlClient.TransactionConnection),
        (outer) =>
          sql.withTransaction(Effect.zipLeft(
            effect,
            Effect.flatMap(FiberRef.get(beforeCommit), (fiberHooks) => Effect.all(fiberHooks, { discard: true })).pipe(
              // the storage's hooks once, at the outermost level: before the commit that publishes
              Effect.zipRight(Option.isSome(outer) ? Effect.void : runHooks)
            )
          ))
      ).pipe(
        Effect.catchIf(isSqlError, (error) => Effect.die(error))
      ) as Effect.Effect<A, E, R>,
    withLock: (key: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      local.withLock(key)(dialect === "pg" ? withPgAdvisoryLock(lockSql, key)(effect) : effect),
    compact
  })
})

/** The latest migration this build has, `<id>_<name>` (the migrations' record keys are in order). */
export const LATEST_MIGRATION: string = Object.keys(migrations).sort().at(-1)!

/** Needs the writer's FullTextIndex, and runs its PreCommitHooks when provided (FullText.ts's FullTextIndexLive). */
export const DatabaseLive: Layer.Layer<Database, never, SqlClient.SqlClient | FullTextIndex> = Layer.scoped(
  Database,
  make
)
