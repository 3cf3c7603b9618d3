/**
 * What the cancel tests share: a database of each dialect that spawned commands open and the
 * test reads with plain SQL, the fake model (layers/testing/FactSentenceModel.ts) behind the fake
 * Anthropic API with a gate that holds the answers after the first few, and a spawned command
 * the test can signal.
 */
import { SqlClient } from "@effect/sql"
import Database from "better-sqlite3"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import * as sqliteVec from "sqlite-vec"
import { PgClientLive } from "../../layers/sql/Pg.js"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { BIN, type Exited, tempDir } from "../support/cli.js"
import { type Dialect, freshPgUrl } from "../support/databases.js"
import { type FakeAnthropic, startFakeAnthropic } from "../support/fakeAnthropic.js"

export type Row = Record<string, any>

export interface Db {
  readonly dialect: Dialect
  /** the flags that select this database */
  readonly args: ReadonlyArray<string>
  readonly query: (sql: string) => Promise<ReadonlyArray<Row>>
  readonly close: () => Promise<void>
}

/** A SQLite file in a temp directory, or a fresh PostgreSQL database; nothing migrated yet. */
export const openDb = async (dialect: Dialect): Promise<Db> => {
  if (dialect === "sqlite") {
    const dir = tempDir("gligabao-cancel-")
    const file = join(dir.path, "cancel.db")
    return {
      dialect,
      args: ["--db", file],
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
      close: async () => dir.remove()
    }
  }
  const url = Redacted.value(await Effect.runPromise(freshPgUrl))
  const runtime = ManagedRuntime.make(PgClientLive(Redacted.make(url)))
  return {
    dialect,
    args: ["--database-url", url],
    query: (q) => runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Row>(q))),
    close: () => runtime.dispose()
  }
}

/** The runs of a user by id, as the test reads them. */
export const runsOf = async (db: Db, userId: string) =>
  (await db.query(`SELECT id, status, started_at, finished_at FROM gb_remember_runs
    WHERE user_id = '${userId}' ORDER BY id`)).map((r) => ({
    id: Number(r.id),
    status: String(r.status),
    started: r.started_at !== null,
    finished: r.finished_at !== null
  }))

