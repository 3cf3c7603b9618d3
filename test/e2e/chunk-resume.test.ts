/**
 * A long document's run under SIGKILL (docs/INGESTION.md, What a crash does): a real `gligabao
 * serve` on a SQLite file is killed once some of the document's chunks are stored; the next
 * process goes on after the last stored chunk. At the end: one document, each chunk stored
 * exactly once and in order, the response says where the run went on, the stated facts live.
 */
import Database from "better-sqlite3"
import { join } from "node:path"
import * as sqliteVec from "sqlite-vec"
import { afterAll, expect, it } from "vitest"
import { answer, factsOf } from "../../layers/testing/FactSentenceModel.js"
import { type SpawnedServer, startServer, tempDir } from "../support/cli.js"
import { startFakeAnthropic } from "../support/fakeAnthropic.js"

type Row = Record<string, any>

const query = (file: string, q: string): Array<Row> => {
  const db = new Database(file, { fileMustExist: true })
  try {
    db.loadExtension(sqliteVec.getLoadablePath())
    db.pragma("busy_timeout = 5000")
    const statement = db.prepare(q)
    return statement.reader ? (statement.all() as Array<Row>) : (statement.run(), [])
  } finally {
    db.close()
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it is truthy (a guard against a hang, not a timing claim). */
const until = async (check: () => boolean, what: string, deadlineMs = 60_000) => {
  const end = Date.now() + deadlineMs
  while (!check()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`)
    await sleep(20)
  }
}

// 24 paragraphs, each with one fact and some prose; at chunk_size 64 about one chunk each
const DOCUMENT = Array.from(
  { length: 24 },
  (_, i) =>
    `Person${i} knows Person${i + 1}. The archive keeps a note about the harbour on that day, the weather, ` +
    `the ships that came in, and the people who stood on the quay.`
).join("\n\n")

const cleanups: Array<() => Promise<unknown> | void> = []
afterAll(async () => {
  for (const clean of cleanups.reverse()) await clean()
})

it("a document's run killed after some chunks are stored goes on after them in the next process", async () => {
  // every model call takes a while, so the kill comes mid-document
  const anthropic = await startFakeAnthropic({ text: (request) => answer(request.body).text, latencyMs: 25 })
  cleanups.push(() => anthropic.close())
  const dir = tempDir("gligabao-chunk-resume-")
  cleanups.push(() => dir.remove())
  const file = join(dir.path, "x.db")
  const env = {
    ANTHROPIC_API_KEY: "test",
    ANTHROPIC_BASE_URL: anthropic.url,
    GLIGABAO_CHUNK_SIZE: "64",
    GLIGABAO_CHUNK_CONCURRENCY: "1"
  }
  const servers: Array<SpawnedServer> = []
  cleanups.push(() => Promise.all(servers.map((s) => s.stop())))
  const first = await startServer({ env, db: file })
  servers.push(first)
  const res = await fetch(`${first.url}/v1/gb/remember`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user_id: "alice", dataset: "docs", text: DOCUMENT, wait: false })
  })
  expect(res.status).toBe(202)
  const runId = Number(((await res.json()) as Row).remember_run_id)
  const chunks = () => Number(query(file, "SELECT COUNT(*) AS n FROM gb_artifacts WHERE kind = 'chunk'")[0]!.n)
  await until(() => chunks() >= 4, "four chunks stored")
  first.child.kill("SIGKILL")
  await first.exited
  const storedAtKill = chunks()
  expect(query(file, "SELECT stored_chunks FROM gb_remember_queue")).toEqual([{ stored_chunks: storedAtKill }])

  // as if the restart came three heartbeat periods later: it takes the dead process's run over at once
  query(file, "UPDATE gb_instances SET heartbeat_at = '2000-01-01T00:00:00.000Z'")
  const second = await startServer({ env, db: file })
  servers.push(second)
  let run: Row = {}
  const end = Date.now() + 60_000
  for (;;) {
    run = (await (await fetch(`${second.url}/v1/gb/runs/${runId}`)).json()) as Row
    if (run.status === "succeeded" || run.status === "failed") break
    if (Date.now() > end) throw new Error(`run ${runId} never finished: ${JSON.stringify(run)}`)
    await sleep(50)
  }
  expect(run).toMatchObject({ status: "succeeded", attempts: 2 })
  expect(run.response.resumed_after_chunks).toBe(storedAtKill)

  const documents = query(file, "SELECT id FROM gb_artifacts WHERE kind = 'knowledge'")
  expect(documents.map((d) => d.id)).toEqual([run.response.artifact_id])
  const stored = query(file, "SELECT parent_id, metadata FROM gb_artifacts WHERE kind = 'chunk' ORDER BY id")
  const indexes = stored.map((c) => JSON.parse(c.metadata).index as number)
  expect(indexes).toEqual([...indexes.keys()])
  expect(stored.every((c) => c.parent_id === run.response.artifact_id)).toBe(true)
  expect(indexes.length).toBeGreaterThan(storedAtKill)
  const live = query(
    file,
    `SELECT s.name AS source, e.relation, t.name AS target FROM gb_edges e
    JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id WHERE e.expired_at IS NULL`
  ).map((r) => `${r.source} ${r.relation} ${r.target}`).sort()
  expect(live).toEqual(factsOf(DOCUMENT).map((f) => `${f.source} ${f.relation} ${f.target}`).sort())
  expect(query(file, "SELECT COUNT(*) AS n FROM gb_remember_queue")).toEqual([{ n: 0 }])
  expect(query(file, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }])
}, 120_000)
