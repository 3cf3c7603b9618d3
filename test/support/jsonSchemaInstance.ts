/**
 * A value of a JSON Schema, as a server that constrains its output to the schema would produce:
 * every property (nullable ones with their non-null branch), one item per array, "x" for a
 * string, 1 for a number. Enough for the stages' schemas (objects, arrays, anyOf, scalars).
 */
export const jsonSchemaInstance = (schema: any, depth = 0): unknown => {
  if (depth > 32 || typeof schema !== "object" || schema === null) return null
  if (Array.isArray(schema.anyOf)) {
    const branch = schema.anyOf.find((s: any) => s?.type !== "null") ?? schema.anyOf[0]
    return jsonSchemaInstance(branch, depth + 1)
  }
  if (Array.isArray(schema.enum)) return schema.enum[0]
  switch (Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type) {
    case "object":
      return Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([k, v]) => [k, jsonSchemaInstance(v, depth + 1)])
      )
    case "array":
      return [jsonSchemaInstance(schema.items, depth + 1)]
    case "string":
      return "x"
    case "integer":
    case "number":
      return 1
    case "boolean":
      return true
    default:
      return null
  }
}

/**
 * Where `schema` breaks OpenAI's strict structured-output rules, worded as the API words it, or
 * undefined: every object needs `additionalProperties: false` and every property in `required`.
 */
export const strictSchemaViolation = (
  name: string,
  schema: any,
  path: ReadonlyArray<string> = []
): string | undefined => {
  if (typeof schema !== "object" || schema === null) return undefined
  const context = `context=(${path.map((p) => `'${p}'`).join(", ")})`
  if (schema.type === "object") {
    if (schema.additionalProperties !== false) {
      return `Invalid schema for response_format '${name}': In ${context}, 'additionalProperties' is required to be supplied and to be false.`
    }
    const keys = Object.keys(schema.properties ?? {})
    const required: Array<string> = Array.isArray(schema.required) ? schema.required : []
    const missing = keys.find((k) => !required.includes(k))
    if (missing !== undefined) {
      return `Invalid schema for response_format '${name}': In ${context}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`
    }
    for (const k of keys) {
      const found = strictSchemaViolation(name, schema.properties[k], [...path, "properties", k])
      if (found !== undefined) return found
    }
  }
  if (schema.items !== undefined) return strictSchemaViolation(name, schema.items, [...path, "items"])
  for (const [i, branch] of (Array.isArray(schema.anyOf) ? schema.anyOf : []).entries()) {
    const found = strictSchemaViolation(name, branch, [...path, "anyOf", String(i)])
    if (found !== undefined) return found
  }
  return undefined
}
