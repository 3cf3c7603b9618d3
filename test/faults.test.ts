/**
 * Faults (issue 13, item 3), end to end with real `gligabao serve` processes on a SQLite file,
 * fake model and embeddings servers, and SIGKILL:
 *
 * - SIGKILL in the middle of a chunked document (the model holds one chunk's extraction);
 * - SIGKILL at spread-out moments around the store transaction of single-unit texts;
 * - the model failing mid-document (529, 500, 429, garbage, timeout) beyond its retries;
 * - an image directory that cannot be written.
 *
 * Afterwards: the file passes integrity_check and foreign_key_check; every stored artifact is
 * whole (its entity and edge links are exactly those its text states, a chunk has its summary);
 * the dead process's run is failed `interrupted` at restart; the vector outbox is drained; and
 * the same request again succeeds with no duplicate entities or live facts.
 *
 * Covered elsewhere, not repeated here: retries of 429/529/5xx, retry-after, timeouts and
 * malformed bodies per adapter (test/llm-adapters.test.ts, test/embeddings.test.ts,
 * test/vectors.test.ts); a vector write failing after commit and the outbox drained by the next
 * remember and at startup (test/pipeline/embeddings.test.ts); an embeddings or store failure
 * storing nothing (test/pipeline/embeddings.test.ts, test/pipeline/rememberText.test.ts);
 * failOrphaned and the manager's startup/shutdown marking (test/repositories.test.ts,
 * test/manager.test.ts); a scripted chunk failure in process (test/pipeline/chunking.test.ts).
 *
 * The fake model (layers/testing/FactSentenceModel.ts) reads "<Name> <relation> <Name>." as a fact.
 */
import Database from "better-sqlite3"
import { Schema } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as sqliteVec from "sqlite-vec"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { answer, factsOf, stageOf } from "../layers/testing/FactSentenceModel.js"
import { hashEmbedding } from "../layers/testing/HashEmbeddings.js"
import { RememberResponse } from "../src/domain/Responses.js"
import { RememberRun } from "../src/domain/runView.js"
import { Error500, Error502 } from "../src/http/ErrorBodies.js"
import { type SpawnedServer, startServer, tempDir } from "./support/cli.js"
import {
  anthropicError,
  anthropicMessage,
  type FakeAnthropic,
  type FakeReply,
  malformedBody,
  overloaded,
  rateLimited,
  type RecordedRequest,
  startFakeAnthropic
} from "./support/fakeAnthropic.js"
import { type FakeOpenAi, startFakeOpenAi } from "./support/fakeOpenAi.js"
import { b64, png } from "./support/images.js"

// ---------------------------------------------------------------------------------------------
// helpers

type Row = Record<string, any>

/** Opens the file as the server does (sqlite-vec loaded: its tables are part of the schema). */
const withDb = <A>(file: string, f: (db: Database.Database) => A): A => {
  const db = new Database(file, { fileMustExist: true })
  try {
    db.loadExtension(sqliteVec.getLoadablePath())
    db.pragma("busy_timeout = 5000")
    return f(db)
  } finally {
    db.close()
  }
}
const all = (file: string, sql: string, ...params: Array<unknown>): Array<Row> =>
  withDb(file, (db) => db.prepare(sql).all(...params) as Array<Row>)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it is truthy or `deadlineMs` passes (a guard against a hang, not a timing claim). */
