/**
 * `gligabao dump` and `gligabao load` as an operator uses them, through the real commands, on
 * both dialects: a one-user dump (a GDPR access request) holds nothing of another user; a dump
 * says what it cannot do; a dump piped into a load moves a user; a load beside another user
 * keeps both; a load run again skips what it loaded; a dataset the target
 * holds already is refused by name, not merged; a cut file loads nothing of its last group and
 * the whole file then loads the rest; a newer format is refused, a newer minor one loaded;
 * `--no-vectors` from PostgreSQL into SQLite embeds again, or says what it could not embed.
 */
import Database from "better-sqlite3"
import { Effect, Redacted } from "effect"
import { spawn } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gunzipSync, gzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BIN, runCli } from "../support/cli.js"
import { freshPgUrl, pgSkipReason } from "../support/databases.js"
import { type App, appOf, canonical } from "./compare.js"
import { buildWorld, type Json, type World } from "./world.js"

const reason = pgSkipReason()
if (reason !== null) console.warn(`!!! SKIPPING the transfer scope tests: ${reason}`)
const suite = reason === null ? describe : describe.skip

const linesOf = (file: string): Array<Json> =>
  gunzipSync(readFileSync(file)).toString("utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))

const writeLines = (file: string, lines: ReadonlyArray<Json>, gzip = true) => {
  const text = lines.map((l) => JSON.stringify(l)).join("\n") + "\n"
  writeFileSync(file, gzip ? gzipSync(text) : text)
}

/** A shell command line to its end (a pipe of two gligabao commands). */
const shell = (command: string, env: Readonly<Record<string, string>>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("sh", ["-c", command], {
      env: { GLIGABAO_LOG_LEVEL: "warning", NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    const guard = setTimeout(() => child.kill("SIGKILL"), 120_000)
    child.on("exit", (code) => {
      clearTimeout(guard)
      resolve({ code, stdout, stderr })
    })
  })

const count = (db: string, sql: string): number => {
  const conn = new Database(db, { readonly: true })
  try {
    return Number((conn.prepare(sql).get() as { n: number }).n)
  } finally {
    conn.close()
  }
}

suite("dump and load, scoped, resumed and refused", { timeout: 120_000 }, () => {
  let world: World
  const file = (name: string) => join(world.dir, name)
  const cli = (args: ReadonlyArray<string>, env?: Readonly<Record<string, string>>) =>
    runCli(args, { env: env ?? world.env, timeoutMs: 120_000 })
  const dumpTo = async (name: string, ...args: ReadonlyArray<string>) => {
    const out = await cli(["dump", "--db", world.db, "--image-dir", world.images, "--to", file(name), ...args])
    expect(out.code, out.stderr).toBe(0)
    return file(name)
  }
  const loadInto = async (from: string, target: ReadonlyArray<string>, env?: Readonly<Record<string, string>>) => {
    const out = await cli(["load", "--from", from, ...target], env)
    return { ...out, summary: out.stdout.trim().startsWith("{") ? (JSON.parse(out.stdout) as Json) : undefined }
  }
  const apps: Array<App> = []
  const app = (database: Parameters<typeof appOf>[0], env = world.env) => {
    const made = appOf(database, env, world.dir)
    apps.push(made)
    return made
  }
  let source: App

  beforeAll(async () => {
    world = await buildWorld()
    source = app({ db: world.db, imageDir: world.images })
  }, 300_000)

  afterAll(async () => {
    for (const a of apps) await a.dispose()
    await world?.close()
  })

  it("a user's dump holds that user's data and nothing of another user's", async () => {
    const lines = linesOf(await dumpTo("alice.gz", "--user-id", "alice"))
    expect(lines[0]!.scope).toEqual({ user_id: "alice", dataset: null })
    expect(lines.filter((l) => l.record === "group").map((l) => l.dataset)).toEqual(["main", "work"])
    const text = JSON.stringify(lines)
    expect(text).not.toMatch(/bob|Bob Stone|Hooli/)
    // the soft-deleted dataset of the name is the user's data too
    expect(lines.filter((l) => l.record === "dataset" && l.name === "work").map((l) => l.deleted_at !== null)).toEqual([
      true,
      false
    ])
    // what the user sent: texts, the conversation, the image
    expect(text).toContain("Carla Dias visited Lisbon in 2022.")
    expect(lines.filter((l) => l.record === "image").map((l) => typeof l.data)).toEqual(["string"])
    const one = linesOf(await dumpTo("alice-work.gz", "--user-id", "alice", "--dataset", "work"))
    expect(one.filter((l) => l.record === "group").map((l) => l.dataset)).toEqual(["work"])
    expect(JSON.stringify(one)).not.toContain("Alice Novak lives in Berlin")
  })

  it("a dump says what it cannot do: a dataset named alone or not there, vectors it cannot find", async () => {
    const alone = await cli(["dump", "--db", world.db, "--to", file("x.gz"), "--dataset", "main"])
    expect(alone.code).not.toBe(0)
    expect(alone.stderr).toContain("--dataset needs --user-id")
    const missing = await cli([
      "dump",
      "--db",
      world.db,
      "--to",
      file("x.gz"),
      "--user-id",
      "alice",
      "--dataset",
      "mian"
    ])
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toContain(`"alice" has no dataset "mian"`)
    expect(existsSync(file("x.gz"))).toBe(false)
    // configured for another embedding size than the source's: no vector found, each row said to be unembedded
    const other = await cli(["dump", "--db", world.db, "--to", file("bob-32.gz"), "--user-id", "bob"], {
      ...world.env,
      GLIGABAO_EMBEDDING_DIMENSIONS: "32"
    })
    expect(other.code, other.stderr).toBe(0)
    const summary = JSON.parse(other.stdout)
    expect(summary.vectors_missing).toBe(5)
    expect(summary.warnings[0]).toContain("at 32 dimensions")
    expect(linesOf(file("bob-32.gz")).filter((l) => l.record === "entity").map((l) => l.embedded_at)).toEqual([
      null,
      null,
      null
    ])
  })

  it("a dump piped into a load (--to -, --from -) moves a user", async () => {
    const target = file("piped.db")
    const images = file("piped-images")
    const node = JSON.stringify(process.execPath)
    const bin = JSON.stringify(BIN)
    const command =
      `${node} ${bin} dump --db ${JSON.stringify(world.db)} --image-dir ${JSON.stringify(world.images)} ` +
      `--user-id alice --to - | ${node} ${bin} load --from - --db ${JSON.stringify(target)} ` +
      `--image-dir ${JSON.stringify(images)}`
    const piped = await shell(command, { ...world.env, PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" })
    expect(piped.code, piped.stderr).toBe(0)
    expect(JSON.parse(piped.stdout).loaded.map((g: Json) => g.dataset)).toEqual(["main", "work"])
    // the dump's summary went to stderr, not into the pipe
    expect(piped.stderr).toContain(`"to": "-"`)
    const moved = app({ db: target, imageDir: images })
    expect(canonical(await moved.exportOf("alice", "main"))).toEqual(canonical(await source.exportOf("alice", "main")))
  })

  it("a load beside another user keeps both; run again, it skips what it loaded", async () => {
    const target = file("beside.db")
    const images = file("beside-images")
    const bob = await loadInto(await dumpTo("bob.gz", "--user-id", "bob"), ["--db", target, "--image-dir", images])
    expect(bob.code, bob.stderr).toBe(0)
    const alice = await loadInto(file("alice.gz"), ["--db", target, "--image-dir", images])
    expect(alice.code, alice.stderr).toBe(0)
    expect(alice.summary!.loaded.map((g: Json) => g.dataset)).toEqual(["main", "work"])
    const both = app({ db: target, imageDir: images })
    for (const [user, dataset] of [["alice", "main"], ["alice", "work"], ["bob", "main"]] as const) {
      expect(canonical(await both.exportOf(user, dataset))).toEqual(canonical(await source.exportOf(user, dataset)))
    }
    const rows = () => count(target, "SELECT (SELECT COUNT(*) FROM gb_edges) + (SELECT COUNT(*) FROM gb_datasets) AS n")
    const before = rows()
    const again = await loadInto(file("alice.gz"), ["--db", target, "--image-dir", images])
    expect(again.code, again.stderr).toBe(0)
    expect(again.summary!.loaded).toEqual([])
    expect(again.summary!.skipped.map((g: Json) => g.dataset)).toEqual(["main", "work"])
    expect(rows()).toBe(before)
  })

  it("a dataset the target holds already is refused by name, the others are loaded", async () => {
    const target = file("taken.db")
    const text = file("taken.txt")
    writeFileSync(text, "Zoe Park lives in Oslo in 2020.")
    const taken = await cli(["remember", text, "--user-id", "alice", "--db", target])
    expect(taken.code, taken.stderr).toBe(0)
    const out = await loadInto(file("alice.gz"), ["--db", target, "--image-dir", file("taken-images")])
    expect(out.code).toBe(1)
    expect(out.stderr).toContain(`"alice"'s dataset "main"`)
    expect(out.summary!.refused.map((g: Json) => g.dataset)).toEqual(["main"])
    expect(out.summary!.loaded.map((g: Json) => g.dataset)).toEqual(["work"])
    // nothing merged: alice/main is what it was
    expect(count(target, "SELECT COUNT(*) AS n FROM gb_datasets WHERE user_id = 'alice' AND name = 'main'")).toBe(1)
    expect(
      count(
        target,
        "SELECT COUNT(*) AS n FROM gb_edges e JOIN gb_datasets d ON d.id = e.dataset_id WHERE d.name = 'main'"
      )
    )
      .toBe(1)
  })

  it("a cut file loads nothing of its last group; the whole file then loads the rest", async () => {
    const lines = linesOf(file("alice.gz"))
    const workStart = lines.findIndex((l) => l.record === "group" && l.dataset === "work")
    // cut in the middle of alice/work, written unpacked (a load reads plain JSON lines too)
    writeLines(file("cut.jsonl"), lines.slice(0, workStart + 6), false)
    const target = file("cut.db")
    const cut = await loadInto(file("cut.jsonl"), ["--db", target, "--image-dir", file("cut-images")])
    expect(cut.code).toBe(1)
    expect(cut.stderr).toContain("the dump ends before its end record")
    expect(count(target, "SELECT COUNT(*) AS n FROM gb_datasets WHERE name = 'main'")).toBe(1)
    expect(count(target, "SELECT COUNT(*) AS n FROM gb_datasets WHERE name = 'work'")).toBe(0)
    expect(count(target, "SELECT COUNT(*) AS n FROM gb_remember_runs WHERE dataset = 'work'")).toBe(0)
    const whole = await loadInto(file("alice.gz"), ["--db", target, "--image-dir", file("cut-images")])
    expect(whole.code, whole.stderr).toBe(0)
    expect(whole.summary!.skipped.map((g: Json) => g.dataset)).toEqual(["main"])
    expect(whole.summary!.loaded.map((g: Json) => g.dataset)).toEqual(["work"])
    const resumed = app({ db: target, imageDir: file("cut-images") })
    expect(canonical(await resumed.exportOf("alice", "work"))).toEqual(
      canonical(await source.exportOf("alice", "work"))
    )
  })

  it("a newer major format is refused; a newer minor one loads, its new fields and records left out", async () => {
    const lines = linesOf(file("bob.gz"))
    writeLines(file("v2.gz"), [{ ...lines[0], format_version: "2.0" }, ...lines.slice(1)])
    const refused = await loadInto(file("v2.gz"), ["--db", file("v2.db")])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("the dump is format 2.0")
    expect(refused.stderr).toContain("load it with a newer gligabao")

    const end = lines.length - 1
    const groupEnd = lines.findIndex((l) => l.record === "group_end")
    const newer = [
      { ...lines[0], format_version: "1.9", written_by_the_future: true },
      ...lines.slice(1, groupEnd).map((l) => l.record === "entity" ? { ...l, mood: "cheerful" } : l),
      { record: "entity_mood", entity_id: 1, mood: "cheerful" },
      { ...lines[groupEnd], records: lines[groupEnd]!.records + 1 },
      ...lines.slice(groupEnd + 1, end),
      { ...lines[end], records: lines[end]!.records + 1 }
    ]
    writeLines(file("v1.9.gz"), newer)
    const loaded = await loadInto(file("v1.9.gz"), ["--db", file("v19.db"), "--image-dir", file("v19-images")])
    expect(loaded.code, loaded.stderr).toBe(0)
    expect(loaded.summary!.unknown_records).toEqual({ entity_mood: 1 })
    const bob = app({ db: file("v19.db"), imageDir: file("v19-images") })
    expect(canonical(await bob.exportOf("bob", "main"))).toEqual(canonical(await source.exportOf("bob", "main")))
  })

  it("--no-vectors from PostgreSQL into SQLite: the load embeds again, or says what it could not", async () => {
    const url = Redacted.value(await Effect.runPromise(freshPgUrl))
    const pgImages = file("nv-pg-images")
    const intoPg = await loadInto(file("alice.gz"), ["--database-url", url, "--image-dir", pgImages])
    expect(intoPg.code, intoPg.stderr).toBe(0)
    const dumped = await cli([
      "dump",
      "--database-url",
      url,
      "--image-dir",
      pgImages,
      "--to",
      file("nv.gz"),
      "--no-vectors"
    ])
    expect(dumped.code, dumped.stderr).toBe(0)
    const lines = linesOf(file("nv.gz"))
    expect(lines[0]!.vectors).toMatchObject({ included: false, reason: "dumped with --no-vectors" })
    expect(lines[0]!.source).toEqual({ dialect: "pg", vector_store: "postgres" })
    expect(lines.some((l) => l.record === "vector")).toBe(false)
    expect(lines.filter((l) => l.record === "entity").every((l) => l.embedded_at === null)).toBe(true)

    const target = file("nv.db")
    const images = file("nv-images")
    const out = await loadInto(file("nv.gz"), ["--db", target, "--image-dir", images])
    expect(out.code, out.stderr).toBe(0)
    const entities = lines.filter((l) =>
      l.record === "entity" && l.dataset_id === lines.find((d) =>
          d.record === "dataset" && d.name === "main"
        )!.id
    ).length
    expect(out.summary!.reembedded).toMatchObject({ entities: expect.any(Number), chunks: 5, summaries: 5 })
    expect(out.summary!.reembedded.entities).toBeGreaterThanOrEqual(entities)
    const embedded = app({ db: target, imageDir: images })
    for (const dataset of ["main", "work"]) {
      expect(canonical(await embedded.exportOf("alice", dataset))).toEqual(
        canonical(await source.exportOf("alice", dataset))
      )
    }
    const found = await embedded.search({
      user_id: "alice",
      dataset: "main",
      query: "Alice Novak lives in Paris since 2023"
    })
    expect(found.facts.some((f: Json) => String(f.found_by).split("+").includes("vector"))).toBe(true)
    expect(count(
      target,
      "SELECT COUNT(*) AS n FROM gb_entities WHERE embedded_at IS NULL AND dataset_id IN " +
        "(SELECT id FROM gb_datasets WHERE deleted_at IS NULL)"
    )).toBe(0)

    const bare = await loadInto(file("nv.gz"), ["--db", file("nv-bare.db"), "--image-dir", file("nv-bare-images")], {
      ...world.envWithoutEmbeddings
    })
    expect(bare.code, bare.stderr).toBe(0)
    expect(bare.summary!.reembedded).toBeNull()
    expect(bare.summary!.not_embedded).toContain("no embeddings are configured")
  })
})
