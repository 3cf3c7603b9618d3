/**
 * ImageStore on the local file system: files under one directory, by relative path
 * (`<dataset id>/<sha256>.<ext>`). Directories are created on the first write. A write goes to
 * a temporary file in the target's directory and is renamed into place, so a reader never
 * sees a half-written image and a crash leaves at most a stray temp file.
 */
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { access, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { dirname, isAbsolute, join, normalize, sep } from "node:path"
import { ImageStore, ImageStoreFailed } from "../../src/services/ImageStore.js"

const reason = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** `path` inside `root`; a path that is absolute or climbs out (`..`) is refused. */
const resolveIn = (root: string, path: string): Effect.Effect<string, ImageStoreFailed> => {
  const rel = normalize(path)
  if (path === "" || isAbsolute(path) || rel === ".." || rel.startsWith(`..${sep}`)) {
    return Effect.fail(
      new ImageStoreFailed({ message: `image path ${JSON.stringify(path)} is not inside the image directory` })
    )
  }
  return Effect.succeed(join(root, rel))
}

const attempt = <A>(what: string, path: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (e) => new ImageStoreFailed({ message: `could not ${what} image file ${path}: ${reason(e)}` })
  })

const existsAt = (file: string) => Effect.promise(() => access(file).then(() => true, () => false))

export const makeLocalImageStore = (root: string) => {
  const exists = (path: string) => Effect.flatMap(resolveIn(root, path), existsAt)

  const write = (path: string, bytes: Uint8Array) =>
    Effect.gen(function*() {
      const file = yield* resolveIn(root, path)
      // the name is the content's hash: a file already there holds these very bytes
      if (yield* existsAt(file)) return false
      const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`
      yield* attempt("write", path, async () => {
        await mkdir(dirname(file), { recursive: true })
        try {
          await writeFile(temp, bytes, { flag: "wx" })
          await rename(temp, file)
        } catch (e) {
          await rm(temp, { force: true })
          throw e
        }
      })
      return true
    })

  const read = (path: string) =>
    Effect.flatMap(
      resolveIn(root, path),
      (file) => attempt("read", path, async () => new Uint8Array(await readFile(file)))
    )

  const remove = (path: string) =>
    Effect.flatMap(resolveIn(root, path), (file) => attempt("remove", path, () => rm(file, { force: true })))

  return ImageStore.of({ write, exists, read, remove })
}

/** Image files under `directory` (created when the first image is stored). */
export const LocalImageStoreLive = (directory: string): Layer.Layer<ImageStore> =>
  Layer.sync(ImageStore, () => makeLocalImageStore(directory))
