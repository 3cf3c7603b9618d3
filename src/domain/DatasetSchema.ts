/**
 * A dataset's schema (issue 42, item 3; docs/SCHEMA.md): the entity types and relations its
 * extraction may use, with descriptions, entity attributes, which relations exclude each other
 * (one home at a time, one CEO), and instructions added to the extraction prompt. The wire schema
 * of `PUT /v1/gb/datasets/{name}/schema` (and its answer, and `GET`'s), the stored form, and the
 * normalization that makes a type's or relation's name the one the graph stores.
 */
import { Either, Schema } from "effect"
import { normalizeRelation, normalizeType } from "../kernel/normalize.js"
import {
  ArrayWithin,
  documented,
  JsonBoolean,
  Name,
  OneOf,
  required,
  Str,
  STRICT,
  Text,
  unstorableText,
  utf8Bytes,
  withDefault
} from "./Wire.js"

export const MAX_ENTITY_TYPES = 50
export const MAX_EDGE_TYPES = 50
export const MAX_ATTRIBUTES = 10
/** distinct attribute names over every type: each is a property of the extraction's answer schema */
export const MAX_ATTRIBUTE_NAMES = 100
export const MAX_ENDPOINT_TYPES = 20
export const MAX_TYPE_NAME_BYTES = 64
export const MAX_DESCRIPTION_BYTES = 500
export const MAX_ATTRIBUTE_DESCRIPTION_BYTES = 200
export const MAX_INSTRUCTIONS_BYTES = 4000

/** The entity types the extraction suggests when a dataset declares none (contracts section 1). */
export const BUILT_IN_ENTITY_TYPES = [
  "person",
  "organization",
  "place",
  "product",
  "event",
  "concept",
  "other"
] as const

export const ATTRIBUTE_TYPES = ["string", "number", "integer", "boolean", "date"] as const
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number]

export const EXCLUSIVE_SIDES = ["per_source", "per_target"] as const
export type ExclusiveSide = (typeof EXCLUSIVE_SIDES)[number]

/** An attribute's value as stored: a date is RFC 3339 text. */
export type AttributeValue = string | number | boolean
export type EntityAttributes = Readonly<Record<string, AttributeValue>>

const ATTRIBUTE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

const Description = (maxBytes: number) => Text(maxBytes, `must be at most ${maxBytes} bytes`)

/** An attribute's description may be empty (its default): its type side must accept "" too. */
const OptionalDescription = (maxBytes: number) =>
  Str.pipe(
    Schema.filter((s) => utf8Bytes(s) <= maxBytes, { message: () => `must be at most ${maxBytes} bytes` }),
    Schema.filter((s) => unstorableText(s) ?? true),
    Schema.annotations({ jsonSchema: { type: "string", description: `at most ${maxBytes} bytes` } })
  )

const AttributeName = Schema.String.annotations({ message: () => "must be a string" }).pipe(
  Schema.filter((s) => ATTRIBUTE_NAME.test(s) && s.length <= MAX_TYPE_NAME_BYTES, {
    message: () => `must be 1 to ${MAX_TYPE_NAME_BYTES} letters, digits or _ (not starting with a digit)`
  }),
  Schema.annotations({ jsonSchema: { type: "string", pattern: "^[A-Za-z_][A-Za-z0-9_]{0,63}$" } })
)

const AttributeDef = Schema.Struct({
  name: required(AttributeName),
  type: required(OneOf(ATTRIBUTE_TYPES)).annotations({ description: "a date is stored as RFC 3339 text" }),
  description: withDefault(OptionalDescription(MAX_ATTRIBUTE_DESCRIPTION_BYTES), () => "")
})

const list = <S extends Schema.Schema.Any>(item: S, max: number) =>
  ArrayWithin(item, {
    notArray: "must be an array",
    max,
    length: (n) => (n > max ? `must have at most ${max} items` : undefined)
  })

const EntityTypeDef = Schema.Struct({
  name: required(documented(Name(MAX_TYPE_NAME_BYTES), "stored lowercased (\"Ticket\" is ticket)")),
  description: required(Description(MAX_DESCRIPTION_BYTES)),
  attributes: withDefault(list(AttributeDef, MAX_ATTRIBUTES), () => [])
})

const EdgeTypeDef = Schema.Struct({
  name: required(
    documented(
      Name(MAX_TYPE_NAME_BYTES),
      "the relation, stored as the graph stores relations (\"lives in\" is lives_in)"
    )
  ),
  description: required(Description(MAX_DESCRIPTION_BYTES)),
  source_types: withDefault(
    documented(list(Name(MAX_TYPE_NAME_BYTES), MAX_ENDPOINT_TYPES), "the entity types its source may have; empty: any"),
    () => []
  ),
  target_types: withDefault(
    documented(list(Name(MAX_TYPE_NAME_BYTES), MAX_ENDPOINT_TYPES), "the entity types its target may have; empty: any"),
    () => []
  ),
  exclusive: Schema.optionalWith(Schema.NullOr(OneOf(EXCLUSIVE_SIDES)), { default: () => null }).annotations({
    description: "per_source: a source has one target of this relation at a time (a home); per_target: a target " +
      "has one source at a time (a CEO); null: any number at once. An exclusive relation is reconciled in code."
  })
})

