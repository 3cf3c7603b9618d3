/**
 * The SQLite client: one better-sqlite3 connection with WAL and synchronous = NORMAL (files
 * only), foreign keys, secure_delete, a busy timeout, and sqlite-vec loaded into the same
 * connection, migrated on build. The client is sqliteClient.ts's (the library's, with a plain
 * prepared-statement cache and scripts).
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { NodeContext } from "@effect/platform-node"
import { SqlClient, type SqlError } from "@effect/sql"
import { type SqliteClient, SqliteMigrator } from "@effect/sql-sqlite-node"
import { Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import * as sqliteVec from "sqlite-vec"
import { migrations } from "./migrations/index.js"
import { makeSqliteClient, sqliteClientContext, type SqliteScript } from "./sqliteClient.js"

export const isMemory = (filename: string) => filename === ":memory:" || filename === ""

/** The client alone (no migrations), configured as every gligabao connection must be. */
export interface SqliteOptions {
  /** PRAGMA mmap_size in bytes; 0 (the default) reads through read calls */
  readonly mmapBytes: number
  /**
   * a `sql.execute` span around every statement (the default); the server turns them off when
   * it exports no traces, since they cost a statement about as much as its SQL (sqliteClient.ts)
   */
  readonly statementSpans?: boolean | undefined
}

const DEFAULT_OPTIONS: SqliteOptions = { mmapBytes: 0 }

export const SqliteClientLive = (
  filename: string,
  options: SqliteOptions = DEFAULT_OPTIONS
): Layer.Layer<SqliteClient.SqliteClient | SqlClient.SqlClient | SqliteScript, SqlError.SqlError> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      if (!isMemory(filename)) {
        yield* Effect.sync(() => mkdirSync(dirname(filename), { recursive: true }))
      }
      const client = yield* makeSqliteClient({
        filename,
        disableWAL: isMemory(filename),
        statementSpans: options.statementSpans
      })
      // per connection, outside any transaction (foreign_keys is a no-op inside one)
      yield* client`PRAGMA foreign_keys = ON`
      // deleted content is overwritten with zeros, not left in free space and freed pages: always,
      // not only for a forget, since every request's full text has been in a queue row deleted
      // long before anyone asks to forget it (docs/SECURITY.md, "Deleted data on disk")
      yield* client`PRAGMA secure_delete = ON`
      // the full-text flush counts tokens in a temp FTS5 table (FullText.ts): temp tables and
      // indexes live in memory, so no text passes through a temp file
      yield* client`PRAGMA temp_store = MEMORY`
      // In WAL mode NORMAL syncs at checkpoints, not at every commit: a commit survives a crash of
      // the process (the WAL is in the OS's hands), and an OS crash or power loss can lose the last
      // commits but never corrupts the file. better-sqlite3 builds with this default already; said
      // here so the choice is the project's, not a build flag's.
      if (!isMemory(filename)) yield* client`PRAGMA synchronous = NORMAL`
      yield* client`PRAGMA busy_timeout = 5000`
      // opt-in (database.mmap_size): reads through a memory map are about twice as fast for the
      // vector rescoring and full text, but the file's pages then count in the process's RSS
      if (!isMemory(filename) && options.mmapBytes > 0) {
        yield* client.unsafe(`PRAGMA mmap_size = ${Math.floor(options.mmapBytes)}`)
      }
      yield* client.loadExtension(sqliteVec.getLoadablePath())
      yield* client`SELECT vec_version() AS version`
      return sqliteClientContext(client)
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * A read-only connection to the file, for the reads that need only committed data: in WAL mode
 * it reads beside the writer's connection and never waits for a transaction to end. No
 * sqlite-vec (the vector store has its own reader), no writes.
 */
export const SqliteReaderLive = (
  filename: string,
  options: SqliteOptions = DEFAULT_OPTIONS
): Layer.Layer<SqlClient.SqlClient, SqlError.SqlError> =>
  Layer.scoped(
    SqlClient.SqlClient,
    Effect.gen(function*() {
      // the writer has put the file in WAL mode; a read-only connection cannot set it
      const client = yield* makeSqliteClient({
        filename,
        readonly: true,
        disableWAL: true,
        statementSpans: options.statementSpans
      })
      yield* client`PRAGMA busy_timeout = 5000`
      if (options.mmapBytes > 0) yield* client.unsafe(`PRAGMA mmap_size = ${Math.floor(options.mmapBytes)}`)
      return client as SqlClient.SqlClient
    })
  ).pipe(Layer.provide(Reactivity.layer))

const MigratorLive = SqliteMigrator.layer({ loader: SqliteMigrator.fromRecord(migrations) }).pipe(
  Layer.provide(NodeContext.layer)
)

/** The migrated client. */
export const SqliteMigratedLive = (
  filename: string,
  options: SqliteOptions = DEFAULT_OPTIONS
): Layer.Layer<
  SqliteClient.SqliteClient | SqlClient.SqlClient | SqliteScript,
  SqlError.SqlError | SqliteMigrator.MigrationError
> => MigratorLive.pipe(Layer.provideMerge(SqliteClientLive(filename, options)))
