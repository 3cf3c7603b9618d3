/**
 * The durable remember queue under SIGKILL (issue 21), end to end with real `gligabao serve`
 * processes and the deterministic fake model (layers/testing/FactSentenceModel.ts: a sentence
 * "<Name> <relation> <Name>." is a fact), answered with a little latency so runs are in flight
 * when a process dies. See docs/INGESTION.md.
 *
 * 1. SQLite (a file) and PostgreSQL: a batch of short items (`wait: false`, each with an
 *    idempotency key) into one dataset; the server is SIGKILLed three times at random points of
 *    the batch's progress and restarted each time (the dead process's heartbeats aged, so the
 *    restart takes its runs over at once), and the same batch is submitted again after each
 *    restart (the keys give the same runs). At the end: every item has one run, succeeded, or
 *    failed `interrupted` when it was killed after its commit; every text is stored exactly once;
 *    no duplicate entity or live fact; every stated fact live; the runs of the dataset started in
 *    id order; on SQLite integrity_check and foreign_key_check are clean.
 * 2. PostgreSQL, two processes on one database: a batch submitted to A, A SIGKILLed mid-way,
 *    its heartbeat aged; B (running all along) takes A's runs over after its next beat and runs
 *    them, in order, with the same checks.
 */
import { SqlClient } from "@effect/sql"
import Database from "better-sqlite3"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { join } from "node:path"
import * as sqliteVec from "sqlite-vec"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PgClientLive } from "../../layers/sql/Pg.js"
import { answer, factsOf } from "../../layers/testing/FactSentenceModel.js"
import { type SpawnedServer, startServer, tempDir } from "../support/cli.js"
import { freshPgUrl, pgSkipReason } from "../support/databases.js"
import { startFakeAnthropic } from "../support/fakeAnthropic.js"
import { startFakeOpenAi } from "../support/fakeOpenAi.js"

type Row = Record<string, any>
type Query = (sql: string) => Promise<ReadonlyArray<Row>>

interface Db {
  readonly query: Query
  /** arguments of `serve` that select this database */
  readonly args: ReadonlyArray<string>
  /** a SQLite file, for its pragmas */
  readonly file?: string
  readonly close: () => Promise<void>
}

const sqliteDb = (file: string): Db => ({
  file,
  args: [],
  query: async (q) => {
    const db = new Database(file, { fileMustExist: true })
    try {
      db.loadExtension(sqliteVec.getLoadablePath())
      db.pragma("busy_timeout = 5000")
      const statement = db.prepare(q)
      return statement.reader ? (statement.all() as Array<Row>) : (statement.run(), [])
    } finally {
      db.close()
    }
  },
  close: async () => {}
})

