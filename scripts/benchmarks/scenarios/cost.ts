/**
 * Cost: model calls and tokens per remember for ten fixed texts (a sentence to five pages),
 * models answering at once, embeddings on, into a dataset that already knows their people.
 * Tokens are counted with the project's tokenizer on what the fake received and answered;
 * the prompt overhead is the LLM prompt tokens beyond the text's own tokens. Cross-checked
 * against the server's gb_inferences rows. Always a fresh database: ids are in the prompts, so
 * the token counts depend on how many rows came before.
 */
import { join } from "node:path"
import { countTokens } from "../../../src/kernel/tokenizer.js"
import { type Context, withServer } from "../context.js"
import { openReadonly } from "../db.js"
import { count } from "../report.js"
import { type ConfigName, remember, request } from "../server.js"
import { costTexts } from "../texts.js"
import { REFERENCE_TIME } from "./latency.js"

const SCENARIO = "cost"
/** Graphiti's documentation and paper: an episode costs roughly 5 to 12 LLM calls. Not measured here. */
export const GRAPHITI_CALLS = "5–12"

interface TextCost {
  readonly name: string
  readonly textTokens: number
  readonly chunks: number
  readonly llmCalls: number
  readonly byStage: Record<string, number>
  readonly embeddingCalls: number
  readonly promptTokens: number
  readonly outputTokens: number
  readonly embeddingTokens: number
  readonly overheadTokens: number
  /** prompt tokens per LLM stage */
  readonly promptByStage: Record<string, number>
  /** stored facts compared (the run log's load_candidates; the last chunk's for a document) */
  readonly candidates: number | null
  readonly runId: number
}

