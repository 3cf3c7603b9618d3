/**
 * Normalization of an extracted graph (spec: seed-remember "Normalization and
 * deduplication"). Pure functions: the store stage builds on them.
 */

/** An entity's attributes (a dataset schema's, docs/SCHEMA.md): a date is RFC 3339 text. */
export type Attributes = Readonly<Record<string, string | number | boolean>>

/** An entity as extract_graph returned it (after parsing, before normalization). */
export interface ExtractedEntity {
  readonly name: string
  /** free text from the model; "" when it gave none */
  readonly type: string
  readonly description: string
  /** only with a dataset schema that declares attributes for its type, and only those the text stated */
  readonly attributes?: Attributes | undefined
}

/** An edge as extract_graph returned it; times already RFC 3339 UTC with milliseconds. */
export interface ExtractedEdge {
  readonly source: string
  readonly target: string
  readonly relation: string
  readonly description: string
  /** null only with an invalid_at: the text gave an end and no start */
  readonly valid_at: string | null
  readonly invalid_at: string | null
}

export interface ExtractedGraph {
  readonly entities: ReadonlyArray<ExtractedEntity>
  readonly edges: ReadonlyArray<ExtractedEdge>
}

export interface NormalizedEntity {
  readonly name: string
  readonly name_key: string
  readonly type: string
  readonly description: string
  readonly attributes?: Attributes | undefined
}

export interface NormalizedEdge {
  readonly source: string
  readonly source_key: string
  readonly target: string
  readonly target_key: string
  readonly relation: string
  readonly description: string
  /** null only with an invalid_at: the text gave an end and no start */
  readonly valid_at: string | null
  readonly invalid_at: string | null
}

export interface NormalizedGraph {
  readonly entities: ReadonlyArray<NormalizedEntity>
  readonly edges: ReadonlyArray<NormalizedEdge>
}

/** A stored entity, as much of it as endpoint resolution needs (EntityRow fits). */
export interface StoredEntityLike {
  readonly id: number
  readonly name: string
  readonly name_key: string
  readonly type: string
  readonly description: string
}

// `\s` with the u flag covers Unicode whitespace (NBSP, ideographic space, line separators...).
const WHITESPACE_RUN = /\s+/gu

/** Trimmed, whitespace runs collapsed to one space; case kept (display form). */
export const collapseWhitespace = (text: string): string => text.replace(WHITESPACE_RUN, " ").trim()

/** The dedup and lookup key of a name: lowercased, trimmed, whitespace collapsed. */
export const nameKey = (name: string): string => collapseWhitespace(name.toLowerCase())

/** Entity type: lowercased, trimmed, whitespace collapsed; empty becomes `other`. */
export const normalizeType = (type: string | null | undefined): string => {
  const normalized = collapseWhitespace((type ?? "").toLowerCase())
  return normalized === "" ? "other" : normalized
}

/** Edge relation: lowercased, trimmed, whitespace runs replaced by `_` ("Lives In" -> "lives_in"). */
export const normalizeRelation = (relation: string): string =>
  relation.toLowerCase().trim().replace(WHITESPACE_RUN, "_")

/** A map key for an entity identity (name key, type); unambiguous for any strings. */
export const entityKey = (key: string, type: string): string => JSON.stringify([key, type])

/**
 * Entities become unique on (name key, type) within the text: the first spelling of the
 * name is kept, the first non-empty description, and each attribute's first value. Entities
 * with an empty name are dropped (nothing can refer to them). Edges get a normalized relation and trimmed
 * endpoints with their keys; a repeated edge (same source key, target key, relation)
 * within the text is merged into the first one.
 */
export const normalizeExtraction = (raw: ExtractedGraph): NormalizedGraph => {
  const entities = new Map<string, NormalizedEntity>()
  for (const entity of raw.entities) {
    const name = collapseWhitespace(entity.name)
    if (name === "") continue
    const key = nameKey(name)
    const type = normalizeType(entity.type)
    const description = entity.description.trim()
    const id = entityKey(key, type)
    const seen = entities.get(id)
    const attributes = entity.attributes === undefined ? {} : { attributes: entity.attributes }
    if (seen === undefined) {
      entities.set(id, { name, name_key: key, type, description, ...attributes })
    } else {
      const merged = entity.attributes === undefined ? seen : {
        ...seen,
        attributes: { ...entity.attributes, ...seen.attributes }
      }
      entities.set(id, merged.description === "" && description !== "" ? { ...merged, description } : merged)
    }
  }

  const edges = new Map<string, NormalizedEdge>()
  for (const edge of raw.edges) {
    const source = collapseWhitespace(edge.source)
    const target = collapseWhitespace(edge.target)
    const normalized: NormalizedEdge = {
      source,
      source_key: nameKey(source),
      target,
      target_key: nameKey(target),
      relation: normalizeRelation(edge.relation),
      description: edge.description.trim(),
      valid_at: edge.valid_at,
      invalid_at: edge.invalid_at
    }
    const id = JSON.stringify([normalized.source_key, normalized.target_key, normalized.relation])
    if (!edges.has(id)) edges.set(id, normalized)
  }

  return { entities: [...entities.values()], edges: [...edges.values()] }
}

export type ResolvedEndpoint<S extends StoredEntityLike = StoredEntityLike> =
  | { readonly from: "text"; readonly entity: NormalizedEntity }
  | { readonly from: "stored"; readonly entity: S }
  | { readonly from: "new"; readonly entity: NormalizedEntity }

/**
 * Resolves an edge endpoint by its name key: an entity of this text (the first listed if
 * the text has several types for that name), else a stored entity of any type with that
 * name key (the lowest id, i.e. the oldest), else a new entity of type `other`, named
 * `name` (the endpoint as the edge spelled it; the key itself when not given).
 */
export const resolveEndpoint = <S extends StoredEntityLike>(
  key: string,
  textEntities: ReadonlyArray<NormalizedEntity>,
  storedEntities: ReadonlyArray<S>,
  name: string = key
): ResolvedEndpoint<S> => {
  const fromText = textEntities.find((entity) => entity.name_key === key)
  if (fromText !== undefined) return { from: "text", entity: fromText }
  let oldest: S | undefined
  for (const entity of storedEntities) {
    if (entity.name_key === key && (oldest === undefined || entity.id < oldest.id)) oldest = entity
  }
  if (oldest !== undefined) return { from: "stored", entity: oldest }
  return {
    from: "new",
    entity: { name: collapseWhitespace(name), name_key: key, type: "other", description: "" }
  }
}

/**
 * Finds which of `entities` a model's answer names: the name as listed, else the same
 * normalized name; the first listed wins.
 */
export const entityFinder = <E extends { readonly name: string }>(entities: ReadonlyArray<E>) => {
  const byName = new Map<string, E>()
  const byKey = new Map<string, E>()
  for (const e of entities) {
    if (!byName.has(e.name)) byName.set(e.name, e)
    const key = nameKey(e.name)
    if (!byKey.has(key)) byKey.set(key, e)
  }
  return (name: string): E | undefined => byName.get(name) ?? byKey.get(nameKey(name))
}
