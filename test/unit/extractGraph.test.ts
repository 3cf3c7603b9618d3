import { Either } from "effect"
import { describe, expect, it } from "vitest"
import type { ExtractedGraph } from "../../src/kernel/normalize.js"
import {
  buildExtractGraphPrompt,
  EXTRACT_GRAPH_MAX_TOKENS,
  parseExtractGraph
} from "../../src/pipeline/prompts/extractGraph.js"

const REF = "2025-02-01T00:00:00.000Z"

const answerWith = (edges: Array<Record<string, unknown>>, entities: Array<Record<string, unknown>> = []) =>
  JSON.stringify({ entities, edges })

const baseEdge = { source: "Alice", target: "Berlin", relation: "lives in", description: "Alice lives in Berlin" }

const parsed = (answer: string): ExtractedGraph => {
  const result = parseExtractGraph(answer, REF)
  if (Either.isLeft(result)) throw new Error(`expected a graph, got: ${result.left}`)
  return result.right
}

const failure = (answer: string): string => {
  const result = parseExtractGraph(answer, REF)
  if (Either.isRight(result)) throw new Error("expected a Left")
  return result.left
}

describe("buildExtractGraphPrompt", () => {
  const prompt = buildExtractGraphPrompt({ referenceTime: REF, text: "Alice moved to Paris yesterday." })

  it("puts the reference time and the delimited text in the user message", () => {
    expect(prompt.user).toBe(`Reference time: ${REF}\n\n<text>\nAlice moved to Paris yesterday.\n</text>`)
  })

  it("gives the JSON form with every field of the contract", () => {
    for (
      const field of [
        "entities",
        "edges",
        "name",
        "type",
        "description",
        "source",
        "target",
        "relation",
        "valid_at",
        "invalid_at"
      ]
    ) {
      expect(prompt.system).toContain(`"${field}"`)
    }
    const example = prompt.system.split("\n").find((line) => line.startsWith("{"))!
    expect(Object.keys(JSON.parse(example))).toEqual(["entities", "edges"])
  })

  it("suggests the entity types, relative dates, when invalid_at is set, and JSON only", () => {
    expect(prompt.system).toContain("person, organization, place, product, event, concept, other")
    expect(prompt.system).toMatch(/relative dates.*reference time/i)
    expect(prompt.system).toMatch(/invalid_at: .*only if the text says it ended/)
    expect(prompt.system).toMatch(/JSON object only/)
  })

  it("stays compact", () => {
    expect(prompt.system.length).toBeLessThan(2000)
  })

  it("has a 4096 token output budget", () => {
    expect(EXTRACT_GRAPH_MAX_TOKENS).toBe(4096)
  })
})

