/**
 * The knowledge eval runner: replays each case's texts, in order, through the remember
 * manager into a fresh dataset (eval mode, so every run has its trajectory), reads back the
 * graph the dataset ends with, scores it (score.ts), writes each run's trajectory and the
 * results, and formats a table with tokens and cost per case. It runs against whatever LLM
 * and embeddings the layers provide: the configured ones from the CLI, scripted ones in tests.
 */
import { FileSystem, Path } from "@effect/platform"
import { Clock, Data, Effect, Either } from "effect"
import { normalizeSchema, schemaToStore } from "../domain/DatasetSchema.js"
import { statusOf } from "../domain/Errors.js"
import type { ModelStage } from "../domain/Stages.js"
import { toIso } from "../domain/time.js"
import { decodeAttributes } from "../kernel/datasetSchema.js"
import { RememberManager } from "../pipeline/RememberManager.js"
import { DatasetsRepo } from "../services/DatasetsRepo.js"
import { type ReadFilters, SearchRepo } from "../services/SearchRepo.js"
import type { EvalCase } from "./cases.js"
import { aggregateScores, type CaseScore, type Check, type GraphSnapshot, type Ratio, scoreCase } from "./score.js"
import { rememberWithTrajectory } from "./trajectory.js"

export class EvalOutputFailed extends Data.TaggedError("EvalOutputFailed")<{ readonly message: string }> {}

/** A run refused for want of configuration (a 503: no LLM key, ...): every other run would be too. */
export class EvalAborted extends Data.TaggedError("EvalAborted")<{ readonly message: string }> {}

export interface EvalOptions {
  /** models for every text of every case, over a case's own */
  readonly models?: Partial<Record<ModelStage, string>> | undefined
  /** the user that owns the eval datasets (default `gligabao-eval`) */
  readonly userId?: string | undefined
  /** unique per eval run: each case goes into dataset `eval-<label>-<case>` */
  readonly label: string
  /** where trajectories and results.json are written (`<dir>/<case>/<nn>-run-<id>.json`); null: nowhere */
  readonly outputDir: string | null
}

export interface Usage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly cached_tokens: number
  readonly cost_usd: number
  readonly model_calls: number
}

export interface TextRun extends Usage {
  readonly index: number
  readonly run_id: number
  readonly status: "succeeded" | "failed"
  readonly error: string | null
  readonly steps: number
  readonly trajectory_file: string | null
}

export interface CaseResult {
  readonly name: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
  readonly dataset: string
  readonly runs: ReadonlyArray<TextRun>
  readonly usage: Usage
  readonly score: CaseScore
}

export interface EvalReport {
  readonly label: string
  readonly user_id: string
  readonly models: Partial<Record<ModelStage, string>>
  readonly cases: ReadonlyArray<CaseResult>
  readonly summary: ReturnType<typeof aggregateScores> & { readonly usage: Usage; readonly failed_runs: number }
}

export const DEFAULT_EVAL_USER = "gligabao-eval"

/** Facts of every time and state: the whole dataset, as stored. */
const EVERYTHING: ReadFilters = {
  asOf: "9999-12-31T23:59:59.999Z",
  knownAt: null,
  includeExpired: true,
  sessionId: null,
  kind: null
}
const PAGE = 500

/** The graph of a dataset, all of it (no dataset: an empty graph). */
export const readGraph = (
  userId: string,
  dataset: string
): Effect.Effect<GraphSnapshot, never, DatasetsRepo | SearchRepo> =>
  Effect.gen(function*() {
    const found = yield* (yield* DatasetsRepo).find(userId, dataset)
    if (found._tag === "None") return { entities: [], edges: [] }
    const search = yield* SearchRepo
    const all = <A extends { readonly id: number }>(page: (afterId: number) => Effect.Effect<ReadonlyArray<A>>) =>
      Effect.gen(function*() {
        const out: Array<A> = []
        for (let after = 0;;) {
          const rows = yield* page(after)
          out.push(...rows)
          if (rows.length < PAGE) return out
          after = rows[rows.length - 1]!.id
        }
      })
    const id = found.value.id
    const entities = yield* all((after) => search.page("entities", id, EVERYTHING, after, PAGE))
    const facts = yield* all((after) => search.page("facts", id, EVERYTHING, after, PAGE))
    return {
      entities: entities.map((e) => {
        const attributes = decodeAttributes(e.attributes)
        return {
          id: e.id,
          name: e.name,
          type: e.type,
          session_ids: e.session_ids,
          ...(attributes === undefined ? {} : { attributes })
        }
      }),
      edges: facts.map((f) => ({
        id: f.id,
        source: f.source_name,
        relation: f.relation,
        target: f.target_name,
        valid_at: f.valid_at,
        invalid_at: f.invalid_at,
        expired_at: f.expired_at,
        session_ids: f.session_ids
      }))
    }
  })

