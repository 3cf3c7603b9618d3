import { Context, Data, type Effect, FiberRef } from "effect"

/**
 * Effects a storage layer contributes to run before every commit of `Database.withTransaction`,
 * once, at the outermost transaction however they nest (the SQLite full-text index applies what
 * the transaction queued, FullTextIndex.flush). Unlike `beforeCommit`, they belong to the
 * storage, not to a fiber.
 */
export class PreCommitHooks extends Context.Tag("gligabao/PreCommitHooks")<
  PreCommitHooks,
  ReadonlyArray<Effect.Effect<void>>
>() {}

/**
 * Effects run inside every `Database.withTransaction` of the fibers that carry them, just
 * before the commit. The remember manager sets one per run: the run's request leaves the
 * durable queue in the very transaction that stores its artifact, so a process that dies
 * after that commit is never run again from the start (docs/INGESTION.md).
 */
export const beforeCommit: FiberRef.FiberRef<ReadonlyArray<Effect.Effect<void>>> = FiberRef.unsafeMake<
  ReadonlyArray<Effect.Effect<void>>
>([])

/** The lock of a (user, dataset): every run's reads and writes of the dataset, and every forget, hold it. */
export const datasetLockKey = (scope: { readonly user_id: string; readonly dataset: string }): string =>
  `remember\u0000${scope.user_id}\u0000${scope.dataset}`

/** What `GET /readyz` says of a database that answers and is migrated: the latest migration applied. */
export interface DatabaseHealth {
  /** `<id>_<name>` of the latest migration applied, e.g. `0013_dataset_full_text` */
  readonly migration: string
}

/** The database is not usable: it does not answer (`database`), or it is not fully migrated (`migrations`). */
export class DatabaseNotReady extends Data.TaggedError("DatabaseNotReady")<{
  readonly check: "database" | "migrations"
  readonly message: string
}> {}

/**
 * What the core needs of the database itself, beyond the repositories: transactions, the
 * per-dataset lock the remember manager holds for a whole pipeline run, and the compaction a
 * forget ends with.
 */
export class Database extends Context.Tag("gligabao/Database")<
  Database,
  {
    readonly dialect: "sqlite" | "pg"
    /**
     * runs `effect` in one transaction (nested calls join it); `beforeCommit` runs at every
     * level, the storage's PreCommitHooks at the outermost only
     */
    readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /**
     * runs `effect` holding the lock of `key` (a user and dataset name): in-process always,
     * and a session advisory lock on PostgreSQL so several processes on one database stay serial
     */
    readonly withLock: (key: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /**
     * Makes what was deleted unreadable in the database's own files, as far as the database
     * can: on SQLite, FTS5 'optimize' of both full-text indexes, then the WAL checkpointed and
     * truncated (deleted rows themselves are zeroed as they go, by secure_delete); on
     * PostgreSQL nothing (VACUUM does not zero, docs/SECURITY.md). Run it after a forget has
     * committed and its vector deletes have drained, never inside a transaction (it dies
     * there). An index with deletes is rewritten whole, every dataset's, holding the SQLite
     * connection: 60 ms at 100,000 facts, about a second at 1,000,000 (BENCHMARKS.md, "No trace").
     */
    readonly compact: Effect.Effect<void>
    /**
     * For `GET /readyz`: a trivial query answers, and the latest migration this build knows
     * is recorded in the migrations table (`effect_sql_migrations`, @effect/sql's Migrator).
     */
    readonly health: Effect.Effect<DatabaseHealth, DatabaseNotReady>
  }
>() {}
