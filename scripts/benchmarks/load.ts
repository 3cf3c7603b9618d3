/**
 * The load test of issue 13 (scripts/load, BENCHMARKS.md): N clients for T seconds against one
 * real `gligabao serve` on a temporary SQLite file and the bench's fake model servers. Each
 * client loops remembering generated texts into its dataset, with a search every few
 * remembers; the server's RSS is sampled meanwhile. Then the server is stopped and the file is
 * checked. Timings are figures; only the checks can fail.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { openReadonly } from "./db.js"
import { startFakes } from "./fakes.js"
import { MB, ROOT, rssMiB, serverEnv, serverNodeFlags } from "./server.js"
import { makeRandom, paragraph, people } from "./texts.js"

export interface LoadOptions {
  readonly clients: number
  readonly seconds: number
  /** the fake models' latency per call, ms */
  readonly latencyMs: number
  /** distinct datasets written at once; client i writes `d{i mod datasets}` */
  readonly datasets: number
  /**
   * texts a dataset takes before its writers move on to the next generation of it (`d3.1`,
   * `d3.2`, ...); 0 (the default): one dataset grows for the whole run. Until issue 13's fix
   * the server stored an exact repeat twice once the older copy fell out of the newest 50
   * candidates, so the load ran with generations of 20; it no longer needs to.
   */
  readonly textsPerDataset?: number
  /** a search after every this many remembers */
  readonly searchEvery?: number
  /** embedding dimensions (embeddings and sqlite-vec are on) */
  readonly dims?: number
  /** the throughput window, s (default 10, or a third of the run when it is shorter than 30 s) */
  readonly windowSeconds?: number
  /** the server's gligabao.toml (default empty: the built-in defaults) */
  readonly configToml?: string
  readonly log?: (message: string) => void
}

export interface Percentiles {
  readonly n: number
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly max: number
}

export interface LoadCheck {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

export interface LoadResult {
  readonly options: Required<Omit<LoadOptions, "log" | "configToml">>
  readonly seconds: number
  readonly requests: { readonly remember: number; readonly search: number; readonly total: number }
  readonly errors: { readonly count: number; readonly first: ReadonlyArray<string> }
  /** remembers a second over the whole run (its tail included), and in each whole window of the nominal run */
  readonly throughput: {
    readonly remembersPerSecond: number
    readonly windows: ReadonlyArray<number>
    readonly searchesPerSecond: number
  }
  readonly latencyMs: { readonly remember: Percentiles; readonly search: Percentiles }
  /** the server's resident set, MB; slope over the second half of the run, MB a minute */
  readonly rssMB: {
    readonly start: number
    readonly afterWarmUp: number
    readonly max: number
    readonly end: number
    readonly slopeSecondHalfMBPerMin: number
    /** the highest RSS between the warm-up and the middle, and after the middle: peaks that do not climb */
    readonly maxFirstHalf: number
    readonly maxSecondHalf: number
    readonly samples: number
    /** [s, MB], one a second (the last sample of each second) */
    readonly series: ReadonlyArray<readonly [number, number]>
  }
  readonly checks: ReadonlyArray<LoadCheck>
  readonly ok: boolean
}

/** Clients 0..SHARING-1 also write into one shared dataset, every SHARED_EVERY-th remember. */
const SHARING = 3
const SHARED_EVERY = 3
const SHARED = "shared"
const USER = "load"

export const percentiles = (xs: ReadonlyArray<number>): Percentiles => {
  const s = [...xs].sort((a, b) => a - b)
  const q = (p: number) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)] ?? NaN
  return { n: s.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), max: s[s.length - 1] ?? NaN }
}

/** Least-squares slope of y over x. */
export const slope = (points: ReadonlyArray<readonly [number, number]>): number => {
  const n = points.length
  if (n < 2) return NaN
  const mx = points.reduce((a, [x]) => a + x, 0) / n
  const my = points.reduce((a, [, y]) => a + y, 0) / n
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0)
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0)
  return sxx === 0 ? NaN : sxy / sxx
}

export interface Spawned {
  readonly url: string
  readonly pid: number
  /** SIGTERM, then the exit code (null when it had to be killed) */
  readonly stop: () => Promise<{ code: number | null; signal: string | null }>
}

/**
 * Like server.ts's startServer, but the stop reports how the process ended (a check). `db` is a
 * SQLite file, or a PostgreSQL URL (`postgres://...`, passed as DATABASE_URL).
 */
