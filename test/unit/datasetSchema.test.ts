/**
 * A dataset's schema as pure functions (docs/SCHEMA.md): the wire schema's checks and its
 * normalization; the extract_graph prompt and answer schema with custom types (enums with their
 * descriptions, attributes), and unchanged without a schema; the answer's attributes kept only
 * as declared; the graph a closed schema lets through; an exclusive relation's contradictions,
 * which decide exactly as a consistent model's would, in any order of the texts; attributes
 * folded statement by statement.
 */
import { Either, Schema } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type DatasetSchema,
  DatasetSchemaDocument,
  EMPTY_SCHEMA,
  normalizeSchema,
  schemaToStore,
  storedSchemaOf
} from "../../src/domain/DatasetSchema.js"
import { decodeRequest } from "../../src/domain/Wire.js"
import { toStrictJsonSchema } from "../../src/kernel/answerSchema.js"
import {
  decodeAttributes,
  encodeAttributes,
  exclusiveContradictions,
  foldAttributes,
  withinSchema
} from "../../src/kernel/datasetSchema.js"
import { normalizeExtraction } from "../../src/kernel/normalize.js"
import type { NewFact, StoredFact } from "../../src/kernel/temporal.js"
import {
  buildExtractGraphPrompt,
  EXTRACT_GRAPH_ANSWER,
  extractGraphAnswerFor,
  parseExtractGraph
} from "../../src/pipeline/prompts/extractGraph.js"
import { replay, type Statement } from "../support/temporalWorld.js"

const REF = "2025-02-01T00:00:00.000Z"
const decode = decodeRequest(DatasetSchemaDocument)

const schemaOf = (body: unknown): DatasetSchema => {
  const decoded = decode(body)
  if (Either.isLeft(decoded)) throw new Error(decoded.left.message)
  return normalizeSchema(decoded.right)
}

const problem = (body: unknown): string => {
  const decoded = decode(body)
  if (Either.isRight(decoded)) throw new Error("expected a 400")
  return decoded.left.message
}

const TICKETS = schemaOf({
  entity_types: [
    {
      name: "Customer",
      description: "a company that buys from us",
      attributes: [{ name: "tier", type: "string", description: "free, pro or enterprise" }, {
        name: "seats",
        type: "integer"
      }]
    },
    {
      name: "Ticket",
      description: "a support request",
      attributes: [{ name: "opened", type: "date" }, { name: "urgent", type: "boolean" }]
    }
  ],
  allow_other_entity_types: false,
  edge_types: [
    { name: "files", description: "a customer files a ticket", source_types: ["customer"], target_types: ["ticket"] },
    { name: "Assigned To", description: "who works on a ticket", exclusive: "per_source" }
  ],
  allow_other_edge_types: false,
  instructions: "  Only facts about our customers.  "
})

type Json = Record<string, any>

