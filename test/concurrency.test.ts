/**
 * Concurrency (issue 13, item 4), end to end with real `gligabao serve` processes:
 *
 * - PostgreSQL: two servers on one database, started together (both migrate at startup),
 *   remember a batch of texts concurrently into one dataset through both.
 * - SQLite: one server on one file at remember.concurrency 16, a concurrent batch over six
 *   (user, dataset) keys.
 *
 * The model is the deterministic fake of layers/testing/FactSentenceModel.ts: a sentence
 * "<Name> <relation> <Name>." is a fact. Texts reuse a few people, organizations and places
 * and repeat facts, so every run reconciles against what the others stored. Afterwards the
 * database must hold each stated entity and fact exactly once, linked to every text that
 * stated it, and every run must have succeeded. No relation used here contradicts another
 * (the fake only contradicts `lives in`), so every fact stays live.
 */
import { SqlClient } from "@effect/sql"
import Database from "better-sqlite3"
import { Effect, Redacted } from "effect"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PgClientLive } from "../layers/sql/Pg.js"
import { answer, factsOf, RELATIONS } from "../layers/testing/FactSentenceModel.js"
import { type SpawnedServer, startServer, tempDir } from "./support/cli.js"
import { freshPgUrl, pgSkipReason } from "./support/databases.js"
import { type FakeAnthropic, startFakeAnthropic } from "./support/fakeAnthropic.js"

const PEOPLE = ["Alice Novak", "Bruno Diaz", "Chen Wei", "Dara Okafor", "Emil Lund", "Farah Aziz"]
const ORGS = ["Acme", "Globex", "Initech"]
const PLACES = ["Berlin", "Lisbon", "Osaka", "Quito"]

/** Every fact sentence the texts draw from: 15 + 18 + 24. Each entity has far fewer than the 50 candidates a run loads. */
const POOL: ReadonlyArray<string> = [
  ...PEOPLE.flatMap((a, i) => PEOPLE.slice(i + 1).map((b) => `${a} knows ${b}.`)),
  ...PEOPLE.flatMap((p) => ORGS.map((o) => `${p} works at ${o}.`)),
  ...PEOPLE.flatMap((p) => PLACES.map((c) => `${p} visited ${c}.`))
]

/** A deterministic generator (LCG), so a failure reproduces. */
const rng = (seed: number) => {
  let state = seed >>> 0
  return (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state % n
  }
}

/**
 * `count` texts of 3 distinct facts each, drawn from a seeded choice of `poolSize` facts of
 * POOL (a small pool makes repeats across texts common), each opened by its own numbered sentence.
 */
const makeTexts = (count: number, poolSize: number, seed: number): Array<string> => {
  const next = rng(seed)
  const pool = [...POOL]
  for (let i = pool.length - 1; i > 0; i--) {
    const j = next(i + 1)
    ;[pool[i], pool[j]] = [pool[j]!, pool[i]!]
  }
  return Array.from({ length: count }, (_, i) => {
    const picked = new Set<string>()
    while (picked.size < 3) picked.add(pool[next(poolSize)]!)
    return `Entry ${seed}-${i} of the notes. ${[...picked].join(" ")}`
  })
}

interface Batch {
  readonly user_id: string
  readonly dataset: string
  readonly text: string
}

const keyOf = (b: { readonly user_id: string; readonly dataset: string }) => `${b.user_id}/${b.dataset}`
const factKey = (key: string, source: string, relation: string, target: string) =>
  `${key}|${source}|${relation.replace(/ /g, "_")}|${target}`

/** What the database must hold: per (user, dataset), the entities and facts the texts state, and the texts stating each fact. */
const expected = (batch: ReadonlyArray<Batch>) => {
  const entities = new Set<string>()
  const factTexts = new Map<string, Array<string>>()
  for (const b of batch) {
    const key = keyOf(b)
    for (const f of factsOf(b.text)) {
      entities.add(`${key}|${f.source}|person`)
      entities.add(`${key}|${f.target}|${RELATIONS[f.relation]}`)
      const k = factKey(key, f.source, f.relation, f.target)
      factTexts.set(k, [...(factTexts.get(k) ?? []), b.text].sort())
    }
  }
  return { entities: [...entities].sort(), factTexts }
}

type Query = (sql: string) => Promise<ReadonlyArray<Record<string, any>>>

