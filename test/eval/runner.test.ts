/**
 * The knowledge evals: every case in evals/knowledge parses; a malformed case is refused with a
 * message naming it; `--models` is checked; and the runner, over two real cases with the
 * scripted LLM on a real database (SQLite and PostgreSQL), replays them into fresh datasets,
 * writes valid trajectories, and scores what the datasets hold (known numbers: one answer adds
 * an entity the case does not expect).
 */
import { NodeContext } from "@effect/platform-node"
import { it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect } from "vitest"
import { type ScriptedAnswer, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { evalLlmEnv, parseModelsFlag } from "../../src/cli/eval.js"
import { validateTrajectory } from "../../src/domain/Atif.js"
import { loadCases, parseCase } from "../../src/eval/cases.js"
import { formatReport, runEvals } from "../../src/eval/runner.js"
import { readResolveEdgesPrompt } from "../../src/pipeline/prompts/resolveEdges.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { graph, rememberLayer, resolution } from "../support/app.js"
import { forEachDialect } from "../support/databases.js"

const CASES_DIR = join(import.meta.dirname, "../../evals/knowledge")

describe("cases", () => {
  it.effect("every case in evals/knowledge is valid, the chunked document read from its file", () =>
    Effect.gen(function*() {
      const cases = yield* loadCases(CASES_DIR)
      expect(cases.length).toBeGreaterThanOrEqual(12)
      for (const c of cases) {
        expect(c.texts.length, c.name).toBeGreaterThan(0)
        expect(c.expected.live.length + c.expected.closed.length, c.name).toBeGreaterThan(0)
      }
      const doc = cases.find((c) => c.name === "chunked-document")!
      expect(doc.texts[0]!.text!.length).toBeGreaterThan(5000)
      expect(new Set(cases.flatMap((c) => c.tags))).toEqual(
        expect.objectContaining(
          new Set(["repeats", "paraphrases", "contradictions", "aliases", "relative dates", "chunked", "sessions"])
        )
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a malformed case is refused with a message naming the case and the field", () =>
    Effect.gen(function*() {
      const none = () => Effect.die("no file")
      const parse = (json: unknown) => Effect.flip(parseCase("bad", JSON.stringify(json), none))
      const base = {
        description: "d",
        texts: [{ text: "t", reference_time: "2025-01-01T00:00:00Z" }],
        expected: { entities: [], live: [], closed: [] }
      }
      expect((yield* parse({ ...base, surprise: 1 })).message).toMatch(/^case bad: .*surprise/s)
      expect((yield* parse({ ...base, texts: [{ text: "t", reference_time: "last week" }] })).message).toMatch(
        /texts\[0\]: reference_time/
      )
      expect((yield* parse({ ...base, texts: [{ reference_time: "2025-01-01T00:00:00Z" }] })).message).toMatch(
        /exactly one of text and file/
      )
      expect(
        (yield* parse({
          ...base,
          texts: [{ text: "t", reference_time: "2025-01-01T00:00:00Z", models: { nope: "m" } }]
        })).message
      )
        .toMatch(/models\.nope/)
      expect((yield* Effect.flip(parseCase("bad", "{", none))).message).toMatch(/not JSON/)
    }))

  it("--models takes stage=model pairs and checks them as a request's models", () => {
    expect(parseModelsFlag("extract_graph=m1, resolve_edges=m2")).toEqual(
      Either.right({ extract_graph: "m1", resolve_edges: "m2" })
    )
    expect(parseModelsFlag(undefined)).toEqual(Either.right({}))
    expect(Either.getLeft(parseModelsFlag("extract_graph"))._tag).toBe("Some")
    expect(parseModelsFlag("nope=m")).toEqual(Either.left(expect.stringContaining("models.nope")))
  })

  it("--provider, --base-url and --model become the LLM's configuration variables, checked as those keys", () => {
    expect(evalLlmEnv({})).toEqual(Either.right({}))
    expect(evalLlmEnv({ provider: "openai", baseUrl: "http://127.0.0.1:11434/v1", model: "qwen2.5:7b" })).toEqual(
      Either.right({
        GLIGABAO_LLM_PROVIDER: "openai",
        GLIGABAO_LLM_BASE_URL: "http://127.0.0.1:11434/v1",
        GLIGABAO_LLM_DEFAULT_MODEL: "qwen2.5:7b"
      })
    )
    expect(evalLlmEnv({ provider: "ollama" })).toEqual(Either.left(expect.stringContaining("--provider")))
    expect(evalLlmEnv({ baseUrl: "localhost:11434" })).toEqual(Either.left(expect.stringContaining("--base-url")))
  })
})

// ---------------------------------------------------------------------------------------------
// the runner end to end over two real cases

const userText = (r: LlmRequest) => String(typeof r.messages[0]!.content === "string" ? r.messages[0]!.content : "")

const lives = (city: string, valid_at: string) =>
  graph([{ name: "Alice Smith", type: "person" }, { name: city, type: "place" }], [
    { source: "Alice Smith", target: city, relation: "lives in", valid_at }
  ])

/** The answers a good model would give for each text of the two cases (one adds "Vienna"). */
const EXTRACTIONS: ReadonlyArray<readonly [string, ScriptedAnswer]> = [
  ["Alice Smith lives in Berlin.", lives("Berlin", "2024-03-01")],
  ["Alice Smith moved to Paris on 15 January 2025.", lives("Paris", "2025-01-15")],
  [
    "Lena Fischer plays in the Vienna Chess Club.",
    graph(
      [{ name: "Lena Fischer", type: "person" }, { name: "Vienna Chess Club", type: "organization" }],
      [{ source: "Lena Fischer", target: "Vienna Chess Club", relation: "plays in" }]
    )
  ],
  [
    "Lena Fischer works at the Vienna Technical School.",
    graph(
      [{ name: "Lena Fischer", type: "person" }, { name: "Vienna Technical School", type: "organization" }, {
        name: "Vienna",
        type: "place"
      }],
      [{ source: "Lena Fischer", target: "Vienna Technical School", relation: "works at" }]
    )
  ]
]

/** The resolution a good model would give: the same source and relation, another target, contradict. */
const resolve = (r: LlmRequest): ScriptedAnswer => {
  const input = readResolveEdgesPrompt(userText(r))
  const contradictions = input.new_facts.flatMap((n: any) => {
    const ids = input.existing_facts
      .filter((e: any) => e.source === n.source && e.relation === n.relation && e.target !== n.target)
      .map((e: any) => e.id)
    return ids.length > 0 ? [{ new: n.index, existing: ids }] : []
  })
  return resolution([], contradictions)
}

const script = (r: LlmRequest): ScriptedAnswer => {
  if (r.stage === "resolve_edges") return { ...resolve(r), usage: { inputTokens: 50, outputTokens: 5 } }
  const found = EXTRACTIONS.find(([text]) => userText(r).includes(`<text>\n${text}\n</text>`))
  if (found === undefined) return { fail: { message: `no scripted extraction for ${userText(r)}` } }
  return { ...found[1], usage: { inputTokens: 100, outputTokens: 20 } }
}

const PRICES = { [ScriptedLlm.DEFAULT_MODEL]: { input: 1, output: 5 } }

forEachDialect((_dialect, makeLayer) => {
  it.live("replays two cases into fresh datasets, writes their trajectories and scores them", () =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const root = mkdtempSync(join(tmpdir(), "gligabao-evals-"))
        cpSync(join(CASES_DIR, "contradiction-newer.json"), join(root, "cases", "contradiction-newer.json"))
        cpSync(join(CASES_DIR, "sessions.json"), join(root, "cases", "sessions.json"))
        return root
      }),
      (root) =>
        Effect.gen(function*() {
          const cases = yield* loadCases(join(root, "cases"))
          const out = join(root, "out")
          const report = yield* runEvals(cases, { label: "t1", outputDir: out })
          const [newer, sessions] = report.cases
          expect(report.cases.map((c) => [c.name, c.dataset])).toEqual([
            ["contradiction-newer", "eval-t1-contradiction-newer"],
            ["sessions", "eval-t1-sessions"]
          ])
          expect(report.summary.failed_runs).toBe(0)

          // a perfect case: the contradiction closed Berlin at the day Paris started
          expect(newer!.score.entities).toMatchObject({ precision: 1, recall: 1 })
          expect(newer!.score.facts).toMatchObject({ precision: 1, recall: 1 })
          expect(newer!.score.invalidation).toMatchObject({ checked: 2, correct: 2 })
          expect(newer!.score.dates).toMatchObject({ checked: 1, correct: 1 })
          // sessions: the repeat is one fact in both sessions; "Vienna" is an entity the case does not expect
          expect(sessions!.score.entities).toMatchObject({
            expected: 3,
            actual: 4,
            matched: 3,
            precision: 0.75,
            recall: 1
          })
          expect(sessions!.score.entities.unexpected).toEqual(["Vienna (place)"])
          expect(sessions!.score.facts).toMatchObject({ precision: 1, recall: 1 })
          expect(sessions!.score.sessions).toMatchObject({ checked: 5, correct: 5 })
          expect(report.summary.entities).toMatchObject({ expected: 6, actual: 7, matched: 6, recall: 1 })

          // 5 extractions (100 in, 20 out) and 2 resolutions (50 in, 5 out): the Paris text and Lena's second text
          expect(newer!.usage).toMatchObject({ prompt_tokens: 250, completion_tokens: 45, model_calls: 3 })
          expect(report.summary.usage).toMatchObject({ prompt_tokens: 600, completion_tokens: 110, model_calls: 7 })
          expect(report.summary.usage.cost_usd).toBeCloseTo((600 * 1 + 110 * 5) / 1e6, 12)

          // one trajectory per text, valid ATIF, and the results
          for (const c of report.cases) {
            const files = readdirSync(join(out, c.name)).sort()
            expect(files).toHaveLength(c.runs.length)
            expect(c.runs.map((r) => r.trajectory_file)).toEqual(files.map((f) => join(out, c.name, f)))
            for (const f of files) {
              const valid = validateTrajectory(JSON.parse(readFileSync(join(out, c.name, f), "utf8")))
              if (Either.isLeft(valid)) expect.fail(valid.left)
            }
          }
          expect(existsSync(join(out, "results.json"))).toBe(true)

          const table = formatReport(report)
          expect(table).toMatch(/^case\s+runs\s+entities P\/R\s+facts P\/R/)
          expect(table).toMatch(
            /contradiction-newer\s+2\/2\s+100%\/100%\s+100%\/100%\s+2\/2\s+1\/1\s+-\s+-\s+250\s+45\s+\$0\.0005/
          )
          expect(table).toMatch(/TOTAL \(micro\)\s+5\/5/)
          expect(table).toContain("unexpected entity: Vienna (place)")
        }).pipe(
          Effect.provide(Layer.mergeAll(
            rememberLayer(makeLayer(), script, { settings: { prices: PRICES } }),
            NodeContext.layer
          ) as Layer.Layer<any, any, never>)
        ),
      (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
    ) as Effect.Effect<void, unknown, never>)
})
