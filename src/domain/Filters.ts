/**
 * The `filters` of search, query, context and the export (issue 42; docs/READ.md, Filters):
 * conditions on the texts that support a fact (their metadata, kind, session and when they were
 * stored) and on the fact itself (its relation, its endpoints' types), combined with AND, with
 * `any` for an OR of groups. A fact passes when at least one of its supporting texts passes a
 * group's text conditions together. The wire schema, and the plain conditions SearchRepo takes.
 */
import { Either, ParseResult, Schema } from "effect"
import { normalizeRelation, normalizeType } from "../kernel/normalize.js"
import { metadataKeyProblem, type MetadataValue, timeValue } from "./Metadata.js"
import { ARTIFACT_KINDS, type ArtifactKind } from "./Stages.js"
import { ArrayWithin, Label, OneOf, optional, Rfc3339, STRICT } from "./Wire.js"

export const MAX_FILTER_VALUES = 100
export const MAX_FILTER_GROUPS = 10

/** One metadata key's test. Ranges are on numbers or on RFC 3339 times (as epoch milliseconds). */
export type MetadataTest =
  | { readonly key: string; readonly op: "eq"; readonly value: MetadataValue }
  | { readonly key: string; readonly op: "in"; readonly values: ReadonlyArray<MetadataValue> }
  | {
    readonly key: string
    readonly op: "range"
    readonly on: "number" | "time"
    readonly gte: number | null
    readonly lte: number | null
  }

/** What one supporting text must be, all together. */
export interface TextConditions {
  readonly metadata: ReadonlyArray<MetadataTest>
  readonly kind: ArtifactKind | null
  readonly sessionId: string | null
  readonly createdAfter: string | null
  readonly createdBefore: string | null
}

/** One group: a fact passes when it passes every part. */
export interface FilterGroup {
  /** null: no condition on the texts */
  readonly text: TextConditions | null
  /** normalized types: an endpoint of one of them (an entity: of one of them) */
  readonly entityTypes: ReadonlyArray<string> | null
  /** normalized relations ("works at" is works_at) */
  readonly relations: ReadonlyArray<string> | null
}

/** The request's filters: `all` and, when `any` has groups, one of them. */
export interface ReadConditions {
  readonly all: FilterGroup
  readonly any: ReadonlyArray<FilterGroup>
}

const isScalar = (u: unknown): u is MetadataValue =>
  typeof u === "string" || typeof u === "boolean" || (typeof u === "number" && Number.isFinite(u))

const bound = (u: unknown): { readonly on: "number" | "time"; readonly value: number } | undefined => {
  if (typeof u === "number" && Number.isFinite(u)) return { on: "number", value: u }
  const time = typeof u === "string" ? timeValue(u) : undefined
  return time === undefined ? undefined : { on: "time", value: time }
}

/** A key's condition: a value (equality), `{in: [...]}`, or `{gte, lte}` (either or both). */
const conditionOf = (key: string, u: unknown): Either.Either<MetadataTest, string> => {
  if (isScalar(u)) return Either.right({ key, op: "eq", value: u })
  if (typeof u !== "object" || u === null || Array.isArray(u)) {
    return Either.left("must be a string, a number, a boolean, {\"in\": [...]} or {\"gte\": ..., \"lte\": ...}")
  }
  const entries = Object.entries(u)
  const unknown = entries.find(([op]) => op !== "in" && op !== "gte" && op !== "lte")
  if (unknown !== undefined) return Either.left(`has an unknown operator ${JSON.stringify(unknown[0])} (in, gte, lte)`)
  if ("in" in u) {
    const values = (u as { in: unknown }).in
    if (entries.length > 1) return Either.left("must be {\"in\": [...]} alone, or a range")
    if (!Array.isArray(values) || values.length === 0 || values.length > MAX_FILTER_VALUES) {
      return Either.left(`in must be an array of 1 to ${MAX_FILTER_VALUES} values`)
    }
    if (!values.every(isScalar)) return Either.left("in must hold strings, numbers or booleans")
    return Either.right({ key, op: "in", values })
  }
  const range = u as { gte?: unknown; lte?: unknown }
  const gte = range.gte === undefined ? undefined : bound(range.gte)
  const lte = range.lte === undefined ? undefined : bound(range.lte)
  if (range.gte !== undefined && gte === undefined) return Either.left("gte must be a number or an RFC 3339 time")
  if (range.lte !== undefined && lte === undefined) return Either.left("lte must be a number or an RFC 3339 time")
  if (gte !== undefined && lte !== undefined && gte.on !== lte.on) {
    return Either.left("gte and lte must both be numbers or both be times")
  }
  const on = (gte ?? lte)!.on
  return Either.right({ key, op: "range", on, gte: gte?.value ?? null, lte: lte?.value ?? null })
}

