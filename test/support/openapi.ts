/**
 * The served OpenAPI document read as a client reads it: its operations, `$ref`s followed, the
 * example requests it documents (body and parameters), and a scripted model that answers any
 * call an example can make. Shared by test/http/openapi.test.ts and test/http/contract.test.ts.
 */
import { HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { expect } from "vitest"
import { type ScriptedAnswer, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { graph, resolution } from "./app.js"
import { get } from "./http.js"

/**
 * Answers any model call an example can make: every text the same small graph (one fact), no
 * duplicates or contradictions, a one-line summary, an image's text, a query's answer.
 */
export const answerAny = (request: LlmRequest): ScriptedAnswer => {
  switch (request.stage) {
    case "extract_graph":
      return graph(
        [{ name: "Alice", type: "person", description: "a person" }, {
          name: "Paris",
          type: "place",
          description: "a city"
        }],
        [{ source: "Alice", target: "Paris", relation: "lives in", description: "Alice lives in Paris" }]
      )
    case "resolve_edges":
      return resolution([], [])
    case "summarize_chunk":
      return { text: "A short summary." }
    case "extract_image":
      return ScriptedLlm.json({ theme: "Photo", title: "An image", text_blocks: [{ kind: "caption", text: "x" }] })
    case "query":
      return ScriptedLlm.json({ answer: "Nothing much.", citations: [] })
    case "detect_geo":
      return ScriptedLlm.json({ places: [] })
    default:
      return { fail: { message: `openapi.test: no scripted answer for stage ${request.stage}` } }
  }
}

export type Json = any

export const METHODS = ["get", "put", "post", "delete", "patch"] as const

export interface Operation {
  readonly method: (typeof METHODS)[number]
  readonly path: string
  readonly op: Json
}

export const operationsOf = (doc: Json): Array<Operation> =>
  Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method] !== undefined).map((method) => ({ method, path, op: item[method] }))
  )

export const label = ({ method, path }: Operation) => `${method.toUpperCase()} ${path}`

/** A `$ref` into the document, followed (to any depth). */
export const resolve = (doc: Json, node: Json): Json => {
  let current = node
  for (let depth = 0; current?.$ref !== undefined && depth < 20; depth++) {
    const ref = String(current.$ref)
    if (!ref.startsWith("#/")) return current
    current = ref.slice(2).split("/").reduce(
      (at: Json, key) => at?.[key.replace(/~1/g, "/").replace(/~0/g, "~")],
      doc
    )
  }
  return current
}

/** The example values of an OpenAPI node that may carry `example` / `examples` (a map of {value}). */
const openApiExamples = (doc: Json, node: Json): Array<unknown> => {
  const out: Array<unknown> = []
  if (node === undefined || node === null) return out
  if (node.example !== undefined) out.push(node.example)
  if (node.examples !== undefined && typeof node.examples === "object" && !Array.isArray(node.examples)) {
    for (const example of Object.values(node.examples as Record<string, Json>)) {
      const value = resolve(doc, example)?.value
      if (value !== undefined) out.push(value)
    }
  }
  return out
}

/** The example values of a JSON Schema: `examples` (an array) and the older `example`. */
const schemaExamples = (doc: Json, schema: Json): Array<unknown> => {
  const resolved = resolve(doc, schema)
  if (resolved === undefined || resolved === null) return []
  return [
    ...(Array.isArray(resolved.examples) ? resolved.examples : []),
    ...(resolved.example !== undefined ? [resolved.example] : [])
  ]
}

export const JSON_TYPE = "application/json"

const bodyExamples = (doc: Json, op: Json): Array<unknown> => {
  const media = op.requestBody?.content?.[JSON_TYPE]
  if (media === undefined) return []
  return [...openApiExamples(doc, media), ...schemaExamples(doc, media.schema)]
}

const parameterExamples = (doc: Json, parameter: Json): Array<unknown> => [
  ...openApiExamples(doc, parameter),
  ...schemaExamples(doc, parameter.schema)
]

export interface ExampleRequest {
  readonly label: string
  readonly method: Operation["method"]
  readonly url: string
  readonly body?: unknown
  readonly statuses: ReadonlyArray<number>
}

const urlOf = (path: string, values: ReadonlyArray<{ readonly parameter: Json; readonly value: unknown }>) => {
  let url = path
  const query = new URLSearchParams()
  for (const { parameter, value } of values) {
    if (parameter.in === "path") url = url.replace(`{${parameter.name}}`, encodeURIComponent(String(value)))
    else if (parameter.in === "query") {
      for (const v of Array.isArray(value) ? value : [value]) query.append(parameter.name, String(v))
    }
  }
  const search = query.toString()
  return search === "" ? url : `${url}?${search}`
}

/** An endpoint's example requests, and what it lacks an example of. */
export const examplesOf = (doc: Json, operation: Operation) => {
  const { op, path } = operation
  const parameters: Array<Json> = (op.parameters ?? []).map((p: Json) => resolve(doc, p))
  const bodies = bodyExamples(doc, op)
  const perParameter = parameters.map((parameter) => ({ parameter, examples: parameterExamples(doc, parameter) }))
  const missing: Array<string> = []
  // OpenAPI requires every `{name}` of a path declared as a path parameter
  for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
    if (!parameters.some((p) => p.in === "path" && p.name === name)) missing.push(`path parameter ${name} (undeclared)`)
  }
  if (op.requestBody !== undefined && bodies.length === 0) missing.push("the request body")
  for (const { examples, parameter } of perParameter) {
    if (parameter.required === true && examples.length === 0) {
      missing.push(`${parameter.in} parameter ${parameter.name}`)
    }
  }
  const count = Math.max(bodies.length, ...perParameter.map((p) => p.examples.length))
  const needsNothing = op.requestBody === undefined && parameters.every((p) => p.required !== true)
  const statuses = Object.keys(op.responses ?? {}).map(Number).filter((s) => s >= 200 && s < 300)
  const requests: Array<ExampleRequest> = []
  // with something missing the request cannot be built; the example assertion names it
  if (missing.length === 0) {
    for (let i = 0; i < Math.max(count, needsNothing ? 1 : 0); i++) {
      const values = perParameter
        .filter((p) => p.examples.length > 0)
        .map((p) => ({ parameter: p.parameter, value: p.examples[Math.min(i, p.examples.length - 1)] }))
      requests.push({
        label: `${label(operation)} example ${i + 1}`,
        method: operation.method,
        url: urlOf(path, values),
        ...(op.requestBody !== undefined ? { body: bodies[Math.min(i, bodies.length - 1)] } : {}),
        statuses
      })
    }
  }
  return { missing, requests }
}

/** Writes first (so the reads find runs, images and datasets), deletes last; else document order. */
const ORDER: Record<Operation["method"], number> = { post: 0, put: 1, patch: 2, get: 3, delete: 4 }

/** The document's operations in the order examples are sent: writes first, deletes last, else as documented. */
export const operationsInOrder = (doc: Json): Array<Operation> =>
  operationsOf(doc)
    .map((operation, index) => ({ operation, index }))
    .sort((a, b) => ORDER[a.operation.method] - ORDER[b.operation.method] || a.index - b.index)
    .map(({ operation }) => operation)

export const toRequest = (example: ExampleRequest) => {
  const base = HttpClientRequest.make(example.method.toUpperCase() as "GET")(example.url)
  return example.body === undefined ? base : HttpClientRequest.bodyUnsafeJson(base, example.body)
}

export const servedDocument = Effect.map(get("/openapi.json"), (res) => {
  expect(res.status).toBe(200)
  return res.json as Json
})