const ZERO: Usage = { prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, cost_usd: 0, model_calls: 0 }

const addUsage = (a: Usage, b: Usage): Usage => ({
  prompt_tokens: a.prompt_tokens + b.prompt_tokens,
  completion_tokens: a.completion_tokens + b.completion_tokens,
  cached_tokens: a.cached_tokens + b.cached_tokens,
  cost_usd: a.cost_usd + b.cost_usd,
  model_calls: a.model_calls + b.model_calls
})

/** Dataset names are labels of at most 128 bytes. */
const datasetName = (label: string, name: string) => `eval-${label}-${name}`.slice(0, 128)

const writeJson = (file: string, value: unknown) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    yield* fs.makeDirectory(path.dirname(file), { recursive: true })
    yield* fs.writeFileString(file, `${JSON.stringify(value, null, 2)}\n`)
  }).pipe(Effect.mapError((e) => new EvalOutputFailed({ message: `cannot write ${file}: ${e.message}` })))

/** Replays one case into its own dataset and scores what it leaves. A failed run does not stop the case. */
export const runCase = (evalCase: EvalCase, options: EvalOptions) =>
  Effect.gen(function*() {
    const manager = yield* RememberManager
    const path = yield* Path.Path
    const userId = options.userId ?? DEFAULT_EVAL_USER
    const dataset = datasetName(options.label, evalCase.name)
    // the case's schema first, as `PUT /v1/gb/datasets/{name}/schema` sets it (docs/SCHEMA.md)
    if (evalCase.schema !== null) {
      const now = toIso(yield* Clock.currentTimeMillis)
      yield* (yield* DatasetsRepo).setSchema(userId, dataset, schemaToStore(normalizeSchema(evalCase.schema)), now)
    }
    const runs: Array<TextRun> = []
    for (const [i, text] of evalCase.texts.entries()) {
      const request = { ...text, user_id: userId, dataset, models: { ...text.models, ...options.models } }
      const { runId, outcome, trajectory } = yield* rememberWithTrajectory(manager, request).pipe(
        // refused before it was queued (no LLM, ...): every case would be, so the eval stops
        Effect.mapError((refusal) => new EvalAborted({ message: `case ${evalCase.name}: ${refusal.message}` }))
      )
      const file = options.outputDir === null
        ? null
        : path.join(options.outputDir, evalCase.name, `${String(i + 1).padStart(2, "0")}-run-${runId}.json`)
      if (file !== null) yield* writeJson(file, trajectory)
      if (Either.isLeft(outcome) && statusOf(outcome.left) === 503) {
        return yield* new EvalAborted({ message: `case ${evalCase.name}: ${outcome.left.message}` })
      }
      const m = trajectory.final_metrics ?? {}
      const extra = (m.extra ?? {}) as { readonly llm_calls?: number; readonly embedding_calls?: number }
      runs.push({
        index: i,
        run_id: runId,
        status: Either.isRight(outcome) ? "succeeded" : "failed",
        error: Either.isLeft(outcome) ? outcome.left.message : null,
        steps: trajectory.steps.length,
        trajectory_file: file,
        prompt_tokens: m.total_prompt_tokens ?? 0,
        completion_tokens: m.total_completion_tokens ?? 0,
        cached_tokens: m.total_cached_tokens ?? 0,
        cost_usd: m.total_cost_usd ?? 0,
        model_calls: (extra.llm_calls ?? 0) + (extra.embedding_calls ?? 0)
      })
    }
    const graph = yield* readGraph(userId, dataset)
    return {
      name: evalCase.name,
      description: evalCase.description,
      tags: evalCase.tags,
      dataset,
      runs,
      usage: runs.reduce<Usage>(addUsage, ZERO),
      score: scoreCase(evalCase.expected, graph)
    } satisfies CaseResult
  })

