/**
 * The data folder (issue 41): by default the SQLite file and its images live in `data/` of the
 * working directory. They used to live in `build/`, which a clean build deletes; a deployment that
 * still has its files there keeps using them until they are moved (a user's file is never moved
 * for them), and `serve` says where they are and how to move them.
 */
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"

export const DATA_FOLDER = "data"
export const OLD_DATA_FOLDER = "build"
export const DEFAULT_DB_PATH = `${DATA_FOLDER}/gligabao.db`
export const OLD_DEFAULT_DB_PATH = `${OLD_DATA_FOLDER}/gligabao.db`

/** The shell command that moves the old default location's files into the data folder. */
export const MOVE_COMMAND = `mkdir -p ${DATA_FOLDER} && mv ${OLD_DATA_FOLDER}/gligabao.* ${DATA_FOLDER}/`

/**
 * What a default location may hold: the database and its WAL, the image files, and the sqlite-vec
 * file of a PostgreSQL deployment (any of them is the operator's data).
 */
const filesOf = (folder: string): ReadonlyArray<string> =>
  ["gligabao.db", "gligabao.db-wal", "gligabao.images", "gligabao.vectors.db"].map((name) => `${folder}/${name}`)

export interface DefaultLocation {
  /** the database path to use */
  readonly path: string
  /** files of the old default location (build/) that exist, used or not */
  readonly oldFiles: ReadonlyArray<string>
}

/**
 * The database path when no source sets `database.path`: `data/gligabao.db`, unless nothing of
 * the data folder exists yet and the old default location has files, which then stay in use.
 * `workingDirectory` is what the relative paths are relative to (the process's own by default).
 */
export const defaultLocation = (
  workingDirectory = "."
): Effect.Effect<DefaultLocation, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const existing = (paths: ReadonlyArray<string>) =>
      Effect.filter(paths, (path) => fs.exists(`${workingDirectory}/${path}`).pipe(Effect.orElseSucceed(() => false)))
    const current = yield* existing(filesOf(DATA_FOLDER))
    const old = yield* existing(filesOf(OLD_DATA_FOLDER))
    return { path: current.length === 0 && old.length > 0 ? OLD_DEFAULT_DB_PATH : DEFAULT_DB_PATH, oldFiles: old }
  })

/**
 * What `serve` warns about at startup, or undefined: the old default location's files, either in
 * use (with the command that moves them) or left beside a data folder that is used instead.
 */
export const dataFolderNotice = (config: {
  readonly database: { readonly path: string }
  readonly oldDataFiles: ReadonlyArray<string>
}): string | undefined => {
  const files = config.oldDataFiles
  if (files.length === 0) return undefined
  const [is, it] = files.length === 1 ? ["is", "it"] : ["are", "them"]
  if (config.database.path === OLD_DEFAULT_DB_PATH) {
    return `${files.join(", ")} ${is} used where gligabao kept its data before the data folder: a clean build ` +
      `(rm -rf ${OLD_DATA_FOLDER}) would delete ${it}. Stop the server and move ${it} to ${DATA_FOLDER}/, ` +
      `the default now: ${MOVE_COMMAND}`
  }
  return `${files.join(", ")} ${is} not used: gligabao keeps its data in ${DATA_FOLDER}/ now ` +
    `(${config.database.path}). To use the old files, stop the server and pass --db ${OLD_DEFAULT_DB_PATH}; ` +
    `otherwise back them up (gligabao backup --db ${OLD_DEFAULT_DB_PATH} --to DIR) and remove them`
}