describe("the wire schema", () => {
  it("fills defaults, and normalizes names as the graph stores them", () => {
    expect(schemaOf({})).toEqual(EMPTY_SCHEMA)
    expect(TICKETS.entity_types.map((t) => t.name)).toEqual(["customer", "ticket"])
    expect(TICKETS.edge_types.map((t) => [t.name, t.exclusive])).toEqual([["files", null], [
      "assigned_to",
      "per_source"
    ]])
    expect(TICKETS.instructions).toBe("Only facts about our customers.")
    expect(TICKETS.entity_types[0]!.attributes[1]).toEqual({ name: "seats", type: "integer", description: "" })
  })

  it("names what is wrong", () => {
    expect(problem({ entity_types: [{ name: "a", description: "b" }, { name: "A ", description: "c" }] })).toBe(
      "entity_types[1].name repeats an entity type (names are compared lowercased)"
    )
    expect(problem({ edge_types: [{ name: "lives in", description: "x" }, { name: "Lives_In", description: "y" }] }))
      .toMatch(/^edge_types\[1\]\.name repeats an edge type/)
    expect(
      problem({ entity_types: [{ name: "t", description: "d", attributes: [{ name: "2x", type: "string" }] }] })
    ).toMatch(/^entity_types\[0\]\.attributes\[0\]\.name must be 1 to 64 letters/)
    expect(
      problem({
        entity_types: [
          { name: "a", description: "d", attributes: [{ name: "size", type: "integer" }] },
          { name: "b", description: "d", attributes: [{ name: "size", type: "string" }] }
        ]
      })
    ).toBe("entity_types[1].attributes[0].type must be integer, as attribute \"size\" of another type is")
    expect(problem({ allow_other_edge_types: false })).toBe(
      "edge_types must not be empty when allow_other_edge_types is false"
    )
    expect(problem({ entity_types: [{ name: "t" }] })).toBe("entity_types[0].description is required")
    expect(problem({ instructions: "x".repeat(4001) })).toBe("instructions must be at most 4000 bytes")
    expect(problem({ entity_types: [], surprise: true })).toMatch(/^unknown field "surprise"/)
    // a built-in type is an endpoint type only while other types are allowed
    expect(schemaOf({ edge_types: [{ name: "r", description: "d", source_types: ["person"] }] }).edge_types)
      .toHaveLength(1)
    expect(
      problem({
        entity_types: [{ name: "t", description: "d" }],
        allow_other_entity_types: false,
        edge_types: [{ name: "r", description: "d", source_types: ["person"] }]
      })
    ).toBe("edge_types[0].source_types[0] is not an entity type of this schema (t)")
  })

  it("stores the empty schema as none, and reads back what it stored", () => {
    expect(schemaToStore(EMPTY_SCHEMA)).toBeNull()
    expect(storedSchemaOf(null)).toEqual(EMPTY_SCHEMA)
    expect(storedSchemaOf(schemaToStore(TICKETS))).toEqual(TICKETS)
    expect(Schema.decodeUnknownSync(DatasetSchemaDocument)(JSON.parse(schemaToStore(TICKETS)!))).toEqual(TICKETS)
  })
})

describe("the extract_graph prompt and answer schema", () => {
  const text = "Acme files ticket T-1."

  it("are unchanged without a schema, or with the empty one", () => {
    const plain = buildExtractGraphPrompt({ referenceTime: REF, text })
    expect(buildExtractGraphPrompt({ referenceTime: REF, text, schema: EMPTY_SCHEMA })).toEqual(plain)
    expect(plain.system).toContain("- type: one of person, organization, place, product, event, concept, other.")
    expect(plain.system).not.toContain("<instructions>")
    expect(extractGraphAnswerFor(undefined)).toBe(EXTRACT_GRAPH_ANSWER)
    expect(extractGraphAnswerFor(EMPTY_SCHEMA)).toBe(EXTRACT_GRAPH_ANSWER)
  })

  it("carries the custom types and relations, their descriptions, attributes and exclusivity", () => {
    const { system, user } = buildExtractGraphPrompt({ referenceTime: REF, text, schema: TICKETS })
    expect(user).toBe(buildExtractGraphPrompt({ referenceTime: REF, text }).user)
    expect(system).toContain("Entities: only those of the entity types below that the text mentions.")
    expect(system).toContain("- type: one of the entity types below.")
    expect(system).toContain("- relation: one of the relations below, also for facts that ended.")
    expect(system).toContain(
      "- customer: a company that buys from us\n  attributes: tier (string): free, pro or enterprise; seats (integer)"
    )
    expect(system).toContain("- ticket: a support request\n  attributes: opened (a date, RFC 3339); urgent (boolean)")
    expect(system).toContain("- files (customer -> ticket): a customer files a ticket")
    expect(system).toContain("- assigned_to (any -> any): who works on a ticket (a source has one at a time")
    expect(system).toMatch(/<instructions>\nFor this memory:\nOnly facts about our customers\.\n<\/instructions>$/)
  })

  it("the answer schema has the types and relations as enums, each with its description, and the attributes", () => {
    const root = extractGraphAnswerFor(TICKETS).schema as Json
    const entity = root.properties.entities.items.properties
    expect(entity.type.anyOf).toEqual([
      { type: "string", enum: ["customer"], description: "a company that buys from us" },
      { type: "string", enum: ["ticket"], description: "a support request" },
      { type: "null" }
    ])
    expect(entity.attributes.anyOf[0]).toEqual({
      type: "object",
      properties: {
        tier: { type: "string", description: "of customer: free, pro or enterprise" },
        seats: { type: "integer", description: "of customer" },
        opened: { type: "string", description: "of ticket, RFC 3339" },
        urgent: { type: "boolean", description: "of ticket" }
      },
      additionalProperties: false
    })
    expect(root.properties.edges.items.properties.relation.anyOf).toEqual([
      { type: "string", enum: ["files"], description: "a customer files a ticket" },
      { type: "string", enum: ["assigned_to"], description: "who works on a ticket" }
    ])
    // the rest is the base schema's
    expect(root.properties.edges.items.properties.valid_at).toEqual(
      (EXTRACT_GRAPH_ANSWER.schema as Json).properties.edges.items.properties.valid_at
    )
    // allowed beside the built-in types and any relation: those stay offered
    const open = extractGraphAnswerFor(schemaOf({
      entity_types: [{ name: "customer", description: "c" }],
      edge_types: [{ name: "files", description: "f" }]
    })).schema as Json
    expect(open.properties.entities.items.properties.type.anyOf[1].enum).toEqual(
      ["person", "organization", "place", "product", "event", "concept", "other"]
    )
    expect(open.properties.edges.items.properties.relation.anyOf[1]).toEqual({
      type: "string",
      description: "another relation: a short verb phrase in the present tense"
    })
    expect(open.properties.entities.items.properties.attributes).toBeUndefined()
  })

  it("is valid as OpenAI's strict structured outputs demand: attributes nullable, none extra", () => {
    const strict = toStrictJsonSchema(extractGraphAnswerFor(TICKETS).schema) as Json
    const attributes = strict.properties.entities.items.properties.attributes.anyOf[0]
    expect(attributes.required).toEqual(["tier", "seats", "opened", "urgent"])
    expect(attributes.properties.seats).toEqual({
      anyOf: [{ type: "integer", description: "of customer" }, { type: "null" }]
    })
    expect(strict.properties.entities.items.required).toEqual(["name", "type", "description", "attributes"])
  })

  it("a request's own instructions come after the dataset's, and alone without a schema", () => {
    const both = buildExtractGraphPrompt({ referenceTime: REF, text, schema: TICKETS, instructions: "Skip T-0." })
    expect(both.system).toMatch(
      /For this memory:\nOnly facts about our customers\.\nFor this text:\nSkip T-0\.\n<\/instructions>$/
    )
    const alone = buildExtractGraphPrompt({ referenceTime: REF, text, instructions: "Skip T-0." })
    expect(alone.system).toMatch(/<instructions>\nFor this text:\nSkip T-0\.\n<\/instructions>$/)
    expect(alone.system).toContain("- type: one of person, organization")
  })
})