const EDGES = `
  FROM gb_edges e
  JOIN gb_entities s ON s.id = e.source_id
  JOIN gb_entities t ON t.id = e.target_id
  JOIN gb_datasets d ON d.id = e.dataset_id`

/** Everything the checks compare, read with plain SQL that both dialects run. */
const snapshot = async (query: Query) => {
  const duplicateEntities = await query(
    `SELECT dataset_id, name_key, type, COUNT(*) AS n FROM gb_entities GROUP BY dataset_id, name_key, type HAVING COUNT(*) > 1`
  )
  const duplicateEdges = await query(
    `SELECT dataset_id, source_id, target_id, relation, description, COUNT(*) AS n FROM gb_edges
     WHERE expired_at IS NULL GROUP BY dataset_id, source_id, target_id, relation, description HAVING COUNT(*) > 1`
  )
  const duplicateDatasets = await query(
    `SELECT user_id, name, COUNT(*) AS n FROM gb_datasets GROUP BY user_id, name HAVING COUNT(*) > 1`
  )
  const entities = (await query(
    `SELECT d.user_id, d.name AS dataset, x.name, x.type FROM gb_entities x JOIN gb_datasets d ON d.id = x.dataset_id`
  )).map((r) => `${r.user_id}/${r.dataset}|${r.name}|${r.type}`).sort()
  const allEdges = await query(
    `SELECT d.user_id, d.name AS dataset, s.name AS source, e.relation, t.name AS target,
            e.expired_at, e.invalid_at ${EDGES}`
  )
  const links = await query(
    `SELECT d.user_id, d.name AS dataset, s.name AS source, e.relation, t.name AS target, a.text
     ${EDGES} JOIN gb_edge_artifacts ea ON ea.edge_id = e.id JOIN gb_artifacts a ON a.id = ea.artifact_id`
  )
  const factTexts = new Map<string, Array<string>>()
  for (const r of links) {
    const k = factKey(`${r.user_id}/${r.dataset}`, r.source, r.relation, r.target)
    factTexts.set(k, [...(factTexts.get(k) ?? []), r.text].sort())
  }
  const runs = await query(`SELECT status, error, instance_id FROM gb_remember_runs`)
  return {
    duplicateEntities,
    duplicateEdges,
    duplicateDatasets,
    entities,
    liveFacts: allEdges
      .filter((r) => r.expired_at === null && r.invalid_at === null)
      .map((r) => factKey(`${r.user_id}/${r.dataset}`, r.source, r.relation, r.target))
      .sort(),
    edgeCount: allEdges.length,
    factTexts,
    runs
  }
}

/** The checks shared by both dialects (each a separate test reading the same snapshot). */
const checks = (get: () => { batch: ReadonlyArray<Batch>; snap: Awaited<ReturnType<typeof snapshot>> }) => {
  it("no two entities share (dataset, name_key, type), and no (user, dataset) has two datasets", () => {
    const { snap } = get()
    expect(snap.duplicateEntities).toEqual([])
    expect(snap.duplicateDatasets).toEqual([])
  })

  it("no two live edges share (source, target, relation, description)", () => {
    expect(get().snap.duplicateEdges).toEqual([])
  })

  it("holds exactly the entities the texts name", () => {
    const { batch, snap } = get()
    expect(snap.entities).toEqual(expected(batch).entities)
  })

  it("no lost facts: every stated fact is live, once, and no other edge exists", () => {
    const { batch, snap } = get()
    const want = [...expected(batch).factTexts.keys()].sort()
    expect(snap.liveFacts).toEqual(want)
    expect(snap.edgeCount).toBe(want.length)
  })

  it("every fact is linked to every text that stated it (repeats merged, not dropped)", () => {
    const { batch, snap } = get()
    expect(Object.fromEntries(snap.factTexts)).toEqual(Object.fromEntries(expected(batch).factTexts))
  })

  it("every run succeeded", () => {
    const { batch, snap } = get()
    expect(snap.runs.filter((r) => r.status !== "succeeded")).toEqual([])
    expect(snap.runs).toHaveLength(batch.length)
  })
}

const remember = async (server: SpawnedServer, body: Batch, signal: AbortSignal) => {
  const res = await fetch(`${server.url}/v1/gb/remember`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal
  })
  return { status: res.status, json: await res.json() }
}

// A guard against a deadlock, not a performance bound: the batches take a few seconds.
const BATCH_DEADLINE_MS = 45_000