export const spawnServer = (db: string, configFile: string, anthropicUrl: string, openAiUrl: string, dims: number) =>
  new Promise<Spawned>((resolve, reject) => {
    const postgres = db.startsWith("postgres://")
    const child: ChildProcess = spawn(process.execPath, [
      ...serverNodeFlags(),
      ...(process.env.GLIGABAO_BENCH_CPU_PROF_DIR === undefined
        ? []
        : ["--cpu-prof", `--cpu-prof-dir=${process.env.GLIGABAO_BENCH_CPU_PROF_DIR}`]),
      "bin/gligabao.js",
      "serve",
      "--port",
      "0",
      ...(postgres ? [] : ["--db", db])
    ], {
      cwd: ROOT,
      env: {
        ...serverEnv(),
        ...(postgres ? { DATABASE_URL: db } : {}),
        // diagnostics a run asks for (scripts/load --loop-delay, --cpu-prof): preloads and their files
        ...Object.fromEntries(
          Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith("GLIGABAO_BENCH_"))
        ),
        ...(process.env.GLIGABAO_BENCH_NODE_OPTIONS === undefined
          ? {}
          : { NODE_OPTIONS: process.env.GLIGABAO_BENCH_NODE_OPTIONS }),
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        ANTHROPIC_API_KEY: "load",
        ANTHROPIC_BASE_URL: anthropicUrl,
        OPENAI_API_KEY: "load",
        GLIGABAO_EMBEDDING_BASE_URL: openAiUrl,
        GLIGABAO_EMBEDDING_DIMENSIONS: String(dims),
        GLIGABAO_LOG_LEVEL: "warning",
        GLIGABAO_CONFIG: configFile
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    let up = false
    const exited = new Promise<{ code: number | null; signal: string | null }>((done) =>
      child.once("exit", (code, signal) => done({ code, signal }))
    )
    child.stdout!.on("data", (chunk) => {
      out += chunk
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m && !up) {
        up = true
        resolve({
          url: m[1]!,
          pid: child.pid!,
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) {
              const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
              child.kill("SIGTERM")
              const r = await exited
              clearTimeout(timer)
              return r
            }
            return exited
          }
        })
      }
    })
    child.stderr!.on("data", (chunk) => (err = (err + chunk).slice(-4000)))
    child.once("exit", (code) => {
      if (!up) reject(new Error(`gligabao serve exited with ${code} before listening: ${out}${err}`))
    })
  })

/**
 * POSTs `body` to `/v1/gb/<endpoint>`: the parsed answer of a 200 and its time, ms, or what went
 * wrong (another status and the start of its body, or the request's failure).
 */