describe("the answer under a schema", () => {
  const answer = JSON.stringify({
    entities: [
      { name: "Acme", type: "Customer", attributes: { tier: " pro ", seats: 12.5, color: "red" }, confidence: 1 },
      { name: "T-1", type: "ticket", attributes: { opened: "2025-01-03", urgent: "yes", tier: "pro" } },
      { name: "Dana Lee", type: "person", attributes: null }
    ],
    edges: [
      { source: "Acme", target: "T-1", relation: "files", valid_at: null },
      { source: "Dana Lee", target: "T-1", relation: "assigned to", valid_at: null },
      { source: "Dana Lee", target: "Helpdesk", relation: "works at", valid_at: null }
    ]
  })

  it("keeps an entity's declared attributes whose values fit their type, and no others", () => {
    const parsed = parseExtractGraph(answer, REF, TICKETS)
    if (Either.isLeft(parsed)) throw new Error(parsed.left)
    expect(parsed.right.entities.map((e) => e.attributes)).toEqual([
      { tier: "pro" },
      { opened: "2025-01-03T00:00:00.000Z" },
      undefined
    ])
    // without a schema attributes are not read at all
    const plain = parseExtractGraph(answer, REF)
    if (Either.isLeft(plain)) throw new Error(plain.left)
    expect(plain.right.entities.every((e) => !("attributes" in e))).toBe(true)
  })

  it("a schema that allows no other types drops the entities and facts outside it", () => {
    const parsed = parseExtractGraph(answer, REF, TICKETS)
    if (Either.isLeft(parsed)) throw new Error(parsed.left)
    const graph = withinSchema(normalizeExtraction(parsed.right), TICKETS)
    expect(graph.entities.map((e) => e.name)).toEqual(["Acme", "T-1"])
    expect(graph.edges.map((e) => e.relation)).toEqual(["files"])
    // the same answer under an open schema keeps everything
    const open = normalizeExtraction(parsed.right)
    expect(withinSchema(open, { ...TICKETS, allow_other_entity_types: true, allow_other_edge_types: true })).toBe(open)
  })

  it("repeats of an entity in one answer keep each attribute's first value", () => {
    const graph = normalizeExtraction({
      entities: [
        { name: "Acme", type: "customer", description: "", attributes: { tier: "pro" } },
        { name: "ACME", type: "customer", description: "d", attributes: { tier: "free", seats: 3 } }
      ],
      edges: []
    })
    expect(graph.entities).toEqual([
      { name: "Acme", name_key: "acme", type: "customer", description: "d", attributes: { tier: "pro", seats: 3 } }
    ])
  })
})

