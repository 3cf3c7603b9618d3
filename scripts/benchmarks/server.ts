/**
 * A real `gligabao serve` process (bin/gligabao.js) per scenario and configuration, on a SQLite
 * file, pointed at the in-process fake model servers; HTTP helpers that time requests and count
 * the ones that did not answer 200; the server's resident memory read from /proc.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import type { Fakes } from "./fakes.js"

export const ROOT = join(import.meta.dirname, "..", "..")

/**
 * The configurations compared side by side: the seed's one-at-a-time behaviour, the defaults,
 * and (throughput only, when the defaults miss its bar) 16 runs at once.
 */
export const CONFIGS = {
  seed: { GLIGABAO_REMEMBER_CONCURRENCY: "1", GLIGABAO_CHUNK_CONCURRENCY: "1", GLIGABAO_REMEMBER_LOOKAHEAD: "1" },
  defaults: {},
  "concurrency 16": { GLIGABAO_REMEMBER_CONCURRENCY: "16" }
} as const satisfies Record<string, Record<string, string>>
export type ConfigName = keyof typeof CONFIGS

export interface ServerOptions {
  /** a SQLite file, or a PostgreSQL URL (`postgres://...`, passed as DATABASE_URL) */
  readonly db: string
  readonly fakes: Fakes
  readonly config: ConfigName
  /** an empty gligabao.toml, so the figures are the built-in defaults whatever the repo's file says */
  readonly configFile: string
  /** embeddings (and sqlite-vec) on, at these dimensions; off when undefined */
  readonly embeddingDimensions?: number | undefined
  /** write a V8 CPU profile of the server into this directory when it stops */
  readonly profileDir?: string | undefined
  /** the CLI to run, relative to the repo (default bin/gligabao.js; e.g. a compiled src/cli/main.js) */
  readonly entry?: string | undefined
  /** count and time the server's SQL statements into this JSON file (sqlTrace.cjs) */
  readonly sqlTraceFile?: string | undefined
  /** the cpu scenario's probe (cpuProbe.cjs: statements and allocation) writes to this JSON file */
  readonly probeFile?: string | undefined
}

export interface Server {
  readonly url: string
  /** its SQLite file */
  readonly db: string
  readonly pid: number
  readonly config: ConfigName
  readonly stop: () => Promise<void>
}

/**
 * The environment and node flags `npm start` and bin/gligabao.js's shebang run the server with
 * (a test keeps the three equal). To try others: MALLOC_ARENA_MAX in the bench's environment
 * replaces the default, GLIGABAO_BENCH_NODE_OPTIONS naming a semi-space size replaces the flag,
 * and GLIGABAO_BENCH_NODE_FLAGS adds flags NODE_OPTIONS may not carry (`--single-threaded-gc`).
 */
export const SERVER_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "2" }
export const serverEnv = (): Record<string, string> =>
  process.env.MALLOC_ARENA_MAX === undefined ? { ...SERVER_ENV } : { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX }
export const SERVER_NODE_FLAGS: ReadonlyArray<string> = ["--max-semi-space-size=4"]
export const serverNodeFlags = (): ReadonlyArray<string> => [
  ...(/semi-space/.test(process.env.GLIGABAO_BENCH_NODE_OPTIONS ?? "") ? [] : SERVER_NODE_FLAGS),
  ...(process.env.GLIGABAO_BENCH_NODE_FLAGS ?? "").split(/\s+/).filter((flag) => flag !== "")
]

/**
 * The environment of a `gligabao` child (a server, or an import): the bench's own GLIGABAO_*
 * variables (to try a setting: GLIGABAO_DATABASE_MMAP_SIZE=1073741824 scripts/bench --only
 * search), the fake model servers, the configuration's variables, the node options to try.
 */
export const isPgUrl = (db: string | undefined) => db?.startsWith("postgres://") === true

export const childEnv = (
  options: Omit<ServerOptions, "db" | "profileDir" | "entry"> & { readonly db?: string }
): Record<string, string> => {
  const passed = Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith("GLIGABAO_") && e[1] !== undefined)
  )
  const env: Record<string, string> = {
    ...passed,
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    ANTHROPIC_API_KEY: "bench",
    ANTHROPIC_BASE_URL: options.fakes.anthropicUrl,
    GLIGABAO_LOG_LEVEL: "warning",
    ...serverEnv(),
    GLIGABAO_CONFIG: options.configFile,
    ...CONFIGS[options.config]
  }
  if (options.embeddingDimensions !== undefined) {
    env.OPENAI_API_KEY = "bench"
    env.GLIGABAO_EMBEDDING_BASE_URL = options.fakes.openAiUrl
    env.GLIGABAO_EMBEDDING_DIMENSIONS = String(options.embeddingDimensions)
  }
  // node flags to try on the server (GLIGABAO_BENCH_NODE_OPTIONS="--max-semi-space-size=4"):
  // the bench's own NODE_OPTIONS belong to the bench (tsx)
  const nodeOptions = [process.env.GLIGABAO_BENCH_NODE_OPTIONS ?? ""]
  if (options.sqlTraceFile !== undefined) {
    mkdirSync(dirname(options.sqlTraceFile), { recursive: true })
    nodeOptions.push(`--require ${join(ROOT, "scripts", "benchmarks", "sqlTrace.cjs")}`)
    env.GLIGABAO_BENCH_SQL_TRACE = options.sqlTraceFile
  }
  if (options.probeFile !== undefined) {
    nodeOptions.push(`--require ${join(ROOT, "scripts", "benchmarks", "cpuProbe.cjs")}`)
    env.GLIGABAO_BENCH_PROBE = options.probeFile
    if (isPgUrl(options.db)) env.GLIGABAO_BENCH_PROBE_PG = "1"
  }
  if (options.db !== undefined && isPgUrl(options.db)) env.DATABASE_URL = options.db
  const joined = nodeOptions.filter((o) => o.trim() !== "").join(" ")
  if (joined !== "") env.NODE_OPTIONS = joined
  return env
}

