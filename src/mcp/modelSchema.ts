/**
 * A tool's input schema as a model reads it in `tools/list`: each argument's type (enums and
 * date-time formats kept), whether it is required, and one description. The request schema's
 * validation details (patterns, byte limits, `anyOf` with null for an optional argument, the
 * inner descriptions the tool's own replaces) are left out: they cost a model thousands of
 * tokens a session and tell it nothing it acts on. The server still decodes every call with the
 * full request schema, so a bad argument is refused as before, with its field named.
 */

export type JsonSchemaObject = Record<string, unknown>

/** Keywords a model gains nothing from; the decoder enforces them. */
const VALIDATION_ONLY = new Set([
  "pattern",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "additionalProperties",
  "examples",
  "title",
  "$id"
])

const isObject = (value: unknown): value is JsonSchemaObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `anyOf: [X, {type: "null"}]` (an optional argument that may be null) is X. */
const withoutNull = (schema: JsonSchemaObject): JsonSchemaObject => {
  const anyOf = schema.anyOf
  if (!Array.isArray(anyOf)) return schema
  const kept = anyOf.filter((s) => !(isObject(s) && s.type === "null" && Object.keys(s).length === 1))
  if (kept.length !== 1 || !isObject(kept[0])) return schema
  const { anyOf: _, ...rest } = schema
  // the outer description (the tool's) wins over the inner one (the field's)
  return { ...kept[0], ...rest }
}

/** One schema, compacted; `described`: an outer description is kept, inner ones dropped. */
const compact = (schema: JsonSchemaObject, described: boolean): JsonSchemaObject => {
  const flat = withoutNull(schema)
  const out: JsonSchemaObject = {}
  for (const [key, value] of Object.entries(flat)) {
    if (VALIDATION_ONLY.has(key)) continue
    if (key === "description" && !described) continue
    if (key === "properties" && isObject(value)) {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, s]) => [name, isObject(s) ? compact(s, true) : s])
      )
    } else if (key === "items" && isObject(value)) {
      out.items = compact(value, false)
    } else if (key === "anyOf" && Array.isArray(value)) {
      out.anyOf = value.map((s) => (isObject(s) ? compact(s, false) : s))
    } else {
      out[key] = value
    }
  }
  return out
}

/** The input schema a model is shown for `schema` (an object schema with properties). */
export const modelSchema = (schema: JsonSchemaObject): JsonSchemaObject => compact(schema, true)
