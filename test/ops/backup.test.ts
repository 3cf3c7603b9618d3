/**
 * `gligabao backup` and `gligabao restore` (issue 41, item 2), through the real commands: a
 * backup taken while a server keeps remembering texts and images opens, passes integrity_check,
 * names no image file it lacks, and holds exactly the source's first k writes (its graph export
 * is the source's restricted to those, whatever k the moment of the backup made); restore puts it
 * in a new place that serves it, refuses to replace a database without --force or while a
 * server has it open, and moves what it replaces aside instead of deleting it.
 */
import Database from "better-sqlite3"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as sqliteVec from "sqlite-vec"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCli, type SpawnedServer, startServer, tempDir } from "../support/cli.js"
import { exportGraph, imageBytes, imageOf, remember, startFakeModel, USER } from "./world.js"

type Row = Record<string, any>

let model: Awaited<ReturnType<typeof startFakeModel>>
const dirs: Array<ReturnType<typeof tempDir>> = []
const servers: Array<SpawnedServer> = []
let dir: string

beforeAll(async () => {
  model = await startFakeModel()
  const d = tempDir("gligabao-backup-")
  dirs.push(d)
  dir = d.path
})
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()))
  await model?.fake.close()
  dirs.forEach((d) => d.remove())
})

const serve = async (db: string) => {
  const server = await startServer({ db, env: model.env })
  servers.push(server)
  return server
}

const cli = (args: ReadonlyArray<string>) => runCli(args, { cwd: dir, env: model.env, timeoutMs: 120_000 })

/** Rows of a SQLite file, read with sqlite-vec loaded (the vec0 tables need it). */
const query = (file: string, sql: string): Array<Row> => {
  const db = new Database(file, { fileMustExist: true })
  try {
    db.loadExtension(sqliteVec.getLoadablePath())
    return db.prepare(sql).all() as Array<Row>
  } finally {
    db.close()
  }
}

const EVERYTHING = ["--include-expired", "--as-of", "2100-01-01T00:00:00Z", "--known-at", "2100-01-01T00:00:00Z"]

/** `gligabao export --db FILE` of the test user's main dataset, as exportGraph asks it over HTTP. */
const exportFile = async (file: string): Promise<Row> => {
  const output = join(dir, `export-${Math.random().toString(36).slice(2)}.json`)
  const result = await cli(["export", "--db", file, "--user-id", USER, ...EVERYTHING, "--output", output])
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(readFileSync(output, "utf8"))
}

/** The graph `graph` had when it held only the artifacts `keep`: what a copy of it then would export. */
const restrictTo = (graph: Row, keep: ReadonlySet<number>): Row => {
  const linked = (item: Row) => ({ ...item, artifact_ids: item.artifact_ids.filter((id: number) => keep.has(id)) })
  return {
    ...graph,
    entities: graph.entities.map(linked).filter((e: Row) => e.artifact_ids.length > 0),
    edges: graph.edges.map(linked).filter((e: Row) => e.artifact_ids.length > 0),
    artifacts: graph.artifacts.filter((a: Row) => keep.has(a.id))
  }
}

/** Write i: two facts about person i (organizations recur, so runs reconcile), every third one an image too. */
const write = async (url: string, i: number) => {
  await remember(url, { text: `Note ${i}. P${i} knows P${i + 1}. P${i} works at Org${i % 3}.` })
  if (i % 3 === 0) await remember(url, { image: imageOf(i) })
}

const IMAGE_ROWS =
  `SELECT id, dataset_id, sha256, path, media_type, bytes, valid_at, created_at FROM gb_image_artifacts ORDER BY id`