export const cost = async (ctx: Context) => {
  const { background, texts } = costTexts()
  const figures: Partial<Record<ConfigName, Array<TextCost>>> = {}
  let disagreements: Array<string> = []
  for (const config of ["seed", "defaults"] as const) {
    const db = join(ctx.dir, `cost-${config}.db`)
    const rows: Array<TextCost> = []
    await withServer(ctx, { scenario: SCENARIO, db, config, embeddings: true, shared: false }, async (server) => {
      ctx.fakes.setLatency(0)
      await remember(server, { user_id: "bench", dataset: "cost", text: background, reference_time: REFERENCE_TIME })
      for (const { name, text } of texts) {
        const t0 = performance.now()
        const res = await remember(server, { user_id: "bench", dataset: "cost", text, reference_time: REFERENCE_TIME })
        const calls = ctx.fakes.between(t0, performance.now())
        const llm = calls.filter((c) => c.kind === "llm")
        const byStage: Record<string, number> = {}
        const promptByStage: Record<string, number> = {}
        for (const c of llm) {
          byStage[c.stage] = (byStage[c.stage] ?? 0) + 1
          promptByStage[c.stage] = (promptByStage[c.stage] ?? 0) + c.inputTokens
        }
        const run = await request<{ stages: Record<string, { detail?: { candidates?: number } }> }>(
          "GET",
          `${server.url}/v1/gb/runs/${res.body.remember_run_id}`
        )
        const promptTokens = llm.reduce((a, c) => a + c.inputTokens, 0)
        const textTokens = countTokens(text)
        rows.push({
          name,
          textTokens,
          chunks: res.body.chunks?.length ?? 1,
          llmCalls: llm.length,
          byStage,
          embeddingCalls: calls.length - llm.length,
          promptTokens,
          outputTokens: llm.reduce((a, c) => a + c.outputTokens, 0),
          embeddingTokens: calls.filter((c) => c.kind === "embeddings").reduce((a, c) => a + c.inputTokens, 0),
          overheadTokens: promptTokens - textTokens,
          promptByStage,
          candidates: run.body.stages.load_candidates?.detail?.candidates ?? null,
          runId: res.body.remember_run_id
        })
      }
      disagreements = disagreements.concat(crossCheck(server.db, rows).map((d) => `${config}: ${d}`))
    })
    figures[config] = rows
    ctx.log(`cost: ${config} done`)
  }
  ctx.report.check(
    SCENARIO,
    "the fake's call and token counts equal the server's gb_inferences rows",
    disagreements.length === 0,
    disagreements.slice(0, 3).join("; ")
  )

  const s = figures.seed!
  const d = figures.defaults!
  const single = (rows: Array<TextCost>) => rows.filter((r) => r.chunks === 1)
  const max = (rows: Array<TextCost>, f: (r: TextCost) => number) => Math.max(...rows.map(f))
  const sum = (rows: Array<TextCost>, f: (r: TextCost) => number) => rows.reduce((a, r) => a + f(r), 0)
  ctx.report.row({
    scenario: SCENARIO,
    measure: "LLM calls per single-chunk remember (max)",
    seed: count(max(single(s), (r) => r.llmCalls)),
    defaults: count(max(single(d), (r) => r.llmCalls)),
    ratio: `Graphiti, published (not measured): ${GRAPHITI_CALLS} per episode`,
    bar: ctx.report.bar(
      SCENARIO,
      "LLM calls per single-chunk remember (max)",
      max(single(d), (r) => r.llmCalls),
      "<=",
      2,
      ""
    )
  })
  ctx.report.row({
    scenario: SCENARIO,
    measure: "prompt tokens beyond the text, single-chunk remember (max)",
    seed: count(max(single(s), (r) => r.overheadTokens)),
    defaults: count(max(single(d), (r) => r.overheadTokens)),
    bar: ctx.report.bar(
      SCENARIO,
      "prompt overhead per single-chunk remember (max)",
      max(single(d), (r) => r.overheadTokens),
      "<",
      1500,
      " tokens"
    )
  })
  ctx.report.row({
    scenario: SCENARIO,
    measure: `all ten texts: LLM calls / prompt / output / embedding tokens`,
    seed: [
      sum(s, (r) => r.llmCalls),
      sum(s, (r) => r.promptTokens),
      sum(s, (r) => r.outputTokens),
      sum(s, (r) => r.embeddingTokens)
    ].map(count).join(" / "),
    defaults: [
      sum(d, (r) => r.llmCalls),
      sum(d, (r) => r.promptTokens),
      sum(d, (r) => r.outputTokens),
      sum(d, (r) => r.embeddingTokens)
    ].map(count).join(" / ")
  })
  ctx.report.table(
    `Cost per text (defaults; 0 ms models, embeddings on, into a dataset that knows the people). Graphiti's published figure, for comparison and not measured here: ${GRAPHITI_CALLS} LLM calls per episode.`,
    [
      "text",
      "text tokens",
      "chunks",
      "LLM calls (by stage)",
      "embeddings calls",
      "prompt tokens (by stage)",
      "facts compared",
      "output tokens",
      "prompt overhead",
      "overhead per chunk"
    ],
    d.map((r) => [
      r.name,
      r.textTokens,
      r.chunks,
      `${r.llmCalls} (${Object.entries(r.byStage).map(([k, v]) => `${k} ${v}`).join(", ")})`,
      r.embeddingCalls,
      `${r.promptTokens} (${Object.entries(r.promptByStage).map(([k, v]) => `${k} ${v}`).join(", ")})`,
      r.candidates ?? "–",
      r.outputTokens,
      r.overheadTokens,
      Math.round(r.overheadTokens / r.chunks)
    ])
  )
  ctx.report.figures[SCENARIO] = { graphiti_published_llm_calls_per_episode: GRAPHITI_CALLS, ...figures }
}

/** What the server recorded per run against what the fake counted. */
const crossCheck = (file: string, rows: ReadonlyArray<TextCost>): Array<string> => {
  const db = openReadonly(file)
  try {
    const q = db.prepare(
      "SELECT COUNT(*) AS calls, COALESCE(SUM(input_tokens), 0) AS input, COALESCE(SUM(output_tokens), 0) AS output FROM gb_inferences WHERE run_id = ?"
    )
    const out: Array<string> = []
    for (const r of rows) {
      const got = q.get(r.runId) as { calls: number; input: number; output: number }
      const want = {
        calls: r.llmCalls + r.embeddingCalls,
        input: r.promptTokens + r.embeddingTokens,
        output: r.outputTokens
      }
      if (got.calls !== want.calls || got.input !== want.input || got.output !== want.output) {
        out.push(`${r.name}: server ${JSON.stringify(got)}, fake ${JSON.stringify(want)}`)
      }
    }
    return out
  } finally {
    db.close()
  }
}
