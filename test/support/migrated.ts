/**
 * A database migrated only up to some migrations (a record of them, as `layers/sql/migrations`
 * holds them): the state an older release left, for the tests of the migrations after it.
 */
import { NodeContext } from "@effect/platform-node"
import { PgMigrator } from "@effect/sql-pg"
import { SqliteClient, SqliteMigrator } from "@effect/sql-sqlite-node"
import { Layer } from "effect"
import { PgClientLive } from "../../layers/sql/Pg.js"

type Migrations = Parameters<typeof SqliteMigrator.fromRecord>[0]

/** The SQLite file `file` with `migrations` run, and its client. */
export const sqliteMigratedTo = (file: string, migrations: Migrations) =>
  SqliteMigrator.layer({ loader: SqliteMigrator.fromRecord(migrations) }).pipe(
    Layer.provideMerge(SqliteClient.layer({ filename: file })),
    Layer.provide(NodeContext.layer),
    Layer.orDie
  )

/** The PostgreSQL database at `url` with `migrations` run, and its client. */
export const pgMigratedTo = (url: Parameters<typeof PgClientLive>[0], migrations: Migrations) =>
  Layer.effectDiscard(PgMigrator.run({ loader: PgMigrator.fromRecord(migrations) })).pipe(
    Layer.provideMerge(PgClientLive(url)),
    Layer.provide(NodeContext.layer),
    Layer.orDie
  )
