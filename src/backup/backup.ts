/**
 * Backup and restore of a SQLite deployment (issue 41; docs/DEPLOY.md, Backup and restore). A
 * backup is a folder laid out like a data folder: `gligabao.db` (SQLite's online backup, a
 * consistent copy while the server writes), `gligabao.images` beside it, and `backup.json`. So
 * `serve --db DIR/gligabao.db` serves a backup as it is, and `restore` copies one into place.
 *
 * The database is copied first, the image files after it (docs/DECISIONS.md): a row names a file
 * only once the file is written, and files are only ever added, renamed into place whole, or
 * removed by a forget after its commit, so every file the copied rows name is there to copy,
 * unless a forget removed it in between; that is checked, and the backup taken again.
 */
import { FileSystem, Path } from "@effect/platform"
import { Clock, Data, Effect } from "effect"
import { imageDirFor } from "../Config.js"
import { SqliteFiles } from "../services/SqliteFiles.js"

export class BackupFailed extends Data.TaggedError("BackupFailed")<{ readonly message: string }> {}

export const BACKUP_DATABASE = "gligabao.db"
export const BACKUP_IMAGES = "gligabao.images"
export const BACKUP_MANIFEST = "backup.json"

/** A database file and its image directory. */
export interface DataLocation {
  readonly database: string
  readonly imageDir: string
}

/** `backup.json`, and what `gligabao backup` prints. */
export interface BackupManifest {
  readonly format: "gligabao-backup"
  readonly gligabao_version: string
  /** the moment the database was copied */
  readonly created_at: string
  readonly source: { readonly database: string; readonly image_dir: string }
  readonly integrity_check: string
  readonly migration: string | null
  readonly images: number
  /** files the copy's rows name that the source's image directory did not have either */
  readonly missing_images: ReadonlyArray<string>
}

/** Times the backup is taken again when a forget removed a file the copied rows name. */
const ATTEMPTS = 3

const failed = (message: string) => new BackupFailed({ message })

const reason = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const isNotFound = (e: unknown): boolean =>
  typeof e === "object" && e !== null && (e as { reason?: unknown }).reason === "NotFound"

/** `child` is `parent` or inside it. */
const within = (path: Path.Path, parent: string, child: string): boolean => {
  const rel = path.relative(parent, child)
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
}

/**
 * Copies the image files of `from` (if it exists) into the new directory `to`, and returns their
 * paths (relative, with `/` as the rows write them). A `.tmp` file is a write in progress, not an
 * image; a file that went away meanwhile was removed by a forget.
 */
export const copyImages = (from: string, to: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    yield* fs.makeDirectory(to, { recursive: true })
    if (!(yield* fs.exists(from))) return new Set<string>()
    const copied = new Set<string>()
    for (const entry of (yield* fs.readDirectory(from, { recursive: true })).sort()) {
      if (entry.endsWith(".tmp")) continue
      const source = path.join(from, entry)
      const copiedOne = Effect.gen(function*() {
        const info = yield* fs.stat(source)
        if (info.type === "Directory") return yield* fs.makeDirectory(path.join(to, entry), { recursive: true })
        if (info.type !== "File") return
        yield* fs.makeDirectory(path.dirname(path.join(to, entry)), { recursive: true })
        yield* fs.copyFile(source, path.join(to, entry))
        copied.add(entry.split(path.sep).join("/"))
      })
      yield* copiedOne.pipe(Effect.catchIf(isNotFound, () => Effect.void))
    }
    return copied
  }).pipe(Effect.mapError((e) => failed(`could not copy the image files of ${from}: ${reason(e)}`)))

export interface BackupOptions {
  /** replace an existing backup at the destination */
  readonly force: boolean
  readonly version: string
}

/** Backs up `source` into the folder `to`; see the module's comment. */
export const backupSqlite = (source: DataLocation, to: string, options: BackupOptions) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const files = yield* SqliteFiles
    const target = path.resolve(to)
    const database = path.resolve(source.database)
    const imageDir = path.resolve(source.imageDir)
    if (!(yield* fs.exists(database))) {
      return yield* failed(`there is no SQLite database at ${source.database} to back up`)
    }
    if (within(path, target, database) || within(path, target, imageDir) || within(path, imageDir, target)) {
      return yield* failed(`the backup cannot go to ${to}: it holds, or is inside, the data it backs up`)
    }
    const existing = yield* fs.exists(target)
    if (existing && !options.force && !(yield* isEmptyDirectory(target))) {
      return yield* failed(`${to} exists: pass --force to replace it with a new backup`)
    }
    // built beside the destination and renamed into place: an interrupted backup leaves no half backup
    const work = `${target}.partial-${crypto.randomUUID().slice(0, 8)}`
    const built = Effect.gen(function*() {
      for (let attempt = 1;; attempt++) {
        yield* fs.remove(work, { recursive: true, force: true })
        yield* fs.makeDirectory(work, { recursive: true })
        const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
        yield* files.copy(database, path.join(work, BACKUP_DATABASE))
        const images = yield* copyImages(imageDir, path.join(work, BACKUP_IMAGES))
        const info = yield* files.inspect(path.join(work, BACKUP_DATABASE))
        if (info.integrity !== "ok") {
          return yield* failed(`the copy of ${source.database} failed its integrity check: ${info.integrity}`)
        }
        const missing = info.imagePaths.filter((p) => !images.has(p))
        if (missing.length > 0 && attempt < ATTEMPTS) continue
        const manifest: BackupManifest = {
          format: "gligabao-backup",
          gligabao_version: options.version,
          created_at: createdAt,
          source: { database, image_dir: imageDir },
          integrity_check: info.integrity,
          migration: info.migration ?? null,
          images: images.size,
          missing_images: missing
        }
        yield* fs.writeFileString(path.join(work, BACKUP_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
        return manifest
      }
    })
    const manifest = yield* built.pipe(
      Effect.tap(() => existing ? fs.remove(target, { recursive: true }) : Effect.void),
      Effect.tap(() => fs.rename(work, target)),
      Effect.onError(() => fs.remove(work, { recursive: true, force: true }).pipe(Effect.ignore))
    )
    return { backup: target, ...manifest }
  }).pipe(Effect.catchTag("SystemError", "BadArgument", (e) => failed(`backup failed: ${e.message}`)))

