/**
 * Where the server allocates its main-thread V8 heap bytes per remember and per search (issue 39).
 * The real server is built in this process as `gligabao serve` builds it
 * (scripts/benchmarks/inProcess.ts: SQLite with sqlite-vec in a temp file, the real pipeline and
 * HTTP handlers); the fake model servers (0 ms) and the HTTP client that drives the cpu
 * scenario's workload run in a worker thread (scripts/benchmarks/allocDriver.ts), whose heap is
 * its own, so the main thread's heap holds only the server's allocations.
 *
 *   npx tsx scripts/bench-alloc.ts [--texts N] [--top 40] [--interval 1024] [--census 16]
 *
 * After the warm-up, N remembers and then N searches run one after another, each phase under
 * V8's sampling heap profiler (a sample about every `--interval` bytes) with the objects that
 * garbage collections freed included (scripts/benchmarks/heapSampling.ts). Beside it,
 * v8.GCProfiler measures the same phase as the cpu scenario's probe does (cpuProbe.cjs: what
 * collections freed plus the growth of the used heap), to check the sampled total against it.
 * Each sample's stack, mapped through tsx's source maps, is added up by function (self bytes),
 * by package or folder of the innermost frame, and by every frame of src/ or layers/ on it
 * (inclusive). Effect's fiber runtime runs each continuation from its own run loop, so a stack
 * shows our frames only up to the nearest `yield*` or callback: inclusive figures are partial.
 * Then, not sampled, `--census` more remembers and searches count the copies Effect makes of
 * each fiber's FiberRefs and Context, by FiberRef and service (scripts/benchmarks/effectCensus.ts).
 *
 * Prints markdown tables; writes build/bench/alloc-<stamp>.json.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import v8 from "node:v8"
import { Worker } from "node:worker_threads"
import type { Command, Done } from "./benchmarks/allocDriver.js"
import { DATASETS, DIMS, WARM_UP } from "./benchmarks/cpuWorkload.js"
import { type Census, installCensus, startCensus, stopCensus } from "./benchmarks/effectCensus.js"
import {
  closeSession,
  loadScripts,
  NO_OWN,
  RUNTIME_FILES,
  type SamplingProfile,
  startSampling,
  stopSampling,
  type Tallies,
  tally
} from "./benchmarks/heapSampling.js"
import { type ModelUrls, positiveOption, withInProcessServer } from "./benchmarks/inProcess.js"

const option = (flag: string, fallback: number) => positiveOption(process.argv.slice(2), flag, fallback)
const TEXTS = option("--texts", 48)
const TOP = option("--top", 40)
const INTERVAL = option("--interval", 1024)
const CENSUS = option("--census", 16)
const ROOT = join(import.meta.dirname, "..")

// ---- the driver thread ----

/** tsx's loader does not follow a worker thread in Node 20: the worker registers it itself */
const startDriver = () => {
  const file = new URL("./benchmarks/allocDriver.ts", import.meta.url).href
  const boot = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(file)}) })`
  const worker = new Worker(boot, { eval: true })
  const pending = new Map<number, (d: Done) => void>()
  let nextId = 0
  const urls = new Promise<ModelUrls>((resolve, reject) => {
    worker.once("error", reject)
    worker.once("message", (m: ModelUrls) => {
      worker.on("message", (d: Done) => pending.get(d.id)?.(d))
      resolve(m)
    })
  })
  const call = (c: Record<string, unknown> & { cmd: Command["cmd"] }) =>
    new Promise<Done>((resolve, reject) => {
      const id = nextId++
      pending.set(id, (d) => {
        pending.delete(id)
        if (d.error !== undefined) reject(new Error(d.error))
        else resolve(d)
      })
      worker.postMessage({ ...c, id })
    })
  return { urls, call, stop: () => worker.terminate() }
}

// ---- the measured phases ----

interface Measured {
  readonly what: "remember" | "search"
  readonly done: Done
  readonly wallMs: number
  /** as the cpu scenario's probe measures it: what collections freed plus the used heap's growth */
  readonly gcProfilerBytes: number
  readonly collections: number
  readonly profile: SamplingProfile
}

const measure = async (what: Measured["what"], run: () => Promise<Done>): Promise<Measured> => {
  await startSampling(INTERVAL)
  const usedBefore = v8.getHeapStatistics().used_heap_size
  const gc = new v8.GCProfiler()
  gc.start()
  const t0 = performance.now()
  const done = await run()
  const wallMs = performance.now() - t0
  const stats = gc.stop()?.statistics ?? []
  const usedAfter = v8.getHeapStatistics().used_heap_size
  const profile = await stopSampling()
  const freed = stats.reduce(
    (a, s) => a + s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize,
    0
  )
  return { what, done, wallMs, gcProfilerBytes: freed + usedAfter - usedBefore, collections: stats.length, profile }
}

// ---- the report ----

const kB = (bytes: number) => (bytes / 1e3).toFixed(bytes >= 1e5 ? 0 : 1)
const MB = (bytes: number) => (bytes / 1e6).toFixed(2)
const pct = (x: number, total: number) => `${(100 * x / total).toFixed(1)}%`
const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n)
const cell = (s: string) => `\`${s.replace(/\|/g, "\\|")}\``

