/**
 * Which parts of gligabao make the Effect runtime's operations (issue 39): the real server built
 * in this process as `gligabao serve` builds it (SQLite with sqlite-vec in a temp file, the real
 * pipeline, RememberManager and HTTP handlers), over the bench's fake model servers at 0 ms
 * (scripts/benchmarks/fakes.ts), driven with the cpu scenario's workload over HTTP (fetch, outside
 * Effect): texts "A knows B. C knows D. E knows F." from a cast of 16 into 8 datasets, then
 * hybrid searches "Who does X know?".
 *
 *   npx tsx scripts/bench-ops.ts [--texts N] [--sample K] [--top 40]
 *
 * Every operation the fiber runtime executes (one turn of its run loop) is counted by a
 * Supervisor (scripts/benchmarks/effectOps.ts) under RuntimeFlags.OpSupervision, both set on the
 * top-level program so that every fiber inherits them (the HTTP server's request fibers, the
 * manager's runs, daemons): by kind, by innermost span and by every span above it, and every K-th
 * operation (default 101) by the source lines of src/ and layers/ on its fiber's stack. The
 * measured remembers and searches run in two halves: a deterministic workload counts about the
 * same in each.
 *
 * Prints markdown tables; writes build/bench/ops-<stamp>.json.
 */
import { Effect, RuntimeFlags, RuntimeFlagsPatch } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { DATASETS, DIMS, rememberNext, search, settle, warmUp } from "./benchmarks/cpuWorkload.js"
import {
  bump,
  closeInspector,
  newPhase,
  OpCounter,
  type Phase,
  startPhase,
  stopPhase,
  TALLIES,
  TALLY_NAMES,
  watchRunLoops
} from "./benchmarks/effectOps.js"
import { type Fakes, type ModelCall, startFakes } from "./benchmarks/fakes.js"
import { positiveOption, withInProcessServer } from "./benchmarks/inProcess.js"

const option = (flag: string, fallback: number) => positiveOption(process.argv.slice(2), flag, fallback)
const TEXTS = option("--texts", 48)
const SAMPLE_EVERY = option("--sample", 101)
const TOP = option("--top", 40)
const ROOT = join(import.meta.dirname, "..")

// ---- the app, as `gligabao serve` composes it (scripts/benchmarks/inProcess.ts) ----

const main = async () => {
  const fakes = await startFakes(0)
  const counter = new OpCounter()
  watchRunLoops()
  try {
    const results = await withInProcessServer(
      fakes,
      (url) => drive(url, fakes),
      (program) =>
        program.pipe(
          Effect.supervised(counter),
          Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))
        )
    )
    report(results)
  } finally {
    await fakes.close()
    closeInspector()
  }
}

interface Measured {
  readonly phase: Phase
  readonly operations: number
  readonly wallMs: number
}
const measure = async (operations: number, f: (i: number) => Promise<unknown>): Promise<Measured> => {
  const t0 = performance.now()
  const p = startPhase(SAMPLE_EVERY)
  for (let i = 0; i < operations; i++) await f(i)
  await settle()
  stopPhase()
  return { phase: p, operations, wallMs: performance.now() - t0 }
}

interface Results {
  readonly remembers: ReadonlyArray<Measured>
  readonly searches: ReadonlyArray<Measured>
  readonly llmCalls: number
  readonly embeddingCalls: number
}

const drive = async (url: string, fakes: Fakes): Promise<Results> => {
  // JIT, prepared statements, caches: two texts a dataset (the second makes both model calls)
  await warmUp(url)
  // two halves of each, so that the counts can be compared run to run
  const half = Math.max(1, Math.floor(TEXTS / 2))
  const remembers: Array<Measured> = []
  const searches: Array<Measured> = []
  const before = performance.now()
  let done = 0
  for (const n of [half, TEXTS - half]) {
    if (n === 0) continue
    const from = done
    remembers.push(await measure(n, (i) => rememberNext(url, (from + i) % DATASETS)))
    done += n
  }
  const calls = fakes.between(before, performance.now())
  const count = (kind: ModelCall["kind"]) => calls.filter((c) => c.kind === kind).length
  done = 0
  for (const n of [half, TEXTS - half]) {
    if (n === 0) continue
    const from = done
    searches.push(await measure(n, (i) => search(url, from + i)))
    done += n
  }
  return { remembers, searches, llmCalls: count("llm"), embeddingCalls: count("embeddings") }
}

// ---- the report ----