describe("parseExtractGraph", () => {
  it("parses the contract's example, normalizing times to milliseconds", () => {
    const answer = `\`\`\`json
{
  "entities": [{"name": "Alice Smith", "type": "person", "description": "Engineer at Acme"}],
  "edges": [{"source": "Alice Smith", "target": "Berlin", "relation": "lives in",
     "description": "Alice Smith lives in Berlin", "valid_at": "2024-03-01T00:00:00Z", "invalid_at": null}]
}
\`\`\``
    expect(parsed(answer)).toEqual({
      entities: [{ name: "Alice Smith", type: "person", description: "Engineer at Acme" }],
      edges: [
        {
          source: "Alice Smith",
          target: "Berlin",
          relation: "lives in",
          description: "Alice Smith lives in Berlin",
          valid_at: "2024-03-01T00:00:00.000Z",
          invalid_at: null
        }
      ]
    })
  })

  it("gives an edge without valid_at, or with null, the reference time", () => {
    const graph = parsed(answerWith([{ ...baseEdge }, { ...baseEdge, target: "Paris", valid_at: null }]))
    expect(graph.edges.map((e) => e.valid_at)).toEqual([REF, REF])
    expect(graph.edges.map((e) => e.invalid_at)).toEqual([null, null])
  })

  it("reads a date-only time as midnight UTC, and converts offsets to UTC", () => {
    const graph = parsed(answerWith([
      { ...baseEdge, valid_at: "2024-03-01", invalid_at: "2024-06-30T12:30:00+02:00" },
      { ...baseEdge, valid_at: "2024-03-01T10:00:00.5Z" }
    ]))
    expect(graph.edges[0]).toMatchObject({
      valid_at: "2024-03-01T00:00:00.000Z",
      invalid_at: "2024-06-30T10:30:00.000Z"
    })
    expect(graph.edges[1]!.valid_at).toBe("2024-03-01T10:00:00.500Z")
  })

  it("falls back to the reference time for an unparsable valid_at and to null for an unparsable invalid_at", () => {
    const graph = parsed(answerWith([{ ...baseEdge, valid_at: "last spring", invalid_at: "2024-02-30" }]))
    expect(graph.edges[0]).toMatchObject({ valid_at: REF, invalid_at: null })
  })

  it("drops an invalid_at earlier than valid_at but keeps one equal to it", () => {
    const graph = parsed(answerWith([
      { ...baseEdge, valid_at: "2024-03-01", invalid_at: "2023-01-01" },
      { ...baseEdge, valid_at: "2024-03-01", invalid_at: "2024-03-01T00:00:00Z" }
    ]))
    expect(graph.edges.map((e) => e.invalid_at)).toEqual([null, "2024-03-01T00:00:00.000Z"])
  })

  it("defaults a missing entity type and description to empty, and an edge description to the fact", () => {
    const graph = parsed(
      answerWith([{ source: "Alice", target: "Acme", relation: "works at" }], [{ name: "Alice" }, {
        name: "Acme",
        type: null,
        description: null
      }])
    )
    expect(graph.entities).toEqual([
      { name: "Alice", type: "", description: "" },
      { name: "Acme", type: "", description: "" }
    ])
    expect(graph.edges[0]!.description).toBe("Alice works at Acme")
  })

  it("ignores extra fields", () => {
    const graph = parsed(JSON.stringify({
      thoughts: "...",
      entities: [{ name: "Alice", type: "person", description: "x", confidence: 0.9 }],
      edges: [{ ...baseEdge, weight: 3 }]
    }))
    expect(graph.entities[0]).toEqual({ name: "Alice", type: "person", description: "x" })
    expect(Object.keys(graph.edges[0]!).sort()).toEqual([
      "description",
      "invalid_at",
      "relation",
      "source",
      "target",
      "valid_at"
    ])
  })

  it("accepts empty arrays", () => {
    expect(parsed(`{"entities": [], "edges": []}`)).toEqual({ entities: [], edges: [] })
  })

  it("fails on malformed or truncated JSON", () => {
    expect(failure("I could not find any entities.")).toMatch(/^extract_graph answer is not JSON: /)
    expect(failure(`{"entities": [{"name": "Alice"`)).toMatch(/^extract_graph answer is not JSON: /)
  })

  it("fails on a missing entities or edges array", () => {
    expect(failure(`{"edges": []}`)).toBe("extract_graph answer is invalid: missing array `entities`")
    expect(failure(`{"entities": []}`)).toBe("extract_graph answer is invalid: missing array `edges`")
  })

  it("fails on wrong types", () => {
    expect(failure(`{"entities": {}, "edges": []}`)).toBe(
      "extract_graph answer is invalid: `entities` must be an array"
    )
    expect(failure(`{"entities": [{"name": 3}], "edges": []}`)).toBe(
      "extract_graph answer is invalid: `entities[0].name` expected string, actual 3"
    )
    expect(failure(`{"entities": ["Alice"], "edges": []}`)).toBe(
      "extract_graph answer is invalid: `entities[0]` must be an object"
    )
    expect(failure(answerWith([{ ...baseEdge, valid_at: 20240301 }]))).toMatch(/`edges\[0\]\.valid_at` expected string/)
  })

  it("fails on an edge with an empty or missing endpoint or relation", () => {
    expect(failure(answerWith([baseEdge, { ...baseEdge, target: "  " }]))).toBe(
      "extract_graph answer is invalid: `edges[1].target` is empty"
    )
    expect(failure(answerWith([{ ...baseEdge, source: "" }]))).toBe(
      "extract_graph answer is invalid: `edges[0].source` is empty"
    )
    expect(failure(answerWith([{ ...baseEdge, relation: "" }]))).toBe(
      "extract_graph answer is invalid: `edges[0].relation` is empty"
    )
    expect(failure(answerWith([{ target: "Berlin", relation: "lives in" }]))).toBe(
      "extract_graph answer is invalid: `edges[0].source` is missing"
    )
  })

  it("accepts an edge whose endpoint is not among the entities", () => {
    expect(parsed(answerWith([{ ...baseEdge, target: "Atlantis" }])).edges[0]!.target).toBe("Atlantis")
  })
})