const table = (title: string, head: string, m: Map<string, number>, n: number, per: number, total: number) => {
  console.log(`\n### ${title}\n`)
  console.log(`| # | ${head} | kB per op | share |`)
  console.log("| ---: | --- | ---: | ---: |")
  top(m, n).forEach(([name, bytes], i) =>
    console.log(`| ${i + 1} | ${cell(name)} | ${kB(bytes / per)} | ${pct(bytes, total)} |`)
  )
}

const section = (m: Measured, t: Tallies) => {
  const per = m.done.operations!
  const plural = m.what === "search" ? "searches" : "remembers"
  console.log(`\n## Per ${m.what} (${per} ${plural} after the warm-up, 0 ms models, ${DIMS} dimensions)\n`)
  console.log(
    `- sampled: **${MB(t.total / per)} MB** per ${m.what} (${t.samples} samples, one about every ${INTERVAL} B)`
  )
  console.log(
    `- v8.GCProfiler over the same phase (the cpu scenario's measure): **${
      MB(m.gcProfilerBytes / per)
    } MB** per ${m.what}` +
      ` (${m.collections} collections); sampled ÷ measured = ${(t.total / m.gcProfilerBytes).toFixed(2)}`
  )
  console.log(
    `- with a frame of src/ or layers/ anywhere on the stack: ${MB(t.attributed / per)} MB (${
      pct(t.attributed, t.total)
    }); the rest ran from the event loop, a library's callback or Effect's run loop with no frame of ours`
  )
  console.log(
    `- with the runs' scheduler (${RUNTIME_FILES.join(", ")}) on the stack, i.e. in a remember run's fibers: ${
      MB(t.inRuntime / per)
    } MB (${pct(t.inRuntime, t.total)}); its frames are not counted as ours`
  )
  console.log(
    `- model calls: ${(m.done.llmCalls! / per).toFixed(2)} LLM, ${
      (m.done.embeddingCalls! / per).toFixed(2)
    } embeddings requests per ${m.what}; ${(m.wallMs / per).toFixed(1)} ms wall each (under the profiler)`
  )
  if (m.what === "search") console.log(`- facts found per search: ${(m.done.facts! / per).toFixed(1)}`)
  table(`Top ${TOP} functions by self bytes`, "function file:line", t.byFunction, TOP, per, t.total)
  table("Top 25 files by self bytes", "file", t.byFile, 25, per, t.total)
  table("Top 20 packages and folders (innermost frame)", "package / folder", t.byGroup, 20, per, t.total)
  table(
    "Top 30 frames of ours by inclusive bytes (anywhere on the stack; partial: Effect cuts stacks)",
    "function file:line",
    t.ownInclusive,
    30,
    per,
    t.total
  )
  table("Top 15 files of ours by inclusive bytes", "file", t.ownFileInclusive, 15, per, t.total)
  table(
    "Top 25 by the innermost frame of ours (who called the code that allocated)",
    "function file:line",
    t.nearestOwn,
    25,
    per,
    t.total
  )
  table(
    "Top 25 by innermost package and innermost frame of ours together",
    "package ← frame of ours",
    t.groupByNearestOwn,
    25,
    per,
    t.total
  )
  table("Top 12 by the outermost JS frame (what the event loop ran)", "function file:line", t.byEntry, 12, per, t.total)
}

