/**
 * Reads under load (scripts/load --reads, scripts/bench --only reads_under_load): one real
 * `gligabao serve` and the bench's fake model servers. A reader dataset is remembered first (the
 * models answering at once); then one reader measures search and context over HTTP on the idle
 * server, and again while `writers` clients remember into datasets of their own with
 * `latencyMs` models. The reader's query embeddings are answered at once in both phases (they
 * are the provider's latency, not the server's); only the writers' model calls wait. Each answer
 * under load is compared with the idle answer to the same question. Timings are figures; only
 * the checks (every request 200, the same answers) can fail.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startFakes } from "./fakes.js"
import { type LoadCheck, type Percentiles, percentiles, postTimed, slope, spawnServer } from "./load.js"
import { MB, rssMiB } from "./server.js"
import { makeRandom, paragraph, people } from "./texts.js"

export interface ReadsUnderLoadOptions {
  /** clients remembering during the load phase, each into a dataset of its own (default 16) */
  readonly writers?: number
  /** the writers' model latency per call, ms (default 200) */
  readonly latencyMs?: number
  /** texts remembered into the reader's dataset before measuring (3 facts each; default 270) */
  readonly readerTexts?: number
  /** reads per endpoint on the idle server (default 200) */
  readonly idleReads?: number
  /** length of the load phase, s (default 30) */
  readonly seconds?: number
  readonly dims?: number
  /** a SQLite file is made in a temporary directory unless this PostgreSQL URL is given */
  readonly databaseUrl?: string
  /** the server's gligabao.toml (default empty: the built-in defaults) */
  readonly configToml?: string
  readonly log?: (message: string) => void
}

export interface ReadFigures {
  readonly search: Percentiles
  readonly context: Percentiles
}

export interface ReadsUnderLoadResult {
  readonly options: Required<Omit<ReadsUnderLoadOptions, "log" | "configToml" | "databaseUrl">> & {
    readonly database: "sqlite" | "postgres"
  }
  /** live facts the reader's searches can find (the remembered dataset's size) */
  readonly readerFacts: number
  readonly idle: ReadFigures
  readonly underLoad: ReadFigures
  readonly remembers: { readonly count: number; readonly perSecond: number; readonly latency: Percentiles }
  readonly rssMB: {
    readonly start: number
    readonly max: number
    readonly end: number
    readonly slopeSecondHalfMBPerMin: number
  }
  /** reads under load whose fact ids differ from the idle answer to the same question, with the first */
  readonly differing: { readonly search: number; readonly context: number; readonly first: string }
  readonly checks: ReadonlyArray<LoadCheck>
  readonly ok: boolean
}

const USER = "load"
const READER = "reader"

/**
 * The reader's cast and the writers' share no first or last name. SQLite's bm25 weighs a term by
 * its frequency in the whole full-text table, every dataset's rows included, so writers using the
 * reader's words would change the order of its candidates (and so, rightly, its answers).
 */
const readerName = (name: string) => /^[A-J]/.test(name) && /^[A-K]/.test(name.split(" ")[1]!)
const writerName = (name: string) => /^[K-T]/.test(name) && /^[L-Z]/.test(name.split(" ")[1]!)
const castOf = (n: number, seed: number, keep: (name: string) => boolean) => people(300, seed).filter(keep).slice(0, n)

interface Answered {
  readonly ms: number
  readonly facts: ReadonlyArray<number>
  readonly warnings: ReadonlyArray<string>
}

