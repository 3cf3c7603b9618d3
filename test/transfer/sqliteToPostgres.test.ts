/**
 * "A SQLite memory loaded into PostgreSQL answers like the original" (issue 41): a memory built
 * by a real server on SQLite (world.ts), dumped by the real `gligabao dump`, loaded by the real
 * `gligabao load` into a fresh PostgreSQL database; then both are read by the same programs:
 * exports with expired facts equal up to ids, searches with the same facts, the same answers
 * as of earlier `known_at`s, the run log and its costs, the image, and a forget that reopens
 * the same facts on both.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PgLive } from "../../layers/sql/index.js"
import { runCli } from "../support/cli.js"
import { freshPgUrl, pgSkipReason } from "../support/databases.js"
import { type App, appOf, canonical, entitiesSaid, factsSaid } from "./compare.js"
import { buildWorld, type Json, type World } from "./world.js"

const reason = pgSkipReason()
if (reason !== null) console.warn(`!!! SKIPPING the SQLite to PostgreSQL transfer test: ${reason}`)
const suite = reason === null ? describe : describe.skip

const linesOf = (file: string): Array<Json> =>
  gunzipSync(readFileSync(file)).toString("utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))

suite("a SQLite memory dumped and loaded into PostgreSQL", { timeout: 120_000 }, () => {
  let world: World
  let source: App
  let target: App
  let dumpFile: string
  let loaded: Json
  let pgUrl: string

  beforeAll(async () => {
    world = await buildWorld()
    dumpFile = join(world.dir, "all.gz")
    const dumped = await runCli(["dump", "--db", world.db, "--image-dir", world.images, "--to", dumpFile], {
      env: world.env
    })
    expect(dumped.code, dumped.stderr).toBe(0)
    const url = Redacted.value(await Effect.runPromise(freshPgUrl))
    // an empty database whose ids start far from the source's: answers equal up to ids cannot
    // come from ids that happen to be equal
    await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tables = yield* sql<{ name: string }>`SELECT table_name AS name FROM information_schema.columns
          WHERE column_name = 'id' AND column_default LIKE 'nextval%' AND table_name LIKE 'gb_%'`
        for (const { name } of tables) {
          yield* sql.unsafe(`SELECT setval(pg_get_serial_sequence('${name}', 'id'), 1000 + ${name.length})`)
        }
      }).pipe(Effect.provide(PgLive(Redacted.make(url))), Effect.scoped, Effect.orDie)
    )
    const targetImages = join(world.dir, "pg-images")
    const load = await runCli(["load", "--from", dumpFile, "--database-url", url, "--image-dir", targetImages], {
      env: world.env
    })
    expect(load.code, load.stderr).toBe(0)
    loaded = JSON.parse(load.stdout)
    pgUrl = url
    source = appOf({ db: world.db, imageDir: world.images }, world.env, world.dir)
    target = appOf({ databaseUrl: url, imageDir: targetImages }, world.env, world.dir)
  }, 300_000)

  afterAll(async () => {
    await source?.dispose()
    await target?.dispose()
    await world?.close()
  })

  it("the dump is versioned, and the load says what it loaded, with no model call", async () => {
    const lines = linesOf(dumpFile)
    expect(lines[0]).toMatchObject({ record: "header", format: "gligabao-dump", format_version: "1.0" })
    expect(lines.at(-1)).toMatchObject({ record: "end", groups: 3 })
    expect(loaded.loaded.map((g: Json) => `${g.user_id}/${g.dataset}`)).toEqual([
      "alice/main",
      "alice/work",
      "bob/main"
    ])
    expect(loaded.refused).toEqual([])
    expect(loaded.vectors).toEqual({ included: true, reason: null })
    expect(loaded.reembedded).toBeNull()
    expect(loaded.images).toEqual({ written: 1, missing: 0 })
    // the model calls (the cost history) are the source's, none was added
    const totals = async (app: App) =>
      (await app.query(`SELECT stage, COUNT(*) AS calls, SUM(input_tokens) AS input, SUM(cost_usd) AS cost
        FROM gb_inferences GROUP BY stage ORDER BY stage`)).map((r) => ({
        ...r,
        calls: Number(r.calls),
        input: Number(r.input),
        cost: Number(Number(r.cost).toFixed(9))
      }))
    expect((await totals(source)).length).toBeGreaterThan(2)
    expect(await totals(target)).toEqual(await totals(source))
  })

  it("the exports (include_expired) are equal up to ids", async () => {
    for (const [user, dataset] of [["alice", "main"], ["alice", "work"], ["bob", "main"]] as const) {
      const before = canonical(await source.exportOf(user, dataset))
      expect(before.edges.length).toBeGreaterThan(0)
      expect(canonical(await target.exportOf(user, dataset))).toEqual(before)
    }
    const alice = await target.exportOf("alice", "main")
    // a fact closed by a later one, one closed by hand, one whose start is unknown
    expect(alice.edges.filter((e: Json) => e.expired_at !== undefined).map((e: Json) => e.description).sort()).toEqual([
      "Alice Novak lives in Berlin since 2020",
      "Bruno Costa knows Alice Novak since 2022"
    ])
    expect(alice.edges.some((e: Json) => e.valid_at === null)).toBe(true)
  })

  it("search answers the same facts, by words and by vector", async () => {
    for (const query of ["Alice Novak", "Where does Alice live?", "Carla Dias Lisbon", "Zeta Labs", "Porto"]) {
      const body = { user_id: "alice", dataset: "main", query, include_expired: true }
      const [a, b] = [await source.search(body), await target.search(body)]
      expect(a.facts.length, query).toBeGreaterThan(0)
      expect(factsSaid(b), query).toEqual(factsSaid(a))
      expect(entitiesSaid(b), query).toEqual(entitiesSaid(a))
    }
    // the caller's metadata came along, and filters as it did
    const filtered = {
      user_id: "alice",
      dataset: "main",
      query: "Alice Novak",
      filters: { metadata: { source: "email" } }
    }
    const [x, y] = [await source.search(filtered), await target.search(filtered)]
    expect(factsSaid(x).length).toBeGreaterThan(0)
    expect(factsSaid(y)).toEqual(factsSaid(x))
    // the vectors came along: PostgreSQL finds facts by vector
    const found = await target.search({
      user_id: "alice",
      dataset: "main",
      query: "Alice Novak lives in Paris since 2023"
    })
    expect(found.facts.some((f: Json) => String(f.found_by).split("+").includes("vector"))).toBe(true)
  })

  it("known_at queries give the same answers", async () => {
    for (const knownAt of world.knownAt) {
      const body = { user_id: "alice", dataset: "main", query: "Alice Novak", known_at: knownAt, include_expired: true }
      expect(factsSaid(await target.search(body)), knownAt).toEqual(factsSaid(await source.search(body)))
      expect(canonical(await target.exportOf("alice", "main", { known_at: knownAt })), knownAt).toEqual(
        canonical(await source.exportOf("alice", "main", { known_at: knownAt }))
      )
    }
    // before the second text, Berlin was where Alice lived
    const early = await target.search({
      user_id: "alice",
      dataset: "main",
      query: "Alice lives",
      known_at: world.knownAt[0]
    })
    expect(factsSaid(early).some((f) => f.includes("Berlin"))).toBe(true)
    expect(factsSaid(early).some((f) => f.includes("Paris"))).toBe(false)
  })

  it("the run log came along, its ids the target's", async () => {
    const runs = async (app: App) => (await app.query(`SELECT r.id, r.user_id, r.dataset, r.status, r.response, a.text
        FROM gb_remember_runs r LEFT JOIN gb_artifacts a ON a.id = r.artifact_id ORDER BY r.id`))
    const [before, after] = [await runs(source), await runs(target)]
    expect(after.map((r) => [r.user_id, r.dataset, r.status, r.text])).toEqual(
      before.map((r) => [r.user_id, r.dataset, r.status, r.text])
    )
    // a response names the target's rows: its run, its artifact and its facts
    for (const run of after.filter((r) => r.response !== null)) {
      const response = JSON.parse(run.response)
      expect(response.remember_run_id).toBe(Number(run.id))
      for (const edge of response.edges ?? []) {
        const [row] = await target.query(`SELECT description FROM gb_edges WHERE id = ${Number(edge.id)}`)
        expect(row?.description).toBe(edge.description)
      }
    }
  })

  it("the image came along: its row, its extraction and its file under the new dataset", async () => {
    const [image] = await target.query(`SELECT i.path, i.sha256, d.id AS dataset_id FROM gb_image_artifacts i
      JOIN gb_datasets d ON d.id = i.dataset_id`)
    expect(String(image!.path)).toBe(`${Number(image!.dataset_id)}/${image!.sha256}.png`)
    const [source_image] = await source.query(`SELECT path FROM gb_image_artifacts`)
    expect(readFileSync(join(world.dir, "pg-images", String(image!.path)))).toEqual(
      readFileSync(join(world.images, String(source_image!.path)))
    )
    const [blocks] = await target.query(`SELECT COUNT(*) AS n FROM gb_image_text_blocks`)
    expect(Number(blocks!.n)).toBe(2)
  })

  it("and back: dumped from PostgreSQL with its vectors, loaded into SQLite, it answers the same", async () => {
    const back = join(world.dir, "back.gz")
    const images = join(world.dir, "back-images")
    const dumped = await runCli(
      ["dump", "--database-url", pgUrl, "--image-dir", join(world.dir, "pg-images"), "--to", back],
      { env: world.env }
    )
    expect(dumped.code, dumped.stderr).toBe(0)
    expect(linesOf(back).filter((l) => l.record === "vector").length).toBe(
      linesOf(dumpFile).filter((l) => l.record === "vector").length
    )
    const db = join(world.dir, "back.db")
    const load = await runCli(["load", "--from", back, "--db", db, "--image-dir", images], { env: world.env })
    expect(load.code, load.stderr).toBe(0)
    const again = appOf({ db, imageDir: images }, world.env, world.dir)
    try {
      expect(canonical(await again.exportOf("alice", "main"))).toEqual(
        canonical(await source.exportOf("alice", "main"))
      )
      const body = { user_id: "alice", dataset: "main", query: "Alice Novak lives in Paris since 2023" }
      const [a, b] = [await source.search(body), await again.search(body)]
      expect(factsSaid(b)).toEqual(factsSaid(a))
      const byVector = (answer: Json) =>
        answer.facts.filter((f: Json) => String(f.found_by).split("+").includes("vector")).map((f: Json) =>
          f.description
        )
      expect(byVector(b).length).toBeGreaterThan(0)
      expect(byVector(b).sort()).toEqual(byVector(a).sort())
    } finally {
      await again.dispose()
    }
  })

  it("forgetting an artifact reopens the same facts on both", async () => {
    // the second text closed Berlin: forgetting it reopens Berlin
    const idOf = async (app: App) =>
      Number((await app.query(`SELECT id FROM gb_artifacts WHERE text LIKE 'Alice Novak lives in Paris%'`))[0]!.id)
    const description = async (app: App, ids: ReadonlyArray<number>) =>
      ids.length === 0
        ? []
        : (await app.query(`SELECT description FROM gb_edges WHERE id IN (${ids.join(",")}) ORDER BY description`))
          .map((r) => r.description)
    const [a, b] = [
      await source.forget({ user_id: "alice", dataset: "main", artifact_id: await idOf(source) }),
      await target.forget({ user_id: "alice", dataset: "main", artifact_id: await idOf(target) })
    ]
    expect(b.deleted).toEqual(a.deleted)
    expect(await description(target, b.reopened_facts)).toEqual(await description(source, a.reopened_facts))
    expect(await description(target, b.reopened_facts)).toEqual(["Alice Novak lives in Berlin since 2020"])
    expect(canonical(await target.exportOf("alice", "main"))).toEqual(canonical(await source.exportOf("alice", "main")))
  })
})
