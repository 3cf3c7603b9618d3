/**
 * What a dataset's schema (docs/SCHEMA.md) adds to the extract_graph stage: the prompt's lines
 * about types, relations and attributes, the instructions, and the answer's JSON Schema with the
 * types and relations as enums, each with its description, so a provider that constrains answers
 * (Anthropic's forced tool use, OpenAI's structured outputs) holds the model to them.
 */
import type { AttributeDef, DatasetSchema, EdgeTypeDef, EntityTypeDef } from "../../domain/DatasetSchema.js"
import { allowedEntityTypes, attributeNames } from "../../kernel/datasetSchema.js"
import type { JsonSchemaObject, LlmAnswerSchema } from "../../services/Llm.js"

/** The lines of the system prompt a schema replaces (the base prompt's wording without one). */
export interface SchemaLines {
  readonly entities: string
  readonly type: string
  /** after the entity's description line; empty: none */
  readonly attributes: string
  readonly edges: string
  readonly relation: string
  /** after the rules: the declared types and relations */
  readonly catalogue: string
}

const BUILT_IN = "person, organization, place, product, event, concept, other"

const attributeLine = (a: AttributeDef) =>
  `${a.name} (${a.type === "date" ? "a date, RFC 3339" : a.type})${a.description === "" ? "" : `: ${a.description}`}`

const entityTypeLine = (t: EntityTypeDef) =>
  `- ${t.name}: ${t.description}` +
  (t.attributes.length === 0 ? "" : `\n  attributes: ${t.attributes.map(attributeLine).join("; ")}`)

const EXCLUSIVE_WORDS = {
  per_source: "a source has one at a time: a new one ends the one before",
  per_target: "a target has one at a time: a new one ends the one before"
} as const

const ends = (types: ReadonlyArray<string>) => (types.length === 0 ? "any" : types.join(" or "))

const edgeTypeLine = (t: EdgeTypeDef) =>
  `- ${t.name} (${ends(t.source_types)} -> ${ends(t.target_types)}): ${t.description}` +
  (t.exclusive === null ? "" : ` (${EXCLUSIVE_WORDS[t.exclusive]})`)

/** The prompt's lines for `schema` (a declared list only where the schema declares one). */
export const schemaLines = (schema: DatasetSchema): SchemaLines => {
  const declaresTypes = schema.entity_types.length > 0
  const declaresRelations = schema.edge_types.length > 0
  const catalogue = [
    ...(declaresTypes ? ["Entity types:", ...schema.entity_types.map(entityTypeLine)] : []),
    ...(declaresRelations ? ["Relations:", ...schema.edge_types.map(edgeTypeLine)] : [])
  ].join("\n")
  return {
    entities: schema.allow_other_entity_types
      ? "Entities: the people, organizations, places, products, events and concepts the text mentions."
      : "Entities: only those of the entity types below that the text mentions.",
    type: !declaresTypes
      ? `- type: one of ${BUILT_IN}.`
      : schema.allow_other_entity_types
      ? `- type: one of the entity types below; for anything else one of ${BUILT_IN}.`
      : "- type: one of the entity types below.",
    attributes: attributeNames(schema).length === 0
      ? ""
      : "- attributes: for an entity of a type with attributes, the values the text states, by attribute name; " +
        "leave out those it does not state.",
    edges: schema.allow_other_edge_types
      ? "Edges: the facts the text states between two entities."
      : "Edges: only facts of the relations below between two entities.",
    relation: !declaresRelations
      ? "- relation: a short verb phrase in the present tense (works at, lives in, founded), also for facts that ended."
      : schema.allow_other_edge_types
      ? "- relation: one of the relations below when one fits; else a short verb phrase in the present tense " +
        "(works at, founded); also for facts that ended."
      : "- relation: one of the relations below, also for facts that ended.",
    catalogue
  }
}

/**
 * The instructions of the dataset and of the request, after the rules. They narrow what to
 * extract; the answer's form and "the text is data" stay.
 */
export const instructionsBlock = (dataset: string | null, request: string | undefined): string => {
  const parts = [
    ...(dataset === null ? [] : [`For this memory:\n${dataset}`]),
    ...(request === undefined ? [] : [`For this text:\n${request}`])
  ]
  if (parts.length === 0) return ""
  return "\nInstructions from the memory's owner (they say what to extract; the answer's form stays):\n" +
    `<instructions>\n${parts.join("\n")}\n</instructions>`
}

type Json = Record<string, unknown>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** `schema` with the property `name` of the object at `path` (through `properties` and `items`) replaced. */
const withProperty = (schema: Json, path: ReadonlyArray<string>, name: string, value: Json): Json => {
  if (path.length === 0) {
    const properties = isObject(schema["properties"]) ? schema["properties"] : {}
    return { ...schema, properties: { ...properties, [name]: value } }
  }
  const [head, ...rest] = path
  const properties = schema["properties"] as Json
  const array = properties[head!] as Json
  return {
    ...schema,
    properties: { ...properties, [head!]: { ...array, items: withProperty(array["items"] as Json, rest, name, value) } }
  }
}

const ATTRIBUTE_JSON: Record<AttributeDef["type"], Json> = {
  string: { type: "string" },
  number: { type: "number" },
  integer: { type: "integer" },
  boolean: { type: "boolean" },
  date: { type: "string" }
}

/** An enum of one value with its description: how a type or relation is offered to the model. */
const choice = (name: string, description: string): Json => ({ type: "string", enum: [name], description })

/**
 * The answer schema of an extraction under `schema`: `base` (the parser's own, with `attributes`
 * when the schema declares any) with `type` one of the allowed entity types and `relation` one
 * of the declared relations (or, when others are allowed, any phrase), each with its description.
 */
export const answerSchemaUnder = (base: LlmAnswerSchema, schema: DatasetSchema): LlmAnswerSchema => {
  let root = base.schema as Json
  const declared = new Set(schema.entity_types.map((t) => t.name))
  if (schema.entity_types.length > 0 || !schema.allow_other_entity_types) {
    const others = allowedEntityTypes(schema).filter((t) => !declared.has(t))
    const type = {
      anyOf: [
        ...schema.entity_types.map((t) => choice(t.name, t.description)),
        ...(others.length === 0 ? [] : [{ type: "string", enum: others, description: "an entity of no type above" }]),
        { type: "null" }
      ]
    }
    root = withProperty(root, ["entities"], "type", type)
  }
  const attributes = attributeNames(schema)
  if (attributes.length > 0) {
    const owners = (a: AttributeDef) =>
      schema.entity_types.filter((t) => t.attributes.some((x) => x.name === a.name)).map((t) => t.name).join(", ")
    const properties = Object.fromEntries(attributes.map((a) => [a.name, {
      ...ATTRIBUTE_JSON[a.type],
      description: `of ${owners(a)}${a.type === "date" ? ", RFC 3339" : ""}${
        a.description === "" ? "" : `: ${a.description}`
      }`
    }]))
    root = withProperty(root, ["entities"], "attributes", {
      anyOf: [{ type: "object", properties, additionalProperties: false }, { type: "null" }]
    })
  }
  if (schema.edge_types.length > 0 || !schema.allow_other_edge_types) {
    const relation = {
      anyOf: [
        ...schema.edge_types.map((t) => choice(t.name, t.description)),
        ...(schema.allow_other_edge_types
          ? [{ type: "string", description: "another relation: a short verb phrase in the present tense" }]
          : [])
      ]
    }
    root = withProperty(root, ["edges"], "relation", relation)
  }
  return { name: base.name, schema: root as JsonSchemaObject }
}
