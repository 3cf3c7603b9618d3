/**
 * Query parameters decoded with the contract's field schemas (UrlParams): a URL carries text, a
 * repeated parameter is refused, and the document lists the struct's fields as the parameters.
 */
import { JSONSchema, ParseResult, Schema } from "effect"
import { STRICT } from "./Wire.js"

/** Query parameters as HttpApi hands them over: a repeated one is an array. */
export type UrlParamsInput = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

const firstValues = (params: Readonly<Record<string, unknown>>) => {
  const out: Record<string, unknown> = {}
  for (const [key, raw] of Object.entries(params)) {
    const value = Array.isArray(raw) ? raw[0] : raw
    if (value !== undefined) out[key] = value
  }
  return out
}

/**
 * A URL carries text only: the values of the fields the contract says are integers or booleans
 * are read as such here (`10`, `true`, `false`), as a validating proxy reads them, so that the
 * fields' schemas take JSON's types alone and `"10"` in a JSON body is a 400. An object field
 * (`filters`) is JSON text. A value that does not read (` 10`, `1`, `yes`) is left as text, for
 * the field to name.
 */
const typedValues = (types: Readonly<Record<string, unknown>>, values: Record<string, unknown>) => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(values)) {
    if (typeof value !== "string") out[key] = value
    else if (types[key] === "integer" && /^-?\d+$/.test(value)) out[key] = Number(value)
    else if (types[key] === "boolean" && (value === "true" || value === "false")) out[key] = value === "true"
    else if (types[key] === "json") out[key] = jsonOrText(value)
    else out[key] = value
  }
  return out
}

/** An object field (`filters`) travels as JSON text; text that does not parse is left to its field to name. */
const jsonOrText = (value: string): unknown => {
  try {
    return JSON.parse(value)
  } catch {
    return value
  }
}

const asParams = (values: Readonly<Record<string, unknown>>) => {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined && value !== null) {
      out[key] = typeof value === "object"
        ? JSON.stringify(value)
        : String(value)
    }
  }
  return out
}

type JsonObject = Readonly<Record<string, unknown>>

/**
 * An object field in a URL (`filters`) is JSON text: the document says so (a string that opens an
 * object), and its shape is the body field's (docs/READ.md), which the server decodes it with.
 */
const asJsonText = (property: JsonObject): JsonObject =>
  property.type === "object" || typeof property.$ref === "string"
    ? {
      type: "string",
      pattern: "^\\s*\\{",
      contentMediaType: "application/json",
      description: `JSON text of an object${
        typeof property.description === "string" ? `: ${property.description}` : ""
      }`
    }
    : property

/** A property's JSON schema without its `null` alternative (the body fields take null as absent; a URL has none). */
const withoutNull = (property: JsonObject): JsonObject => {
  const anyOf = property.anyOf
  if (!Array.isArray(anyOf)) return property
  const { anyOf: _, ...rest } = property
  const kept = (anyOf as ReadonlyArray<JsonObject>).filter((s) => s.type !== "null")
  return kept.length === 1 ? { ...kept[0], ...rest } : { ...rest, anyOf: kept }
}

/**
 * The query parameters of a URL decoded with `schema`, a struct of field schemas: a repeated
 * parameter is refused and an empty one is a value like any other (judged by its field, as a
 * validating proxy judges it). The OpenAPI document lists the struct's fields as the parameters, each
 * with its value in the first of `examples` (requests of the decoded type, valid ones).
 */
export const UrlParams = <A, I>(
  schema: Schema.Schema<A, I, never>,
  options: { readonly examples?: readonly [NoInfer<A>, ...Array<NoInfer<A>>] } = {}
): Schema.Schema<A, UrlParamsInput> => {
  const { $schema: _, ...document } = JSONSchema.make(schema) as unknown as JsonObject
  const example: JsonObject = options.examples === undefined
    ? {}
    : Schema.encodeSync(schema)(options.examples[0]) as never
  const properties = Object.fromEntries(
    Object.entries(document.properties as Record<string, JsonObject>).map(([key, property]) => {
      const plain = asJsonText(withoutNull(property))
      return [key, example[key] === undefined ? plain : { ...plain, examples: [example[key]] }]
    })
  )
  const types = Object.fromEntries(
    Object.entries(properties).map((
      [key, property]
    ) => [
      key,
      (property as JsonObject).contentMediaType === "application/json" ? "json" : (property as JsonObject).type
    ])
  )
  const raw = Schema.Record({ key: Schema.String, value: Schema.Unknown })
  return Schema.compose(
    Schema.transformOrFail(raw, raw, {
      strict: true,
      decode: (params, _, ast) => {
        const repeated = Object.entries(params).find(([, v]) => Array.isArray(v) && v.length > 1)
        return repeated === undefined
          ? ParseResult.succeed(typedValues(types, firstValues(params)))
          : ParseResult.fail(new ParseResult.Type(ast, params, `${repeated[0]} is given more than once`))
      },
      encode: (values) => ParseResult.succeed(asParams(values))
    }),
    schema.annotations(STRICT),
    { strict: false }
  ).annotations({
    jsonSchema: { ...document, properties },
    ...(options.examples === undefined ? {} : { examples: options.examples })
  }) as unknown as Schema.Schema<A, UrlParamsInput>
}
