/**
 * Import: `gligabao import FILE.jsonl` of short texts into one dataset (1,000; 100 quick),
 * through the manager of the command's own process over a new SQLite file, with 0 ms models
 * and embeddings on: what the pipeline's own work costs, a figure without a bar. The rate is
 * the command's own (its last progress line: from the first item queued to the last run
 * finished); the wall time adds the process's start (module loading, migrations). Under the
 * seed and the defaults; both databases must hold the same graph, and every item must succeed.
 */
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import type { Context } from "../context.js"
import { graphOf, openReadonly } from "../db.js"
import { fmt, ratio } from "../report.js"
import { childArgs, childEnv, type ConfigName, ROOT } from "../server.js"
import { makeRandom, paragraph, people } from "../texts.js"
import { REFERENCE_TIME } from "./latency.js"

const SCENARIO = "import"
const DATASET = "import"

interface Figure {
  readonly seconds: number
  /** the command's own rate (its progress line) */
  readonly itemsPerSecond: number
  readonly summary: { readonly items: number; readonly succeeded: number; readonly failed: number }
  readonly runs: number
  readonly graph: string
}

const run = (ctx: Context, config: ConfigName, file: string, db: string) =>
  new Promise<{ code: number | null; stdout: string; stderr: string; seconds: number }>((resolve, reject) => {
    const env = childEnv({
      fakes: ctx.fakes,
      config,
      configFile: ctx.configFile,
      embeddingDimensions: ctx.dims,
      sqlTraceFile: ctx.sqlTraceDir === undefined ? undefined : join(ctx.sqlTraceDir, `import-${config}.json`)
    })
    const args = childArgs({
      profileDir: ctx.profileDir === undefined ? undefined : join(ctx.profileDir, `import-${config}`),
      entry: ctx.entry
    })
    const t0 = performance.now()
    const child = spawn(
      process.execPath,
      [...args, "import", file, "--user-id", "bench", "--dataset", DATASET, "--db", db],
      { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] }
    )
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (chunk) => (stdout += chunk))
    child.stderr!.on("data", (chunk) => (stderr = (stderr + chunk).slice(-20_000)))
    child.on("error", reject)
    child.on("exit", (code) => resolve({ code, stdout, stderr, seconds: (performance.now() - t0) / 1000 }))
  })

const measure = async (ctx: Context, config: ConfigName, file: string): Promise<Figure> => {
  const db = join(ctx.dir, `import-${config.replace(/ /g, "-")}.db`)
  ctx.fakes.setLatency(0)
  const out = await run(ctx, config, file, db)
  if (out.code !== 0) throw new Error(`gligabao import (${config}) exited with ${out.code}: ${out.stderr.slice(-2000)}`)
  const rate = /(\d+)\/(\d+) items done, (\d+) failed, ([\d.]+) items\/s/.exec(out.stderr)
  if (rate === null) throw new Error(`gligabao import (${config}) printed no progress line: ${out.stderr.slice(-500)}`)
  const summary = JSON.parse(out.stdout) as Figure["summary"]
  const handle = openReadonly(db)
  const runs = handle.prepare("SELECT COUNT(*) AS n FROM gb_remember_runs WHERE status = 'succeeded' AND dataset = ?")
    .get(DATASET) as { n: number }
  handle.close()
  ctx.log(`import: ${config}: ${rate[4]} items/s, ${out.seconds.toFixed(1)} s with the process's start`)
  return { seconds: out.seconds, itemsPerSecond: Number(rate[4]), summary, runs: runs.n, graph: graphOf(db, DATASET) }
}

export const importTexts = async (ctx: Context) => {
  const count = ctx.quick ? 100 : 1_000
  const cast = people(8, 11)
  const file = join(ctx.dir, "import.jsonl")
  writeFileSync(
    file,
    Array.from(
      { length: count },
      (_, i) => JSON.stringify({ text: paragraph(makeRandom(9_000 + i), cast, 3, 2), reference_time: REFERENCE_TIME })
    )
      .join("\n") + "\n"
  )
  const seed = await measure(ctx, "seed", file)
  const defaults = await measure(ctx, "defaults", file)
  for (const [name, f] of [["seed", seed], ["defaults", defaults]] as const) {
    ctx.report.check(
      SCENARIO,
      `${name}: every item succeeded`,
      f.summary.items === count && f.summary.succeeded === count && f.runs === count,
      `${f.summary.succeeded} of ${count} succeeded, ${f.runs} runs stored`
    )
  }
  ctx.report.check(SCENARIO, "the same graph under both", seed.graph === defaults.graph)
  ctx.report.figures[SCENARIO] = {
    items: count,
    seed: { seconds: seed.seconds, items_per_second: seed.itemsPerSecond },
    defaults: { seconds: defaults.seconds, items_per_second: defaults.itemsPerSecond }
  }
  ctx.report.row({
    scenario: SCENARIO,
    measure: `items/s, ${count} texts into one dataset, 0 ms models, embeddings on (import's own rate)`,
    seed: fmt(seed.itemsPerSecond),
    defaults: fmt(defaults.itemsPerSecond),
    ratio: ratio(defaults.itemsPerSecond, seed.itemsPerSecond)
  })
  ctx.report.row({
    scenario: SCENARIO,
    measure: `wall s of the command, with its start`,
    seed: fmt(seed.seconds),
    defaults: fmt(defaults.seconds),
    ratio: ratio(seed.seconds, defaults.seconds)
  })
}