interface Counted {
  readonly what: Measured["what"]
  readonly operations: number
  readonly census: Census
}
const censusSection = ({ census, operations: per, what }: Counted) => {
  const rows = [...census.changes].sort((a, b) => b[1].count - a[1].count)
  const sum = (k: "count" | "fiberRefsCopied" | "servicesCopied") => rows.reduce((a, [, e]) => a + e[k], 0)
  console.log(
    `\n### FiberRef changes per ${what}: each copies the fiber's FiberRefs (${per} more ${
      what === "search" ? "searches" : "remembers"
    }, not sampled)\n`
  )
  console.log(
    `- ${(sum("count") / per).toFixed(0)} changes per ${what}, copying ${(sum("fiberRefsCopied") / per).toFixed(0)} ` +
      `FiberRef entries and ${(sum("servicesCopied") / per).toFixed(0)} Context entries; getFiberRefs (forks and ` +
      `others): ${(census.getFiberRefs / per).toFixed(0)}`
  )
  console.log(
    `\n| # | FiberRef (for the Context: the services that changed) | changes | FiberRefs copied | services copied |`
  )
  console.log("| ---: | --- | ---: | ---: | ---: |")
  rows.slice(0, 25).forEach(([name, e], i) =>
    console.log(
      `| ${i + 1} | ${cell(name)} | ${(e.count / per).toFixed(1)} | ${(e.fiberRefsCopied / per).toFixed(0)} | ${
        (e.servicesCopied / per).toFixed(0)
      } |`
    )
  )
}
const censusJson = ({ census, operations: per }: Counted) => ({
  operations: per,
  get_fiber_refs_per_operation: census.getFiberRefs / per,
  changes_per_operation: Object.fromEntries(
    [...census.changes].sort((a, b) => b[1].count - a[1].count).map(([k, e]) => [k, {
      count: e.count / per,
      fiber_refs_copied: e.fiberRefsCopied / per,
      services_copied: e.servicesCopied / per
    }])
  )
})

const perOp = (m: Map<string, number>, per: number, n = 400) =>
  Object.fromEntries(top(m, n).map(([k, v]) => [k, Math.round(v / per)]))
const json = (m: Measured, t: Tallies) => {
  const per = m.done.operations!
  return {
    operations: per,
    wall_ms: m.wallMs,
    sampled_bytes_per_operation: t.total / per,
    gc_profiler_bytes_per_operation: m.gcProfilerBytes / per,
    collections: m.collections,
    samples: t.samples,
    attributed_to_our_frames_bytes_per_operation: t.attributed / per,
    in_runs_scheduler_bytes_per_operation: t.inRuntime / per,
    llm_calls_per_operation: m.done.llmCalls! / per,
    embeddings_requests_per_operation: m.done.embeddingCalls! / per,
    by_function_self: perOp(t.byFunction, per),
    by_package_self: perOp(t.byGroup, per),
    by_file_self: perOp(t.byFile, per),
    our_frames_inclusive: perOp(t.ownInclusive, per),
    our_files_inclusive: perOp(t.ownFileInclusive, per),
    by_nearest_frame_of_ours: perOp(t.nearestOwn, per),
    by_package_and_nearest_frame_of_ours: perOp(t.groupByNearestOwn, per),
    by_outermost_frame: perOp(t.byEntry, per, 100)
  }
}

const main = async () => {
  const driver = startDriver()
  try {
    const urls = await driver.urls
    const phases = await withInProcessServer(urls, async (url) => {
      await driver.call({ cmd: "warmUp", url })
      const remember = await measure("remember", () => driver.call({ cmd: "remember", url, n: TEXTS }))
      const search = await measure("search", () => driver.call({ cmd: "search", url, n: TEXTS }))
      installCensus()
      const counted: Array<Counted> = []
      for (const what of ["remember", "search"] as const) {
        const census = startCensus()
        await driver.call({ cmd: what, url, n: CENSUS })
        stopCensus()
        counted.push({ what, operations: CENSUS, census })
      }
      return { sampled: [remember, search], counted }
    })
    await driver.call({ cmd: "close" })
    await loadScripts()
    console.log("# Main-thread V8 heap allocation per remember and per search (scripts/bench-alloc.ts)\n")
    console.log(
      `kB = 1,000 bytes, MB = 10^6 bytes, per operation; shares of the phase's sampled bytes. ` +
        `Warm-up: ${
          2 * DATASETS + WARM_UP
        } remembers and ${WARM_UP} searches. Self bytes: allocated in that function's own code ` +
        `(a frame \`(V8 API)\` or \`(EXTERNAL)\` has no JS on the stack; a builtin's, \`name (builtin) ← caller\`, counts in its caller's package). ${
          cell(NO_OWN)
        }: nothing of ours on the stack.`
    )
    const out: Record<string, unknown> = { texts: TEXTS, dims: DIMS, sampling_interval: INTERVAL }
    for (const m of phases.sampled) {
      const t = tally(m.profile)
      section(m, t)
      const c = phases.counted.find((x) => x.what === m.what)!
      censusSection(c)
      out[m.what] = { ...json(m, t), census: censusJson(c) }
    }
    const stamp = new Date().toISOString().replace(/:/g, "-").replace(/\.\d+Z$/, "Z")
    const file = join(ROOT, "build", "bench", `alloc-${stamp}.json`)
    mkdirSync(join(ROOT, "build", "bench"), { recursive: true })
    writeFileSync(file, JSON.stringify(out, null, 2))
    console.log(`\nwrote ${relative(ROOT, file)}`)
  } finally {
    await driver.stop()
    closeSession()
  }
}

await main()