/** node's arguments up to the CLI's own: the flags, a CPU profile if asked, the entry. */
export const childArgs = (options: Pick<ServerOptions, "profileDir" | "entry">): Array<string> => {
  // (NODE_OPTIONS may not carry --cpu-prof)
  const profile = options.profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${options.profileDir}`]
  if (options.profileDir !== undefined) mkdirSync(options.profileDir, { recursive: true })
  // bin/gligabao.js sets V8's heap growing (GLIGABAO_HEAP_GROWING_PERCENT, 25 by default); an
  // --entry bypasses it, so the flag goes on the command line instead (without it a 1 MiB
  // remember peaks near 500 MB, which once passed for a regression of the change under test)
  const growing = process.env.GLIGABAO_HEAP_GROWING_PERCENT ?? "25"
  const heap = options.entry === undefined || !/^\d+$/.test(growing) || growing === "0"
    ? []
    : [`--heap-growing-percent=${growing}`]
  return [...serverNodeFlags(), ...profile, ...heap, options.entry ?? "bin/gligabao.js"]
}

export const startServer = (options: ServerOptions): Promise<Server> =>
  new Promise((resolve, reject) => {
    const env = childEnv(options)
    const child = spawn(process.execPath, [
      ...childArgs(options),
      "serve",
      "--port",
      "0",
      ...(isPgUrl(options.db) ? [] : ["--db", options.db])
    ], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    let up = false
    child.stdout!.on("data", (chunk) => {
      out += chunk
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m && !up) {
        up = true
        resolve({ url: m[1]!, db: options.db, pid: child.pid!, config: options.config, stop: () => stopServer(child) })
      }
    })
    // kept for the error message of a server that dies; the rest is noise (startup warnings)
    child.stderr!.on("data", (chunk) => (err = (err + chunk).slice(-4000)))
    child.on("exit", (code) => {
      if (!up) reject(new Error(`gligabao serve exited with ${code} before listening: ${out}${err}`))
      else if (code !== 0 && code !== null) {
        process.stderr.write(`gligabao serve (${options.config}) exited with ${code}: ${err}\n`)
      }
    })
  })

const stopServer = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill("SIGTERM")
  })

/** Runs `gligabao migrate` on a new SQLite file. */
export const migrate = (db: string, configFile: string) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/gligabao.js", "migrate", "--db", db], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", GLIGABAO_CONFIG: configFile },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let err = ""
    child.stderr!.on("data", (chunk) => (err += chunk))
    child.on(
      "exit",
      (code) => (code === 0 ? resolve() : reject(new Error(`gligabao migrate exited with ${code}: ${err}`)))
    )
  })

/** Requests that answered something other than 200: a correctness failure of the bench. */
export const httpFailures: Array<string> = []
export let httpRequests = 0

export class RequestFailed extends Error {}

export interface Answer<A> {
  readonly ms: number
  readonly body: A
}

export const request = async <A = any>(method: "GET" | "POST", url: string, body?: unknown): Promise<Answer<A>> => {
  httpRequests += 1
  const t0 = performance.now()
  const res = await fetch(url, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } })
  })
  const text = await res.text()
  const ms = performance.now() - t0
  if (res.status !== 200) {
    const failure = `${method} ${new URL(url).pathname} answered ${res.status}: ${text.slice(0, 300)}`
    httpFailures.push(failure)
    throw new RequestFailed(failure)
  }
  return { ms, body: JSON.parse(text) as A }
}

export const remember = (server: Server, body: Record<string, unknown>) =>
  request<RememberAnswer>("POST", `${server.url}/v1/gb/remember`, body)

export interface RememberAnswer {
  readonly remember_run_id: number
  readonly artifact_id: number
  readonly chunks?: ReadonlyArray<unknown>
}

const statusKiB = (pid: number, field: "VmRSS" | "VmHWM"): number => {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return m ? Number(m[1]) : NaN
  } catch {
    return NaN
  }
}

/** MB (10^6 bytes, the unit of the bar) in a MiB */
export const MB = 2 ** 20 / 1e6

export const rssMiB = (pid: number) => statusKiB(pid, "VmRSS") / 1024
/** the peak resident set of the process's life so far */
export const hwmMiB = (pid: number) => statusKiB(pid, "VmHWM") / 1024

/** Polls the process's resident set every `everyMs`; `stop` gives the highest seen. */
export const sampleRss = (pid: number, everyMs = 50) => {
  let peak = rssMiB(pid)
  const timer = setInterval(() => {
    const now = rssMiB(pid)
    if (now > peak) peak = now
  }, everyMs)
  return {
    stop: () => {
      clearInterval(timer)
      const now = rssMiB(pid)
      return Math.max(peak, Number.isNaN(now) ? 0 : now)
    }
  }
}