export const runReadsUnderLoad = async (input: ReadsUnderLoadOptions = {}): Promise<ReadsUnderLoadResult> => {
  const options = {
    writers: input.writers ?? 16,
    latencyMs: input.latencyMs ?? 200,
    readerTexts: input.readerTexts ?? 270,
    idleReads: input.idleReads ?? 200,
    seconds: input.seconds ?? 30,
    dims: input.dims ?? 1536,
    database: input.databaseUrl === undefined ? "sqlite" as const : "postgres" as const
  }
  const log = input.log ?? (() => {})
  const cast = castOf(40, 7, readerName)
  const questions = cast
  const asked = new Set(questions)
  const fakes = await startFakes(0, (text) => asked.has(text))
  const dir = mkdtempSync(join(tmpdir(), "gligabao-reads-"))
  const configFile = join(dir, "gligabao.toml")
  writeFileSync(configFile, input.configToml ?? "# reads under load run on the built-in defaults\n")
  const server = await spawnServer(
    input.databaseUrl ?? join(dir, "reads.db"),
    configFile,
    fakes.anthropicUrl,
    fakes.openAiUrl,
    options.dims
  )
  const errors: Array<string> = []
  const post = async <A>(endpoint: string, body: Record<string, unknown>): Promise<{ ms: number; body: A } | null> => {
    const answer = await postTimed(server.url, endpoint, body)
    if (typeof answer !== "string") return answer as { ms: number; body: A }
    errors.push(`${endpoint} ${answer}`)
    return null
  }
  type FactsAnswer = { facts: Array<{ id: number }>; warnings?: Array<string> }
  const read = async (endpoint: "search" | "context", query: string): Promise<Answered | null> => {
    const answer = await post<FactsAnswer>(endpoint, {
      user_id: USER,
      dataset: READER,
      query,
      ...(endpoint === "search" ? { limit: 10 } : { max_tokens: 800 })
    })
    return answer === null ? null : {
      ms: answer.ms,
      facts: answer.body.facts.map((f) => f.id).sort((a, b) => a - b),
      warnings: answer.body.warnings ?? []
    }
  }

  try {
    // the reader's dataset, the models answering at once
    const t0 = performance.now()
    const random = makeRandom(77)
    const texts = Array.from({ length: options.readerTexts }, () => paragraph(random, cast, 3, 2))
    let next = 0
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (next < texts.length) {
        const text = texts[next++]!
        await post("remember", { user_id: USER, dataset: READER, text })
      }
    }))
    const listed = await fetch(`${server.url}/v1/gb/datasets?user_id=${USER}`).then((r) => r.json()) as {
      datasets: Array<{ name: string; live_edges: number }>
    }
    const readerFacts = listed.datasets.find((d) => d.name === READER)?.live_edges ?? NaN
    const graph = await fetch(`${server.url}/v1/gb/graph?user_id=${USER}&dataset=${READER}&include_expired=true`)
      .then((r) => r.json()) as { edges: Array<{ id: number }> }
    const readerFactIds = new Set(graph.edges.map((e) => e.id))
    log(`reads: ${texts.length} texts remembered into "${READER}" in ${((performance.now() - t0) / 1000).toFixed(0)} s`)

    // idle: every question once to warm up, then idleReads of each endpoint; the answers kept
    const expected = new Map<string, ReadonlyArray<number>>()
    for (const endpoint of ["search", "context"] as const) {
      for (const q of questions) {
        const a = await read(endpoint, q)
        if (a !== null) expected.set(`${endpoint} ${q}`, a.facts)
      }
    }
    const idle = { search: [] as Array<number>, context: [] as Array<number> }
    const unstable: Array<string> = []
    const compare = (into: Array<string>, endpoint: string, q: string, a: Answered) => {
      const want = expected.get(`${endpoint} ${q}`)
      if (want === undefined || want.join(",") !== a.facts.join(",")) {
        into.push(`${endpoint} "${q}": [${want?.join(",")}] then [${a.facts.join(",")}]`)
      }
    }
    for (let i = 0; i < options.idleReads * 2; i++) {
      const endpoint = i % 2 === 0 ? "search" : "context"
      const q = questions[Math.floor(i / 2) % questions.length]!
      const a = await read(endpoint, q)
      if (a === null) continue
      idle[endpoint].push(a.ms)
      compare(unstable, endpoint, q, a)
    }
    log(`reads: idle search p95 ${percentiles(idle.search).p95.toFixed(1)} ms`)

    // under load: writers remember with slow models while the reader reads as before
    fakes.setLatency(options.latencyMs)
    // the event-loop delay (scripts/load --loop-delay) of the load phase alone
    if (process.env.GLIGABAO_BENCH_LOOP_DELAY !== undefined) process.kill(server.pid, "SIGUSR2")
    const loaded = { search: [] as Array<number>, context: [] as Array<number> }
    const differing: Array<string> = []
    const outside: Array<string> = []
    const skipped: Array<string> = []
    const remembered: Array<{ at: number; ms: number }> = []
    const rss: Array<readonly [number, number]> = []
    const rssStart = rssMiB(server.pid) * MB
    const l0 = performance.now()
    const deadline = l0 + options.seconds * 1000
    const sampler = setInterval(() => {
      const mb = rssMiB(server.pid) * MB
      if (!Number.isNaN(mb)) rss.push([(performance.now() - l0) / 1000, mb])
    }, 250)
    const writer = async (k: number) => {
      const writerCast = castOf(6, 100 + k, writerName)
      const r = makeRandom(1000 + k)
      while (performance.now() < deadline) {
        const answer = await post("remember", { user_id: USER, dataset: `d${k}`, text: paragraph(r, writerCast, 3, 2) })
        if (answer !== null) remembered.push({ at: performance.now() - l0, ms: answer.ms })
      }
    }
    const reader = async () => {
      // the writers' first remembers are under way before the first read
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000, options.seconds * 100)))
      for (let i = 0; performance.now() < deadline; i++) {
        const endpoint = i % 2 === 0 ? "search" : "context"
        const q = questions[Math.floor(i / 2) % questions.length]!
        const a = await read(endpoint, q)
        if (a === null || performance.now() >= deadline) continue
        loaded[endpoint].push(a.ms)
        compare(differing, endpoint, q, a)
        const foreign = a.facts.filter((id) => !readerFactIds.has(id))
        if (foreign.length > 0) outside.push(`${endpoint} "${q}": ${foreign.join(",")}`)
        if (a.warnings.length > 0) skipped.push(`${endpoint} "${q}": ${a.warnings.join("; ")}`)
      }
    }
    await Promise.all([reader(), ...Array.from({ length: options.writers }, (_, k) => writer(k))])
    const seconds = (performance.now() - l0) / 1000
    clearInterval(sampler)
    const secondHalf = rss.filter(([t]) => t >= seconds / 2).map(([t, mb]) => [t / 60, mb] as const)

    // SQLite's bm25 weighs a term by the whole full-text table's statistics (its average row
    // length too), which the writers' rows move: candidates of near scores may change places, so
    // answers that differ from the idle ones are counted, not a failure (BENCHMARKS.md)
    const differingSearches = differing.filter((d) => d.startsWith("search"))
    const checks: Array<LoadCheck> = [
      {
        name: "every request answered 200",
        ok: errors.length === 0,
        detail: errors.length === 0 ? "" : `${errors.length} failed, first: ${errors[0]}`
      },
      {
        name: "the idle answers repeat themselves (the same fact ids)",
        ok: unstable.length === 0,
        detail: `${unstable.length} of ${idle.search.length + idle.context.length} differ${
          unstable.length === 0 ? "" : `, first: ${unstable[0]}`
        }`
      },
      {
        name: "every fact read under load is one of the reader's dataset",
        ok: outside.length === 0,
        detail: outside.length === 0 ? "" : `${outside.length} reads, first: ${outside[0]}`
      },
      {
        name: "no source skipped (no warnings)",
        ok: skipped.length === 0,
        detail: skipped.length === 0 ? "" : `${skipped.length}, first: ${skipped[0]}`
      }
    ]
    return {
      options,
      readerFacts,
      idle: { search: percentiles(idle.search), context: percentiles(idle.context) },
      underLoad: { search: percentiles(loaded.search), context: percentiles(loaded.context) },
      remembers: {
        count: remembered.length,
        perSecond: remembered.length / seconds,
        latency: percentiles(remembered.map((r) => r.ms))
      },
      rssMB: {
        start: rssStart,
        max: Math.max(rssStart, ...rss.map(([, mb]) => mb)),
        end: rss[rss.length - 1]?.[1] ?? NaN,
        slopeSecondHalfMBPerMin: slope(secondHalf)
      },
      differing: {
        search: differingSearches.length,
        context: differing.length - differingSearches.length,
        first: differing[0] ?? ""
      },
      checks,
      ok: checks.every((c) => c.ok)
    }
  } finally {
    await server.stop()
    await fakes.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
