import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  buildResolveEdgesPrompt,
  parseResolveEdges,
  RESOLVE_EDGES_MAX_TOKENS,
  type ResolveEdgesAnswer
} from "../../src/pipeline/prompts/resolveEdges.js"

const NEW = new Set([0, 1, 2])
const EXISTING = new Set([12, 40, 41])

const parsed = (answer: string): ResolveEdgesAnswer => {
  const result = parseResolveEdges(answer, NEW, EXISTING)
  if (Either.isLeft(result)) throw new Error(`expected an answer, got: ${result.left}`)
  return result.right
}

describe("buildResolveEdgesPrompt", () => {
  it("sends exactly the JSON object of the contract as the user message", () => {
    const prompt = buildResolveEdgesPrompt({
      referenceTime: "2025-02-01T00:00:00Z",
      newFacts: [
        { index: 0, source: "Alice Smith", relation: "lives_in", target: "Paris", description: "Alice Smith moved to Paris", valid_at: "2025-01-15T00:00:00Z" }
      ],
      existingFacts: [
        { id: 12, source: "Alice Smith", relation: "lives_in", target: "Berlin", description: "Alice Smith lives in Berlin", valid_at: "2024-03-01T00:00:00Z" }
      ]
    })
    expect(prompt.user).toBe(
      `{"reference_time":"2025-02-01T00:00:00Z","new_facts":[{"index":0,"source":"Alice Smith","relation":"lives_in","target":"Paris","description":"Alice Smith moved to Paris","valid_at":"2025-01-15T00:00:00Z"}],"existing_facts":[{"id":12,"source":"Alice Smith","relation":"lives_in","target":"Berlin","description":"Alice Smith lives in Berlin","valid_at":"2024-03-01T00:00:00Z"}]}`
    )
  })

  it("drops fields the contract does not carry", () => {
    const fact = { index: 3, source: "a", relation: "r", target: "b", description: "d", valid_at: "t", secret: 1 }
    const prompt = buildResolveEdgesPrompt({ referenceTime: "t", newFacts: [fact], existingFacts: [] })
    expect(JSON.parse(prompt.user).new_facts[0]).not.toHaveProperty("secret")
  })

  it("explains duplicates, contradictions and the answer form", () => {
    const { system } = buildResolveEdgesPrompt({ referenceTime: "t", newFacts: [], existingFacts: [] })
    expect(system).toMatch(/duplicate: .*same thing/)
    expect(system).toMatch(/contradiction: .*cannot be true at the same time/)
    expect(system).toContain(`{"duplicates":[{"new":1,"existing":40}],"contradictions":[{"new":0,"existing":[12]}]}`)
    expect(RESOLVE_EDGES_MAX_TOKENS).toBeGreaterThanOrEqual(1024)
  })
})

describe("parseResolveEdges", () => {
  it("parses the contract's example", () => {
    expect(parsed(`{"duplicates": [{"new": 1, "existing": 40}], "contradictions": [{"new": 0, "existing": [12]}]}`)).toEqual({
      duplicates: [{ new: 1, existing: 40 }],
      contradictions: [{ new: 0, existing: [12] }],
      ignored: []
    })
  })

  it("treats missing or null arrays as empty, and tolerates fences and prose", () => {
    expect(parsed("```json\n{}\n```")).toEqual({ duplicates: [], contradictions: [], ignored: [] })
    expect(parsed(`None found: {"duplicates": null, "contradictions": [{"new": 2, "existing": [41]}]}`)).toEqual({
      duplicates: [],
      contradictions: [{ new: 2, existing: [41] }],
      ignored: []
    })
  })

  it("drops indexes and ids that were not in the input and says so", () => {
    const answer = parsed(JSON.stringify({
      duplicates: [{ new: 7, existing: 40 }, { new: 1, existing: 99 }, { new: 2, existing: 41 }],
      contradictions: [{ new: 0, existing: [12, 98] }, { new: 5, existing: [12] }, { new: 1, existing: [97] }]
    }))
    expect(answer.duplicates).toEqual([{ new: 2, existing: 41 }])
    expect(answer.contradictions).toEqual([{ new: 0, existing: [12] }])
    expect(answer.ignored).toEqual([
      "duplicates: new fact 7 is not in the input",
      "duplicates: existing fact 99 (for new fact 1) is not in the input",
      "contradictions: existing fact 98 (for new fact 0) is not in the input",
      "contradictions: new fact 5 is not in the input",
      "contradictions: existing fact 97 (for new fact 1) is not in the input"
    ])
  })

  it("keeps the first duplicate of a new fact and merges its contradictions", () => {
    const answer = parsed(JSON.stringify({
      duplicates: [{ new: 0, existing: 40 }, { new: 0, existing: 40 }, { new: 0, existing: 41 }],
      contradictions: [{ new: 1, existing: [12] }, { new: 1, existing: [41, 12] }]
    }))
    expect(answer.duplicates).toEqual([{ new: 0, existing: 40 }])
    expect(answer.contradictions).toEqual([{ new: 1, existing: [12, 41] }])
    expect(answer.ignored).toEqual(["duplicates: new fact 0 is already a duplicate of 40, not also of 41"])
  })

  it("ignores an index that is not an integer of the input", () => {
    expect(parsed(`{"duplicates": [{"new": 0.5, "existing": 12}]}`)).toEqual({
      duplicates: [],
      contradictions: [],
      ignored: ["duplicates: new fact 0.5 is not in the input"]
    })
  })

  it("accepts a single id for a contradiction and quoted numbers", () => {
    expect(parsed(`{"duplicates": [{"new": "1", "existing": "40"}], "contradictions": [{"new": 0, "existing": 12}]}`)).toEqual({
      duplicates: [{ new: 1, existing: 40 }],
      contradictions: [{ new: 0, existing: [12] }],
      ignored: []
    })
  })

  it("fails on an answer that is not JSON or has the wrong shape", () => {
    expect(parseResolveEdges("No duplicates.", NEW, EXISTING)).toEqual(
      Either.left(`resolve_edges answer is not JSON: no complete JSON object in "No duplicates."`)
    )
    expect(parseResolveEdges(`{"duplicates": {"new": 1}}`, NEW, EXISTING)).toEqual(
      Either.left("resolve_edges answer is invalid: `duplicates` must be an array")
    )
    expect(parseResolveEdges(`{"contradictions": [{"new": 0}]}`, NEW, EXISTING)).toEqual(
      Either.left("resolve_edges answer is invalid: `contradictions[0].existing` is missing")
    )
    expect(parseResolveEdges(`{"duplicates": [{"new": true, "existing": 40}]}`, NEW, EXISTING)).toEqual(
      Either.left("resolve_edges answer is invalid: `duplicates[0].new` expected number, actual true")
    )
    expect(parseResolveEdges(`{"duplicates": [3]}`, NEW, EXISTING)).toEqual(
      Either.left("resolve_edges answer is invalid: `duplicates[0]` must be an object")
    )
  })
})
