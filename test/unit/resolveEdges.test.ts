import { Either } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { countTokens } from "../../src/kernel/tokenizer.js"
import {
  buildResolveEdgesPrompt,
  compactTime,
  fitExistingFacts,
  parseResolveEdges,
  readResolveEdgesPrompt,
  RESOLVE_EDGES_MAX_TOKENS,
  RESOLVE_EDGES_MIN_SHOWN,
  RESOLVE_EDGES_PROMPT_BUDGET,
  type ResolveEdgesAnswer,
  restatesFact
} from "../../src/pipeline/prompts/resolveEdges.js"

const NEW = new Set([0, 1, 2])
const EXISTING = new Set([12, 40, 41])

const parsed = (answer: string): ResolveEdgesAnswer => {
  const result = parseResolveEdges(answer, NEW, EXISTING)
  if (Either.isLeft(result)) throw new Error(`expected an answer, got: ${result.left}`)
  return result.right
}

const ALICE_PARIS = {
  index: 0,
  source: "Alice Smith",
  relation: "lives_in",
  target: "Paris",
  description: "Alice Smith moved to Paris",
  valid_at: "2025-01-15T00:00:00.000Z"
}
const ALICE_BERLIN = {
  id: 12,
  source: "Alice Smith",
  relation: "lives_in",
  target: "Berlin",
  description: "Alice Smith lives in Berlin",
  valid_at: "2024-03-01T00:00:00.000Z"
}

