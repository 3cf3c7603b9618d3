/**
 * The JSON Schema of a stage's answer, derived from the Effect Schema its parser decodes with,
 * so that the prompt's form, the parser and the provider's constraint never disagree.
 * Pure functions: `answerSchemaOf` (the derived schema, `$ref`s inlined) and
 * `toStrictJsonSchema` (the form OpenAI's strict `json_schema` mode demands).
 */
import { JSONSchema, type Schema } from "effect"
import type { JsonSchemaObject, LlmAnswerSchema } from "../services/Llm.js"

/** Deeper than any stage's answer; a deeper schema (a recursive one) is a bug. */
const MAX_SCHEMA_DEPTH = 32

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `value` with every local `$ref` (`#/$defs/X`) replaced by its definition, without `$schema`/`$defs`. */
const inline = (value: unknown, defs: Record<string, unknown>, depth: number): unknown => {
  if (depth > MAX_SCHEMA_DEPTH) throw new Error("answer schema: nested too deeply (a recursive schema?)")
  if (Array.isArray(value)) return value.map((v) => inline(v, defs, depth + 1))
  if (!isObject(value)) return value
  const { $ref, $schema: _schema, $defs: _defs, ...rest } = value
  const own = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, inline(v, defs, depth + 1)]))
  if (typeof $ref !== "string") return own
  const name = $ref.startsWith("#/$defs/") ? $ref.slice("#/$defs/".length) : undefined
  if (name === undefined || !Object.hasOwn(defs, name)) throw new Error(`answer schema: unresolvable $ref ${$ref}`)
  const target = inline(defs[name], defs, depth + 1)
  return isObject(target) ? { ...target, ...own } : target
}

/** A stage's answer schema: `name` (the stage) and the JSON Schema of `schema`'s encoded form. */
export const answerSchemaOf = <A, I>(name: string, schema: Schema.Schema<A, I, never>): LlmAnswerSchema => {
  const made = JSONSchema.make(schema) as unknown as Record<string, unknown>
  const defs = isObject(made["$defs"]) ? made["$defs"] : {}
  return { name, schema: inline(made, defs, 0) as JsonSchemaObject }
}

const allowsNull = (schema: Record<string, unknown>): boolean =>
  schema["type"] === "null" ||
  (Array.isArray(schema["type"]) && schema["type"].includes("null")) ||
  (Array.isArray(schema["anyOf"]) && schema["anyOf"].some((s) => isObject(s) && allowsNull(s)))

/** `schema` or null, written as OpenAI accepts it (a union with `{type: "null"}`). */
const nullable = (schema: Record<string, unknown>): Record<string, unknown> => {
  if (allowsNull(schema)) return schema
  if (Array.isArray(schema["anyOf"]) && Object.keys(schema).length === 1) {
    return { anyOf: [...schema["anyOf"], { type: "null" }] }
  }
  return { anyOf: [schema, { type: "null" }] }
}

const strict = (value: unknown, depth: number): unknown => {
  if (depth > MAX_SCHEMA_DEPTH) throw new Error("answer schema: nested too deeply (a recursive schema?)")
  if (Array.isArray(value)) return value.map((v) => strict(v, depth + 1))
  if (!isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    // the keys of `properties` are field names, not keywords: recurse into each field's schema
    out[key] = key === "properties" && isObject(child)
      ? Object.fromEntries(Object.entries(child).map(([k, v]) => [k, strict(v, depth + 1)]))
      : strict(child, depth + 1)
  }
  if (value["type"] !== "object") return out
  const properties = isObject(out["properties"]) ? out["properties"] : {}
  const required = new Set(Array.isArray(value["required"]) ? value["required"] : [])
  return {
    ...out,
    properties: Object.fromEntries(
      Object.entries(properties).map(([k, v]) => [k, required.has(k) || !isObject(v) ? v : nullable(v)])
    ),
    // strict mode: every property is required (an optional one may be null instead) and no other is allowed
    required: Object.keys(properties),
    additionalProperties: false
  }
}

/**
 * The schema as OpenAI's strict structured outputs demand it: at every object level every
 * property is in `required` and `additionalProperties` is false; a property that was optional
 * becomes a union with null (the stages' parsers read a null optional field as missing).
 */
export const toStrictJsonSchema = (schema: JsonSchemaObject): JsonSchemaObject => strict(schema, 0) as JsonSchemaObject
