/**
 * scripts/bench: the wall time of `POST /v1/gb/remember` against a real `gligabao serve`, with a
 * fake Anthropic server of configurable latency (default 0 ms, so what is measured is
 * gligabao's own overhead: HTTP, validation, the manager, parsing, SQL, the run log).
 *
 *   scripts/bench [--runs N] [--latency MS] [--edges N] [--doc-latency MS] [--doc-chunks N]
 *
 * Scenarios: a text into a new (empty) dataset (one model call), and a text about entities of
 * a dataset that already holds --edges edges (two model calls: the stored facts are compared);
 * then a long document of about --doc-chunks chunks with a model of --doc-latency ms (default
 * 500), at chunk_concurrency 1 and 4. Prints tables; the figures go into BENCHMARKS.md.
 */
import Database from "better-sqlite3"
import { spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startFakeAnthropic } from "../test/support/fakeAnthropic.js"

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}
const RUNS = arg("runs", 200)
const LATENCY = arg("latency", 0)
const EDGES = arg("edges", 100_000)
const ENTITIES = Math.max(100, Math.floor(EDGES / 5))
const DOC_LATENCY = arg("doc-latency", 500)
const DOC_CHUNKS = arg("doc-chunks", 20)

/** The fake model: people named P<n> in the text become entities; "P1 knows P2" an edge. */
const answer = (request: { body: any }): string => {
  const system = String(request.body?.system ?? (request.body?.system?.[0]?.text ?? ""))
  if (system.includes("compare new facts")) return JSON.stringify({ duplicates: [], contradictions: [] })
  const user = JSON.stringify(request.body?.messages ?? "")
  const people = [...new Set(user.match(/P\d+/g) ?? [])]
  const entities = people.map((name) => ({ name, type: "person", description: `person ${name}` }))
  const edges = people.slice(1).map((p, i) => ({
    source: people[i]!,
    target: p,
    relation: "knows",
    description: `${people[i]} knows ${p}`
  }))
  return JSON.stringify({ entities, edges })
}

const startServer = (db: string, anthropicUrl: string, env: Record<string, string> = {}) =>
  new Promise<{ url: string; child: ChildProcess }>((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/gligabao.js", "serve", "--port", "0", "--db", db], {
      env: {
        PATH: process.env.PATH,
        ANTHROPIC_API_KEY: "bench",
        ANTHROPIC_BASE_URL: anthropicUrl,
        GLIGABAO_LOG_LEVEL: "warning",
        GLIGABAO_CONFIG: join(process.cwd(), "gligabao.toml"),
        ...env
      },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout!.on("data", (chunk) => {
      out += chunk
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) resolve({ url: m[1]!, child })
    })
    child.on("exit", (code) => reject(new Error(`server exited with ${code}: ${out}`)))
  })

const stopServer = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.removeAllListeners("exit")
    child.on("exit", () => resolve())
    child.kill("SIGTERM")
  })

const rssMiB = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return m ? Math.round(Number(m[1]) / 1024) : NaN
}

const remember = async (url: string, body: unknown): Promise<number> => {
  const t0 = performance.now()
  const res = await fetch(`${url}/v1/gb/remember`, { method: "POST", body: JSON.stringify(body) })
  const text = await res.text()
  const ms = performance.now() - t0
  if (res.status !== 200) throw new Error(`remember answered ${res.status}: ${text}`)
  return ms
}

const stats = (xs: Array<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!
  return { p50: q(0.5), p95: q(0.95), mean: s.reduce((a, b) => a + b, 0) / s.length }
}

/** 100,000 edges among ENTITIES people in dataset "big" of user "bench", written directly. */
const seed = (file: string) => {
  const db = new Database(file)
  const now = new Date().toISOString()
  db.transaction(() => {
    const ds = db.prepare("INSERT INTO gb_datasets (user_id, name, created_at) VALUES ('bench', 'big', ?)").run(now)
    const datasetId = Number(ds.lastInsertRowid)
    const art = db.prepare(
      "INSERT INTO gb_artifacts (dataset_id, kind, text, valid_at, created_at) VALUES (?, 'knowledge', 'seed', ?, ?)"
    ).run(datasetId, now, now)
    const artifactId = Number(art.lastInsertRowid)
    const entity = db.prepare(
      "INSERT INTO gb_entities (dataset_id, name, name_key, type, description, created_at, updated_at) VALUES (?, ?, ?, 'person', '', ?, ?)"
    )
    const ids: Array<number> = []
    for (let i = 0; i < ENTITIES; i++) ids.push(Number(entity.run(datasetId, `P${i}`, `p${i}`, now, now).lastInsertRowid))
    const edge = db.prepare(
      "INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, description, valid_at, created_at, artifact_id) VALUES (?, ?, ?, 'knows', 'seeded', ?, ?, ?)"
    )
    let x = 42
    const rand = () => (x = (x * 1103515245 + 12345) % 2147483648) % ENTITIES
    for (let i = 0; i < EDGES; i++) edge.run(datasetId, ids[rand()]!, ids[rand()]!, now, now, artifactId)
  })()
  db.close()
}