describe("a backup taken while the server writes", { timeout: 180_000 }, () => {
  let source: SpawnedServer
  let sourceDb: string
  let backupDir: string
  let backupOutput: Row
  let written = 0
  let writtenAtStart = 0
  let sourceGraph: Row
  /** the backup's own export (`gligabao export --db` of its gligabao.db) */
  let backupGraph: Row

  beforeAll(async () => {
    sourceDb = join(dir, "source", "gligabao.db")
    backupDir = join(dir, "backups", "first")
    source = await serve(sourceDb)
    // a reader that keeps its snapshot stops checkpoints there: every write from now on stays in
    // the WAL, so a copy that read the database file alone would miss them
    const reader = new Database(sourceDb, { fileMustExist: true })
    reader.exec("BEGIN")
    reader.prepare("SELECT COUNT(*) FROM gb_artifacts").get()
    for (; written < 6; written++) await write(source.url, written)
    writtenAtStart = written

    // the writes go on for the whole life of the backup process, and a few past it
    let stopAt = Number.POSITIVE_INFINITY
    const writing = (async () => {
      for (; written < stopAt; written++) await write(source.url, written)
    })()
    const backup = await cli(["backup", "--db", sourceDb, "--to", backupDir])
    stopAt = written + 3
    await writing
    reader.exec("COMMIT")
    reader.close()
    expect(backup.code, backup.stderr).toBe(0)
    backupOutput = JSON.parse(backup.stdout)
    sourceGraph = await exportGraph(source.url)
  }, 300_000)

  it("says what it wrote: the folder, the moment, integrity ok, the images; and backup.json says the same", () => {
    expect(backupOutput).toMatchObject({
      backup: backupDir,
      format: "gligabao-backup",
      source: { database: sourceDb, image_dir: join(dir, "source", "gligabao.images") },
      integrity_check: "ok",
      migration: expect.stringMatching(/^\d{4}_/),
      missing_images: []
    })
    expect(readdirSync(backupDir).sort()).toEqual(["backup.json", "gligabao.db", "gligabao.images"])
    const { backup: _, ...manifest } = backupOutput
    expect(JSON.parse(readFileSync(join(backupDir, "backup.json"), "utf8"))).toEqual(manifest)
  })

  it("opens on its own (a single file, no WAL beside it) and passes integrity_check and foreign_key_check", () => {
    const copy = join(backupDir, "gligabao.db")
    expect(query(copy, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }])
    expect(query(copy, "PRAGMA foreign_key_check")).toEqual([])
    expect(query(copy, "PRAGMA journal_mode")).toEqual([{ journal_mode: "delete" }])
  })

  it("holds the source's first k writes exactly, k between the writes before the backup and all of them", async () => {
    const copy = await exportFile(join(backupDir, "gligabao.db"))
    backupGraph = copy
    const k = copy.artifacts.length
    const texts = Array.from(
      { length: written },
      (_, i) => `Note ${i}. P${i} knows P${i + 1}. P${i} works at Org${i % 3}.`
    )
    expect(sourceGraph.artifacts.map((a: Row) => a.text)).toEqual(texts)
    // everything written before the backup started is in it; what was written after it ended is not
    expect(k).toBeGreaterThanOrEqual(writtenAtStart)
    expect(k).toBeLessThan(written)
    expect(copy.artifacts).toEqual(sourceGraph.artifacts.slice(0, k))
    // the graph as the source had it with those k texts: every entity, fact and link, nothing more
    expect(copy).toEqual(restrictTo(sourceGraph, new Set(copy.artifacts.map((a: Row) => a.id))))
  })

  it("names no image file it lacks: its image rows are a prefix of the source's, each file there with its bytes", () => {
    const copy = join(backupDir, "gligabao.db")
    const copied = query(copy, IMAGE_ROWS)
    const all = query(sourceDb, IMAGE_ROWS)
    expect(copied.length).toBeGreaterThan(0)
    expect(copied).toEqual(all.slice(0, copied.length))
    for (const row of copied) {
      const bytes = readFileSync(join(backupDir, "gligabao.images", row.path))
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(row.sha256)
    }
  })

  it("restores into a new place that serves it: the same graph, the images' bytes", async () => {
    const target = join(dir, "restored", "gligabao.db")
    const restore = await cli(["restore", "--from", backupDir, "--db", target])
    expect(restore.code, restore.stderr).toBe(0)
    expect(JSON.parse(restore.stdout)).toMatchObject({
      restored: backupDir,
      database: target,
      image_dir: join(dir, "restored", "gligabao.images"),
      missing_images: [],
      moved_aside: []
    })
    const restored = await serve(target)
    expect(await exportGraph(restored.url)).toEqual(backupGraph)
    for (const row of query(target, IMAGE_ROWS)) {
      const image = await imageBytes(restored.url, row.id)
      expect(image.status).toBe(200)
      expect(createHash("sha256").update(image.bytes).digest("hex")).toBe(row.sha256)
    }
    // and it takes new writes
    await remember(restored.url, { text: "Zed Quux knows Ann Lee." })
    expect(await restored.stop()).toEqual({ code: 0, signal: null })
  })

  it("refuses to restore over a database a server has open, even with --force; the server goes on", async () => {
    const before = await exportGraph(source.url)
    const restore = await cli(["restore", "--from", backupDir, "--db", sourceDb, "--force"])
    expect(restore.code).toBe(1)
    expect(restore.stderr).toContain(`${sourceDb} is open in another process`)
    expect(readdirSync(join(dir, "source")).filter((f) => f.includes("before-restore"))).toEqual([])
    await remember(source.url, { text: "Amy Wu knows Ben Ode." })
    expect((await exportGraph(source.url)).artifacts).toHaveLength(before.artifacts.length + 1)
  })

  it("without --force refuses to replace a database; with it, moves the old files aside (never deletes them)", async () => {
    const final = await exportGraph(source.url)
    expect(await source.stop()).toEqual({ code: 0, signal: null })

    const refused = await cli(["restore", "--from", backupDir, "--db", sourceDb])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("pass --force")
    expect(await exportFile(sourceDb)).toEqual(final)

    const forced = await cli(["restore", "--from", backupDir, "--db", sourceDb, "--force"])
    expect(forced.code, forced.stderr).toBe(0)
    const aside: Array<string> = JSON.parse(forced.stdout).moved_aside
    expect(aside.map((p) => p.replace(/\d{8}T\d{6}Z/, "<time>"))).toEqual([
      join(dir, "source", "gligabao-before-restore-<time>.db"),
      join(dir, "source", "gligabao-before-restore-<time>.images")
    ])
    expect(await exportFile(sourceDb)).toEqual(backupGraph)
    // the replaced database is whole where it was moved: served as it is, it is the final state, images too
    const old = await serve(aside[0]!)
    expect(await exportGraph(old.url)).toEqual(final)
    const lastImage = query(aside[0]!, IMAGE_ROWS).at(-1)!
    expect((await imageBytes(old.url, lastImage.id)).status).toBe(200)
    expect(readdirSync(join(dir, "source", "gligabao.images"))).toEqual(readdirSync(join(backupDir, "gligabao.images")))
    await old.stop()
  })
})