const until = async <A>(check: () => A | undefined | false, deadlineMs: number, what: string): Promise<A> => {
  const end = Date.now() + deadlineMs
  for (;;) {
    const value = check()
    if (value) return value
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`)
    await sleep(50)
  }
}

const remember = async (server: SpawnedServer, body: Row) => {
  const res = await fetch(`${server.url}/v1/gb/remember`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(45_000)
  })
  // every answer of the endpoint is a JSON object: a response or an {error}, read with its schema
  return { status: res.status, json: (await res.json()) as Readonly<Record<string, unknown>> }
}

/** A text's 200, checked against the contract. */
const remembered = (json: unknown) => Schema.decodeUnknownSync(RememberResponse)(json)

/** SIGKILL, and wait for the process to be gone. */
const kill = async (server: SpawnedServer) => {
  server.child.kill("SIGKILL")
  return server.exited
}

/** The fake model: the bench's deterministic answers, unless `override` answers first. */
const modelHandler =
  (override: (request: RecordedRequest, stage: string) => FakeReply | Promise<FakeReply> | undefined) =>
  (request: RecordedRequest): FakeReply | Promise<FakeReply> => {
    const stage = stageOf(typeof request.body?.system === "string" ? request.body.system : "")
    return override(request, stage) ?? anthropicMessage({ text: answer(request.body).text, model: request.body.model })
  }

const userText = (request: RecordedRequest) => JSON.stringify(request.body?.messages ?? [])

const providerEnv = (anthropic: FakeAnthropic, openai: FakeOpenAi): Record<string, string> => ({
  ANTHROPIC_API_KEY: "test",
  ANTHROPIC_BASE_URL: anthropic.url,
  OPENAI_API_KEY: "test",
  GLIGABAO_EMBEDDING_BASE_URL: openai.url,
  GLIGABAO_EMBEDDING_DIMENSIONS: "8"
})

/** integrity_check and foreign_key_check of the file. */
const fileChecks = (file: string) =>
  withDb(
    file,
    (db) => ({ integrity: db.pragma("integrity_check", { simple: true }), foreignKeys: db.pragma("foreign_key_check") })
  )

/** Entities sharing (dataset, name_key, type), and live edges sharing (source, target, relation, description). */
const duplicates = (file: string) => ({
  entities: all(
    file,
    `SELECT dataset_id, name_key, type, COUNT(*) AS n FROM gb_entities
    GROUP BY dataset_id, name_key, type HAVING COUNT(*) > 1`
  ),
  liveEdges: all(
    file,
    `SELECT dataset_id, source_id, target_id, relation, description, COUNT(*) AS n FROM gb_edges
    WHERE expired_at IS NULL GROUP BY dataset_id, source_id, target_id, relation, description HAVING COUNT(*) > 1`
  )
})

const factKey = (source: string, relation: string, target: string) =>
  `${source}|${relation.replace(/ /g, "_")}|${target}`

/** The live facts of a dataset, as "source|relation|target". */
const liveFacts = (file: string, dataset: string) =>
  all(
    file,
    `SELECT s.name AS source, e.relation, t.name AS target FROM gb_edges e
    JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id
    JOIN gb_datasets d ON d.id = e.dataset_id
    WHERE d.name = ? AND e.expired_at IS NULL AND e.invalid_at IS NULL`,
    dataset
  )
    .map((r) => factKey(r.source, r.relation, r.target)).sort()

const expectedFacts = (text: string) =>
  [...new Set(factsOf(text).map((f) => factKey(f.source, f.relation, f.target)))].sort()
const expectedNames = (text: string) => [...new Set(factsOf(text).flatMap((f) => [f.source, f.target]))].sort()

/**
 * Artifacts of `kinds` that are not whole: a whole artifact is linked to exactly the entities
 * and facts its text states (they are stored in one transaction with it), and a chunk has
 * exactly one summary. Returns one line per defect (empty when all are whole).
 */
const partialArtifacts = (file: string, kinds: ReadonlyArray<string>): Array<string> => {
  const artifacts = all(
    file,
    `SELECT id, kind, text FROM gb_artifacts WHERE kind IN (${kinds.map(() => "?").join(",")})`,
    ...kinds
  )
  const defects: Array<string> = []
  for (const a of artifacts) {
    const names = all(
      file,
      `SELECT x.name FROM gb_entity_artifacts l JOIN gb_entities x ON x.id = l.entity_id
      WHERE l.artifact_id = ?`,
      a.id
    ).map((r) => r.name).sort()
    const facts = all(
      file,
      `SELECT s.name AS source, e.relation, t.name AS target FROM gb_edge_artifacts l
      JOIN gb_edges e ON e.id = l.edge_id JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id
      WHERE l.artifact_id = ?`,
      a.id
    ).map((r) => factKey(r.source, r.relation, r.target)).sort()
    if (JSON.stringify(names) !== JSON.stringify(expectedNames(a.text))) {
      defects.push(`artifact ${a.id}: entities ${names}`)
    }
    if (JSON.stringify(facts) !== JSON.stringify(expectedFacts(a.text))) {
      defects.push(`artifact ${a.id}: facts ${facts}`)
    }
    if (a.kind === "chunk") {
      const summaries =
        all(file, `SELECT COUNT(*) AS n FROM gb_artifacts WHERE parent_id = ? AND kind = 'chunk_summary'`, a.id)[0]!.n
      if (summaries !== 1) defects.push(`chunk ${a.id}: ${summaries} summaries`)
    }
  }
  return defects
}

const outboxCount = (file: string) => Number(all(file, "SELECT COUNT(*) AS n FROM gb_vector_outbox")[0]!.n)

// The chunked document: one fact paragraph per chunk (chunk_size 64, no overlap); consecutive
// paragraphs share a person, so later chunks reconcile against earlier ones.
const FILLER =
  "the text goes on about the weather over the harbour, the ships that came and went, and the people who " +
  "watched them from the quay in the evening light, talking of nothing much at all."
const paragraph = (k: number) => `Person${k} knows Person${k + 1}. Person${k} lives in City${k}. And ${FILLER}`
const documentOf = (count: number) => Array.from({ length: count }, (_, i) => paragraph(i + 1)).join("\n\n")

const CHUNKED_ENV = {
  GLIGABAO_CHUNK_SIZE: "64",
  GLIGABAO_CHUNK_OVERLAP_PERCENT: "0",
  // one chunk at a time, so the held chunk is the only one in flight
  GLIGABAO_CHUNK_CONCURRENCY: "1"
}

/** What the run log says about a run, read from the file. */
const runRow = (file: string, id: number) => all(file, "SELECT status, error FROM gb_remember_runs WHERE id = ?", id)[0]
const startedStages = (file: string, id: number) =>
  all(file, "SELECT stage FROM gb_remember_run_stages WHERE run_id = ? AND status = 'started'", id)

// ---------------------------------------------------------------------------------------------

describe("SIGKILL during a chunked document", () => {
  const dir = tempDir("gligabao-faults-chunked-")
  const db = join(dir.path, "x.db")
  const DOC = documentOf(6)
  const HELD = "Person4 knows"
  const request = { user_id: "alice", dataset: "docs", text: DOC }
  let anthropic: FakeAnthropic
  let openai: FakeOpenAi
  let env: Record<string, string>
  let runId = 0
  let afterKill: ReturnType<typeof fileChecks>
  let quick: SpawnedServer | undefined
  let server: SpawnedServer | undefined

  beforeAll(async () => {
    ;[anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeOpenAi()])
    let held = false
    let holding = true
    // the chunk stating HELD is not answered while `holding`: the process dies waiting for it
    anthropic.setHandler(modelHandler((request, stage) => {
      if (!holding || stage !== "extract_graph" || !userText(request).includes(HELD)) return undefined
      held = true
      return new Promise<FakeReply>(() => {})
    }))
    env = { ...providerEnv(anthropic, openai), ...CHUNKED_ENV }
    const first = await startServer({ env, db })
    const pending = remember(first, request).catch((e: unknown) => e)
    // the chunks before the held one are stored (each its own transaction) and the run is still going
    await until(
      () =>
        held && all(db, "SELECT 1 FROM gb_artifacts WHERE kind = 'chunk' AND text LIKE '%Person3 knows%'").length > 0,
      30_000,
      "the chunks before the held one"
    )
    runId = all(db, "SELECT id FROM gb_remember_runs")[0]!.id
    expect(runRow(db, runId)!.status).toBe("started")
    await kill(first)
    holding = false
    await pending
    // the file as the dead process left it (opening it runs SQLite's crash recovery, as the next process would)
    afterKill = fileChecks(db)
  }, 60_000)

  afterAll(async () => {
    await quick?.stop()
    await server?.stop()
    await anthropic?.close()
    await openai?.close()
    dir.remove()
  })

  it("the file left by the dead process passes integrity_check and foreign_key_check", () => {
    expect(afterKill.integrity).toBe("ok")
    expect(afterKill.foreignKeys).toEqual([])
  })

  it("the chunks stored before the kill are whole, and nothing of the held chunk or after it is stored", () => {
    const chunks = all(db, "SELECT text, metadata FROM gb_artifacts WHERE kind = 'chunk' ORDER BY id")
    expect(chunks.map((c) => JSON.parse(c.metadata).index)).toEqual([0, 1, 2])
    expect(chunks.some((c) => c.text.includes(HELD))).toBe(false)
    expect(partialArtifacts(db, ["chunk"])).toEqual([])
    // the parent is written with the first chunk
    expect(all(db, "SELECT text FROM gb_artifacts WHERE kind = 'knowledge'")).toEqual([{ text: DOC }])
    expect(liveFacts(db, "docs")).toEqual(expectedFacts(chunks.map((c) => c.text).join("\n")))
  })

  // A process restarted right after the crash (as a supervisor does) sees the dead process's
  // heartbeat still fresh (younger than 3 x 5 s); the orphan sweep runs after every beat too,
  // so the run is taken over once that heartbeat goes stale, and goes on after the stored chunks.
  it(
    "a server restarted at once takes the run over once the heartbeat is stale and goes on after the stored chunks",
    async () => {
      quick = await startServer({ env, db })
      await until(() => runRow(db, runId)!.status === "succeeded", 40_000, "the run to go on and succeed")
      expect(runRow(db, runId)).toEqual({ status: "succeeded", error: null })
      const res = await fetch(`${quick.url}/v1/gb/runs/${runId}`)
      const run = Schema.decodeUnknownSync(RememberRun)(await res.json())
      expect(run).toMatchObject({ status: "succeeded", attempts: 2 })
      expect(run.response).toMatchObject({ resumed_after_chunks: 3 })
      expect(Object.values(run.stages).filter((s) => s.status === "started")).toEqual([])
      expect(startedStages(db, runId)).toEqual([])
      // one document, each chunk once, in order
      const chunks = all(db, "SELECT text, metadata FROM gb_artifacts WHERE kind = 'chunk' ORDER BY id")
      expect(chunks.map((c) => JSON.parse(c.metadata).index)).toEqual([0, 1, 2, 3, 4, 5])
      expect(all(db, "SELECT text FROM gb_artifacts WHERE kind = 'knowledge'")).toEqual([{ text: DOC }])
      expect(all(db, "SELECT run_id FROM gb_remember_queue")).toEqual([])
      server = quick
      quick = undefined
    },
    60_000
  )

  it("nothing is left in the vector outbox after the restart", async () => {
    await until(() => outboxCount(db) === 0, 20_000, "the outbox to drain")
    expect(outboxCount(db)).toBe(0)
  }, 30_000)

  it("the document's graph is whole: no duplicate entities or live facts, every stated fact live", async () => {
    expect(duplicates(db)).toEqual({ entities: [], liveEdges: [] })
    expect(liveFacts(db, "docs")).toEqual(expectedFacts(DOC))
    expect(partialArtifacts(db, ["chunk"])).toEqual([])
    expect(outboxCount(db)).toBe(0)
    expect(await server!.stop()).toEqual({ code: 0, signal: null })
    expect(fileChecks(db)).toEqual({ integrity: "ok", foreignKeys: [] })
  }, 60_000)
})

// ---------------------------------------------------------------------------------------------

describe("SIGKILL around the store transaction of a text", () => {
  const dir = tempDir("gligabao-faults-store-")
  const db = join(dir.path, "x.db")
  // many facts, so that the store transaction (rows, links, outbox) lasts long enough to be hit
  const textOf = (n: number) =>
    Array.from({ length: 120 }, (_, i) => `T${n}p${i} works at T${n}org${i % 7}.`).join(" ") +
    ` Person${n} knows Person0.`
  // kill points: fractions of the time from the last provider request to the answer (the store
  // transaction, the vector writes after commit, the response); where each lands varies per run
  // 0.3 too: under a loaded CI host the calibration run (cold) can be slow enough that every later
  // remember answers before 0.6 of its window
  const KILLS = [0.3, 0.6, 0.8, 0.9, 1, 1.25]
  let anthropic: FakeAnthropic
  let openai: FakeOpenAi
  let server: SpawnedServer | undefined
  /** a kill fired `afterMs` after the last provider request (re-armed by each one) */
  let armed: { readonly server: SpawnedServer; readonly afterMs: number; timer?: NodeJS.Timeout } | undefined
  let lastProviderMs = 0
  const texts: Array<string> = []
  /** the texts whose remember was killed before it answered */
  const killed: Array<string> = []
  let afterKills: ReturnType<typeof fileChecks>

  const rearm = () => {
    lastProviderMs = Date.now()
    if (armed === undefined) return
    const target = armed
    clearTimeout(target.timer)
    target.timer = setTimeout(() => void target.server.child.kill("SIGKILL"), target.afterMs)
  }

  beforeAll(async () => {
    ;[anthropic, openai] = await Promise.all([
      startFakeAnthropic(),
      startFakeOpenAi({ embeddingFor: (text, dimensions) => (rearm(), hashEmbedding(text, dimensions)) })
    ])
    anthropic.setHandler(modelHandler(() => (rearm(), undefined)))
    const env = { ...providerEnv(anthropic, openai), GLIGABAO_CHUNK_SIZE: "100000" }

    // calibration, not killed: the time from the last provider request to the answer
    const calibrate = await startServer({ env, db })
    texts.push(textOf(0))
    const first = await remember(calibrate, { user_id: "alice", dataset: "kb", text: textOf(0) })
    const window = Math.max(5, Date.now() - lastProviderMs)
    expect(first.status).toBe(200)
    await calibrate.stop()

    for (const [i, fraction] of KILLS.entries()) {
      const text = textOf(i + 1)
      texts.push(text)
      const s = await startServer({ env, db })
      armed = { server: s, afterMs: Math.max(1, Math.round(window * fraction)) }
      const res = await remember(s, { user_id: "alice", dataset: "kb", text }).catch(() => undefined)
      clearTimeout(armed.timer)
      armed = undefined
      // a run that answered before the kill came was not killed
      if (res !== undefined) {
        await s.stop()
        continue
      }
      await s.exited
      killed.push(text)
    }
    afterKills = fileChecks(db)
    // The chunked test above waits out the real 15 s staleness; here the dead processes'
    // heartbeats are aged instead, as if the restart came later.
    withDb(db, (d) => d.prepare("UPDATE gb_instances SET heartbeat_at = '2000-01-01T00:00:00.000Z'").run())
    server = await startServer({ env, db })
  }, 90_000)

  afterAll(async () => {
    await server?.stop()
    await anthropic?.close()
    await openai?.close()
    dir.remove()
  })

  it("at least one remember was killed, and the file it left passes integrity_check and foreign_key_check", () => {
    expect(killed.length).toBeGreaterThan(0)
    expect(afterKills).toEqual({ integrity: "ok", foreignKeys: [] })
  })

  it("no partial artifact: each stored text has all its entity and fact links, or is not stored at all", () => {
    expect(partialArtifacts(db, ["knowledge"])).toEqual([])
    // and no fact without the artifact that states it
    const unlinked = all(
      db,
      "SELECT e.id FROM gb_edges e LEFT JOIN gb_edge_artifacts l ON l.edge_id = e.id WHERE l.edge_id IS NULL"
    )
    expect(unlinked).toEqual([])
  })

  it(
    "at restart, every killed run is run again, or failed as interrupted when its text was already stored; each text is stored once",
    async () => {
      // the restarted server takes the dead processes' runs over: queued again, or failed when committed
      const unfinished = () => all(db, "SELECT id FROM gb_remember_runs WHERE status IN ('queued', 'started')")
      await until(() => unfinished().length === 0, 30_000, "the killed runs to finish")
      const runs = all(db, "SELECT id, status, error, attempts FROM gb_remember_runs ORDER BY id")
      expect(runs[0]).toMatchObject({ status: "succeeded" })
      expect(runs.filter((r) => r.status !== "failed" && r.status !== "succeeded")).toEqual([])
      for (const text of killed) {
        expect(all(db, "SELECT id FROM gb_artifacts WHERE text = ?", text), text.slice(0, 20)).toHaveLength(1)
      }
      // a run killed after its commit is not stored twice: it is failed, its text kept
      for (const r of runs.filter((r) => r.status === "failed")) expect(r.error).toBe("interrupted")
      // a rerun counts its attempts
      for (const r of runs.filter((r) => r.status === "succeeded" && r.id !== runs[0].id)) {
        expect(r.attempts).toBeGreaterThanOrEqual(1)
      }
      expect(all(db, "SELECT run_id, stage FROM gb_remember_run_stages WHERE status = 'started'")).toEqual([])
    },
    40_000
  )

  it("the outbox is drained at startup", async () => {
    await until(() => outboxCount(db) === 0, 20_000, "the outbox to drain")
    expect(outboxCount(db)).toBe(0)
  }, 30_000)

  it("each killed text remembered again succeeds; no duplicate entities or live facts; every fact live", async () => {
    for (const text of killed) {
      expect((await remember(server!, { user_id: "alice", dataset: "kb", text })).status).toBe(200)
    }
    expect(duplicates(db)).toEqual({ entities: [], liveEdges: [] })
    expect(liveFacts(db, "kb")).toEqual(expectedFacts(texts.join(" ")))
    expect(partialArtifacts(db, ["knowledge"])).toEqual([])
    await until(() => outboxCount(db) === 0, 20_000, "the outbox to drain")
    expect(await server!.stop()).toEqual({ code: 0, signal: null })
    expect(fileChecks(db)).toEqual({ integrity: "ok", foreignKeys: [] })
  }, 60_000)
})

// ---------------------------------------------------------------------------------------------

describe("the model failing in the middle of a chunked document", () => {
  const dir = tempDir("gligabao-faults-provider-")
  const db = join(dir.path, "x.db")
  const DOC = documentOf(3)
  // the second chunk's extraction fails on every try (max_retries 1: two tries)
  const FAILS_ON = "Person2 knows"
  const FAULTS: ReadonlyArray<readonly [string, () => FakeReply]> = [
    ["529 overloaded", overloaded],
    ["500 api_error", () => anthropicError(500, "Internal server error")],
    ["429 rate limited", () => rateLimited(0)],
    ["a body that is not JSON", malformedBody],
    ["an answer that is not a graph", () => anthropicMessage({ text: "Sorry, I can't help with that." })],
    // longer than llm.timeout_ms
    ["a timeout", () => anthropicMessage({ text: "{}", delayMs: 3_000 })]
  ]
  let anthropic: FakeAnthropic
  let openai: FakeOpenAi
  let server: SpawnedServer
  let fault: (() => FakeReply) | undefined

  beforeAll(async () => {
    ;[anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeOpenAi()])
    anthropic.setHandler(
      modelHandler((request, stage) =>
        fault !== undefined && stage === "extract_graph" && userText(request).includes(FAILS_ON) ? fault() : undefined
      )
    )
    server = await startServer({
      env: {
        ...providerEnv(anthropic, openai),
        ...CHUNKED_ENV,
        GLIGABAO_LLM_MAX_RETRIES: "1",
        GLIGABAO_LLM_TIMEOUT_MS: "1000"
      },
      db
    })
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
    await anthropic?.close()
    await openai?.close()
    dir.remove()
  })

  for (const [what, reply] of FAULTS) {
    it(`${what}: 502 naming the stage, the first chunk kept whole, the run failed; the retry is clean`, async () => {
      const dataset = what.replace(/\W+/g, "-")
      const request = { user_id: "alice", dataset, text: DOC }
      fault = reply
      const failed = await remember(server, request)
      fault = undefined
      expect(failed.status).toBe(502)
      expect(Object.keys(failed.json)).toEqual(["error"])
      expect(Schema.decodeUnknownSync(Error502)(failed.json).error).toMatch(/extract_graph/)

      const chunks = all(
        db,
        `SELECT a.text, a.metadata FROM gb_artifacts a JOIN gb_datasets d ON d.id = a.dataset_id
        WHERE d.name = ? AND a.kind = 'chunk' ORDER BY a.id`,
        dataset
      )
      expect(chunks.map((c) => JSON.parse(c.metadata).index)).toEqual([0])
      expect(liveFacts(db, dataset)).toEqual(expectedFacts(chunks[0]!.text))
      const run = all(db, "SELECT id, status, error FROM gb_remember_runs WHERE dataset = ? ORDER BY id", dataset)
      expect(run).toEqual([{ id: expect.any(Number), status: "failed", error: failed.json.error }])
      const stage = all(
        db,
        "SELECT status, error FROM gb_remember_run_stages WHERE run_id = ? AND stage = 'extract_graph'",
        run[0]!.id
      )
      expect(stage).toEqual([{ status: "failed", error: expect.any(String) }])

      const retried = await remember(server, request)
      expect(retried.status).toBe(200)
      expect(remembered(retried.json).chunks).toHaveLength(3)
      expect(liveFacts(db, dataset)).toEqual(expectedFacts(DOC))
      expect(duplicates(db)).toEqual({ entities: [], liveEdges: [] })
      expect(partialArtifacts(db, ["chunk"])).toEqual([])
    }, 30_000)
  }

  it("the outbox is drained and the file passes integrity_check and foreign_key_check", async () => {
    await until(() => outboxCount(db) === 0, 20_000, "the outbox to drain")
    expect(await server.stop()).toEqual({ code: 0, signal: null })
    expect(fileChecks(db)).toEqual({ integrity: "ok", foreignKeys: [] })
  }, 30_000)
})

// ---------------------------------------------------------------------------------------------

describe("an image directory that cannot be written", () => {
  const dir = tempDir("gligabao-faults-images-")
  const db = join(dir.path, "x.db")
  // a path under a regular file: mkdir fails with ENOTDIR, even as root (where modes do not stop writes)
  const blocker = join(dir.path, "not-a-dir")
  const IMAGE_ANSWER = JSON.stringify({
    theme: "Plot",
    title: "Revenue 2024",
    text_blocks: [{ kind: "title", text: "Revenue 2024" }]
  })
  let anthropic: FakeAnthropic
  let env: Record<string, string>

  beforeAll(async () => {
    writeFileSync(blocker, "")
    anthropic = await startFakeAnthropic({ text: IMAGE_ANSWER })
    env = { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: anthropic.url }
  })

  afterAll(async () => {
    await anthropic?.close()
    dir.remove()
  })

  it(
    "the image remember fails with a 500 {error} naming store_image and stores no row; a writable directory then works",
    async () => {
      const broken = await startServer({ env, db, args: ["--image-dir", join(blocker, "images")] })
      const res = await remember(broken, { user_id: "alice", dataset: "pics", image: b64(png()) })
      expect(await broken.stop()).toEqual({ code: 0, signal: null })
      expect(res.status).toBe(500)
      expect(Object.keys(res.json)).toEqual(["error"])
      expect(Schema.decodeUnknownSync(Error500)(res.json).error).toMatch(/store_image/)
      for (const table of ["gb_datasets", "gb_image_artifacts", "gb_artifacts", "gb_entities"]) {
        expect(all(db, `SELECT COUNT(*) AS n FROM ${table}`)[0]!.n, table).toBe(0)
      }
      expect(all(db, "SELECT status, error FROM gb_remember_runs")).toEqual([{
        status: "failed",
        error: expect.stringMatching(/store_image/)
      }])

      const images = join(dir.path, "images")
      mkdirSync(images)
      const good = await startServer({ env, db, args: ["--image-dir", images] })
      const ok = await remember(good, { user_id: "alice", dataset: "pics", image: b64(png()) })
      expect(await good.stop()).toEqual({ code: 0, signal: null })
      expect(ok.status).toBe(200)
      expect(all(db, "SELECT COUNT(*) AS n FROM gb_image_artifacts")[0]!.n).toBe(1)
      expect(fileChecks(db)).toEqual({ integrity: "ok", foreignKeys: [] })
    },
    60_000
  )
})
