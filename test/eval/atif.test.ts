/**
 * The ATIF schema (src/eval/Atif.ts) accepts the format's own example and rejects what a
 * Harbor validator rejects: unknown keys, agent-only fields on other steps, step ids that are
 * not sequential from 1, an observation for a tool call of another step, an empty trajectory.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { validateTrajectory } from "../../src/domain/Atif.js"

/** The example of guides/external-apis.md section 5. */
const example = () => ({
  schema_version: "ATIF-v1.7",
  session_id: "s-1",
  agent: { name: "my-agent", version: "0.1.0", model_name: "claude-sonnet-4-5" },
  steps: [
    { step_id: 1, source: "user", message: "Where is Paris?" },
    {
      step_id: 2,
      timestamp: "2025-10-11T10:30:02Z",
      source: "agent",
      message: "Looking it up.",
      reasoning_content: "geocode it",
      tool_calls: [{ tool_call_id: "c1", function_name: "geocode", arguments: { q: "Paris" } }],
      observation: { results: [{ source_call_id: "c1", content: "48.85,2.35" }] },
      metrics: {
        prompt_tokens: 520,
        completion_tokens: 80,
        cached_tokens: 200,
        cost_usd: 0.00045,
        extra: { cache_creation_tokens: 3 }
      }
    }
  ],
  final_metrics: { total_prompt_tokens: 520, total_completion_tokens: 80, total_cost_usd: 0.00045, total_steps: 2 }
})

const errorOf = (doc: unknown) => {
  const result = validateTrajectory(doc)
  expect(Either.isLeft(result), "the document should be rejected").toBe(true)
  return Either.isLeft(result) ? result.left : ""
}

describe("ATIF schema", () => {
  it("accepts the format's example, multimodal messages and extra everywhere", () => {
    const doc: any = example()
    doc.steps[0].message = [{ type: "text", text: "What is this?" }, {
      type: "image",
      source: { media_type: "image/png", path: "a.png" }
    }]
    doc.steps[0].extra = { anything: [1, 2] }
    doc.extra = { run_id: 7 }
    expect(Either.isRight(validateTrajectory(doc))).toBe(true)
  })

  it("rejects an unknown key at any level", () => {
    for (
      const mutate of [
        (d: any) => (d.foo = 1),
        (d: any) => (d.agent.foo = 1),
        (d: any) => (d.steps[1].foo = 1),
        (d: any) => (d.steps[1].metrics.foo = 1),
        (d: any) => (d.steps[1].tool_calls[0].foo = 1),
        (d: any) => (d.steps[1].observation.results[0].foo = 1),
        (d: any) => (d.final_metrics.foo = 1)
      ]
    ) {
      const doc = example()
      mutate(doc)
      expect(errorOf(doc)).toMatch(/foo/)
    }
  })

  it("rejects agent-only fields on a user or system step", () => {
    const doc: any = example()
    doc.steps[0].model_name = "m"
    doc.steps[0].metrics = { prompt_tokens: 1 }
    expect(errorOf(doc)).toMatch(/a user step must not have model_name, metrics/)
  })

  it("rejects step ids that are not sequential from 1", () => {
    const doc: any = example()
    doc.steps[1].step_id = 3
    expect(errorOf(doc)).toMatch(/sequential from 1/)
  })

  it("rejects an observation naming a tool call that is not in its step", () => {
    const doc: any = example()
    doc.steps[1].observation.results[0].source_call_id = "c2"
    expect(errorOf(doc)).toMatch(/c2 is not a tool call of the step/)
  })

  it("rejects no steps, an unknown version, a bad source, negative tokens and a timestamp that is not ISO 8601", () => {
    expect(errorOf({ ...example(), steps: [] })).toMatch(/steps/)
    expect(errorOf({ ...example(), schema_version: "ATIF-v2.0" })).toMatch(/schema_version/)
    const bad: any = example()
    bad.steps[0].source = "tool"
    expect(errorOf(bad)).toMatch(/source/)
    const negative: any = example()
    negative.steps[1].metrics.prompt_tokens = -1
    expect(errorOf(negative)).toMatch(/prompt_tokens/)
    const time: any = example()
    time.steps[1].timestamp = "yesterday"
    expect(errorOf(time)).toMatch(/ISO 8601/)
  })
})
