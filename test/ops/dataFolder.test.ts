/**
 * The data folder (issue 41, item 1): with no database configured, `gligabao serve` keeps its
 * database in data/gligabao.db and its images in data/gligabao.images of the working directory,
 * so `rm -rf build` after a default start loses nothing; a build/gligabao.db from before is kept
 * in use (never moved for the operator), and the startup says where it is and how to move it.
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Option } from "effect"
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AppConfig, loadConfig } from "../../src/Config.js"
import { dataFolderNotice, MOVE_COMMAND } from "../../src/config/dataFolder.js"
import { BIN, startServer, tempDir } from "../support/cli.js"
import type { FakeAnthropic } from "../support/fakeAnthropic.js"
import { exportGraph, imageBytes, imageOf, remember, startFakeModel } from "./world.js"

const ROOT = join(BIN, "..", "..")
const dirs: Array<ReturnType<typeof tempDir>> = []
const workingDirectory = () => {
  const dir = tempDir("gligabao-data-folder-")
  dirs.push(dir)
  return dir.path
}
afterAll(() => dirs.forEach((d) => d.remove()))

const touch = (dir: string, path: string, folder = false) => {
  const full = join(dir, path)
  if (folder) return mkdirSync(full, { recursive: true })
  mkdirSync(join(full, ".."), { recursive: true })
  writeFileSync(full, "")
}

/** The configuration as read in `dir`, with `env` and no configuration file. */
const configIn = (dir: string, env: Record<string, string> = {}): Promise<AppConfig> =>
  Effect.runPromise(
    loadConfig({}, env, { defaultPath: join(dir, "none.toml"), workingDirectory: dir }).pipe(
      Effect.provide(NodeContext.layer)
    )
  )

describe("the default location (loadConfig)", () => {
  it("is data/gligabao.db, its images data/gligabao.images, with nothing to say", async () => {
    const config = await configIn(workingDirectory())
    expect([config.database.path, config.imageDir, config.oldDataFiles]).toEqual([
      "data/gligabao.db",
      "data/gligabao.images",
      []
    ])
    expect(dataFolderNotice(config)).toBeUndefined()
  })

  it("stays build/gligabao.db while only build/ has gligabao's files, and says how to move them", async () => {
    const dir = workingDirectory()
    touch(dir, "build/gligabao.db")
    touch(dir, "build/gligabao.images", true)
    touch(dir, "build/dist/index.js")
    const config = await configIn(dir)
    expect([config.database.path, config.imageDir]).toEqual(["build/gligabao.db", "build/gligabao.images"])
    expect(config.oldDataFiles).toEqual(["build/gligabao.db", "build/gligabao.images"])
    const notice = dataFolderNotice(config)!
    expect(notice).toContain("build/gligabao.db, build/gligabao.images are used")
    expect(notice).toContain("rm -rf build")
    expect(notice.endsWith(MOVE_COMMAND)).toBe(true)
  })

  it("on PostgreSQL, build/'s image directory (or vector file) alone keeps build/ in use", async () => {
    const dir = workingDirectory()
    touch(dir, "build/gligabao.images", true)
    const config = await configIn(dir, { DATABASE_URL: "postgresql://u:p@127.0.0.1:1/db" })
    expect(Option.isSome(config.database.url)).toBe(true)
    expect(config.imageDir).toBe("build/gligabao.images")
    expect(dataFolderNotice(config)).toContain("build/gligabao.images is used")
  })

  it("is data/ once it has anything of gligabao's, and says build/'s files are not used", async () => {
    const dir = workingDirectory()
    touch(dir, "build/gligabao.db")
    touch(dir, "data/gligabao.db")
    const config = await configIn(dir)
    expect(config.database.path).toBe("data/gligabao.db")
    const notice = dataFolderNotice(config)!
    expect(notice).toContain("build/gligabao.db is not used")
    expect(notice).not.toContain(MOVE_COMMAND)
  })

  it("a configured database is used as it is: nothing looked for, nothing said", async () => {
    const dir = workingDirectory()
    touch(dir, "build/gligabao.db")
    const config = await configIn(dir, { GLIGABAO_DB: "elsewhere/my.db" })
    expect([config.database.path, config.imageDir, config.oldDataFiles]).toEqual([
      "elsewhere/my.db",
      "elsewhere/my.images",
      []
    ])
    expect(dataFolderNotice(config)).toBeUndefined()
  })
})

