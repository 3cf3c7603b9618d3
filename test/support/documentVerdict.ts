/**
 * The served OpenAPI document's own verdict on a request and a response, as a validating proxy
 * gives it: JSON Schema 2020-12 (OpenAPI 3.1's dialect) by Ajv, with formats, over the document
 * as served (`$ref`s into its components). Query and path values are read from the URL by their
 * schema's type, as OpenAPI's `form` style reads them: an integer's digits, the words `true` and
 * `false`; anything else stays text for the schema to judge.
 */
import addFormatsModule from "ajv-formats"
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import type { Json } from "./openapi.js"

// ajv-formats is CommonJS whose default export is the function
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

const DOC_ID = "https://gligabao.invalid/openapi.json"

const escape = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1")

/** The media type without its parameters, lower-cased (`text/plain; version=0.0.4` is `text/plain`). */
export const baseMediaType = (value: string | undefined) => (value ?? "").split(";")[0]!.trim().toLowerCase()

const mediaMatches = (documented: string, sent: string) => {
  const want = baseMediaType(documented)
  return want === sent || (want.endsWith("/*") && sent.startsWith(want.slice(0, -1)))
}

export interface UrlValues {
  readonly path: Readonly<Record<string, string>>
  readonly query: Readonly<Record<string, ReadonlyArray<string>>>
}

/** A URL's values as a server receives them: path segments by the template, query values in order. */
export const urlValues = (template: string, url: string): UrlValues => {
  const parsed = new URL(url, "http://x")
  const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)
  const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "([^/]+)")}$`)
  const match = pattern.exec(parsed.pathname)
  const path: Record<string, string> = {}
  names.forEach((name, i) => {
    path[name] = decodeURIComponent(match?.[i + 1] ?? "")
  })
  const query: Record<string, Array<string>> = {}
  for (const [key, value] of parsed.searchParams) (query[key] ??= []).push(value)
  return { path, query }
}

const readAs = (type: unknown, text: string): unknown =>
  type === "integer" && /^-?\d+$/.test(text)
    ? Number(text)
    : type === "number" && text.trim() !== "" && !Number.isNaN(Number(text))
    ? Number(text)
    : type === "boolean" && (text === "true" || text === "false")
    ? text === "true"
    : text

export const documentVerdict = (doc: Json) => {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true })
  addFormats(ajv)
  ajv.addSchema(structuredClone(doc), DOC_ID)
  const compiled = new Map<string, ValidateFunction>()
  const validatorAt = (pointer: string) => {
    let found = compiled.get(pointer)
    if (found === undefined) {
      found = ajv.compile({ $ref: `${DOC_ID}#${pointer}` })
      compiled.set(pointer, found)
    }
    return found
  }
  const check = (pointer: string, value: unknown): string | undefined => {
    const validate = validatorAt(pointer)
    return validate(value) ? undefined : ajv.errorsText(validate.errors)
  }
  const resolve = (node: Json): Json => {
    let current = node
    for (let i = 0; current?.$ref !== undefined && i < 20; i++) {
      current = String(current.$ref).slice(2).split("/").reduce(
        (at: Json, key: string) => at?.[key.replace(/~1/g, "/").replace(/~0/g, "~")],
        doc
      )
    }
    return current
  }
  const opPointer = (method: string, path: string) => `/paths/${escape(path)}/${method}`

  /** Why the document calls this request invalid, or undefined when it calls it valid. */
  const request = (
    method: string,
    path: string,
    url: string,
    body: { readonly present: boolean; readonly value?: unknown }
  ): string | undefined => {
    const op = doc.paths[path][method]
    const values = urlValues(path, url)
    const parameters: Array<Json> = (op.parameters ?? []).map(resolve)
    for (const [index, parameter] of parameters.entries()) {
      if (parameter.in !== "query" && parameter.in !== "path") continue
      const given = parameter.in === "path"
        ? (values.path[parameter.name] === undefined ? [] : [values.path[parameter.name]!])
        : (values.query[parameter.name] ?? [])
      if (given.length === 0) {
        if (parameter.required === true) return `${parameter.in} parameter ${parameter.name} is required`
        continue
      }
      const schema = resolve(parameter.schema)
      if (given.length > 1 && schema.type !== "array") return `${parameter.name} is not an array`
      const value = schema.type === "array"
        ? given.map((g) => readAs(resolve(schema.items)?.type, g))
        : readAs(schema.type, given[0]!)
      const problem = check(`${opPointer(method, path)}/parameters/${index}/schema`, value)
      if (problem !== undefined) return `${parameter.name}: ${problem}`
    }
    if (op.requestBody !== undefined) {
      if (!body.present) return op.requestBody.required === true ? "a body is required" : undefined
      return check(`${opPointer(method, path)}/requestBody/content/application~1json/schema`, body.value)
    }
    return undefined
  }

  /** Why the document does not allow this response, or undefined when it does. */
  const response = (
    method: string,
    path: string,
    answer: { readonly status: number; readonly contentType?: string; readonly text: string; readonly json: unknown }
  ): string | undefined => {
    const responses = doc.paths[path][method].responses ?? {}
    const documented = responses[String(answer.status)] ?? responses.default
    if (documented === undefined) return `status ${answer.status} is not documented`
    const content: Record<string, Json> = resolve(documented).content ?? {}
    const media = Object.keys(content)
    if (media.length === 0) return answer.text === "" ? undefined : `status ${answer.status} documents no body`
    const sent = baseMediaType(answer.contentType)
    const which = media.find((m) => mediaMatches(m, sent))
    if (which === undefined) return `media type ${sent} is not one of ${media.join(", ")}`
    if (sent === "application/json") {
      const pointer = `${opPointer(method, path)}/responses/${
        responses[String(answer.status)] === undefined ? "default" : answer.status
      }/content/${escape(which)}/schema`
      return answer.json === undefined ? "the body is not JSON" : check(pointer, answer.json)
    }
    return undefined
  }

  return { request, response, resolve }
}
