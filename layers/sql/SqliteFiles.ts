/**
 * SqliteFiles on better-sqlite3: whole database files for `gligabao backup` and `restore`. Each
 * call opens its own connection and closes it before it returns; no statement here writes to a
 * source database.
 */
import Sqlite from "better-sqlite3"
import { Effect, Layer } from "effect"
import * as sqliteVec from "sqlite-vec"
import { SqliteFileFailed, type SqliteFileInfo, SqliteFiles } from "../../src/services/SqliteFiles.js"

const reason = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const codeOf = (
  e: unknown
): unknown => (typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined)

/** A connection to an existing file for the duration of `use`. */
const withConnection = <A>(
  file: string,
  what: string,
  use: (db: Sqlite.Database) => A | Promise<A>
): Effect.Effect<A, SqliteFileFailed> =>
  Effect.acquireUseRelease(
    Effect.try({
      try: () => new Sqlite(file, { fileMustExist: true }),
      catch: (e) => new SqliteFileFailed({ message: `could not open ${file} to ${what}: ${reason(e)}` })
    }),
    (db) =>
      Effect.tryPromise({
        try: async () => use(db),
        catch: (e) =>
          new SqliteFileFailed({
            message: codeOf(e) === "SQLITE_NOTADB"
              ? `${file} is not a SQLite database`
              : `could not ${what} ${file}: ${reason(e)}`
          })
      }),
    (db) => Effect.sync(() => db.close())
  )

/**
 * Pages per backup step: all of them. SQLite restarts a backup whose source another process
 * wrote between two steps, so a stepwise backup of a busy server may never end; one step reads
 * one snapshot (a WAL reader, which no writer waits for) from start to end.
 */
const ALL_PAGES = 0x7fffffff

const hasTable = (db: Sqlite.Database, name: string): boolean =>
  db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined

const copy = (source: string, destination: string) =>
  Effect.zipRight(
    withConnection(source, "back up", async (db) => {
      db.pragma("busy_timeout = 5000")
      await db.backup(destination, { progress: () => ALL_PAGES })
    }),
    // the copy is one self-contained file: no -wal or -shm beside it until a server opens it
    withConnection(destination, "finish the copy", (db) => {
      db.pragma("journal_mode = DELETE")
    })
  )

const inspect = (file: string) =>
  withConnection(file, "check", (db): SqliteFileInfo => {
    // integrity_check asks each virtual table to check itself: the vec0 tables need their module
    db.loadExtension(sqliteVec.getLoadablePath())
    const problems = (db.pragma("integrity_check") as Array<{ integrity_check: string }>).map((r) => r.integrity_check)
    const latest = hasTable(db, "effect_sql_migrations")
      ? db.prepare(`SELECT migration_id AS id, name FROM effect_sql_migrations ORDER BY migration_id DESC LIMIT 1`)
        .get() as { id: number; name: string } | undefined
      : undefined
    return {
      integrity: problems.join("; "),
      migration: latest === undefined ? undefined : `${String(latest.id).padStart(4, "0")}_${latest.name}`,
      imagePaths: hasTable(db, "gb_image_artifacts")
        ? (db.prepare(`SELECT path FROM gb_image_artifacts`).pluck().all() as Array<string>)
        : []
    }
  })

/**
 * Every connection keeps a shared lock on the file while it is open (a WAL connection too, idle
 * or not), so an exclusive lock taken without waiting succeeds only when no other connection has it.
 */
const inUse = (file: string) =>
  withConnection(file, "check whether another process uses", (db) => {
    db.pragma("busy_timeout = 0")
    db.pragma("locking_mode = EXCLUSIVE")
    try {
      db.exec("BEGIN EXCLUSIVE")
      db.exec("COMMIT")
      return false
    } catch (e) {
      if (codeOf(e) === "SQLITE_BUSY") return true
      throw e
    }
  })

export const SqliteFilesLive: Layer.Layer<SqliteFiles> = Layer.succeed(
  SqliteFiles,
  SqliteFiles.of({ copy, inspect, inUse })
)
