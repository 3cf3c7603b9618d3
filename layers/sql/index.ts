/**
 * The SQL storage layer: one repository code for SQLite and PostgreSQL.
 *
 *   SqliteLive("data/gligabao.db")       SqliteLive(":memory:")
 *   PgLive(Redacted.make("postgres://…"))
 *
 * Each provides the SqlClient, the Database port and the repositories, with migrations run.
 */
import type { SqlClient, SqlError } from "@effect/sql"
import type { MigrationError } from "@effect/sql/Migrator"
import { Layer, type Redacted } from "effect"
import type { AdminRepo } from "../../src/services/AdminRepo.js"
import type { Database } from "../../src/services/Database.js"
import type { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import type { EraseRepo } from "../../src/services/EraseRepo.js"
import type { ForgetRepo } from "../../src/services/ForgetRepo.js"
import type { GeoRepo } from "../../src/services/GeoRepo.js"
import type { GraphRepo } from "../../src/services/GraphRepo.js"
import type { ImagesRepo } from "../../src/services/ImagesRepo.js"
import type { InferencesRepo } from "../../src/services/InferencesRepo.js"
import type { RunLogRepo } from "../../src/services/RunLogRepo.js"
import type { SearchRepo } from "../../src/services/SearchRepo.js"
import type { SeriesRepo } from "../../src/services/SeriesRepo.js"
import type { VectorOutbox } from "../../src/services/VectorOutbox.js"
import { DatabaseLive } from "./Database.js"
import { FullTextIndexLive } from "./FullText.js"
import { PgClientLive, PgMigratedLive, type PgOptions } from "./Pg.js"
import { AdminRepoLive } from "./repositories/Admin.js"
import { DatasetsRepoLive } from "./repositories/Datasets.js"
import { EraseRepoLive } from "./repositories/Erase.js"
import { ForgetRepoLive } from "./repositories/Forget.js"
import { GeoRepoLive } from "./repositories/Geo.js"
import { GraphRepoLive } from "./repositories/Graph.js"
import { ImagesRepoLive } from "./repositories/Images.js"
import { InferencesRepoLive } from "./repositories/Inferences.js"
import { RunLogRepoLive } from "./repositories/RunLog.js"
import { SearchRepoLive } from "./repositories/Search.js"
import { SeriesRepoLive } from "./repositories/Series.js"
import { VectorOutboxLive } from "./repositories/VectorOutbox.js"
import { isMemory, SqliteMigratedLive, type SqliteOptions, SqliteReaderLive } from "./Sqlite.js"

export type Repositories =
  | AdminRepo
  | Database
  | DatasetsRepo
  | EraseRepo
  | ForgetRepo
  | GeoRepo
  | GraphRepo
  | ImagesRepo
  | InferencesRepo
  | RunLogRepo
  | SearchRepo
  | SeriesRepo
  | VectorOutbox

/** Everything the storage layer provides. */
export type Storage = SqlClient.SqlClient | Repositories

export type StorageError = SqlError.SqlError | MigrationError

/**
 * All but SearchRepo, over whatever SqlClient is provided (already migrated). The full-text
 * index's writer instance serves the Database port (its flush a pre-commit hook, compaction)
 * and erase; SearchRepo scores with an instance on its own client (search/textMatch.ts).
 */
const WritingRepositoriesLive = Layer.mergeAll(
  AdminRepoLive,
  DatabaseLive,
  DatasetsRepoLive,
  EraseRepoLive,
  ForgetRepoLive,
  GeoRepoLive,
  GraphRepoLive,
  ImagesRepoLive,
  InferencesRepoLive,
  RunLogRepoLive,
  SeriesRepoLive,
  VectorOutboxLive
).pipe(Layer.provide(FullTextIndexLive))

/** The repositories and the Database port over whatever SqlClient is provided (already migrated). */
export const RepositoriesLive: Layer.Layer<Repositories, never, SqlClient.SqlClient> = Layer.merge(
  WritingRepositoriesLive,
  SearchRepoLive
)

/**
 * SQLite at `filename` (its directory is created; `:memory:` works), migrated. On a file the read
 * programs' SearchRepo runs on a read-only connection of its own: WAL lets it read beside the
 * writer, so a search never waits for another request's transaction (docs/DECISIONS.md).
 */
export const SqliteLive = (filename: string, options?: SqliteOptions): Layer.Layer<Storage, StorageError> =>
  (isMemory(filename)
    ? RepositoriesLive
    : Layer.merge(WritingRepositoriesLive, SearchRepoLive.pipe(Layer.provide(SqliteReaderLive(filename, options)))))
    .pipe(Layer.provideMerge(SqliteMigratedLive(filename, options)))

/** Connections of the read programs' own pool on PostgreSQL, unless PgOptions say otherwise. */
export const PG_READ_CONNECTIONS = 4

/**
 * PostgreSQL at `url`, migrated. The read programs' SearchRepo has a pool of its own
 * (`readConnections`), so a search's statements never queue behind the runs' for a connection of
 * the main pool; each sees what is committed, as on SQLite's reader.
 */
export const PgLive = (url: Redacted.Redacted<string>, options: PgOptions = {}): Layer.Layer<Storage, StorageError> => {
  const { readConnections = PG_READ_CONNECTIONS, ...main } = options
  return Layer.merge(
    WritingRepositoriesLive,
    SearchRepoLive.pipe(Layer.provide(PgClientLive(url, { maxConnections: readConnections })))
  ).pipe(Layer.provideMerge(PgMigratedLive(url, main)))
}

export { DatabaseLive, makeKeyedLock } from "./Database.js"
export { PgClientLive, PgMigratedLive, type PgOptions } from "./Pg.js"
export { advisoryLockId, withPgAdvisoryLock } from "./PgAdvisoryLock.js"
export { SqliteClientLive, SqliteMigratedLive, type SqliteOptions } from "./Sqlite.js"
