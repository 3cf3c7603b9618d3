/**
 * What a dataset's schema (src/domain/DatasetSchema.ts) does to an extraction, as pure functions:
 * the attributes an entity may carry and their values read from a model's answer, the entities
 * and facts a schema that allows no other types drops, which relations are exclusive, and the
 * attributes as stored (JSON text on the entity and on each provenance link).
 */
import {
  type AttributeDef,
  type AttributeValue,
  BUILT_IN_ENTITY_TYPES,
  type DatasetSchema,
  type EntityAttributes,
  type ExclusiveSide
} from "../domain/DatasetSchema.js"
import { type NormalizedGraph, normalizeType } from "./normalize.js"
import { type NewFact, normalizeTimestamp, type StoredFact } from "./temporal.js"

/** The relations a schema makes exclusive, by stored (normalized) name. */
export const exclusiveRelations = (schema: DatasetSchema): ReadonlyMap<string, ExclusiveSide> =>
  new Map(schema.edge_types.flatMap((t) => (t.exclusive === null ? [] : [[t.name, t.exclusive] as const])))

/** The entity types an extraction may answer with: the declared ones, then the built-in ones when allowed. */
export const allowedEntityTypes = (schema: DatasetSchema): ReadonlyArray<string> => {
  const declared = schema.entity_types.map((t) => t.name)
  if (!schema.allow_other_entity_types) return declared
  return [...declared, ...BUILT_IN_ENTITY_TYPES.filter((t) => !declared.includes(t))]
}

/** Every declared attribute, once per name (a name two types declare has one value type). */
export const attributeNames = (schema: DatasetSchema): ReadonlyArray<AttributeDef> => {
  const seen = new Map<string, AttributeDef>()
  for (const t of schema.entity_types) for (const a of t.attributes) if (!seen.has(a.name)) seen.set(a.name, a)
  return [...seen.values()]
}

/** A value as an attribute of `type` holds it, or undefined when it cannot be one (it is dropped). */
export const attributeValue = (type: AttributeDef["type"], value: unknown): AttributeValue | undefined => {
  switch (type) {
    case "string":
      return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? value : undefined
    case "integer":
      return typeof value === "number" && Number.isInteger(value) ? value : undefined
    case "boolean":
      return typeof value === "boolean" ? value : undefined
    case "date":
      return typeof value === "string" ? normalizeTimestamp(value) : undefined
  }
}

/**
 * The attributes an answer gave an entity of type `type` (as the model wrote it), kept when the
 * type declares them and the value fits; undefined when none is left.
 */
export const attributesOf = (schema: DatasetSchema, type: string, raw: unknown): EntityAttributes | undefined => {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined
  const declared = schema.entity_types.find((t) => t.name === normalizeType(type))?.attributes ?? []
  const out: Record<string, AttributeValue> = {}
  for (const a of declared) {
    const value = Object.hasOwn(raw, a.name)
      ? attributeValue(a.type, (raw as Record<string, unknown>)[a.name])
      : undefined
    if (value !== undefined) out[a.name] = value
  }
  return Object.keys(out).length === 0 ? undefined : out
}

/**
 * The graph a schema lets through: without other entity types, only entities of a declared type,
 * and facts between them; without other relations, only facts of a declared relation. A schema
 * that allows both leaves the graph as it is.
 */
export const withinSchema = (graph: NormalizedGraph, schema: DatasetSchema): NormalizedGraph => {
  if (schema.allow_other_entity_types && schema.allow_other_edge_types) return graph
  const types = new Set(schema.entity_types.map((t) => t.name))
  const relations = new Set(schema.edge_types.map((t) => t.name))
  const entities = schema.allow_other_entity_types ? graph.entities : graph.entities.filter((e) => types.has(e.type))
  const keys = new Set(entities.map((e) => e.name_key))
  const edges = graph.edges.filter((e) =>
    (schema.allow_other_edge_types || relations.has(e.relation)) &&
    (schema.allow_other_entity_types || (keys.has(e.source_key) && keys.has(e.target_key)))
  )
  return { entities, edges }
}

/** Stored attributes (JSON text on gb_entities or gb_entity_artifacts), or undefined when there are none. */
export const decodeAttributes = (json: string | null | undefined): EntityAttributes | undefined => {
  if (json === null || json === undefined || json === "") return undefined
  const value = JSON.parse(json) as unknown
  if (typeof value !== "object" || value === null || Array.isArray(value) || Object.keys(value).length === 0) {
    return undefined
  }
  return value as EntityAttributes
}

/** Attributes as stored: keys sorted (so equal attributes are equal text), null for none. */
export const encodeAttributes = (attributes: EntityAttributes | undefined): string | null => {
  if (attributes === undefined) return null
  const keys = Object.keys(attributes).sort()
  return keys.length === 0 ? null : JSON.stringify(Object.fromEntries(keys.map((k) => [k, attributes[k]])))
}

/**
 * Statements of attributes in the order their texts were stored: each key takes the latest
 * value stated for it, as a description takes the latest one (what a remember of those texts
 * in that order leaves, and what a forget reads again from the texts that remain).
 */
export const foldAttributes = (
  statements: ReadonlyArray<EntityAttributes | undefined>
): EntityAttributes | undefined => {
  const out: Record<string, AttributeValue> = {}
  for (const s of statements) if (s !== undefined) Object.assign(out, s)
  return Object.keys(out).length === 0 ? undefined : out
}

/**
 * The contradictions an exclusive relation decides without the model (docs/SCHEMA.md): a new
 * fact of a per_source relation contradicts every stored fact, live or closed, with its source
 * and relation and another target (per_target: its target, another source). Which of them ends,
 * and when, is the temporal rules' (planReconciliation), as for a contradiction the model reports.
 * `decided` are the new facts of an exclusive relation: the model is not asked about them.
 */
export const exclusiveContradictions = (
  newFacts: ReadonlyArray<NewFact>,
  stored: ReadonlyArray<StoredFact>,
  exclusive: ReadonlyMap<string, ExclusiveSide>
): {
  readonly decided: ReadonlySet<number>
  readonly contradictions: ReadonlyArray<{ readonly new: number; readonly existing: ReadonlyArray<number> }>
} => {
  const decided = new Set<number>()
  const contradictions: Array<{ readonly new: number; readonly existing: ReadonlyArray<number> }> = []
  for (const fact of newFacts) {
    const side = exclusive.get(fact.relation)
    if (side === undefined) continue
    decided.add(fact.index)
    const existing = stored.filter((s) =>
      s.relation === fact.relation && (side === "per_source"
        ? s.source_key === fact.source_key && s.target_key !== fact.target_key
        : s.target_key === fact.target_key && s.source_key !== fact.source_key)
    ).map((s) => s.id)
    if (existing.length > 0) contradictions.push({ new: fact.index, existing })
  }
  return { decided, contradictions }
}