const pgDb = async (): Promise<Db> => {
  const url = Redacted.value(await Effect.runPromise(freshPgUrl))
  const runtime = ManagedRuntime.make(PgClientLive(Redacted.make(url)))
  return {
    args: ["--database-url", url],
    query: (q) => runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Row>(q))),
    close: () => runtime.dispose()
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it is truthy or `deadlineMs` passes (a guard against a hang, not a timing claim). */
const until = async (check: () => Promise<boolean>, deadlineMs: number, what: string): Promise<void> => {
  const end = Date.now() + deadlineMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`)
    await sleep(25)
  }
}

/** A deterministic generator (LCG), so a failure reproduces from its printed seed. */
const rng = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

/** Short items; consecutive ones share a person and a few organizations recur, so runs reconcile. */
const itemsOf = (count: number, tag: string) =>
  Array.from({ length: count }, (_, i) => ({
    text: `Note ${tag} ${i}. P${i} knows P${i + 1}. P${i} works at Org${i % 7}.`,
    idempotency_key: `${tag}-${i}`
  }))

const submit = async (server: SpawnedServer, body: Row): Promise<Array<number>> => {
  const res = await fetch(`${server.url}/v1/gb/remember/batch`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...body, wait: false }),
    signal: AbortSignal.timeout(30_000)
  })
  const json = (await res.json()) as Row
  if (res.status !== 202) throw new Error(`batch answered ${res.status}: ${JSON.stringify(json)}`)
  return (json.runs as Array<Row>).map((r) => Number(r.remember_run_id))
}

const count = async (db: Db, where: string) =>
  Number((await db.query(`SELECT COUNT(*) AS n FROM gb_remember_runs WHERE ${where}`))[0]!.n)

const unfinished = (db: Db) => count(db, "status IN ('queued', 'started')")
const finished = (db: Db) => count(db, "status IN ('succeeded', 'failed')")

const kill = async (server: SpawnedServer) => {
  server.child.kill("SIGKILL")
  return server.exited
}

const factKey = (source: string, relation: string, target: string) =>
  `${source}|${relation.replace(/ /g, "_")}|${target}`

interface RunRow {
  readonly id: number
  readonly status: string
  readonly error: string | null
  readonly attempts: number
  readonly instance_id: string
  /** an ISO string (SQLite) or a Date (PostgreSQL), or null */
  readonly started_at: string | Date | null
  readonly finished_at: string | Date | null
}

/** Everything the end checks compare, in plain SQL that both dialects run. */
const snapshot = async (db: Db) => ({
  runs: (await db.query(
    `SELECT id, status, error, attempts, instance_id, started_at, finished_at FROM gb_remember_runs ORDER BY id`
  )).map((r): RunRow => ({
    id: Number(r.id),
    status: String(r.status),
    error: r.error === null ? null : String(r.error),
    attempts: Number(r.attempts),
    instance_id: String(r.instance_id),
    started_at: r.started_at,
    finished_at: r.finished_at
  })),
  keys: (await db.query(`SELECT idempotency_key, run_id FROM gb_remember_idempotency`))
    .map((r) => ({ key: String(r.idempotency_key), run: Number(r.run_id) })),
  artifacts: (await db.query(`SELECT text FROM gb_artifacts WHERE kind = 'knowledge'`)).map((r) => String(r.text)),
  duplicateArtifacts: await db.query(
    `SELECT dataset_id, text, COUNT(*) AS n FROM gb_artifacts GROUP BY dataset_id, text HAVING COUNT(*) > 1`
  ),
  duplicateEntities: await db.query(
    `SELECT dataset_id, name_key, type, COUNT(*) AS n FROM gb_entities GROUP BY dataset_id, name_key, type
    HAVING COUNT(*) > 1`
  ),
  duplicateLiveFacts: await db.query(
    `SELECT dataset_id, source_id, target_id, relation, COUNT(*) AS n FROM gb_edges
    WHERE expired_at IS NULL GROUP BY dataset_id, source_id, target_id, relation HAVING COUNT(*) > 1`
  ),
  liveFacts: (await db.query(
    `SELECT s.name AS source, e.relation, t.name AS target FROM gb_edges e
    JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id
    WHERE e.expired_at IS NULL AND e.invalid_at IS NULL`
  )).map((r) => factKey(r.source, r.relation, r.target)).sort(),
  startedStages: await db.query(`SELECT run_id, stage FROM gb_remember_run_stages WHERE status = 'started'`),
  queue: Number((await db.query(`SELECT COUNT(*) AS n FROM gb_remember_queue`))[0]!.n)
})

type Snapshot = Awaited<ReturnType<typeof snapshot>>

/** The checks both scenarios make once every run finished. */
const endChecks = (
  state: () => { readonly snap: Snapshot; readonly items: ReturnType<typeof itemsOf>; readonly runIds: Array<number> }
) => {
  it("every item has exactly one run (its idempotency key's), and none is queued or started", () => {
    const { items, runIds, snap } = state()
    expect(snap.runs.map((r) => r.id)).toEqual(runIds)
    expect(new Set(runIds).size).toBe(items.length)
    const byKey = new Map(snap.keys.map((k) => [k.key, k.run]))
    expect(items.map((item) => byKey.get(item.idempotency_key))).toEqual(runIds)
    expect(snap.runs.filter((r) => r.status !== "succeeded" && r.status !== "failed")).toEqual([])
    expect(snap.queue).toBe(0)
    expect(snap.startedStages).toEqual([])
  })

  it("every run succeeded, or failed `interrupted` (killed after its commit); every text is stored exactly once", () => {
    const { items, snap } = state()
    const failed = snap.runs.filter((r) => r.status === "failed")
    expect(failed.map((r) => r.error)).toEqual(failed.map(() => "interrupted"))
    const stored = new Map<string, number>()
    for (const text of snap.artifacts) stored.set(text, (stored.get(text) ?? 0) + 1)
    expect(items.filter((item) => stored.get(item.text) !== 1).map((i) => [i.text, stored.get(i.text)])).toEqual([])
    expect(snap.artifacts).toHaveLength(items.length)
  })

  it("no duplicate artifact, entity or live fact; every stated fact is live", () => {
    const { items, snap } = state()
    expect(snap.duplicateArtifacts).toEqual([])
    expect(snap.duplicateEntities).toEqual([])
    expect(snap.duplicateLiveFacts).toEqual([])
    const expected = [
      ...new Set(items.flatMap((item) => factsOf(item.text).map((f) => factKey(f.source, f.relation, f.target))))
    ].sort()
    expect(snap.liveFacts).toEqual(expected)
  })

  it("the runs of the dataset started and finished in id (submission) order", () => {
    const { snap } = state()
    const outOfOrder = (field: "started_at" | "finished_at") =>
      snap.runs.flatMap((r, i) => {
        const previous = snap.runs[i - 1]
        return previous !== undefined && new Date(r[field]!).getTime() < new Date(previous[field]!).getTime()
          ? [`${field}: run ${previous.id} ${previous[field]} > run ${r.id} ${r[field]}`]
          : []
      })
    expect(snap.runs.every((r) => r.started_at !== null && r.finished_at !== null)).toBe(true)
    expect(outOfOrder("started_at")).toEqual([])
    expect(outOfOrder("finished_at")).toEqual([])
  })
}

const fakeServers = async () => {
  const [anthropic, openai] = await Promise.all([
    // runs are in flight (waiting for the "model") when a process dies
    startFakeAnthropic({ text: (request) => answer(request.body).text, latencyMs: 5 }),
    startFakeOpenAi()
  ])
  const env = {
    ANTHROPIC_API_KEY: "test",
    ANTHROPIC_BASE_URL: anthropic.url,
    OPENAI_API_KEY: "test",
    GLIGABAO_EMBEDDING_BASE_URL: openai.url,
    GLIGABAO_EMBEDDING_DIMENSIONS: "8",
    // three kills may hit the same run; the budget of attempts is not under test here
    GLIGABAO_REMEMBER_MAX_ATTEMPTS: "10"
  }
  return { anthropic, openai, env }
}

// A guard against a hang, not a performance bound.
const DRAIN_DEADLINE_MS = 150_000

const ITEMS = 200
const KILLS = 3
// fewer items than the single-process case, to keep the file's wall time down
const TWO_PROCESS_ITEMS = 60

const SEED = Number(process.env.QUEUE_CRASH_SEED ?? Date.now() % 100_000)

/** What a scenario leaves for its afterAll (filled as it goes, so a failed scenario is cleaned up too). */
interface Resources {
  fakes?: Awaited<ReturnType<typeof fakeServers>>
  db?: Db
  servers: Array<SpawnedServer>
  dirs: Array<ReturnType<typeof tempDir>>
}

const cleanUp = async (r: Resources) => {
  await Promise.all(r.servers.map((s) => s.stop()))
  await r.db?.close()
  await r.fakes?.anthropic.close()
  await r.fakes?.openai.close()
  for (const dir of r.dirs) dir.remove()
}

/** Scenario 1: one process on `dialect`, SIGKILLed KILLS times mid-batch and restarted each time. */
const crashScenario = async (dialect: "sqlite" | "pg", r: Resources) => {
  const t0 = Date.now()
  const random = rng(SEED + (dialect === "pg" ? 1 : 0))
  const items = itemsOf(ITEMS, `${dialect}${SEED}`)
  const batch = { user_id: "alice", dataset: "notes", items }
  const dir = tempDir("gligabao-queue-crash-")
  r.dirs.push(dir)
  r.fakes = await fakeServers()
  const env = r.fakes.env
  const file = join(dir.path, "x.db")
  const db = dialect === "sqlite" ? sqliteDb(file) : await pgDb()
  r.db = db
  const start = async () => {
    const server = await startServer({ env, db: file, args: db.args })
    r.servers.push(server)
    return server
  }
  // kill points: runs finished, at spread-out random fractions of the batch (20-60%)
  const points = Array.from({ length: KILLS }, (_, k) => 0.2 + (0.4 * (k + random())) / KILLS)
    .map((f) => Math.round(f * ITEMS))
  let server = await start()
  const runIds = await submit(server, batch)
  const resubmitted: Array<Array<number>> = []
  const killedAt: Array<number> = []
  const afterKills: Array<{ integrity: unknown; foreignKeys: unknown }> = []
  for (const point of points) {
    await until(async () => (await finished(db)) >= point, DRAIN_DEADLINE_MS, `${point} runs finished`)
    // and a random moment within the next run or two
    await sleep(Math.round(random() * 60))
    killedAt.push(await finished(db))
    await kill(server)
    if (db.file !== undefined) {
      afterKills.push({
        integrity: (await db.query("PRAGMA integrity_check")).map((row) => row.integrity_check),
        foreignKeys: await db.query("PRAGMA foreign_key_check")
      })
    }
    // as if the restart came three heartbeat periods later: it takes the dead process's runs over at once
    await db.query("UPDATE gb_instances SET heartbeat_at = '2000-01-01T00:00:00.000Z'")
    server = await start()
    resubmitted.push(await submit(server, batch))
  }
  await until(async () => (await unfinished(db)) === 0, DRAIN_DEADLINE_MS, "every run to finish")
  const snap = await snapshot(db)
  console.log(`queue-crash ${dialect}: killed at ${killedAt.join(", ")} runs finished; ${Date.now() - t0} ms`)
  return { items, runIds, resubmitted, killedAt, afterKills, snap, db, server }
}

/** Scenario 2: two processes on one PostgreSQL database; A SIGKILLed mid-batch, B takes over. */
const twoProcessScenario = async (r: Resources) => {
  const t0 = Date.now()
  const random = rng(SEED + 2)
  const items = itemsOf(TWO_PROCESS_ITEMS, `two${SEED}`)
  r.fakes = await fakeServers()
  const env = r.fakes.env
  const db = await pgDb()
  r.db = db
  const a = await startServer({ env, args: db.args })
  r.servers.push(a)
  const b = await startServer({ env, args: db.args })
  r.servers.push(b)
  const runIds = await submit(a, { user_id: "alice", dataset: "notes", items })
  const point = Math.round((0.3 + 0.3 * random()) * TWO_PROCESS_ITEMS)
  await until(async () => (await finished(db)) >= point, DRAIN_DEADLINE_MS, `${point} runs finished`)
  await sleep(Math.round(random() * 60))
  const instancesBeforeKill = (await db.query("SELECT DISTINCT instance_id FROM gb_remember_runs"))
    .map((row) => String(row.instance_id))
  const instanceA = instancesBeforeKill[0] ?? ""
  await kill(a)
  const doneAtKill = await finished(db)
  // A's heartbeat as if it were three periods old: B takes A's runs over after its next beat (at most 5 s)
  await db.query(`UPDATE gb_instances SET heartbeat_at = '2000-01-01T00:00:00.000Z' WHERE id = '${instanceA}'`)
  await until(async () => (await unfinished(db)) === 0, DRAIN_DEADLINE_MS, "every run to finish")
  const snap = await snapshot(db)
  console.log(`queue-crash two processes: A killed at ${doneAtKill} runs finished; ${Date.now() - t0} ms`)
  return { items, runIds, instanceA, instancesBeforeKill, doneAtKill, snap, b }
}

// The three scenarios run at the same time (each its own servers, model fakes and database), to
// keep the file's wall time down: the first beforeAll starts them all, each describe awaits its own.
const scenarios: {
  started?: {
    readonly sqlite: Promise<Awaited<ReturnType<typeof crashScenario>>>
    readonly pg?: Promise<Awaited<ReturnType<typeof crashScenario>>>
    readonly two?: Promise<Awaited<ReturnType<typeof twoProcessScenario>>>
  }
  readonly resources: { readonly sqlite: Resources; readonly pg: Resources; readonly two: Resources }
} = {
  resources: {
    sqlite: { servers: [], dirs: [] },
    pg: { servers: [], dirs: [] },
    two: { servers: [], dirs: [] }
  }
}

/** Starts every scenario once; a rejection is reported by the describe that awaits it. */
const startScenarios = () => {
  if (scenarios.started === undefined) {
    console.log(`queue-crash: seed ${SEED} (QUEUE_CRASH_SEED=${SEED} reproduces the kill points)`)
    const pg = pgSkipReason() === null
    const { resources } = scenarios
    const started = {
      sqlite: crashScenario("sqlite", resources.sqlite),
      ...(pg ? { pg: crashScenario("pg", resources.pg), two: twoProcessScenario(resources.two) } : {})
    }
    for (const p of Object.values(started)) p.catch(() => undefined)
    scenarios.started = started
  }
  return scenarios.started
}

// generous (a guard against a hang): the three scenarios share two cores, often with other jobs
const SCENARIO_TIMEOUT_MS = 240_000

for (const dialect of ["sqlite", "pg"] as const) {
  describe.skipIf(dialect === "pg" && pgSkipReason() !== null)(
    `${dialect}: ${ITEMS} queued items, ${KILLS} SIGKILLs and restarts`,
    () => {
      let s: Awaited<ReturnType<typeof crashScenario>>

      beforeAll(async () => {
        s = await startScenarios()[dialect]!
      }, SCENARIO_TIMEOUT_MS)

      afterAll(() => cleanUp(scenarios.resources[dialect]))

      it("each kill came mid-batch, and each re-submission gave the same runs", () => {
        expect(s.killedAt).toHaveLength(KILLS)
        for (const done of s.killedAt) expect(done).toBeLessThan(ITEMS)
        expect(s.resubmitted).toEqual(Array.from({ length: KILLS }, () => s.runIds))
      })

      it("the kills hit runs in flight: some run was run again, or failed as interrupted after its commit", () => {
        const hit = s.snap.runs.filter((r) => r.attempts > 1 || r.status === "failed")
        console.log(
          `queue-crash ${dialect}: runs hit by a kill: ${
            JSON.stringify(hit.map(({ attempts, error, id, status }) => ({ id, status, error, attempts })))
          }`
        )
        expect(hit.length).toBeGreaterThan(0)
      })

      endChecks(() => s)

      if (dialect === "sqlite") {
        it("the file passes integrity_check and foreign_key_check after each kill and at the end", async () => {
          expect(s.afterKills).toEqual(Array.from({ length: KILLS }, () => ({ integrity: ["ok"], foreignKeys: [] })))
          expect(await s.server.stop()).toEqual({ code: 0, signal: null })
          expect((await s.db.query("PRAGMA integrity_check")).map((r) => r.integrity_check)).toEqual(["ok"])
          expect(await s.db.query("PRAGMA foreign_key_check")).toEqual([])
        })
      }
    }
  )
}

describe.skipIf(pgSkipReason() !== null)(
  `pg: two serve processes, ${TWO_PROCESS_ITEMS} items submitted to A, A SIGKILLed mid-way, B takes over`,
  () => {
    let s: Awaited<ReturnType<typeof twoProcessScenario>>

    beforeAll(async () => {
      s = await startScenarios().two!
    }, SCENARIO_TIMEOUT_MS)

    afterAll(() => cleanUp(scenarios.resources.two))

    it("while A lived, all its runs were A's (B took none); A was killed mid-batch", () => {
      expect(s.instancesBeforeKill).toEqual([s.instanceA])
      expect(s.doneAtKill).toBeGreaterThan(0)
      expect(s.doneAtKill).toBeLessThan(TWO_PROCESS_ITEMS)
    })

    it("B ran the runs A left: every run unfinished at the kill ends on B's instance", () => {
      const onB = s.snap.runs.filter((r) => r.instance_id !== s.instanceA)
      expect(onB.length).toBeGreaterThanOrEqual(TWO_PROCESS_ITEMS - s.doneAtKill)
      expect(new Set(onB.map((r) => r.instance_id)).size).toBe(1)
      // the runs A finished come before every run B took over
      const lastOfA = Math.max(...s.snap.runs.filter((r) => r.instance_id === s.instanceA).map((r) => r.id))
      expect(onB.every((r) => r.id > lastOfA)).toBe(true)
    })

    endChecks(() => s)

    it("B stops cleanly", async () => {
      expect(await s.b.stop()).toEqual({ code: 0, signal: null })
    })
  }
)
