/**
 * End-to-end helpers: run the real `gligabao` CLI (bin/gligabao.js) as a child process with a
 * controlled environment (nothing of the developer's: no ANTHROPIC_API_KEY unless given), in a
 * temp working directory so no ./gligabao.toml is picked up.
 *
 *   const server = await startServer({ env: { ANTHROPIC_API_KEY: "test" } })
 *   await fetch(`${server.url}/healthz`)
 *   expect(await server.stop()).toEqual({ code: 0, signal: null })
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "gligabao.js")

/** The only variables the child sees besides `env`: enough to find node and write caches. */
const baseEnv = (): Record<string, string> => {
  const keep: Record<string, string> = {}
  for (const name of ["PATH", "HOME", "TMPDIR", "LANG"]) {
    const value = process.env[name]
    if (value !== undefined) keep[name] = value
  }
  return keep
}

export interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface CliOptions {
  /** added to the minimal environment (GLIGABAO_LOG_LEVEL defaults to warning) */
  readonly env?: Readonly<Record<string, string>>
  /** the working directory (default: a fresh temp directory) */
  readonly cwd?: string
}

const spawnCli = (args: ReadonlyArray<string>, options: CliOptions, cwd: string): ChildProcess =>
  spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...baseEnv(), GLIGABAO_LOG_LEVEL: "warning", NO_COLOR: "1", ...options.env },
    stdio: ["ignore", "pipe", "pipe"]
  })

const exitOf = (child: ChildProcess): Promise<Exited> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      return resolve({ code: child.exitCode, signal: child.signalCode as NodeJS.Signals | null })
    }
    child.once("exit", (code, signal) => resolve({ code, signal }))
  })

/** A temp directory removed by the returned function. */
export const tempDir = (prefix = "gligabao-e2e-"): { readonly path: string; readonly remove: () => void } => {
  const path = mkdtempSync(join(tmpdir(), prefix))
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}

export interface CliResult extends Exited {
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to its end (killed after `timeoutMs`, a guard against a hang). */
export const runCli = async (
  args: ReadonlyArray<string>,
  options: CliOptions & { readonly timeoutMs?: number } = {}
) => {
  const dir = options.cwd === undefined ? tempDir() : undefined
  try {
    const child = spawnCli(args, options, options.cwd ?? dir!.path)
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    const guard = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000)
    const exited = await exitOf(child)
    clearTimeout(guard)
    return { ...exited, stdout, stderr } satisfies CliResult
  } finally {
    dir?.remove()
  }
}

export interface ServerOptions extends CliOptions {
  /** the SQLite file (default: x.db in a temp directory removed on stop; null: no --db, the default location) */
  readonly db?: string | null
  /** more arguments for `serve` */
  readonly args?: ReadonlyArray<string>
  readonly startTimeoutMs?: number
}

export interface SpawnedServer {
  /** e.g. http://127.0.0.1:41529 */
  readonly url: string
  readonly version: string
  /** the --db given (empty when started without one) */
  readonly db: string
  readonly child: ChildProcess
  /** everything the process printed so far (stdout and stderr interleaved) */
  readonly output: () => string
  /** resolves when the process exits */
  readonly exited: Promise<Exited>
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with how it exited. Removes the temp dir. */
  readonly stop: (graceMs?: number) => Promise<Exited>
}

const LISTENING = /gligabao (\S+) listening on (http:\/\/[^\s"]+)/

/** Spawns `gligabao serve --port 0 --db <db>` and waits for its "listening on" line. */
export const startServer = (options: ServerOptions = {}): Promise<SpawnedServer> => {
  const dir = tempDir()
  const db = options.db === null ? "" : options.db ?? join(dir.path, "x.db")
  const child = spawnCli(
    ["serve", "--port", "0", ...(db === "" ? [] : ["--db", db]), ...(options.args ?? [])],
    options,
    options.cwd ?? dir.path
  )
  let output = ""
  const exited = exitOf(child)
  exited.then(() => dir.remove(), () => dir.remove())

  const stop = async (graceMs = 15_000): Promise<Exited> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM")
      const guard = setTimeout(() => child.kill("SIGKILL"), graceMs)
      const result = await exited
      clearTimeout(guard)
      return result
    }
    return exited
  }

  return new Promise<SpawnedServer>((resolve, reject) => {
    let settled = false
    const fail = (why: string) => {
      if (settled) return
      settled = true
      child.kill("SIGKILL")
      reject(new Error(`gligabao serve ${why}; its output:\n${output}`))
    }
    const timer = setTimeout(() => fail("did not start in time"), options.startTimeoutMs ?? 60_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      const m = LISTENING.exec(output)
      if (m !== null && !settled) {
        settled = true
        clearTimeout(timer)
        resolve({ url: m[2]!.replace(/\/$/, ""), version: m[1]!, db, child, output: () => output, exited, stop })
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    exited.then(({ code, signal }) => {
      clearTimeout(timer)
      fail(`exited before listening (code ${code}, signal ${signal})`)
    })
  })
}