export const postTimed = async (
  url: string,
  endpoint: string,
  body: Record<string, unknown>
): Promise<{ readonly ms: number; readonly body: unknown } | string> => {
  const start = performance.now()
  try {
    const res = await fetch(`${url}/v1/gb/${endpoint}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" }
    })
    const text = await res.text()
    const ms = performance.now() - start
    return res.status === 200 ? { ms, body: JSON.parse(text) } : `answered ${res.status}: ${text.slice(0, 200)}`
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

interface Done {
  readonly endpoint: "remember" | "search"
  /** completion, ms since the load began */
  readonly at: number
  readonly ms: number
}

export const runLoad = async (input: LoadOptions): Promise<LoadResult> => {
  const options = {
    clients: input.clients,
    seconds: input.seconds,
    latencyMs: input.latencyMs,
    datasets: Math.max(1, Math.min(input.datasets, input.clients)),
    searchEvery: input.searchEvery ?? 4,
    textsPerDataset: input.textsPerDataset ?? 0,
    dims: input.dims ?? 1536,
    windowSeconds: input.windowSeconds ?? (input.seconds < 30 ? input.seconds / 3 : 10)
  }
  const log = input.log ?? (() => {})
  const dir = mkdtempSync(join(tmpdir(), "gligabao-load-"))
  const configFile = join(dir, "gligabao.toml")
  writeFileSync(configFile, input.configToml ?? "# the load test runs on the built-in defaults\n")
  const db = join(dir, "load.db")
  const fakes = await startFakes(options.latencyMs)
  try {
    const server = await spawnServer(db, configFile, fakes.anthropicUrl, fakes.openAiUrl, options.dims)
    let stopped: { code: number | null; signal: string | null } | undefined
    try {
      const done: Array<Done> = []
      const errors: Array<string> = []
      /** run ids each client was given, per dataset */
      const given = Array.from({ length: options.clients }, () => new Map<string, Array<number>>())
      const rss: Array<readonly [number, number]> = []
      const rssStart = rssMiB(server.pid) * MB
      const t0 = performance.now()
      const sampler = setInterval(() => {
        const mb = rssMiB(server.pid) * MB
        if (!Number.isNaN(mb)) rss.push([(performance.now() - t0) / 1000, mb])
      }, 250)
      const deadline = t0 + options.seconds * 1000

      const post = async (client: number, endpoint: Done["endpoint"], body: Record<string, unknown>) => {
        const answer = await postTimed(server.url, endpoint, body)
        if (typeof answer === "string") {
          errors.push(`client ${client} ${endpoint} ${answer}`)
          return undefined
        }
        done.push({ endpoint, at: performance.now() - t0, ms: answer.ms })
        return answer.body as { remember_run_id?: number }
      }

      // remembers begun per dataset, across the clients sharing it: its generation
      const begun = new Map<string, number>()
      const generation = (base: string) => {
        const n = begun.get(base) ?? 0
        begun.set(base, n + 1)
        return options.textsPerDataset > 0 ? `${base}.${Math.floor(n / options.textsPerDataset)}` : base
      }
      const client = async (k: number) => {
        const base = `d${k % options.datasets}`
        const cast = people(6, 100 + (k % options.datasets))
        const sharedCast = people(6, 99)
        const random = makeRandom(1000 + k)
        // the dataset this client last remembered into: one that exists (a newer generation
        // another client has begun may not yet)
        let own: string | undefined
        for (let i = 0; performance.now() < deadline; i++) {
          const shared = k < SHARING && i % SHARED_EVERY === SHARED_EVERY - 1
          const dataset = generation(shared ? SHARED : base)
          const text = paragraph(random, shared ? sharedCast : cast, 3, 2)
          const answer = await post(k, "remember", { user_id: USER, dataset, text })
          if (typeof answer?.remember_run_id === "number") {
            const ids = given[k]!.get(dataset) ?? []
            ids.push(answer.remember_run_id)
            given[k]!.set(dataset, ids)
            if (!shared) own = dataset
          }
          if (
            own !== undefined && i % options.searchEvery === options.searchEvery - 1 && performance.now() < deadline
          ) {
            const query = cast[Math.floor(random() * cast.length)]!
            await post(k, "search", { user_id: USER, dataset: own, query, limit: 10 })
          }
        }
      }
      log(
        `load: ${options.clients} clients, ${options.datasets} datasets (+ "${SHARED}" for ${
          Math.min(SHARING, options.clients)
        }), ${
          options.textsPerDataset > 0
            ? `a new generation every ${options.textsPerDataset} texts`
            : "datasets growing for the whole run"
        }, ${options.seconds} s, ${options.latencyMs} ms models`
      )
      await Promise.all(Array.from({ length: options.clients }, (_, k) => client(k)))
      const seconds = (performance.now() - t0) / 1000
      clearInterval(sampler)
      const rssEnd = rssMiB(server.pid) * MB
      stopped = await server.stop()
      log(
        `load: ${done.length} requests in ${seconds.toFixed(1)} s; server stopped (${stopped.code ?? stopped.signal})`
      )

      const remembers = done.filter((d) => d.endpoint === "remember")
      const searches = done.filter((d) => d.endpoint === "search")
      const windowMs = options.windowSeconds * 1000
      // whole windows of the nominal run: the tail after the deadline (requests finishing) is no window
      const windows = Array.from(
        { length: Math.max(1, Math.floor(options.seconds / options.windowSeconds + 1e-9)) },
        (_, w) => {
          const from = w * windowMs
          return remembers.filter((d) => d.at >= from && d.at < from + windowMs).length / options.windowSeconds
        }
      )
      const warmUp = Math.min(10, options.seconds / 6)
      const afterWarmUp = rss.find(([t]) => t >= warmUp)?.[1] ?? NaN
      const secondHalf = rss.filter(([t]) => t >= seconds / 2).map(([t, mb]) => [t / 60, mb] as const)

      const checks = check(db, stopped, errors, given)
      const result: LoadResult = {
        options,
        seconds,
        requests: { remember: remembers.length, search: searches.length, total: done.length + errors.length },
        errors: { count: errors.length, first: errors.slice(0, 5) },
        throughput: {
          remembersPerSecond: remembers.length / seconds,
          windows,
          searchesPerSecond: searches.length / seconds
        },
        latencyMs: {
          remember: percentiles(remembers.map((d) => d.ms)),
          search: percentiles(searches.map((d) => d.ms))
        },
        rssMB: {
          start: rssStart,
          afterWarmUp,
          max: Math.max(rssStart, rssEnd, ...rss.map(([, mb]) => mb)),
          end: rssEnd,
          slopeSecondHalfMBPerMin: slope(secondHalf),
          maxFirstHalf: Math.max(...rss.filter(([t]) => t >= warmUp && t < seconds / 2).map(([, mb]) => mb)),
          maxSecondHalf: Math.max(...rss.filter(([t]) => t >= seconds / 2).map(([, mb]) => mb)),
          samples: rss.length,
          series: [...new Map(rss.map(([t, mb]) => [Math.floor(t), [Math.floor(t), Math.round(mb)] as const])).values()]
        },
        checks,
        ok: checks.every((c) => c.ok)
      }
      return result
    } finally {
      if (stopped === undefined) await server.stop()
    }
  } finally {
    await fakes.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The correctness checks, on the stopped server's file. */
const check = (
  file: string,
  stopped: { code: number | null; signal: string | null },
  errors: ReadonlyArray<string>,
  given: ReadonlyArray<Map<string, Array<number>>>
): Array<LoadCheck> => {
  const checks: Array<LoadCheck> = []
  const add = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail })
  add(
    "the server stopped cleanly on SIGTERM",
    stopped.code === 0,
    `exit code ${stopped.code}, signal ${stopped.signal}`
  )
  add(
    "every request answered 200",
    errors.length === 0,
    errors.length === 0 ? "" : `${errors.length} failed, first: ${errors[0]}`
  )
  const db = openReadonly(file)
  try {
    const integrity = db.prepare("PRAGMA integrity_check").pluck().all() as Array<string>
    add("PRAGMA integrity_check", integrity.length === 1 && integrity[0] === "ok", integrity.slice(0, 3).join("; "))
    const entities = db.prepare(
      "SELECT dataset_id, name_key, type FROM gb_entities GROUP BY 1, 2, 3 HAVING COUNT(*) > 1"
    ).all().length
    add("no duplicate entities (dataset_id, name_key, type)", entities === 0, `${entities} duplicated`)
    const edges = db.prepare(
      "SELECT dataset_id, source_id, target_id, relation FROM gb_edges WHERE expired_at IS NULL GROUP BY 1, 2, 3, 4 HAVING COUNT(*) > 1"
    ).all().length
    add("no live fact stored twice", edges === 0, `${edges} duplicated live (source, target, relation)`)
    const runs = db.prepare("SELECT id, dataset, status FROM gb_remember_runs WHERE user_id = ?").all(USER) as Array<
      { id: number; dataset: string; status: string }
    >
    const notSucceeded = runs.filter((r) => r.status !== "succeeded")
    add(
      "every run succeeded",
      notSucceeded.length === 0,
      notSucceeded.length === 0
        ? `${runs.length} runs`
        : `${notSucceeded.length} of ${runs.length}: ${[...new Set(notSucceeded.map((r) => r.status))].join(", ")}`
    )
    // each client's answers against the log: its run ids are there, in its datasets, and every
    // logged run was answered to some client (no run lost, none the clients were not told of)
    const byId = new Map(runs.map((r) => [r.id, r]))
    const answered = new Set<number>()
    const wrong: Array<string> = []
    for (const [k, datasets] of given.entries()) {
      for (const [dataset, ids] of datasets) {
        const logged = ids.filter((id) => byId.get(id)?.dataset === dataset).length
        if (logged !== ids.length) wrong.push(`client ${k} ${dataset}: ${ids.length} answered, ${logged} in the log`)
        for (const id of ids) answered.add(id)
      }
    }
    const perDataset = new Map<string, number>()
    for (const r of runs) perDataset.set(r.dataset, (perDataset.get(r.dataset) ?? 0) + 1)
    const answeredPerDataset = new Map<string, number>()
    for (const datasets of given) {
      for (const [d, ids] of datasets) answeredPerDataset.set(d, (answeredPerDataset.get(d) ?? 0) + ids.length)
    }
    for (const [d, n] of perDataset) {
      if (answeredPerDataset.get(d) !== n) {
        wrong.push(`${d}: ${n} in the log, ${answeredPerDataset.get(d) ?? 0} answered`)
      }
    }
    add(
      "each client's runs are in the run log, and the log holds no others",
      wrong.length === 0 && answered.size === runs.length,
      wrong.length === 0 ? `${answered.size} answered, ${runs.length} logged` : wrong.slice(0, 3).join("; ")
    )
  } finally {
    db.close()
  }
  return checks
}
