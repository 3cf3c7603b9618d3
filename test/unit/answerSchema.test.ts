import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { answerSchemaOf, toStrictJsonSchema } from "../../src/kernel/answerSchema.js"
import { splitThinking } from "../../src/kernel/json.js"
import { parseDetectGeo } from "../../src/pipeline/enrich/detectGeo.js"
import { parseImageAnswer } from "../../src/pipeline/image/prompt.js"
import { parseExtractGraph } from "../../src/pipeline/prompts/extractGraph.js"
import { parseResolveEdges } from "../../src/pipeline/prompts/resolveEdges.js"
import { parseResolveSeries } from "../../src/pipeline/series/resolveSeries.js"
import { answerSchemaFor, STAGE_ANSWERS } from "../../src/pipeline/stageAnswers.js"
import { parseQueryAnswer } from "../../src/query/answer.js"

type Json = Record<string, any>

/** Every object node of a JSON Schema (the schema itself included). */
const objectNodes = (schema: unknown): Array<Json> => {
  if (Array.isArray(schema)) return schema.flatMap(objectNodes)
  if (typeof schema !== "object" || schema === null) return []
  const node = schema as Json
  const children = Object.entries(node).flatMap(([k, v]) =>
    k === "properties" ? Object.values(v as Json).flatMap(objectNodes) : objectNodes(v)
  )
  return node.type === "object" ? [node, ...children] : children
}

/** A value of the strict schema with every nullable field null and every array empty (the minimal answer). */
const minimalValue = (schema: Json): unknown => {
  if (Array.isArray(schema.anyOf)) {
    return schema.anyOf.some((s: Json) => s.type === "null") ? null : minimalValue(schema.anyOf[0])
  }
  switch (schema.type) {
    case "object":
      return Object.fromEntries(Object.entries(schema.properties as Json).map(([k, v]) => [k, minimalValue(v)]))
    case "array":
      return []
    case "string":
      return "x"
    default:
      return 1
  }
}

describe("answerSchemaOf / toStrictJsonSchema", () => {
  const Example = Schema.Struct({
    name: Schema.String,
    note: Schema.optional(Schema.NullOr(Schema.String)),
    count: Schema.optional(Schema.Number),
    items: Schema.Array(Schema.Struct({ id: Schema.Union(Schema.Int, Schema.NumberFromString) }))
  })

  it("derives the JSON Schema of the encoded form, refs inlined, no $schema", () => {
    const { name, schema } = answerSchemaOf("example", Example)
    expect(name).toBe("example")
    expect(JSON.stringify(schema)).not.toMatch(/\$ref|\$defs|\$schema/)
    expect(schema).toMatchObject({
      type: "object",
      required: ["name", "items"],
      properties: { name: { type: "string" }, items: { type: "array" } },
      additionalProperties: false
    })
    expect((schema as Json).properties.items.items.properties.id.anyOf[0]).toMatchObject({ type: "integer" })
  })

  it("strict: every property required, additionalProperties false at every level, optional ones nullable", () => {
    const strict = toStrictJsonSchema(answerSchemaOf("example", Example).schema) as Json
    expect(strict.required).toEqual(["name", "note", "count", "items"])
    // already nullable: unchanged
    expect(strict.properties.note).toEqual({ anyOf: [{ type: "string" }, { type: "null" }] })
    // optional, not nullable: becomes a union with null
    expect(strict.properties.count).toEqual({ anyOf: [{ type: "number" }, { type: "null" }] })
    expect(strict.properties.name).toEqual({ type: "string" })
    for (const node of objectNodes(strict)) {
      expect(node.additionalProperties).toBe(false)
      expect(node.required).toEqual(Object.keys(node.properties))
    }
  })

  it("is pure: the input schema is not changed", () => {
    const derived = answerSchemaOf("example", Example)
    const before = JSON.stringify(derived.schema)
    toStrictJsonSchema(derived.schema)
    expect(JSON.stringify(derived.schema)).toBe(before)
  })

  it("a field named like a keyword (type, properties) is a field", () => {
    const s = answerSchemaOf("k", Schema.Struct({ type: Schema.optional(Schema.String), properties: Schema.String }))
    const strict = toStrictJsonSchema(s.schema) as Json
    expect(strict.required).toEqual(["type", "properties"])
    expect(strict.properties.type).toEqual({ anyOf: [{ type: "string" }, { type: "null" }] })
  })
})

describe("the stages' answer schemas", () => {
  const window = { from: "2024-01-01T00:00:00.000Z", to: "2024-12-31T00:00:00.000Z" }
  // each stage's own parser, given the minimal answer its strict schema allows
  const parsers: Record<string, (text: string) => Either.Either<unknown, string>> = {
    extract_graph: (t) => parseExtractGraph(t, "2024-05-01T00:00:00.000Z"),
    resolve_edges: (t) => parseResolveEdges(t, new Set([0]), new Set([1])),
    resolve_series: (t) => parseResolveSeries(t, [], [], window),
    detect_geo: (t) => parseDetectGeo(t, []),
    extract_image: parseImageAnswer,
    query: (t) => parseQueryAnswer(t, [])
  }

  it("every JSON-answering stage has one; summarize_chunk and web_search answer prose", () => {
    expect(Object.keys(STAGE_ANSWERS).sort()).toEqual(Object.keys(parsers).sort())
    for (const [stage, answer] of Object.entries(STAGE_ANSWERS)) expect(answer.name).toBe(stage)
    expect(answerSchemaFor("summarize_chunk")).toBeUndefined()
    expect(answerSchemaFor("web_search")).toBeUndefined()
    expect(answerSchemaFor("constructor")).toBeUndefined()
  })

  for (const [stage, parse] of Object.entries(parsers)) {
    it(`${stage}: an answer of the strict schema (optional fields null) is one the parser accepts`, () => {
      const strict = toStrictJsonSchema(STAGE_ANSWERS[stage]!.schema) as Json
      const value = minimalValue(strict)
      const parsed = parse(JSON.stringify(value))
      expect(Either.isRight(parsed), JSON.stringify({ value, parsed })).toBe(true)
    })
  }
})

describe("splitThinking", () => {
  it("removes closed blocks and keeps what they held", () => {
    expect(splitThinking("<think>\nhmm {not json}\n</think>\n{\"a\":1}")).toEqual({
      answer: "{\"a\":1}",
      thinking: "hmm {not json}"
    })
    expect(splitThinking("<think>a</think>x<thinking>b</thinking>")).toEqual({ answer: "x", thinking: "a\n\nb" })
  })

  it("an unclosed block at the start is reasoning to the end", () => {
    expect(splitThinking("  <think>still thinking {\"a\":")).toEqual({ answer: "", thinking: "still thinking {\"a\":" })
  })

  it("a lone closing tag ends reasoning that began with the answer (the template opened it)", () => {
    expect(splitThinking("reasoning {x}\n</think>\n{\"a\":1}")).toEqual({
      answer: "{\"a\":1}",
      thinking: "reasoning {x}"
    })
  })

  it("an answer without thinking is unchanged", () => {
    expect(splitThinking(" {\"a\": \"<b>\"} ")).toEqual({ answer: " {\"a\": \"<b>\"} ", thinking: undefined })
  })
})