const Fields = Schema.Struct({
  entity_types: withDefault(
    documented(
      list(EntityTypeDef, MAX_ENTITY_TYPES),
      "names unique (compared lowercased); an attribute name two types share has one type; at most " +
        `${MAX_ATTRIBUTE_NAMES} distinct attribute names; not empty when allow_other_entity_types is false`
    ),
    () => []
  ),
  allow_other_entity_types: withDefault(JsonBoolean, () => true).annotations({
    description: "true (default): the built-in types (person, organization, ...) stay allowed beside these; " +
      "false: only these types are extracted"
  }),
  edge_types: withDefault(
    documented(
      list(EdgeTypeDef, MAX_EDGE_TYPES),
      "names unique (compared lowercased, spaces as _); source_types and target_types name entity types of this " +
        "schema (or built-in ones while allow_other_entity_types); not empty when allow_other_edge_types is false"
    ),
    () => []
  ),
  allow_other_edge_types: withDefault(JsonBoolean, () => true).annotations({
    description: "true (default): other relations stay allowed beside these; false: only these are extracted"
  }),
  instructions: Schema.optionalWith(Schema.NullOr(Description(MAX_INSTRUCTIONS_BYTES)), { default: () => null })
    .annotations({ description: "text added to the extraction prompt of every remember of the dataset" })
})

export interface AttributeDef {
  readonly name: string
  readonly type: AttributeType
  readonly description: string
}

export interface EntityTypeDef {
  readonly name: string
  readonly description: string
  readonly attributes: ReadonlyArray<AttributeDef>
}

export interface EdgeTypeDef {
  readonly name: string
  readonly description: string
  readonly source_types: ReadonlyArray<string>
  readonly target_types: ReadonlyArray<string>
  readonly exclusive: ExclusiveSide | null
}

export interface DatasetSchema {
  readonly entity_types: ReadonlyArray<EntityTypeDef>
  readonly allow_other_entity_types: boolean
  readonly edge_types: ReadonlyArray<EdgeTypeDef>
  readonly allow_other_edge_types: boolean
  readonly instructions: string | null
}

/** The schema of a dataset that has none: the extraction as it is without one. */
export const EMPTY_SCHEMA: DatasetSchema = {
  entity_types: [],
  allow_other_entity_types: true,
  edge_types: [],
  allow_other_edge_types: true,
  instructions: null
}

/** Whether `schema` changes nothing (a PUT of it removes the dataset's schema). */
export const isEmptySchema = (schema: DatasetSchema): boolean =>
  schema.entity_types.length === 0 && schema.edge_types.length === 0 && schema.allow_other_entity_types &&
  schema.allow_other_edge_types && schema.instructions === null

/** The names as the graph stores them: types lowercased, relations with `_` for spaces. */
export const normalizeSchema = (schema: DatasetSchema): DatasetSchema => ({
  ...schema,
  entity_types: schema.entity_types.map((t) => ({ ...t, name: normalizeType(t.name) })),
  edge_types: schema.edge_types.map((t) => ({
    ...t,
    name: normalizeRelation(t.name),
    source_types: [...new Set(t.source_types.map(normalizeType))],
    target_types: [...new Set(t.target_types.map(normalizeType))]
  })),
  instructions: schema.instructions === null ? null : schema.instructions.trim()
})

type Problem = { readonly path: ReadonlyArray<string | number>; readonly message: string }

const firstRepeat = (names: ReadonlyArray<string>): number => names.findIndex((n, i) => names.indexOf(n) !== i)

/** What the fields alone cannot say: repeated names, unknown endpoint types, an attribute typed twice. */
const schemaProblem = (s: DatasetSchema): Problem | undefined => {
  const entityNames = s.entity_types.map((t) => normalizeType(t.name))
  const repeatedType = firstRepeat(entityNames)
  if (repeatedType >= 0) {
    return {
      path: ["entity_types", repeatedType, "name"],
      message: "repeats an entity type (names are compared lowercased)"
    }
  }
  if (!s.allow_other_entity_types && s.entity_types.length === 0) {
    return { path: ["entity_types"], message: "must not be empty when allow_other_entity_types is false" }
  }
  const attributeTypes = new Map<string, AttributeType>()
  for (const [i, t] of s.entity_types.entries()) {
    const names = t.attributes.map((a) => a.name)
    const repeated = firstRepeat(names)
    if (repeated >= 0) {
      return { path: ["entity_types", i, "attributes", repeated, "name"], message: "repeats an attribute" }
    }
    for (const [j, a] of t.attributes.entries()) {
      const earlier = attributeTypes.get(a.name)
      if (earlier !== undefined && earlier !== a.type) {
        return {
          path: ["entity_types", i, "attributes", j, "type"],
          message: `must be ${earlier}, as attribute ${JSON.stringify(a.name)} of another type is`
        }
      }
      attributeTypes.set(a.name, a.type)
    }
  }
  if (attributeTypes.size > MAX_ATTRIBUTE_NAMES) {
    return { path: ["entity_types"], message: `must have at most ${MAX_ATTRIBUTE_NAMES} distinct attribute names` }
  }
  const relations = s.edge_types.map((t) => normalizeRelation(t.name))
  const repeatedRelation = firstRepeat(relations)
  if (repeatedRelation >= 0) {
    return {
      path: ["edge_types", repeatedRelation, "name"],
      message: "repeats an edge type (names are compared lowercased, spaces as _)"
    }
  }
  if (relations.some((r) => r === "")) {
    return { path: ["edge_types", relations.indexOf(""), "name"], message: "must not be empty" }
  }
  if (!s.allow_other_edge_types && s.edge_types.length === 0) {
    return { path: ["edge_types"], message: "must not be empty when allow_other_edge_types is false" }
  }
  const known = new Set([...entityNames, ...(s.allow_other_entity_types ? BUILT_IN_ENTITY_TYPES : [])])
  for (const [i, t] of s.edge_types.entries()) {
    for (const side of ["source_types", "target_types"] as const) {
      const unknown = t[side].findIndex((name) => !known.has(normalizeType(name)))
      if (unknown >= 0) {
        return {
          path: ["edge_types", i, side, unknown],
          message: `is not an entity type of this schema (${[...known].join(", ")})`
        }
      }
    }
  }
  return undefined
}

