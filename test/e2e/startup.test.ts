/**
 * End to end: a server that is starting answers every connection it accepts (issue 19). The
 * real `gligabao serve` is spawned on a port chosen beforehand and `GET /healthz` is sent every
 * 25 ms from the moment the process starts, each on a connection of its own with a timeout of
 * a few seconds. Every connection that was accepted must get an answer, 200 or 503
 * `{"error": "starting"}`, and 200 must come. On SQLite and PostgreSQL, with embeddings (an
 * OpenAI key: the vector reader's worker thread starts) and without.
 */
import { Effect, Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { request } from "node:http"
import { createServer } from "node:net"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { BIN, tempDir } from "../support/cli.js"
import { type Dialect, dialects, freshPgUrl } from "../support/databases.js"

/** how often a probe starts, and how long one may wait for its answer */
const PROBE_EVERY_MS = 25
const PROBE_TIMEOUT_MS = 3_000
/** probes keep going this long after the first 200 (requests racing the last startup steps) */
const AFTER_READY_MS = 250
const START_TIMEOUT_MS = 45_000

interface Probe {
  readonly sentAt: number
  /** the TCP connection was accepted */
  connected: boolean
  /** status and body, once answered */
  answer?: { readonly status: number; readonly body: string }
  /** an error after the connection was accepted (a reset, the timeout) */
  failure?: string
  readonly done: Promise<void>
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** One `GET /healthz` on a fresh connection; never rejects. */
const probe = (port: number, startedAt: number): Probe => {
  let finish!: () => void
  const result: Probe = {
    sentAt: Date.now() - startedAt,
    connected: false,
    done: new Promise<void>((resolve) => (finish = resolve))
  }
  const req = request({ host: "127.0.0.1", port, path: "/healthz", agent: false, timeout: PROBE_TIMEOUT_MS })
  req.on("socket", (socket) => socket.once("connect", () => (result.connected = true)))
  req.on("response", (res) => {
    let body = ""
    res.setEncoding("utf8")
    res.on("data", (chunk: string) => (body += chunk))
    res.on("end", () => {
      result.answer = { status: res.statusCode ?? 0, body }
      finish()
    })
    res.on("error", (error) => {
      result.failure = `response: ${error.message}`
      finish()
    })
  })
  req.on("timeout", () => {
    result.failure = `no answer in ${PROBE_TIMEOUT_MS} ms`
    req.destroy()
  })
  req.on("error", (error: NodeJS.ErrnoException) => {
    // ECONNREFUSED: not listening yet, which is fine; anything after a connect is not
    if (result.connected && result.failure === undefined) result.failure = error.code ?? error.message
    finish()
  })
  req.on("close", () => finish())
  req.end()
  return result
}

const exitOf = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
  })

const running: Array<ChildProcess> = []
const dirs: Array<{ remove: () => void }> = []
afterEach(async () => {
  for (const child of running.splice(0)) {
    child.kill("SIGKILL")
    await exitOf(child)
  }
  for (const dir of dirs.splice(0)) dir.remove()
})

/** Spawns the server and probes it from its first instant until it answers 200 (and a little after). */
const probeStartup = async (env: Record<string, string>) => {
  const port = await freePort()
  const dir = tempDir("gligabao-startup-")
  dirs.push(dir)
  const startedAt = Date.now()
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--port", String(port), "--db", join(dir.path, "x.db")],
    {
      cwd: dir.path,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", GLIGABAO_LOG_LEVEL: "warning", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  running.push(child)
  let output = ""
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  let exited = false
  child.once("exit", () => (exited = true))

  const probes: Array<Probe> = []
  let readyAt: number | undefined
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const now = Date.now() - startedAt
      const stop = exited || now > START_TIMEOUT_MS || (readyAt !== undefined && now > readyAt + AFTER_READY_MS)
      if (stop) {
        clearInterval(timer)
        return resolve()
      }
      const p = probe(port, startedAt)
      probes.push(p)
      void p.done.then(() => {
        if (readyAt === undefined && p.answer?.status === 200) readyAt = Date.now() - startedAt
      })
    }, PROBE_EVERY_MS)
  })
  await Promise.all(probes.map((p) => p.done))
  return { probes, readyAt, output }
}

const STARTING = { status: 503, body: { error: "starting" } }

const describeStartup = (dialect: Dialect, env: () => Promise<Record<string, string>>) => {
  for (const embeddings of [false, true]) {
    it(`every accepted connection is answered ${embeddings ? "with" : "without"} embeddings`, async () => {
      const base = await env()
      const { output, probes, readyAt } = await probeStartup(
        embeddings ? { ...base, OPENAI_API_KEY: "test", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" } : base
      )
      expect(readyAt, `no 200 came; the server printed:\n${output}`).toBeDefined()
      const accepted = probes.filter((p) => p.connected)
      const unanswered = accepted.filter((p) => p.answer === undefined)
        .map((p) => `sent at ${p.sentAt} ms: ${p.failure ?? "no answer"}`)
      expect(unanswered, `accepted ${accepted.length} connections; the server printed:\n${output}`).toEqual([])
      for (const p of accepted) {
        const answer = { status: p.answer!.status, body: JSON.parse(p.answer!.body) }
        if (answer.status !== 200) expect(answer, `sent at ${p.sentAt} ms`).toEqual(STARTING)
        else expect(answer.body).toEqual({ status: "ok" })
        // once it answered 200, it stays ready
        if (p.sentAt > readyAt!) expect(answer.status, `sent at ${p.sentAt} ms, ready at ${readyAt} ms`).toBe(200)
      }
    }, 60_000)
  }
}

for (const { dialect, skip } of dialects) {
  const reason = skip()
  const block = reason === null ? describe : describe.skip
  if (reason !== null) console.warn(`!!! SKIPPING the ${dialect} startup tests: ${reason}`)
  block(`startup on ${dialect}`, () =>
    describeStartup(
      dialect,
      async () => dialect === "pg" ? { DATABASE_URL: Redacted.value(await Effect.runPromise(freshPgUrl)) } : {}
    ))
}