/** Runs the cases one after the other; writes `results.json` next to the trajectories. */
export const runEvals = (cases: ReadonlyArray<EvalCase>, options: EvalOptions) =>
  Effect.gen(function*() {
    const results: Array<CaseResult> = []
    for (const c of cases) results.push(yield* runCase(c, options))
    const report: EvalReport = {
      label: options.label,
      user_id: options.userId ?? DEFAULT_EVAL_USER,
      models: options.models ?? {},
      cases: results,
      summary: {
        ...aggregateScores(results.map((r) => r.score)),
        usage: results.map((r) => r.usage).reduce(addUsage, ZERO),
        failed_runs: results.reduce((n, r) => n + r.runs.filter((x) => x.status === "failed").length, 0)
      }
    }
    if (options.outputDir !== null) yield* writeJson((yield* Path.Path).join(options.outputDir, "results.json"), report)
    return report
  })

// ---------------------------------------------------------------------------------------------
// the table

/** what a case and the total both have */
interface Scores {
  readonly entities: Ratio
  readonly facts: Ratio
  readonly invalidation: Check
  readonly dates: Check
  readonly sessions: Check
  readonly types: Check
}

const pct = (x: number) => `${Math.round(x * 100)}%`
const pr = (r: { readonly precision: number; readonly recall: number }) => `${pct(r.precision)}/${pct(r.recall)}`
const acc = (
  c: { readonly checked: number; readonly correct: number }
) => (c.checked === 0 ? "-" : `${c.correct}/${c.checked}`)
const usd = (x: number) => `$${x.toFixed(4)}`

const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)))
  const line = (r: ReadonlyArray<string>) =>
    r.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join("  ")
  return [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n")
}

/** The report as text: one row per case (entity and fact precision/recall, checks, tokens, cost), a total, then what went wrong. */
export const formatReport = (report: EvalReport): string => {
  const header = [
    "case",
    "runs",
    "entities P/R",
    "facts P/R",
    "state ok",
    "dates ok",
    "sessions ok",
    "types ok",
    "prompt tok",
    "output tok",
    "cost"
  ]
  const row = (name: string, runs: string, s: Scores, u: Usage) => [
    name,
    runs,
    pr(s.entities),
    pr(s.facts),
    acc(s.invalidation),
    acc(s.dates),
    acc(s.sessions),
    acc(s.types),
    String(u.prompt_tokens),
    String(u.completion_tokens),
    usd(u.cost_usd)
  ]
  const ok = (runs: ReadonlyArray<TextRun>) => `${runs.filter((r) => r.status === "succeeded").length}/${runs.length}`
  const allRuns = report.cases.flatMap((c) => c.runs)
  const rows = [
    header,
    ...report.cases.map((c) => row(c.name, ok(c.runs), c.score, c.usage)),
    row("TOTAL (micro)", ok(allRuns), report.summary, report.summary.usage)
  ]
  const details = report.cases.flatMap((c) => {
    const lines = [
      ...c.runs.filter((r) => r.error !== null).map((r) => `text ${r.index + 1} failed (run ${r.run_id}): ${r.error}`),
      ...c.score.entities.missing.map((m) => `missing entity: ${m}`),
      ...c.score.entities.unexpected.map((m) => `unexpected entity: ${m}`),
      ...c.score.facts.missing.map((m) => `missing fact: ${m}`),
      ...c.score.facts.unexpected.map((m) => `unexpected fact: ${m}`),
      ...c.score.invalidation.wrong.map((m) => `wrong state: ${m}`),
      ...c.score.dates.wrong.map((m) => `wrong date: ${m}`),
      ...c.score.sessions.wrong.map((m) => `wrong sessions: ${m}`),
      ...c.score.types.wrong.map((m) => `wrong type: ${m}`)
    ]
    return lines.length === 0 ? [] : [`${c.name}:`, ...lines.map((l) => `  ${l}`)]
  })
  return [table(rows), ...(details.length === 0 ? [] : ["", ...details])].join("\n")
}