const EXAMPLE = {
  entity_types: [
    {
      name: "customer",
      description: "a company that buys our product",
      attributes: [{ name: "tier", type: "string", description: "free, pro or enterprise" }]
    },
    {
      name: "ticket",
      description: "a support request",
      attributes: [{ name: "priority", type: "string", description: "low, medium or high" }]
    }
  ],
  edge_types: [
    {
      name: "files",
      description: "a customer files a ticket",
      source_types: ["customer"],
      target_types: ["ticket"]
    },
    {
      name: "assigned_to",
      description: "the person a ticket is assigned to",
      source_types: ["ticket"],
      target_types: ["person"],
      exclusive: "per_source"
    }
  ],
  instructions: "Only facts about our customers and their tickets; ignore email signatures."
}

/**
 * `PUT /v1/gb/datasets/{name}/schema`'s body, and what it and `GET` answer (names normalized,
 * defaults filled in). A field it does not have is a 400 naming it.
 */
export const DatasetSchemaDocument = Fields.annotations({
  description: "A dataset's schema: the entity types and relations its extraction uses, which relations are " +
    "exclusive, and instructions for the extraction. It applies to later remembers only; the stored graph is " +
    "not rewritten. An empty schema (no types, both allow_other true, no instructions) is no schema.",
  examples: [Schema.decodeUnknownSync(Fields)(EXAMPLE)]
}).pipe(
  Schema.filter((s) => schemaProblem(s) ?? true),
  Schema.annotations({ ...STRICT, identifier: "DatasetSchema" })
)
export type DatasetSchemaDocument = typeof DatasetSchemaDocument.Type

/**
 * What `GET` and `PUT` answer, and the stored form read back: the schema as stored (names
 * normalized, defaults filled in), without the request's checks (we wrote it after them).
 */
export const DatasetSchemaView = Schema.Struct({
  entity_types: Schema.Array(Schema.Struct({
    name: Schema.String,
    description: Schema.String,
    attributes: Schema.Array(Schema.Struct({
      name: Schema.String,
      type: Schema.Literal(...ATTRIBUTE_TYPES),
      description: Schema.String
    }))
  })),
  allow_other_entity_types: Schema.Boolean,
  edge_types: Schema.Array(Schema.Struct({
    name: Schema.String,
    description: Schema.String,
    source_types: Schema.Array(Schema.String),
    target_types: Schema.Array(Schema.String),
    exclusive: Schema.NullOr(Schema.Literal(...EXCLUSIVE_SIDES))
  })),
  allow_other_edge_types: Schema.Boolean,
  instructions: Schema.NullOr(Schema.String)
}).annotations({
  identifier: "DatasetSchemaView",
  description: "A dataset's schema as stored: names as the graph stores them, defaults filled in; the empty " +
    "schema when the dataset has none."
})

const decodeStored = Schema.decodeUnknownEither(DatasetSchemaView)

/** The schema stored on a dataset (its JSON), or the empty one; a malformed one is a defect. */
export const storedSchemaOf = (json: string | null | undefined): DatasetSchema => {
  if (json === null || json === undefined) return EMPTY_SCHEMA
  const decoded = decodeStored(JSON.parse(json))
  if (Either.isLeft(decoded)) throw new Error(`a dataset's stored schema is malformed: ${decoded.left.message}`)
  return decoded.right
}

/** The JSON to store: null for the empty schema, so a dataset without one is as before. */
export const schemaToStore = (schema: DatasetSchema): string | null =>
  isEmptySchema(schema) ? null : JSON.stringify(schema)

/** A remember's own `instructions`, added to its extraction prompt after the dataset's. */
export const Instructions = Description(MAX_INSTRUCTIONS_BYTES)
