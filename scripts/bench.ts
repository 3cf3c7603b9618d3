/**
 * scripts/bench: the performance bar of issue 12 (BENCHMARKS.md describes it).
 *
 *   scripts/bench [--quick] [--only NAME[,NAME]] [--profile] [--trace-sql] [--dims N] [--entry FILE] [--keep] [--pg]
 *
 * Starts fake model servers in this process (Anthropic Messages and OpenAI embeddings, latency
 * per call, usage counted with the project's tokenizer) and, per scenario and configuration, a
 * real `gligabao serve` on a temporary SQLite file, driven over HTTP. Each scenario runs under
 * the seed's behaviour (remember.concurrency 1, chunk_concurrency 1) and the defaults, side by
 * side. Prints a markdown table and writes build/bench/bench-<time>.json (and latest.json).
 *
 * Scenarios: overhead, latency, throughput, document, search, memory, cost, one-dataset, import, cpu. `--quick` runs them
 * all small (under 2 minutes; one server per configuration is shared by the scenarios that need
 * no seeded file); bars are still judged, marked "quick". A MISS never fails the
 * run; a failed correctness check (a request not answered 200, duplicate entities, different
 * graphs, counts that disagree with the run log) exits 1. `--profile` writes a V8 CPU profile
 * of every server into build/bench/profiles/ (read them with scripts/bench-profile.ts);
 * `--trace-sql` counts and times every SQL statement of every server into build/bench/sql/
 * (scripts/benchmarks/sqlTrace.cjs). Both slow the server: their runs' timings are not figures.
 * `--entry FILE` runs another CLI than bin/gligabao.js (which runs the compiled build when it
 * is current, else the sources through tsx), to compare. `--pg` runs the cpu scenario on a
 * throwaway PostgreSQL cluster (initdb and pg_ctl on loopback, a database per side) and adds its
 * backends' CPU; the other scenarios ignore it and run on SQLite.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Context, FULL, QUICK } from "./benchmarks/context.js"
import { startFakes } from "./benchmarks/fakes.js"
import { machine, markdown, Report } from "./benchmarks/report.js"
import { cost } from "./benchmarks/scenarios/cost.js"
import { cpu } from "./benchmarks/scenarios/cpu.js"
import { longDocument } from "./benchmarks/scenarios/document.js"
import { importTexts } from "./benchmarks/scenarios/import.js"
import { latencyFloor } from "./benchmarks/scenarios/latency.js"
import { memory } from "./benchmarks/scenarios/memory.js"
import { oneDataset } from "./benchmarks/scenarios/oneDataset.js"
import { overhead } from "./benchmarks/scenarios/overhead.js"
import { readsUnderLoad } from "./benchmarks/scenarios/readsUnderLoad.js"
import { search } from "./benchmarks/scenarios/search.js"
import { throughput } from "./benchmarks/scenarios/throughput.js"
import { httpFailures, httpRequests, ROOT } from "./benchmarks/server.js"

const SCENARIOS = {
  overhead,
  latency: latencyFloor,
  throughput,
  document: longDocument,
  search,
  "reads-under-load": readsUnderLoad,
  memory,
  cost,
  "one-dataset": oneDataset,
  import: importTexts,
  cpu
} as const satisfies Record<string, (ctx: Context) => Promise<void>>
type Name = keyof typeof SCENARIOS

const argv = process.argv.slice(2)
const USAGE =
  `usage: scripts/bench [--quick] [--only NAME[,NAME]] [--profile] [--trace-sql] [--dims N] [--entry FILE] [--keep] [--pg]
scenarios: ${Object.keys(SCENARIOS).join(", ")} (all by default; BENCHMARKS.md describes them and their bars)
--pg: the cpu scenario on a throwaway PostgreSQL cluster (initdb and pg_ctl on PATH or in /usr/lib/postgresql); the other scenarios ignore it`
const SWITCHES = ["--quick", "--profile", "--trace-sql", "--keep", "--pg"]
const WITH_VALUE = ["--only", "--dims", "--entry"]
if (argv.includes("--help") || argv.includes("-h")) {
  console.log(USAGE)
  process.exit(0)
}
// an unknown or misspelt flag must not start a 10-minute run that ignores it
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i]!
  if (WITH_VALUE.includes(arg)) i++
  else if (!SWITCHES.includes(arg)) {
    console.error(`unknown argument ${arg}\n${USAGE}`)
    process.exit(2)
  }
}
const value = (flag: string): string | undefined => {
  const i = argv.indexOf(flag)
  return i === -1 ? undefined : argv[i + 1]
}
const quick = argv.includes("--quick")
const only = value("--only")?.split(",").map((s) => s.trim()) ?? Object.keys(SCENARIOS)
for (const name of only) {
  if (!(name in SCENARIOS)) {
    console.error(`unknown scenario ${name}: one of ${Object.keys(SCENARIOS).join(", ")}`)
    process.exit(2)
  }
}

const main = async () => {
  const started = new Date()
  const atStart = machine()
  const stamp = started.toISOString().replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z")
  const outDir = join(ROOT, "build", "bench")
  mkdirSync(outDir, { recursive: true })
  const dir = mkdtempSync(join(tmpdir(), "gligabao-bench-"))
  const configFile = join(dir, "gligabao.toml")
  writeFileSync(configFile, "# the bench runs on the built-in defaults\n")
  const report = new Report(quick)
  const fakes = await startFakes(0)
  const t0 = performance.now()
  const ctx: Context = {
    quick,
    sizes: quick ? QUICK : FULL,
    dir,
    configFile,
    fakes,
    report,
    dims: Number(value("--dims") ?? 1536),
    profileDir: argv.includes("--profile") ? join(outDir, "profiles", stamp) : undefined,
    entry: value("--entry"),
    sqlTraceDir: argv.includes("--trace-sql") ? join(outDir, "sql", stamp) : undefined,
    pg: argv.includes("--pg"),
    pool: quick ? new Map() : undefined,
    log: (message) =>
      process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${message}\n`)
  }
  const durations: Record<string, number> = {}
  try {
    for (const name of only as Array<Name>) {
      const s0 = performance.now()
      try {
        await SCENARIOS[name](ctx)
      } catch (error) {
        report.errors.push({ scenario: name, error: error instanceof Error ? error.message : String(error) })
        ctx.log(`${name} failed: ${error instanceof Error ? error.stack : String(error)}`)
      }
      durations[name] = (performance.now() - s0) / 1000
      ctx.log(`${name}: ${durations[name]!.toFixed(0)} s`)
    }
  } finally {
    for (const server of ctx.pool?.values() ?? []) await server.stop()
    await fakes.close()
    if (argv.includes("--keep")) ctx.log(`kept ${dir}`)
    else rmSync(dir, { recursive: true, force: true })
  }
  report.check(
    "all",
    "every request answered 200",
    httpFailures.length === 0,
    `${httpRequests} requests${
      httpFailures.length === 0 ? "" : `; ${httpFailures.length} failed, first: ${httpFailures[0]}`
    }`
  )

  const seconds = (performance.now() - t0) / 1000
  const m = machine()
  const header = [
    `gligabao bench${quick ? " --quick" : ""}${ctx.pg ? " --pg" : ""}, ${started.toISOString()}, ${
      seconds.toFixed(0)
    } s`,
    `machine: ${m.cpu}, ${m.cores} cores, ${m.memory_gib} GiB, Node ${m.node}; load average ${
      atStart.load_average.join(" ")
    } at the start, ${m.load_average.join(" ")} at the end`,
    ...(ctx.entry === undefined ? [] : [`server: node ${ctx.entry}`]),
    `configurations: seed = remember.concurrency 1 and chunk_concurrency 1; defaults = an empty gligabao.toml; ratio = defaults ÷ seed unless said otherwise`
  ]
  const md = markdown(report, header)
  const json = {
    started_at: started.toISOString(),
    seconds,
    quick,
    pg: ctx.pg,
    scenarios: only,
    scenario_seconds: durations,
    machine: { ...m, load_average_at_start: atStart.load_average },
    dims: ctx.dims,
    server: ctx.entry ?? "bin/gligabao.js",
    sizes: ctx.sizes,
    bars: report.bars,
    checks: report.checks,
    errors: report.errors,
    rows: report.rows,
    figures: report.figures,
    requests: { total: httpRequests, failed: httpFailures }
  }
  const file = join(outDir, `bench-${stamp}.json`)
  writeFileSync(file, JSON.stringify(json, null, 2))
  writeFileSync(join(outDir, "latest.json"), JSON.stringify(json, null, 2))
  writeFileSync(join(outDir, `bench-${stamp}.md`), md + "\n")
  console.log(md)
  console.log(`\nwritten: ${file} (and build/bench/latest.json)`)
  if (report.failed) process.exitCode = 1
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