/** `metadata`: at most 32 keys, each with its condition. */
const MetadataConditions = Schema.transformOrFail(
  Schema.Unknown,
  Schema.Array(Schema.Any as Schema.Schema<MetadataTest>),
  {
    strict: true,
    decode: (u, _, ast) => {
      if (typeof u !== "object" || u === null || Array.isArray(u)) {
        return ParseResult.fail(new ParseResult.Type(ast, u, "must be an object of keys to conditions"))
      }
      const entries = Object.entries(u)
      if (entries.length === 0 || entries.length > 32) {
        return ParseResult.fail(new ParseResult.Type(ast, u, "must have 1 to 32 keys"))
      }
      const tests: Array<MetadataTest> = []
      for (const [key, value] of entries) {
        const problem = metadataKeyProblem(key)
        if (problem !== undefined) return ParseResult.fail(new ParseResult.Type(ast, u, problem))
        const test = conditionOf(key, value)
        if (Either.isLeft(test)) {
          return ParseResult.fail(new ParseResult.Pointer(key, u, new ParseResult.Type(ast, value, test.left)))
        }
        tests.push(test.right)
      }
      return ParseResult.succeed(tests)
    },
    encode: (tests) =>
      ParseResult.succeed(Object.fromEntries(tests.map((t) => [
        t.key,
        t.op === "eq" ? t.value : t.op === "in" ? { in: t.values } : {
          ...(t.gte === null ? {} : { gte: t.on === "time" ? new Date(t.gte).toISOString() : t.gte }),
          ...(t.lte === null ? {} : { lte: t.on === "time" ? new Date(t.lte).toISOString() : t.lte })
        }
      ])))
  }
).annotations({
  jsonSchema: {
    type: "object",
    maxProperties: 32,
    description: "a key of the texts' metadata to a value (equal), {\"in\": [values]} or {\"gte\": x, \"lte\": y} " +
      "(numbers or RFC 3339 times)",
    additionalProperties: {}
  }
})

const Names = (what: string) =>
  ArrayWithin(Label(), {
    notArray: `must be an array of ${what}`,
    min: 1,
    max: MAX_FILTER_VALUES,
    length: (n) => (n === 0 || n > MAX_FILTER_VALUES ? `must have 1 to ${MAX_FILTER_VALUES} ${what}` : undefined)
  })

const groupFields = {
  metadata: optional(MetadataConditions),
  kind: optional(OneOf(ARTIFACT_KINDS)).annotations({ description: "a supporting text of this kind" }),
  session_id: optional(Label()).annotations({ description: "a supporting text of this session" }),
  created_after: optional(Rfc3339).annotations({ description: "a supporting text stored at or after this" }),
  created_before: optional(Rfc3339).annotations({ description: "a supporting text stored before this" }),
  entity_types: optional(Names("entity types")).annotations({
    description: "facts with an endpoint of one of these types; entities of one of them"
  }),
  relations: optional(Names("relations")).annotations({ description: "facts of one of these relations" })
}

// a field a group does not have is a 400 naming it, even in a request that ignores unknown fields
const Group = Schema.Struct(groupFields).annotations(STRICT)
type Group = Schema.Schema.Type<typeof Group>

/** The `filters` field. */
export const Filters = Schema.Struct({
  ...groupFields,
  any: optional(ArrayWithin(Group, {
    notArray: "must be an array of filter groups",
    min: 1,
    max: MAX_FILTER_GROUPS,
    length: (n) => (n === 0 || n > MAX_FILTER_GROUPS ? `must have 1 to ${MAX_FILTER_GROUPS} groups` : undefined)
  })).annotations({ description: "groups of the same conditions, one of which must pass (OR)" })
}).annotations({
  ...STRICT,
  identifier: "Filters",
  description: "conditions combined with AND (any: an OR of groups); a fact passes when one of its supporting " +
    "texts passes the text conditions (metadata, kind, session_id, created_after, created_before) together"
})
export type Filters = Schema.Schema.Type<typeof Filters>

const groupOf = (g: Group): FilterGroup => {
  const text: TextConditions = {
    metadata: g.metadata ?? [],
    kind: g.kind ?? null,
    sessionId: g.session_id ?? null,
    createdAfter: g.created_after ?? null,
    createdBefore: g.created_before ?? null
  }
  const hasText = text.metadata.length > 0 || text.kind !== null || text.sessionId !== null ||
    text.createdAfter !== null || text.createdBefore !== null
  return {
    text: hasText ? text : null,
    entityTypes: g.entity_types === undefined ? null : [...new Set(g.entity_types.map(normalizeType))],
    relations: g.relations === undefined ? null : [...new Set(g.relations.map(normalizeRelation))]
  }
}

/** The conditions a read applies; null when the filters ask for nothing. */
export const conditionsOf = (filters: Filters | undefined): ReadConditions | null => {
  if (filters === undefined) return null
  const all = groupOf(filters)
  const any = (filters.any ?? []).map(groupOf)
  const empty = (g: FilterGroup) => g.text === null && g.entityTypes === null && g.relations === null
  return empty(all) && any.length === 0 ? null : { all, any }
}