export const countOf = async (db: Db, sql: string) => Number((await db.query(sql))[0]!.n)

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it is truthy (a guard against a hang, not a timing claim). */
export const until = async (check: () => Promise<boolean> | boolean, what: string, deadlineMs = 120_000) => {
  const end = Date.now() + deadlineMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`)
    await sleep(50)
  }
}

/**
 * The fake model behind a gate: a proxy in front of the fake Anthropic API (which answers as the
 * fake model, forced tool calls included) answers the first `open` extract_graph calls at once;
 * later ones, and those whose text matches `hold`, wait for `release()`. Every text it was asked
 * to extract is recorded, so a test can tell which runs ran.
 */
export const gatedModel = async (options: { readonly open?: number; readonly hold?: RegExp } = {}) => {
  const fake: FakeAnthropic = await startFakeAnthropic({ text: (request) => answer(request.body).text })
  let released = false
  const waiting: Array<() => void> = []
  const extracted: Array<string> = []
  const proxy = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", async () => {
      const body = Buffer.concat(chunks)
      let parsed: any
      try {
        parsed = JSON.parse(body.toString("utf8"))
      } catch {
        parsed = undefined
      }
      if (parsed !== undefined && answer(parsed).stage === "extract_graph") {
        const user = JSON.stringify(parsed.messages ?? [])
        extracted.push(user)
        const held = extracted.length > (options.open ?? Infinity) || (options.hold?.test(user) ?? false)
        if (held && !released) await new Promise<void>((resolve) => waiting.push(resolve))
      }
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string" && !["host", "content-length", "connection"].includes(name)) headers[name] = value
      }
      try {
        const answered = await fetch(`${fake.url}${req.url}`, { method: req.method!, headers, body })
        res.writeHead(answered.status, { "content-type": answered.headers.get("content-type") ?? "application/json" })
        res.end(Buffer.from(await answered.arrayBuffer()))
      } catch {
        res.destroy()
      }
    })
  })
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
  return {
    env: { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: url },
    /** the messages of every extract_graph call so far (as JSON) */
    extracted: () => [...extracted],
    /** how many calls wait at the gate */
    held: () => waiting.length,
    release: () => {
      released = true
      waiting.splice(0).forEach((resolve) => resolve())
    },
    close: async () => {
      released = true
      waiting.splice(0).forEach((resolve) => resolve())
      proxy.closeAllConnections()
      await new Promise<void>((resolve) => proxy.close(() => resolve()))
      await fake.close()
    }
  }
}
export type GatedModel = Awaited<ReturnType<typeof gatedModel>>

export interface Spawned {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<Exited>
}

/** Spawns `gligabao ARGS` (stdout and stderr pipes, so not a terminal) with only `env` besides PATH and HOME. */
export const spawnGligabao = (args: ReadonlyArray<string>, env: Record<string, string>, cwd: string): Spawned => {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      GLIGABAO_LOG_LEVEL: "warning",
      NO_COLOR: "1",
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  const guard = setTimeout(() => child.kill("SIGKILL"), 240_000)
  const exited = new Promise<Exited>((resolve) =>
    child.once("exit", (code, signal) => {
      clearTimeout(guard)
      resolve({ code, signal })
    })
  )
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}

/** Runs `gligabao ARGS` to its end. */
export const runGligabao = async (args: ReadonlyArray<string>, env: Record<string, string>, cwd: string) => {
  const spawned = spawnGligabao(args, env, cwd)
  const exited = await spawned.exited
  return { ...exited, stdout: spawned.stdout(), stderr: spawned.stderr() }
}

/** The words of a POSIX command line as `shellWord` writes them (bare, or single-quoted). */
export const shellWords = (line: string): Array<string> => {
  const words: Array<string> = []
  let current: string | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "'") {
      const end = line.indexOf("'", i + 1)
      current = (current ?? "") + line.slice(i + 1, end)
      i = end
    } else if (c === "\\") {
      current = (current ?? "") + line[++i]
    } else if (c === " ") {
      if (current !== undefined) words.push(current)
      current = undefined
    } else current = (current ?? "") + c
  }
  if (current !== undefined) words.push(current)
  return words
}

/** The command a stopped import printed (after "To cancel them (...): "), as arguments of the CLI. */
export const printedCancelCommand = (stderr: string): Array<string> => {
  const line = stderr.split("\n").find((l) => l.startsWith("To cancel them"))
  if (line === undefined) throw new Error(`no cancel command in:\n${stderr}`)
  const words = shellWords(line.slice(line.indexOf("): ") + 3))
  if (words[0] !== "gligabao") throw new Error(`not a gligabao command: ${line}`)
  return words.slice(1)
}

export interface Served extends Spawned {
  readonly url: string
  /** SIGTERM, then its exit */
  readonly stop: () => Promise<Exited>
}

/** `gligabao serve --port 0` on the database, once it listens. */
export const serve = async (db: Db, env: Record<string, string>, cwd: string): Promise<Served> => {
  const spawned = spawnGligabao(["serve", "--port", "0", ...db.args], env, cwd)
  let url: string | undefined
  await until(
    () => {
      url = /listening on (http:\/\/[^\s"]+)/.exec(spawned.stdout() + spawned.stderr())?.[1]
      if (spawned.child.exitCode !== null) throw new Error(`serve exited:\n${spawned.stderr()}`)
      return url !== undefined
    },
    "gligabao serve to listen",
    60_000
  )
  return {
    ...spawned,
    url: url!.replace(/\/$/, ""),
    stop: async () => {
      if (spawned.child.exitCode === null) spawned.child.kill("SIGTERM")
      return spawned.exited
    }
  }
}

/** A JSON request to a spawned server. */
export const call = async (method: string, url: string, body?: unknown) => {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(120_000)
  })
  const text = await res.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, json, text }
}