describe("what backup and restore refuse", { timeout: 180_000 }, () => {
  let db: string
  beforeAll(async () => {
    db = join(dir, "small", "gligabao.db")
    const migrate = await cli(["migrate", "--db", db])
    expect(migrate.code, migrate.stderr).toBe(0)
  })

  it("a backup over an existing one without --force (it is left as it was); with --force, it is replaced", async () => {
    const to = join(dir, "backups", "existing")
    mkdirSync(to, { recursive: true })
    writeFileSync(join(to, "keep.txt"), "precious")
    const refused = await cli(["backup", "--db", db, "--to", to])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("exists: pass --force")
    expect(readdirSync(to)).toEqual(["keep.txt"])

    const forced = await cli(["backup", "--db", db, "--to", to, "--force"])
    expect(forced.code, forced.stderr).toBe(0)
    expect(readdirSync(to).sort()).toEqual(["backup.json", "gligabao.db", "gligabao.images"])
    // nothing left beside it
    expect(readdirSync(join(dir, "backups")).filter((f) => f.includes("partial"))).toEqual([])
  })

  it("a database that is not there: nothing is created (a typo makes no empty database)", async () => {
    const typo = join(dir, "dta", "gligabao.db")
    const result = await cli(["backup", "--db", typo, "--to", join(dir, "backups", "typo")])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`there is no SQLite database at ${typo}`)
    expect(existsSync(join(dir, "dta"))).toBe(false)
    expect(existsSync(join(dir, "backups", "typo"))).toBe(false)
  })

  it("a backup into the data it backs up", async () => {
    for (const to of [join(dir, "small"), join(dir, "small", "gligabao.images", "b")]) {
      const result = await cli(["backup", "--db", db, "--to", to, "--force"])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("it holds, or is inside, the data it backs up")
    }
    expect(readdirSync(join(dir, "small"))).toContain("gligabao.db")
  })

  it("a restore from something that is not a backup", async () => {
    const empty = join(dir, "not-a-backup")
    mkdirSync(empty, { recursive: true })
    const result = await cli(["restore", "--from", empty, "--db", join(dir, "r", "x.db")])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("is not a gligabao backup")
    expect(existsSync(join(dir, "r"))).toBe(false)
  })

  it("on PostgreSQL, says to use pg_dump and pg_restore, and where the image files are", async () => {
    const url = "postgresql://gligabao:secret@127.0.0.1:1/gligabao"
    const backup = await cli(["backup", "--database-url", url, "--to", join(dir, "pg"), "--image-dir", "/srv/images"])
    expect(backup.code).toBe(1)
    expect(backup.stderr).toContain("pg_dump --format=custom")
    expect(backup.stderr).toContain("/srv/images")
    const restore = await cli([
      "restore",
      "--database-url",
      url,
      "--from",
      join(dir, "pg"),
      "--image-dir",
      "/srv/images"
    ])
    expect(restore.code).toBe(1)
    expect(restore.stderr).toContain("pg_restore")
    expect(restore.stderr).toContain("/srv/images")
    expect(existsSync(join(dir, "pg"))).toBe(false)
  })
})