describe("gligabao serve without a database configured", { timeout: 120_000 }, () => {
  let model: Awaited<ReturnType<typeof startFakeModel>>
  let fake: FakeAnthropic
  beforeAll(async () => {
    model = await startFakeModel()
    fake = model.fake
  })
  afterAll(() => fake?.close())

  /** `serve` in `cwd` with no --db; stopped once `use` is done. */
  const serving = async <A>(cwd: string, use: (url: string, output: () => string) => Promise<A>, db?: string) => {
    const server = await startServer({ cwd, env: model.env, db: db ?? null })
    try {
      return await use(server.url, server.output)
    } finally {
      expect(await server.stop()).toEqual({ code: 0, signal: null })
    }
  }

  const factsOf = (graph: any) => graph.edges.map((e: any) => e.description).sort()

  it("keeps the database and its images in data/: rm -rf build after it loses nothing", async () => {
    const cwd = workingDirectory()
    touch(cwd, "build/dist/src/cli/main.js")
    const stored = await serving(cwd, async (url, output) => {
      await remember(url, { text: "Alice Novak works at Acme in 2020." })
      const image = await remember(url, { image: imageOf(1) })
      expect(output()).not.toContain("build/")
      return { graph: await exportGraph(url), image: image.image_artifact_id as number }
    })
    expect(factsOf(stored.graph)).toEqual(["Alice Novak works at Acme since 2020"])
    expect(existsSync(join(cwd, "data", "gligabao.db"))).toBe(true)
    expect(readdirSync(join(cwd, "data", "gligabao.images"))).toHaveLength(1)
    expect(readdirSync(join(cwd, "build"))).toEqual(["dist"])

    rmSync(join(cwd, "build"), { recursive: true, force: true })
    await serving(cwd, async (url) => {
      expect(await exportGraph(url)).toEqual(stored.graph)
      const image = await imageBytes(url, stored.image)
      expect(image.status).toBe(200)
      expect(image.bytes).toEqual(Buffer.from(imageOf(1), "base64"))
    })
  })

  it("keeps using an existing build/gligabao.db, says where it is and how to move it; after the move, data/ is used", async () => {
    const cwd = workingDirectory()
    // a deployment of before the data folder: its database and images in build/
    const before = await serving(cwd, async (url) => {
      await remember(url, { text: "Bob Stone knows Carol Reed." })
      const image = await remember(url, { image: imageOf(2) })
      return { graph: await exportGraph(url), image: image.image_artifact_id as number }
    }, "build/gligabao.db")
    expect(existsSync(join(cwd, "build", "gligabao.images"))).toBe(true)

    const notice = await serving(cwd, async (url, output) => {
      expect(await exportGraph(url)).toEqual(before.graph)
      expect((await imageBytes(url, before.image)).status).toBe(200)
      return output()
    })
    expect(notice).toContain("build/gligabao.db, build/gligabao.images are used")
    expect(existsSync(join(cwd, "data"))).toBe(false)
    expect(existsSync(join(cwd, "build", "gligabao.db"))).toBe(true)

    // the command exactly as the startup wrote it
    const command = notice.slice(notice.indexOf("the default now: ") + "the default now: ".length).split("\n")[0]!
      .trim()
    expect(command).toBe(MOVE_COMMAND)
    execFileSync("sh", ["-c", command], { cwd })
    rmSync(join(cwd, "build"), { recursive: true, force: true })

    await serving(cwd, async (url, output) => {
      expect(await exportGraph(url)).toEqual(before.graph)
      const image = await imageBytes(url, before.image)
      expect(image.status).toBe(200)
      expect(image.bytes).toEqual(Buffer.from(imageOf(2), "base64"))
      expect(output()).not.toContain("build/")
    })
  })
})

describe("the repository", () => {
  it("git ignores data/ at its root", () => {
    const paths = ["data/gligabao.db", "data/gligabao.db-wal", "data/gligabao.images/1/x.png"]
    const ignored = execFileSync("git", ["check-ignore", "--no-index", ...paths], { cwd: ROOT, encoding: "utf8" })
    expect(ignored.split("\n").filter((line) => line !== "")).toEqual(paths)
    // and only there: a folder named data elsewhere is source
    expect(() => execFileSync("git", ["check-ignore", "--no-index", "-q", "test/data/x.ts"], { cwd: ROOT })).toThrow()
  })
})