const merge = (ms: ReadonlyArray<Measured>): Measured => {
  const p = newPhase(SAMPLE_EVERY)
  for (const { phase: q } of ms) {
    for (const k of ["ops", "forks", "supervisedTurns", "unsupervisedTurns", "samples", "sampleMs"] as const) {
      p[k] += q[k]
    }
    for (const f of q.unsupervisedFibers) p.unsupervisedFibers.add(f)
    for (const k of TALLY_NAMES) for (const [name, n] of q.t[k]) bump(p.t[k], name, n)
  }
  return {
    phase: p,
    operations: ms.reduce((a, m) => a + m.operations, 0),
    wallMs: ms.reduce((a, m) => a + m.wallMs, 0)
  }
}

const fmt = (x: number) => (x >= 100 ? Math.round(x).toLocaleString("en") : x.toFixed(1))
const pct = (x: number, total: number) => `${(100 * x / total).toFixed(1)}%`
const top = (m: Map<string, number>, n = TOP) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n)

const json = (m: Measured) => {
  const per = (x: number) => x / m.operations
  const p = m.phase
  return {
    operations: m.operations,
    wall_ms: m.wallMs,
    ops_per_operation: per(p.ops),
    fibers_forked_per_operation: per(p.forks),
    supervised_run_loop_turns_per_operation: per(p.supervisedTurns),
    unsupervised_run_loop_turns_per_operation: per(p.unsupervisedTurns),
    unsupervised_fibers: p.unsupervisedFibers.size,
    samples: p.samples,
    sample_every: SAMPLE_EVERY,
    ...Object.fromEntries(
      TALLY_NAMES.map((k) => [TALLIES[k].json, Object.fromEntries(top(p.t[k], Infinity).map(([n, v]) => [n, per(v)]))])
    )
  }
}

const section = (what: string, halves: ReadonlyArray<Measured>) => {
  const all = merge(halves)
  const p = all.phase
  const per = all.operations
  const plural = `${what}${what.endsWith("h") ? "es" : "s"}`
  console.log(`\n## Per ${what} (${per} ${plural} after the warm-up, 0 ms models, ${DIMS} dimensions)\n`)
  console.log(`- Effect operations per ${what}: **${fmt(p.ops / per)}**`)
  console.log(
    `- run to run: ${halves.map((h) => `${fmt(h.phase.ops / h.operations)} (${h.operations} ${plural})`).join(" vs ")}`
  )
  console.log(`- fibers forked per ${what}: ${fmt(p.forks / per)}`)
  console.log(
    `- run-loop turns per ${what}: ${fmt(p.supervisedTurns / per)} supervised, ${
      fmt(p.unsupervisedTurns / per)
    } without supervision (${p.unsupervisedFibers.size} fibers in all: their operations are not counted)`
  )
  console.log(
    `- sampled stacks: ${p.samples} (every ${SAMPLE_EVERY}th operation; ${fmt(p.sampleMs)} ms spent sampling)`
  )
  for (const k of TALLY_NAMES) {
    const { head, sampled, title } = TALLIES[k]
    const total = k === "forksBySpan" ? p.forks : sampled ? p.samples * SAMPLE_EVERY : p.ops
    console.log(`\n### ${title} (${sampled ? `sampled every ${SAMPLE_EVERY}th operation; ` : ""}top ${TOP})\n`)
    console.log(`| ${head} | ${sampled ? "≈ " : ""}${k === "forksBySpan" ? "fibers" : "ops"} per ${what} | share |`)
    console.log("| --- | ---: | ---: |")
    for (const [name, n] of top(p.t[k])) {
      console.log(`| \`${name.replace(/\|/g, "\\|")}\` | ${fmt(n / per)} | ${pct(n, total)} |`)
    }
  }
  return json(all)
}

const report = (r: Results) => {
  console.log(`# Effect operations per remember and per search (scripts/bench-ops.ts)`)
  const rememberJson = section("remember", r.remembers)
  const searchJson = section("search", r.searches)
  console.log(
    `\nmodel calls per remember: ${fmt(r.llmCalls / TEXTS)} LLM, ${fmt(r.embeddingCalls / TEXTS)} embeddings requests`
  )
  const stamp = new Date().toISOString().replace(/:/g, "-").replace(/\.\d+Z$/, "Z")
  const out = join(ROOT, "build", "bench", `ops-${stamp}.json`)
  mkdirSync(join(ROOT, "build", "bench"), { recursive: true })
  writeFileSync(
    out,
    JSON.stringify(
      {
        texts: TEXTS,
        datasets: DATASETS,
        dims: DIMS,
        sample_every: SAMPLE_EVERY,
        llm_calls_per_remember: r.llmCalls / TEXTS,
        embeddings_requests_per_remember: r.embeddingCalls / TEXTS,
        remember: rememberJson,
        remember_halves: r.remembers.map((m) => ({ operations: m.operations, ops: m.phase.ops })),
        search: searchJson,
        search_halves: r.searches.map((m) => ({ operations: m.operations, ops: m.phase.ops }))
      },
      null,
      2
    )
  )
  console.log(`\nwrote ${relative(ROOT, out)}`)
}

await main()
