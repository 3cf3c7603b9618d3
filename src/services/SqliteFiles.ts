import { Context, Data, type Effect } from "effect"

export class SqliteFileFailed extends Data.TaggedError("SqliteFileFailed")<{ readonly message: string }> {}

/** What a copy of a gligabao database holds, read once it is written. */
export interface SqliteFileInfo {
  /** PRAGMA integrity_check's answer: `ok`, or the problems it found */
  readonly integrity: string
  /** the latest migration recorded (`0017_entity_words`), or undefined for a file never migrated */
  readonly migration: string | undefined
  /** the image files its rows name, relative to the image directory */
  readonly imagePaths: ReadonlyArray<string>
}

/**
 * SQLite database files as whole files, for backup and restore (src/backup/backup.ts).
 */
export class SqliteFiles extends Context.Tag("gligabao/SqliteFiles")<
  SqliteFiles,
  {
    /**
     * SQLite's online backup of `source` into the new file `destination`: the database as of one
     * moment, consistent while other processes write to it. The copy is a single file (rollback
     * journal, no WAL beside it).
     */
    readonly copy: (source: string, destination: string) => Effect.Effect<void, SqliteFileFailed>
    /** Checks a file nobody else writes (PRAGMA integrity_check) and reads what it references. */
    readonly inspect: (file: string) => Effect.Effect<SqliteFileInfo, SqliteFileFailed>
    /** Whether another connection, such as a running server's, has the file open. */
    readonly inUse: (file: string) => Effect.Effect<boolean, SqliteFileFailed>
  }
>() {}