const main = async () => {
  const dir = mkdtempSync(join(tmpdir(), "gligabao-bench-"))
  const file = join(dir, "bench.db")
  const fake = await startFakeAnthropic({ text: answer, latencyMs: LATENCY })
  const rows: Array<[string, ReturnType<typeof stats>, number]> = []
  try {
    let server = await startServer(file, fake.url)
    // warm up (JIT, prepared statements)
    for (let i = 0; i < 20; i++) await remember(server.url, { user_id: "warm", dataset: `w${i}`, text: `P1 knows P2.` })

    const empty: Array<number> = []
    for (let i = 0; i < RUNS; i++) {
      empty.push(await remember(server.url, { user_id: "bench", dataset: `empty-${i}`, text: `P${i} knows P${i + 1}.` }))
    }
    rows.push(["new (empty) dataset: 1 model call", stats(empty), rssMiB(server.child.pid!)])
    await stopServer(server.child)

    seed(file)
    server = await startServer(file, fake.url)
    for (let i = 0; i < 20; i++) await remember(server.url, { user_id: "warm", dataset: `w${i}`, text: `P1 knows P2.` })
    const big: Array<number> = []
    for (let i = 0; i < RUNS; i++) {
      const a = (i * 7919) % ENTITIES
      const b = (i * 104729 + 1) % ENTITIES
      big.push(await remember(server.url, { user_id: "bench", dataset: "big", text: `P${a} knows P${b}.` }))
    }
    rows.push([`dataset with ${EDGES.toLocaleString("en")} edges: 2 model calls`, stats(big), rssMiB(server.child.pid!)])
    await stopServer(server.child)
  } finally {
    await fake.close()
    rmSync(dir, { recursive: true, force: true })
  }

  const doc = await documentScenario()

  console.log(`remember wall time, ${RUNS} sequential requests per scenario, fake model latency ${LATENCY} ms`)
  console.log("| scenario | p50 ms | p95 ms | mean ms | server RSS MiB |")
  console.log("| --- | --- | --- | --- | --- |")
  for (const [name, s, rss] of rows) {
    console.log(`| ${name} | ${s.p50.toFixed(1)} | ${s.p95.toFixed(1)} | ${s.mean.toFixed(1)} | ${rss} |`)
  }
  console.log()
  console.log(`a document of ${(doc.bytes / 1024).toFixed(0)} KiB, fake model latency ${DOC_LATENCY} ms per call`)
  console.log("| chunk_concurrency | chunks | wall time s | speed-up |")
  console.log("| --- | --- | --- | --- |")
  const base = doc.results[0]!.ms
  for (const r of doc.results) {
    console.log(`| ${r.concurrency} | ${r.chunks} | ${(r.ms / 1000).toFixed(1)} | ${(base / r.ms).toFixed(2)}x |`)
  }
}

/** A document of about DOC_CHUNKS chunks (1024 tokens each), remembered at chunk_concurrency 1 and 4. */
const documentScenario = async () => {
  const paragraph = (i: number) =>
    `Paragraph ${i}. The committee met again on the question of the harbour, and the minutes record a long ` +
    `discussion of the tides, the cranes, the cost of dredging and the ships expected in the spring. `.repeat(6)
  const text = Array.from({ length: DOC_CHUNKS * 6 }, (_, i) => paragraph(i)).join("\n\n")
  const dir = mkdtempSync(join(tmpdir(), "gligabao-bench-doc-"))
  const fake = await startFakeAnthropic({ text: answer, latencyMs: DOC_LATENCY })
  const results: Array<{ concurrency: number; ms: number; chunks: number }> = []
  try {
    for (const concurrency of [1, 4]) {
      const server = await startServer(join(dir, `doc-${concurrency}.db`), fake.url, {
        GLIGABAO_CHUNK_CONCURRENCY: String(concurrency)
      })
      const t0 = performance.now()
      const res = await fetch(`${server.url}/v1/gb/remember`, {
        method: "POST",
        body: JSON.stringify({ user_id: "bench", dataset: "doc", text })
      })
      const body = (await res.json()) as { chunks?: Array<unknown>; error?: string }
      const ms = performance.now() - t0
      if (res.status !== 200) throw new Error(`document remember answered ${res.status}: ${body.error}`)
      results.push({ concurrency, ms, chunks: body.chunks?.length ?? 1 })
      await stopServer(server.child)
    }
  } finally {
    await fake.close()
    rmSync(dir, { recursive: true, force: true })
  }
  return { results, bytes: Buffer.byteLength(text) }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
