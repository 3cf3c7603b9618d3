/**
 * `gligabao eval` as a user runs it: the real CLI over a case of evals/knowledge, the Anthropic
 * SDK pointed at the fake Anthropic server; and without an LLM key, the eval stops at the
 * first run with the reason.
 */
import { Either } from "effect"
import { cpSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { validateTrajectory } from "../../src/domain/Atif.js"
import { readResolveEdgesPrompt } from "../../src/pipeline/prompts/resolveEdges.js"
import { runCli, tempDir } from "../support/cli.js"
import { type FakeAnthropic, type RecordedRequest, startFakeAnthropic } from "../support/fakeAnthropic.js"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.js"

const CASE = join(import.meta.dirname, "../../evals/knowledge/contradiction-newer.json")

const lives = (city: string, valid_at: string) =>
  JSON.stringify({
    entities: [{ name: "Alice Smith", type: "person" }, { name: city, type: "place" }],
    edges: [{
      source: "Alice Smith",
      target: city,
      relation: "lives in",
      description: `Alice Smith lives in ${city}`,
      valid_at
    }]
  })

/** A model that gets this case right: extractions by the text, a contradiction for the same source and relation. */
const answer = (request: RecordedRequest): string => {
  const body = request.body as { system: string; messages: Array<{ content: unknown }> }
  const user = JSON.stringify(body.messages)
  if (body.system.includes("compare new facts")) {
    const input = readResolveEdgesPrompt(body.messages[0]!.content as string)
    return JSON.stringify({
      duplicates: [],
      contradictions: [{ new: 0, existing: input.existing_facts.map((f: { id: number }) => f.id) }]
    })
  }
  return user.includes("moved to Paris") ? lives("Paris", "2025-01-15") : lives("Berlin", "2024-03-01")
}

/** The same model behind an OpenAI-compatible API (a local server): the system prompt is the first message. */
const openAiAnswer = (request: RecordedRequest): string => {
  const messages = (request.body as { messages: Array<{ role: string; content: unknown }> }).messages
  const system = messages.filter((m) => m.role === "system").map((m) => String(m.content)).join("\n")
  const rest = messages.filter((m) => m.role !== "system")
  return answer({ ...request, body: { system, messages: rest } })
}

const dir = tempDir("gligabao-e2e-eval-")
let fake: FakeAnthropic
let local: FakeOpenAi

beforeAll(async () => {
  cpSync(CASE, join(dir.path, "cases", "contradiction-newer.json"))
  fake = await startFakeAnthropic({ text: answer })
  local = await startFakeOpenAi({ text: openAiAnswer })
})

afterAll(async () => {
  await fake?.close()
  await local?.close()
  dir.remove()
})

describe("gligabao eval", { timeout: 90_000 }, () => {
  it("runs the cases, prints the table, and writes a valid trajectory per text", async () => {
    const out = join(dir.path, "out")
    const result = await runCli(
      [
        "eval",
        join(dir.path, "cases"),
        "--db",
        join(dir.path, "eval.db"),
        "--output",
        out,
        "--models",
        "extract_graph=claude-haiku-4-5"
      ],
      { env: { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: fake.url } }
    )
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/contradiction-newer\s+2\/2\s+100%\/100%\s+100%\/100%\s+2\/2\s+1\/1/)
    expect(result.stdout).toMatch(/TOTAL \(micro\)/)
    const files = readdirSync(join(out, "contradiction-newer")).sort()
    expect(files).toHaveLength(2)
    const second = JSON.parse(readFileSync(join(out, "contradiction-newer", files[1]!), "utf8"))
    const valid = validateTrajectory(second)
    if (Either.isLeft(valid)) expect.fail(valid.left)
    expect(second.agent.model_name).toBe("claude-haiku-4-5")
    expect(second.steps.map((s: { extra: { step: string } }) => s.extra.step)).toEqual([
      "input",
      "extract_graph",
      "load_candidates",
      "resolve_edges",
      "store"
    ])
    expect(second.final_metrics.total_cost_usd).toBeGreaterThan(0)
    expect(JSON.parse(readFileSync(join(out, "results.json"), "utf8")).cases[0].score.facts.recall).toBe(1)
  })

  it("--provider openai --base-url URL --model M: the cases against a local OpenAI-compatible server, no key", async () => {
    const out = join(dir.path, "local")
    const result = await runCli([
      "eval",
      join(dir.path, "cases"),
      "--db",
      join(dir.path, "local.db"),
      "--output",
      out,
      "--provider",
      "openai",
      "--base-url",
      local.url,
      "--model",
      "qwen2.5:7b"
    ])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/contradiction-newer\s+2\/2\s+100%\/100%\s+100%\/100%\s+2\/2\s+1\/1/)
    const models = local.requests.filter((r) => r.path === "/v1/chat/completions").map((r) => r.body.model)
    expect(models.length).toBeGreaterThan(0)
    expect(new Set(models)).toEqual(new Set(["qwen2.5:7b"]))
    const rejected = await runCli(["eval", join(dir.path, "cases"), "--provider", "ollama"])
    expect(rejected.code).not.toBe(0)
    expect(rejected.stderr).toMatch(/--provider "ollama": expected/)
  })

  it("without an LLM key, stops at the first run and says why", async () => {
    const result = await runCli([
      "eval",
      join(dir.path, "cases"),
      "--db",
      join(dir.path, "nokey.db"),
      "--output",
      join(dir.path, "nokey")
    ])
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/case contradiction-newer: no LLM is configured/)
  })
})