describe("attributes as stored", () => {
  it("fold statement by statement: each key takes the latest value; none is null", () => {
    expect(foldAttributes([{ tier: "free", seats: 3 }, undefined, { tier: "pro" }])).toEqual({ tier: "pro", seats: 3 })
    expect(foldAttributes([undefined])).toBeUndefined()
    expect(encodeAttributes({ b: 1, a: true })).toBe("{\"a\":true,\"b\":1}")
    expect(encodeAttributes(undefined)).toBeNull()
    expect(decodeAttributes(null)).toBeUndefined()
    expect(decodeAttributes("{}")).toBeUndefined()
    expect(decodeAttributes("{\"a\":1}")).toEqual({ a: 1 })
  })
})

const fact = (index: number, source: string, relation: string, target: string): NewFact => ({
  index,
  source_key: source,
  target_key: target,
  relation,
  valid_at: REF,
  invalid_at: null
})
const stored = (id: number, source: string, relation: string, target: string): StoredFact => ({
  id,
  source_key: source,
  target_key: target,
  relation,
  valid_at: "2024-01-01T00:00:00.000Z",
  invalid_at: null,
  expired_at: null
})

describe("an exclusive relation's contradictions", () => {
  const storedFacts = [
    stored(1, "alice", "lives_in", "berlin"),
    stored(2, "alice", "lives_in", "paris"),
    stored(3, "bob", "lives_in", "rome"),
    stored(4, "alice", "works_at", "acme"),
    stored(5, "carol", "ceo_of", "acme"),
    stored(6, "dave", "ceo_of", "globex")
  ]

  it("per_source: the same source and relation, another target; per_target: the same target, another source", () => {
    const exclusive = new Map([["lives_in", "per_source"], ["ceo_of", "per_target"]] as const)
    const result = exclusiveContradictions(
      [
        fact(0, "alice", "lives_in", "paris"),
        fact(1, "alice", "works_at", "globex"),
        fact(2, "erin", "ceo_of", "acme"),
        fact(3, "zoe", "lives_in", "oslo")
      ],
      storedFacts,
      exclusive
    )
    expect([...result.decided]).toEqual([0, 2, 3])
    expect(result.contradictions).toEqual([{ new: 0, existing: [1] }, { new: 2, existing: [5] }])
  })

  it("decide, in any order of the texts, exactly as a model judging homes consistently", () => {
    const exclusive = new Map([["lives_in", "per_source"]] as const)
    const byCode = (newFacts: ReadonlyArray<NewFact>, facts: ReadonlyArray<StoredFact>) =>
      exclusiveContradictions(newFacts, facts, exclusive).contradictions
    const DAY = 86_400_000
    const iso = (d: number) => new Date(Date.UTC(2024, 0, 1) + d * DAY).toISOString()
    const statement: fc.Arbitrary<Statement> = fc.record({
      target: fc.constantFrom("home0", "home1", "home2", "home3"),
      start: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
      length: fc.option(fc.integer({ min: 1, max: 10 }), { nil: null })
    }).map(({ length, start, target }) => ({
      target,
      valid_at: start === null ? null : iso(start),
      invalid_at: start === null ? iso(length ?? 5) : length === null ? null : iso(start + length)
    }))
    const texts = fc.array(fc.array(statement, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 6 })
    fc.assert(
      fc.property(
        texts.chain((t) => fc.tuple(fc.constant(t), fc.shuffledSubarray([...t.keys()], { minLength: t.length }))),
        ([t, order]) => {
          const shuffled = order.map((k) => t[k]!)
          expect(replay(shuffled, byCode)).toEqual(replay(shuffled))
        }
      ),
      { numRuns: 300 }
    )
  })
})
