/**
 * scripts/load: the load test of issue 13 (BENCHMARKS.md, "issue 13: load").
 *
 *   scripts/load [--clients N] [--seconds T] [--latency MS] [--datasets D] [--search-every K]
 *                [--texts-per-dataset G] [--dims N]
 *   scripts/load --reads [--clients N] [--seconds T] [--latency MS] [--dims N] [--pg URL|auto]
 *                [--loop-delay] [--cpu-prof] [--config FILE]
 *
 * N clients (default 16) for T seconds (default 60) against a real `gligabao serve` on a
 * temporary SQLite file and fake model servers in this process answering after MS ms (default
 * 200). Client i remembers generated texts into dataset d{i mod D} (D defaults to N: one each),
 * and the first three also into one shared dataset every third remember (the per-dataset lock);
 * every K-th remember (default 4) is followed by a search. With G, a dataset moves on
 * to a new generation every G texts (default 0: each dataset grows for the whole run). Prints requests,
 * errors, throughput (over the run and per 10 s window), p50/p95/p99 latency per endpoint, and
 * the server's RSS; then checks the stopped server's file. A failed check exits 1; timings never do. Writes
 * build/load/load-<time>.json and build/load/latest.json.
 *
 * `--reads`: the scenario "reads under load" (scripts/benchmarks/readsUnderLoad.ts): search and
 * context p50/p95/p99 on the idle server, then while N clients remember into N datasets with MS
 * ms models (T defaults to 30 there); on SQLite, or on PostgreSQL with `--pg` (`auto`: a
 * throwaway cluster). Writes build/load/reads-<time>.json. `--config` gives the server that
 * gligabao.toml (for A/B runs of a setting). `--loop-delay` records the server's event-loop
 * delay and garbage collections (scripts/benchmarks/loopDelay.cjs) into
 * build/load/loop-delay-<time>.json and prints them, `--cpu-prof` a V8 CPU profile into
 * build/load/profiles/<time>/ (read it with scripts/bench-profile.ts).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { cpus, loadavg } from "node:os"
import { join } from "node:path"
import { startPgCluster } from "../test/support/postgres.js"
import { type LoadResult, type Percentiles, runLoad } from "./benchmarks/load.js"
import { type ReadsUnderLoadResult, runReadsUnderLoad } from "./benchmarks/readsUnderLoad.js"
import { ROOT } from "./benchmarks/server.js"

const argv = process.argv.slice(2)
const number = (flag: string, fallback: number): number => {
  const i = argv.indexOf(flag)
  if (i === -1) return fallback
  const n = Number(argv[i + 1])
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`${flag} wants a positive number, got ${argv[i + 1]}`)
    process.exit(2)
  }
  return n
}

const clients = number("--clients", 16)
const options = {
  clients,
  seconds: number("--seconds", 60),
  latencyMs: number("--latency", 200),
  datasets: number("--datasets", clients),
  searchEvery: number("--search-every", 4),
  textsPerDataset: number("--texts-per-dataset", 0),
  dims: number("--dims", 1536)
}

const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : String(n))
const line = (name: string, p: Percentiles) =>
  `| ${name} | ${p.n} | ${f(p.p50)} | ${f(p.p95)} | ${f(p.p99)} | ${f(p.max)} |`

const render = (r: LoadResult, started: Date, load: ReadonlyArray<number>): string =>
  [
    `gligabao load, ${started.toISOString()}: ${r.options.clients} clients, ${r.options.datasets} datasets, ${r.options.seconds} s, ${r.options.latencyMs} ms models, ${r.options.dims} dimensions`,
    `machine: ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores, Node ${process.version}; load average ${
      load.map((x) => x.toFixed(2)).join(" ")
    } at the start, ${loadavg().map((x) => x.toFixed(2)).join(" ")} at the end`,
    "",
    `requests: ${r.requests.total} (${r.requests.remember} remembers, ${r.requests.search} searches) in ${
      f(r.seconds)
    } s; errors: ${r.errors.count}`,
    `throughput: ${f(r.throughput.remembersPerSecond, 2)} remembers/s, ${
      f(r.throughput.searchesPerSecond, 2)
    } searches/s; per ${f(r.options.windowSeconds, 0)} s window: ${
      r.throughput.windows.map((w) => f(w, 2)).join(", ")
    } remembers/s`,
    "",
    "| endpoint | n | p50 ms | p95 ms | p99 ms | max ms |",
    "| --- | --- | --- | --- | --- | --- |",
    line("POST /v1/gb/remember", r.latencyMs.remember),
    line("POST /v1/gb/search", r.latencyMs.search),
    "",
    `server RSS MB: ${f(r.rssMB.start, 0)} at the start, ${f(r.rssMB.afterWarmUp, 0)} after warm-up, ${
      f(r.rssMB.max, 0)
    } max, ${f(r.rssMB.end, 0)} at the end; highest ${f(r.rssMB.maxFirstHalf, 0)} from the warm-up to the middle, ${
      f(r.rssMB.maxSecondHalf, 0)
    } after it; slope over the second half ${
      f(r.rssMB.slopeSecondHalfMBPerMin, 2)
    } MB/min (${r.rssMB.samples} samples)`,
    "",
    "checks:",
    ...r.checks.map((c) => `- ${c.ok ? "ok  " : "FAIL"} ${c.name}${c.detail === "" ? "" : ` (${c.detail})`}`),
    ...(r.errors.first.length === 0 ? [] : ["", "first errors:", ...r.errors.first.map((e) => `- ${e}`)])
  ].join("\n")

const renderReads = (r: ReadsUnderLoadResult, started: Date, load: ReadonlyArray<number>): string =>
  [
    `gligabao reads under load, ${started.toISOString()}: ${r.options.database}, ${r.options.writers} writers, ${r.options.seconds} s, ${r.options.latencyMs} ms models, ${r.options.dims} dimensions; ${r.readerFacts} live facts in the reader's dataset`,
    `machine: ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores, Node ${process.version}; load average ${
      load.map((x) => x.toFixed(2)).join(" ")
    } at the start, ${loadavg().map((x) => x.toFixed(2)).join(" ")} at the end`,
    "",
    "| read | n | p50 ms | p95 ms | p99 ms | max ms |",
    "| --- | --- | --- | --- | --- | --- |",
    line("search, idle", r.idle.search),
    line("search, under load", r.underLoad.search),
    line("context, idle", r.idle.context),
    line("context, under load", r.underLoad.context),
    "",
    `search p95 under load / idle: ${f(r.underLoad.search.p95 / r.idle.search.p95, 2)}`,
    `answers under load unlike the idle answer to the same question: ${r.differing.search} of ${r.underLoad.search.n} searches, ${r.differing.context} of ${r.underLoad.context.n} context blocks${
      r.differing.first === "" ? "" : `; first: ${r.differing.first}`
    }`,
    `remembers: ${r.remembers.count}, ${f(r.remembers.perSecond, 2)}/s; p50 / p95 / p99 ${
      f(r.remembers.latency.p50)
    } / ${f(r.remembers.latency.p95)} / ${f(r.remembers.latency.p99)} ms`,
    `server RSS MB under load: ${f(r.rssMB.start, 0)} at the start, ${f(r.rssMB.max, 0)} max, ${
      f(r.rssMB.end, 0)
    } at the end; slope over the second half ${f(r.rssMB.slopeSecondHalfMBPerMin, 2)} MB/min`,
    "",
    "checks:",
    ...r.checks.map((c) => `- ${c.ok ? "ok  " : "FAIL"} ${c.name}${c.detail === "" ? "" : ` (${c.detail})`}`)
  ].join("\n")

const flag = (name: string): string | undefined => {
  const i = argv.indexOf(name)
  return i === -1 ? undefined : argv[i + 1]
}

const reads = async () => {
  const started = new Date()
  const load = loadavg()
  const t0 = performance.now()
  const pg = flag("--pg")
  const outDir = join(ROOT, "build", "load")
  const stamp = started.toISOString().replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z")
  if (argv.includes("--loop-delay")) {
    process.env.GLIGABAO_BENCH_LOOP_DELAY = join(outDir, `loop-delay-${stamp}.json`)
    // after the server's node options the caller gave, if any
    process.env.GLIGABAO_BENCH_NODE_OPTIONS = [
      process.env.GLIGABAO_BENCH_NODE_OPTIONS,
      `--require ${join(ROOT, "scripts", "benchmarks", "loopDelay.cjs")}`
    ].filter((o) => o !== undefined && o !== "").join(" ")
  }
  if (argv.includes("--cpu-prof")) process.env.GLIGABAO_BENCH_CPU_PROF_DIR = join(outDir, "profiles", stamp)
  mkdirSync(outDir, { recursive: true })
  const cluster = pg === "auto" ? await startPgCluster() : undefined
  try {
    const result = await runReadsUnderLoad({
      writers: clients,
      seconds: number("--seconds", 30),
      latencyMs: options.latencyMs,
      dims: options.dims,
      ...(pg === undefined ? {} : { databaseUrl: cluster?.adminUrl ?? pg }),
      ...(flag("--config") === undefined ? {} : { configToml: readFileSync(flag("--config")!, "utf8") }),
      log: (m) => process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${m}\n`)
    })
    writeFileSync(
      join(outDir, `reads-${stamp}.json`),
      JSON.stringify({ started_at: started.toISOString(), load_average_at_start: load, ...result }, null, 2)
    )
    console.log(renderReads(result, started, load))
    const delay = process.env.GLIGABAO_BENCH_LOOP_DELAY
    if (delay !== undefined && existsSync(delay)) console.log(`\n${renderLoopDelay(readFileSync(delay, "utf8"))}`)
    console.log(`\nwritten: build/load/reads-${stamp}.json`)
    if (!result.ok) process.exitCode = 1
  } finally {
    cluster?.stop()
  }
}

/** The loop-delay preload's file (scripts/benchmarks/loopDelay.cjs) in two lines. */
const renderLoopDelay = (json: string) => {
  const d = JSON.parse(json) as {
    p50: number
    p95: number
    p99: number
    max: number
    gc?: Record<string, { count: number; totalMs: number; maxMs: number }>
  }
  const gc = Object.entries(d.gc ?? {}).map(([kind, k]) =>
    `${kind} ${k.count} (${(k.totalMs / 1000).toFixed(1)} s, longest ${k.maxMs} ms)`
  )
  return `server event-loop delay under load, ms: p50 ${d.p50}, p95 ${d.p95}, p99 ${d.p99}, max ${d.max}\n` +
    `garbage collections under load: ${gc.length === 0 ? "none recorded" : gc.join("; ")}`
}

const main = async () => {
  const started = new Date()
  const load = loadavg()
  const t0 = performance.now()
  const result = await runLoad({
    ...options,
    log: (m) => process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${m}\n`)
  })
  const text = render(result, started, load)
  const outDir = join(ROOT, "build", "load")
  mkdirSync(outDir, { recursive: true })
  const stamp = started.toISOString().replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z")
  const json = JSON.stringify(
    {
      started_at: started.toISOString(),
      machine: {
        cores: cpus().length,
        node: process.version,
        load_average_at_start: load,
        load_average_at_end: loadavg()
      },
      ...result
    },
    null,
    2
  )
  writeFileSync(join(outDir, `load-${stamp}.json`), json)
  writeFileSync(join(outDir, "latest.json"), json)
  console.log(text)
  console.log(`\nwritten: build/load/load-${stamp}.json (and build/load/latest.json)`)
  if (!result.ok) process.exitCode = 1
}
;(argv.includes("--reads") ? reads() : main()).catch((error) => {
  console.error(error)
  process.exit(1)
})