const fakeModel = () =>
  startFakeAnthropic({
    text: (request) => answer(request.body).text,
    // runs overlap while they wait for the "model"
    latencyMs: 30
  })

const modelEnv = (fake: FakeAnthropic) => ({ ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: fake.url })

describe.skipIf(pgSkipReason() !== null)("pg: two serve processes remembering into one dataset", () => {
  const batch: Array<Batch> = makeTexts(40, 30, 1).map((text) => ({ user_id: "alice", dataset: "shared", text }))
  let fake: FakeAnthropic
  const servers: Array<SpawnedServer> = []
  let responses: Array<{ status: number; json: unknown }> = []
  let snap: Awaited<ReturnType<typeof snapshot>>
  let url: string

  beforeAll(async () => {
    url = Redacted.value(await Effect.runPromise(freshPgUrl))
    fake = await fakeModel()
    // started together, so both migrate the empty database at once
    const started = await Promise.allSettled(
      [0, 1].map(() => startServer({ env: modelEnv(fake), args: ["--database-url", url] }))
    )
    for (const s of started) if (s.status === "fulfilled") servers.push(s.value)
    for (const s of started) if (s.status === "rejected") throw s.reason

    const signal = AbortSignal.timeout(BATCH_DEADLINE_MS)
    responses = await Promise.all(batch.map((b, i) => remember(servers[i % 2]!, b, signal)))
    snap = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* Effect.promise(() => snapshot((q) => Effect.runPromise(sql.unsafe<Record<string, any>>(q))))
      }).pipe(Effect.scoped, Effect.provide(PgClientLive(Redacted.make(url))))
    )
  }, 120_000)

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
    await fake?.close()
  })

  it("every remember answered 200 (none deadlocked)", () => {
    expect(responses.filter((r) => r.status !== 200)).toEqual([])
    expect(responses).toHaveLength(batch.length)
  })

  it("both processes ran remembers (each its own instance in the run log)", () => {
    expect(new Set(snap.runs.map((r) => r.instance_id)).size).toBe(2)
  })

  checks(() => ({ batch, snap }))

  it("both servers stop cleanly", async () => {
    expect(await Promise.all(servers.map((s) => s.stop()))).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null }
    ])
  })
})

describe("sqlite: one serve process at remember.concurrency 16", () => {
  const keys = ["u1", "u2"].flatMap((user_id) => ["d1", "d2", "d3"].map((dataset) => ({ user_id, dataset })))
  // 8 texts per key, each key with its own draw from the pool
  const batch: Array<Batch> = keys.flatMap((k, i) => makeTexts(8, 12, 100 + i).map((text) => ({ ...k, text })))
  const dir = tempDir("gligabao-concurrency-")
  const dbFile = join(dir.path, "x.db")
  let fake: FakeAnthropic
  let server: SpawnedServer | undefined
  let responses: Array<{ status: number; json: unknown }> = []
  let stopped: unknown
  let snap: Awaited<ReturnType<typeof snapshot>>
  let integrity: unknown
  let foreignKeys: unknown

  beforeAll(async () => {
    fake = await fakeModel()
    server = await startServer({ env: { ...modelEnv(fake), GLIGABAO_REMEMBER_CONCURRENCY: "16" }, db: dbFile })
    const signal = AbortSignal.timeout(BATCH_DEADLINE_MS)
    const s = server
    responses = await Promise.all(batch.map((b) => remember(s, b, signal)))
    stopped = await server.stop()
    const db = new Database(dbFile, { readonly: true, fileMustExist: true })
    try {
      integrity = db.pragma("integrity_check", { simple: true })
      foreignKeys = db.pragma("foreign_key_check")
      snap = await snapshot(async (q) => db.prepare(q).all() as Array<Record<string, any>>)
    } finally {
      db.close()
    }
  }, 120_000)

  afterAll(async () => {
    await server?.stop()
    await fake?.close()
    dir.remove()
  })

  it("every remember answered 200 (none deadlocked), and the server stopped cleanly", () => {
    expect(responses.filter((r) => r.status !== 200)).toEqual([])
    expect(responses).toHaveLength(batch.length)
    expect(stopped).toEqual({ code: 0, signal: null })
  })

  it("the file passes integrity_check and foreign_key_check", () => {
    expect(integrity).toBe("ok")
    expect(foreignKeys).toEqual([])
  })

  checks(() => ({ batch, snap }))
})
