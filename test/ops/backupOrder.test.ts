/**
 * The order of a backup (src/backup/backup.ts; docs/DECISIONS.md, issue 41): the database first,
 * the image files after it, then a check that every file the copied rows name was copied, and
 * the backup taken again when a forget removed one in between. The image directory is real; the
 * database is a stand-in (SqliteFiles faked: its "copy" is the list of image paths the rows name
 * at that moment), so each race happens exactly where the test puts it.
 */
import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { backupSqlite } from "../../src/backup/backup.js"
import { SqliteFiles } from "../../src/services/SqliteFiles.js"

/**
 * A stand-in database: `rows()` are the image paths it names; `beforeSnapshot` and `afterSnapshot`
 * run just before and just after the copy is taken (the attempt counts from 1).
 */
const fakeFiles = (world: {
  rows: () => ReadonlyArray<string>
  beforeSnapshot?: (attempt: number) => void
  afterSnapshot?: (attempt: number) => void
}) => {
  let attempts = 0
  const layer = Layer.succeed(
    SqliteFiles,
    SqliteFiles.of({
      copy: (_source, destination) =>
        Effect.sync(() => {
          attempts++
          world.beforeSnapshot?.(attempts)
          writeFileSync(destination, JSON.stringify(world.rows()))
          world.afterSnapshot?.(attempts)
        }),
      inspect: (file) =>
        Effect.sync(() => ({
          integrity: "ok",
          migration: "0001_init",
          imagePaths: JSON.parse(readFileSync(file, "utf8")) as Array<string>
        })),
      inUse: () => Effect.succeed(false)
    })
  )
  return { layer, attempts: () => attempts }
}

const scratch = Effect.flatMap(
  FileSystem.FileSystem,
  (fs) => Effect.orDie(fs.makeTempDirectoryScoped({ prefix: "gligabao-backup-order-" }))
)

const put = (root: string, path: string) => {
  mkdirSync(join(root, path, ".."), { recursive: true })
  writeFileSync(join(root, path), path)
}

layer(NodeContext.layer)("backupSqlite's order", (it) => {
  const setUp = Effect.map(scratch, (dir) => {
    const images = join(dir, "data", "gligabao.images")
    writeFileSync(join(dir, "db"), "")
    put(images, "1/a.png")
    return { dir, images, source: { database: join(dir, "db"), imageDir: images }, to: join(dir, "backup") }
  })

  it.scoped("an image written, and its row committed, just before the snapshot is in the backup", () =>
    Effect.gen(function*() {
      const { images, source, to } = yield* setUp
      const rows = ["1/a.png"]
      // a remember writes its file, then commits its row: the snapshot sees the row
      const files = fakeFiles({
        rows: () => rows,
        beforeSnapshot: () => {
          put(images, "1/b.png")
          rows.push("1/b.png")
        }
      })
      const result = yield* backupSqlite(source, to, { force: false, version: "test" }).pipe(
        Effect.provide(files.layer)
      )
      expect(result.missing_images).toEqual([])
      expect(result.images).toBe(2)
      expect(readdirSync(join(to, "gligabao.images", "1")).sort()).toEqual(["a.png", "b.png"])
      expect(files.attempts()).toBe(1)
    }))

  it.scoped("a file a forget removes right after the snapshot: the backup is taken again, and names it no more", () =>
    Effect.gen(function*() {
      const { images, source, to } = yield* setUp
      let rows = ["1/a.png"]
      const files = fakeFiles({
        rows: () => rows,
        // a forget commits right after the first snapshot, then removes the file, before the images are copied
        afterSnapshot: (attempt) => {
          if (attempt !== 1) return
          rows = []
          rmSync(join(images, "1/a.png"))
        }
      })
      const result = yield* backupSqlite(source, to, { force: false, version: "test" }).pipe(
        Effect.provide(files.layer)
      )
      expect(files.attempts()).toBe(2)
      expect(result.missing_images).toEqual([])
      expect(JSON.parse(readFileSync(join(to, "gligabao.db"), "utf8"))).toEqual([])
    }))

  it.scoped("a file the source lacks for good is reported, after three attempts, and the backup is made", () =>
    Effect.gen(function*() {
      const { source, to } = yield* setUp
      const files = fakeFiles({ rows: () => ["1/a.png", "1/gone.png"] })
      const result = yield* backupSqlite(source, to, { force: false, version: "test" }).pipe(
        Effect.provide(files.layer)
      )
      expect(files.attempts()).toBe(3)
      expect(result.missing_images).toEqual(["1/gone.png"])
      expect(JSON.parse(readFileSync(join(to, "backup.json"), "utf8")).missing_images).toEqual(["1/gone.png"])
    }))

  it.scoped("a write in progress (a .tmp file) is not copied", () =>
    Effect.gen(function*() {
      const { images, source, to } = yield* setUp
      put(images, "1/c.png.1a2b3c.tmp")
      const files = fakeFiles({ rows: () => ["1/a.png"] })
      const result = yield* backupSqlite(source, to, { force: false, version: "test" }).pipe(
        Effect.provide(files.layer)
      )
      expect(result.images).toBe(1)
      expect(readdirSync(join(to, "gligabao.images", "1"))).toEqual(["a.png"])
    }))
})
