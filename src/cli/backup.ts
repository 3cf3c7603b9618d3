/**
 * `gligabao backup` and `gligabao restore` (issue 41; docs/DEPLOY.md, Backup and restore): the
 * SQLite database and its image files, while the server runs. main.ts passes the SqliteFiles
 * layer (the composition root builds it).
 *
 *   gligabao backup --to DIR [--force] [--db PATH] [--image-dir DIR] [--config FILE]
 *   gligabao restore --from DIR [--force] [--db PATH] [--image-dir DIR] [--config FILE]
 */
import { Command, Options } from "@effect/cli"
import { Effect, type Layer, Option } from "effect"
import { backupSqlite, restoreSqlite } from "../backup/backup.js"
import { type AppConfig, GLIGABAO_VERSION } from "../Config.js"
import type { SqliteFiles } from "../services/SqliteFiles.js"
import { configOption, databaseUrlOption, dbOption, flags, imageDirOption, printJson, withConfig } from "./options.js"

const storageOptions = {
  config: configOption,
  db: dbOption,
  databaseUrl: databaseUrlOption,
  imageDir: imageDirOption
}

/** What `backup` and `restore` answer on PostgreSQL: its own tools, and where the image files are. */
export const postgresBackupMessage = (config: AppConfig, command: "backup" | "restore"): string =>
  command === "backup"
    ? `the database is PostgreSQL: back it up with pg_dump, e.g. pg_dump --format=custom --file gligabao.dump ` +
      `"$DATABASE_URL", then copy the image files in ${config.imageDir} (docs/DEPLOY.md, Backup and restore)`
    : `the database is PostgreSQL: restore it with pg_restore, e.g. pg_restore --clean --if-exists --no-owner ` +
      `--dbname "$DATABASE_URL" gligabao.dump, then copy the image files back into ${config.imageDir} ` +
      `(docs/DEPLOY.md, Backup and restore)`

const sqliteOnly = (config: AppConfig, command: "backup" | "restore") =>
  Option.isSome(config.database.url) ? Effect.fail(new Error(postgresBackupMessage(config, command))) : Effect.void

/** Files the rows name that the image directory lacks: said on stderr too, stdout is the JSON. */
const warnMissing = (missing: ReadonlyArray<string>, where: string) =>
  Effect.sync(() => {
    if (missing.length > 0) {
      console.error(
        `gligabao: warning: the database names ${missing.length} image files that ${where} does not have: ` +
          missing.slice(0, 5).join(", ") + (missing.length > 5 ? ", ..." : "")
      )
    }
  })

export const backupCommand = (files: Layer.Layer<SqliteFiles>) =>
  Command.make(
    "backup",
    {
      to: Options.text("to").pipe(
        Options.withDescription("the folder to write (gligabao.db, gligabao.images and backup.json)")
      ),
      force: Options.boolean("force").pipe(Options.withDescription("replace an existing backup at --to")),
      ...storageOptions
    },
    (o) =>
      withConfig(flags(o), (config) =>
        Effect.gen(function*() {
          yield* sqliteOnly(config, "backup")
          const result = yield* backupSqlite(
            { database: config.database.path, imageDir: config.imageDir },
            o.to,
            { force: o.force, version: GLIGABAO_VERSION }
          )
          yield* warnMissing(result.missing_images, "the source's image directory")
          yield* printJson(result)
        }).pipe(Effect.provide(files)))
  ).pipe(
    Command.withDescription(
      "copy the SQLite database (SQLite's online backup) and its image files into a folder, while the server runs"
    )
  )

export const restoreCommand = (files: Layer.Layer<SqliteFiles>) =>
  Command.make(
    "restore",
    {
      from: Options.text("from").pipe(
        Options.withDescription("a folder `gligabao backup` wrote (or a database file, its images beside it)")
      ),
      force: Options.boolean("force").pipe(
        Options.withDescription("replace an existing database (its files are moved aside, not deleted)")
      ),
      ...storageOptions
    },
    (o) =>
      withConfig(flags(o), (config) =>
        Effect.gen(function*() {
          yield* sqliteOnly(config, "restore")
          const result = yield* restoreSqlite(
            o.from,
            { database: config.database.path, imageDir: config.imageDir },
            { force: o.force }
          )
          yield* warnMissing(result.missing_images, "the backup")
          yield* printJson(result)
        }).pipe(Effect.provide(files)))
  ).pipe(
    Command.withDescription(
      "put a backup in place of the database (refused while a server has it open, and over existing data without --force)"
    )
  )