describe("buildResolveEdgesPrompt", () => {
  it("sends the data as the contract's one JSON object, times compacted, without whitespace", () => {
    const prompt = buildResolveEdgesPrompt({
      referenceTime: "2025-02-01T00:00:00.000Z",
      newFacts: [ALICE_PARIS],
      existingFacts: [ALICE_BERLIN]
    })
    // "moved to" says more than lives_in Paris; "lives in Berlin" does not, so it is left out
    const { description: _, ...berlin } = ALICE_BERLIN
    expect(JSON.parse(prompt.user)).toEqual({
      reference_time: "2025-02-01",
      new_facts: [{ ...ALICE_PARIS, valid_at: "2025-01-15" }],
      existing_facts: [{ ...berlin, valid_at: "2024-03-01" }]
    })
    expect(prompt.user).not.toMatch(/\s"|":\s|,\s"/)
  })

  it("reads back what it wrote, whatever the names and descriptions hold", () => {
    fc.assert(fc.property(
      fc.array(
        fc.record({
          source: fc.string(),
          relation: fc.string(),
          target: fc.string(),
          description: fc.string(),
          valid_at: fc.string()
        }),
        { maxLength: 5 }
      ),
      fc.array(fc.nat(), { minLength: 5, maxLength: 5 }),
      (facts, ids) => {
        const existing = facts.map((f, i) => ({ ...f, id: ids[i]! }))
        const newFacts = facts.map((f, index) => ({ ...f, index }))
        const read = readResolveEdgesPrompt(
          buildResolveEdgesPrompt({ referenceTime: "t", newFacts, existingFacts: existing }).user
        )
        const compacted = <
          F extends { valid_at: string; description: string; source: string; relation: string; target: string }
        >(f: F) => {
          const { description, ...rest } = f
          return { ...rest, ...(restatesFact(f) ? {} : { description }), valid_at: compactTime(f.valid_at) }
        }
        expect(read.new_facts).toEqual(newFacts.map(compacted))
        expect(read.existing_facts).toEqual(existing.map(compacted))
      }
    ))
  })

  it("explains duplicates, contradictions and the answer form", () => {
    const { system } = buildResolveEdgesPrompt({ referenceTime: "t", newFacts: [], existingFacts: [] })
    expect(system).toMatch(/duplicate: .*same thing/)
    expect(system).toMatch(/contradiction: .*cannot be true at the same time/)
    expect(system).toContain(`{"duplicates":[{"new":1,"existing":40}],"contradictions":[{"new":0,"existing":[12]}]}`)
    expect(RESOLVE_EDGES_MAX_TOKENS).toBeGreaterThanOrEqual(1024)
  })
})

describe("restatesFact: a description is sent only when it says more than the fact", () => {
  const fact = {
    source: "Alice Smith",
    relation: "works_at",
    target: "Acme Labs",
    valid_at: "2020-01-01T00:00:00.000Z"
  }
  it("drops a description that only restates source, relation, target and date", () => {
    expect(restatesFact({ ...fact, description: "Alice Smith works at Acme Labs since 2020" })).toBe(true)
    expect(restatesFact({ ...fact, description: "" })).toBe(true)
    expect(restatesFact({ ...fact, description: "Alice Smith works at Acme Labs as a chemist" })).toBe(false)
  })
  it("so the user message has the description only where it adds", () => {
    const plain = { ...fact, id: 1, description: "Alice Smith works at Acme Labs" }
    const more = { ...fact, id: 2, description: "Alice Smith works at Acme Labs as a chemist" }
    const { user } = buildResolveEdgesPrompt({ referenceTime: "t", newFacts: [], existingFacts: [plain, more] })
    expect(readResolveEdgesPrompt(user).existing_facts).toEqual([
      { id: 1, source: "Alice Smith", relation: "works_at", target: "Acme Labs", valid_at: "2020-01-01" },
      {
        id: 2,
        source: "Alice Smith",
        relation: "works_at",
        target: "Acme Labs",
        description: more.description,
        valid_at: "2020-01-01"
      }
    ])
  })
})

describe("compactTime", () => {
  it("writes a midnight UTC time as its date, other times without zero milliseconds", () => {
    expect(compactTime("2024-03-01T00:00:00.000Z")).toBe("2024-03-01")
    expect(compactTime("2024-03-01T10:30:00.000Z")).toBe("2024-03-01T10:30:00Z")
    expect(compactTime("2024-03-01T10:30:00.250Z")).toBe("2024-03-01T10:30:00.250Z")
    expect(compactTime("soon")).toBe("soon")
  })
})

describe("fitExistingFacts", () => {
  const stored = Array.from({ length: 40 }, (_, i) => ({ ...ALICE_BERLIN, id: i + 1, target: `City ${i}` }))
  const fit = (budget: number, minShown = 0) =>
    fitExistingFacts({
      referenceTime: "2025-02-01T00:00:00.000Z",
      newFacts: [ALICE_PARIS],
      ranked: stored,
      budget,
      minShown
    }, countTokens)

  it("keeps the leading facts while the whole prompt fits the budget", () => {
    const shown = fit(400)
    expect(shown.length).toBeGreaterThan(0)
    expect(shown.length).toBeLessThan(stored.length)
    expect(shown).toEqual(stored.slice(0, shown.length))
    const user = buildResolveEdgesPrompt({
      referenceTime: "2025-02-01T00:00:00.000Z",
      newFacts: [ALICE_PARIS],
      existingFacts: shown
    })
    expect(countTokens(user.system) + countTokens(user.user)).toBeLessThanOrEqual(400)
    expect(fit(400 + 30).length).toBeGreaterThan(shown.length)
  })

  it("shows at least the most relevant minShown facts, and every fact under a large budget", () => {
    expect(fit(0, 3)).toEqual(stored.slice(0, 3))
    expect(fit(100_000)).toEqual(stored)
    expect(RESOLVE_EDGES_MIN_SHOWN).toBeGreaterThan(0)
    // with extract_graph's ~300 tokens of instructions, under issue 12's bar of 1,500
    expect(RESOLVE_EDGES_PROMPT_BUDGET).toBeLessThanOrEqual(1_200)
  })
})

describe("parseResolveEdges", () => {
  it("parses the contract's example", () => {
    expect(parsed(`{"duplicates": [{"new": 1, "existing": 40}], "contradictions": [{"new": 0, "existing": [12]}]}`))
      .toEqual({
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
    expect(parsed(`{"duplicates": [{"new": "1", "existing": "40"}], "contradictions": [{"new": 0, "existing": 12}]}`))
      .toEqual({
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