const isEmptyDirectory = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.flatMap(fs.stat(path), (info) =>
      info.type === "Directory"
        ? Effect.map(fs.readDirectory(path), (entries) => entries.length === 0)
        : Effect.succeed(false)))

/** The database and image directory of a backup: a backup folder, or a database file with its images beside it. */
export const backupContents = (from: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const resolved = path.resolve(from)
    if (!(yield* fs.exists(resolved))) return yield* failed(`there is no backup at ${from}`)
    if ((yield* fs.stat(resolved)).type !== "Directory") {
      return { database: resolved, imageDir: imageDirFor(resolved) } satisfies DataLocation
    }
    const database = path.join(resolved, BACKUP_DATABASE)
    if (!(yield* fs.exists(database))) {
      return yield* failed(`${from} is not a gligabao backup: it has no ${BACKUP_DATABASE}`)
    }
    return { database, imageDir: path.join(resolved, BACKUP_IMAGES) } satisfies DataLocation
  })

export interface RestoreOptions {
  /** replace an existing database (its files are moved aside, never deleted) */
  readonly force: boolean
}

/**
 * Where a restore moves the database it replaces: `gligabao.db` -> `gligabao-before-restore-<time>.db`,
 * its WAL beside it as SQLite names it, its default image directory where that name's default is
 * (`gligabao-before-restore-<time>.images`), so `serve --db` of the moved file serves it whole.
 */
const asideDatabase = (database: string, stamp: string) => {
  const extension = /(?<=[^/\\])\.[^./\\]*$/.exec(database)?.[0] ?? ""
  return `${database.slice(0, database.length - extension.length)}-before-restore-${stamp}${extension}`
}

/**
 * Restores the backup at `from` to `target`: refused while another process has the target
 * database open, and, without `force`, when the target has a database or images already.
 */
export const restoreSqlite = (from: string, target: DataLocation, options: RestoreOptions) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const files = yield* SqliteFiles
    const source = yield* backupContents(from)
    const database = path.resolve(target.database)
    const imageDir = path.resolve(target.imageDir)
    if (source.database === database || source.imageDir === imageDir) {
      return yield* failed(`${from} is the database it would be restored to`)
    }
    const info = yield* files.inspect(source.database)
    if (info.integrity !== "ok") {
      return yield* failed(`the backup's database ${source.database} failed its integrity check: ${info.integrity}`)
    }
    if ((yield* fs.exists(database)) && (yield* files.inUse(database))) {
      return yield* failed(
        `${target.database} is open in another process (a running server?): stop it before restoring over it`
      )
    }
    const present = yield* Effect.filter(
      [database, `${database}-wal`, `${database}-shm`, imageDir],
      (p) => fs.exists(p)
    )
    if (present.length > 0 && !options.force) {
      return yield* failed(
        `restoring would replace what is at ${present.join(", ")}: pass --force to restore anyway ` +
          `(the current files are then moved aside to <name>-before-restore-<time>, not deleted)`
      )
    }
    const stamp = new Date(yield* Clock.currentTimeMillis).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")
    const asideDb = asideDatabase(database, stamp)
    const movedAside: Array<string> = []
    for (const p of present) {
      // SQLite finds a database's WAL by its name plus -wal: the pair stays a pair
      const aside = p === imageDir
        ? imageDir === imageDirFor(database) ? imageDirFor(asideDb) : `${imageDir}-before-restore-${stamp}`
        : `${asideDb}${p.slice(database.length)}`
      yield* fs.rename(p, aside)
      movedAside.push(aside)
    }
    // the images first, the database last and whole (a rename): a restore cut short leaves no database
    const images = yield* copyImages(source.imageDir, imageDir)
    yield* fs.makeDirectory(path.dirname(database), { recursive: true })
    const partial = `${database}.restoring-${crypto.randomUUID().slice(0, 8)}`
    yield* files.copy(source.database, partial).pipe(
      Effect.zipRight(fs.rename(partial, database)),
      Effect.onError(() => fs.remove(partial, { force: true }).pipe(Effect.ignore))
    )
    return {
      restored: path.resolve(from),
      database,
      image_dir: imageDir,
      migration: info.migration ?? null,
      images: images.size,
      missing_images: info.imagePaths.filter((p) => !images.has(p)),
      moved_aside: movedAside
    }
  }).pipe(Effect.catchTag("SystemError", "BadArgument", (e) => failed(`restore failed: ${e.message}`)))
