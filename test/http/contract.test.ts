/**
 * The served OpenAPI document held to the server both ways (issue 37, item 4), judged by Ajv
 * (JSON Schema 2020-12, formats on) as a validating proxy would:
 *
 * - every documented example request is answered with a documented status, in a documented
 *   media type, with a body its schema accepts (GraphML, Prometheus text and SSE included);
 * - generated requests (each example with one field or parameter changed to a boundary value, a
 *   wrong type, a control character, a random JSON value, left out, or repeated) get the same
 *   verdict from the document and from the server: the document calls it invalid exactly when
 *   the server refuses it with a 400 (or a 413 for a body over its byte limit), and every answer,
 *   refusals included, matches the document too.
 *
 * Strings are generated in ASCII: JSON Schema counts characters, the server's limits count bytes
 * (documented in prose). Besides, JSON Schema cannot relate two fields or two parameters, so the
 * rules that do (SEMANTIC, each documented in its field's description) may refuse what the
 * document calls valid; nothing else may.
 */
import { HttpClientRequest } from "@effect/platform"
import { layer } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { expect } from "vitest"
import { rememberLayer } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { documentVerdict, urlValues } from "../support/documentVerdict.js"
import { send, serveTest, type TestResponse } from "../support/http.js"
import {
  answerAny,
  type ExampleRequest,
  examplesOf,
  type Json,
  operationsInOrder,
  servedDocument
} from "../support/openapi.js"

interface Generated {
  readonly label: string
  readonly method: string
  readonly path: string
  readonly url: string
  readonly body: { readonly present: boolean; readonly value?: unknown }
}

const CONTROL = "a\u0007b"

/** Values worth trying for a schema: its boundaries on both sides, its enum and formats, wrong types. */
const candidates = (resolve: (node: Json) => Json, raw: Json, seed: number): Array<unknown> => {
  const schema = resolve(raw) ?? {}
  const alternatives: Array<Json> = [schema, ...[...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].map(resolve)]
  const out: Array<unknown> = [null, 7, "seven", true, [], {}, 1.5, -1, "10", "true", "", CONTROL]
  for (const s of alternatives) {
    if (Array.isArray(s.enum)) out.push(...s.enum, `${String(s.enum[0]).toUpperCase()}`, ` ${String(s.enum[0])}`)
    if (s.type === "string") {
      out.push("x")
      for (const n of [s.minLength, s.maxLength]) {
        if (typeof n === "number" && n < 70_000) {
          out.push("a".repeat(Math.max(0, n - 1)), "a".repeat(n), "a".repeat(n + 1))
        }
      }
      if (s.format === "date-time") out.push("2024-05-01T00:00:00Z", "2024-05-01", "yesterday")
    }
    if (s.type === "integer" || s.type === "number") {
      for (const n of [s.minimum, s.maximum]) if (typeof n === "number") out.push(n - 1, n, n + 1)
      out.push(0, 2 ** 53)
    }
    if (s.type === "array") {
      out.push([], ["x"], [1])
      if (typeof s.maxItems === "number" && s.maxItems < 1000) {
        out.push(Array.from({ length: s.maxItems + 1 }, () => "x"))
      }
    }
    if (s.type === "object") out.push({ unknown_field: 1 })
  }
  out.push(...fc.sample(fc.jsonValue({ maxDepth: 2 }), { seed, numRuns: 4 }))
  const seen = new Set<string>()
  return out.filter((v) => {
    const key = JSON.stringify(v)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

const withQuery = (url: string, change: (params: URLSearchParams) => void) => {
  const parsed = new URL(url, "http://x")
  change(parsed.searchParams)
  const search = parsed.searchParams.toString()
  return `${parsed.pathname}${search === "" ? "" : `?${search}`}`
}

/** The requests generated from one example: one change at a time. */
const generate = (doc: Json, resolve: (node: Json) => Json, op: Json, example: ExampleRequest): Array<Generated> => {
  const path = Object.keys(doc.paths).find((p) => doc.paths[p][example.method] === op)!
  const out: Array<Generated> = []
  const add = (what: string, url: string, body: Generated["body"]) =>
    out.push({ label: `${example.method.toUpperCase()} ${path} ${what}`, method: example.method, path, url, body })
  const bodyOf = example.body === undefined ? { present: false } : { present: true, value: example.body }
  let seed = 1
  for (const parameter of (op.parameters ?? []).map(resolve)) {
    if (parameter.in !== "query") continue
    const name: string = parameter.name
    add(`without ${name}`, withQuery(example.url, (q) => q.delete(name)), bodyOf)
    const given = urlValues(path, example.url).query[name]?.[0] ?? "x"
    add(`${name} twice`, withQuery(example.url, (q) => (q.set(name, given), q.append(name, given))), bodyOf)
    for (const value of candidates(resolve, parameter.schema, seed++)) {
      if (value === null || typeof value === "object") continue
      add(
        `${name}=${JSON.stringify(value).slice(0, 40)}`,
        withQuery(example.url, (q) => q.set(name, String(value))),
        bodyOf
      )
    }
  }
  if (op.requestBody !== undefined && typeof example.body === "object" && example.body !== null) {
    const base = example.body as Record<string, unknown>
    const schema = resolve(op.requestBody.content["application/json"].schema)
    const properties: Record<string, Json> = schema.properties ?? {}
    for (const nonObject of [[], "text", 1, null]) {
      add(`body ${JSON.stringify(nonObject)}`, example.url, { present: true, value: nonObject })
    }
    for (const key of Object.keys(base)) {
      const { [key]: _, ...rest } = base
      add(`without ${key}`, example.url, { present: true, value: rest })
    }
    add("with an unknown field", example.url, {
      present: true,
      value: { ...base, refrence_time: "2020-01-01T00:00:00Z" }
    })
    for (const [key, property] of Object.entries(properties)) {
      for (const value of candidates(resolve, property, seed++)) {
        add(`${key}=${JSON.stringify(value).slice(0, 40)}`, example.url, {
          present: true,
          value: { ...base, [key]: value }
        })
      }
    }
  }
  return out
}

const toHttp = (g: { readonly method: string; readonly url: string; readonly body: Generated["body"] }) => {
  const base = HttpClientRequest.make(g.method.toUpperCase() as "GET")(g.url)
  return g.body.present ? HttpClientRequest.bodyUnsafeJson(base, g.body.value) : base
}

/** An answer as the document's verdict reads it (GraphML and Prometheus text have no JSON). */
const answerOf = (res: TestResponse) => ({
  status: res.status,
  contentType: res.headers["content-type"],
  text: res.text,
  json: res.json
})

const describeAnswer = (res: TestResponse) => `${res.status} ${res.text.slice(0, 160)}`

/** The server's verdict: refused (400, or 413 over a byte limit), or taken (any other documented answer). */
const refused = (status: number) => status === 400 || status === 413

/** Rules between fields or parameters, which JSON Schema cannot state: their refusals only. */
const SEMANTIC: ReadonlyArray<RegExp> = [
  /^(id or name is required|id and name cannot both be given) \(exactly one of them\)$/,
  /^from must not contain into$/,
  /^from must be before to$/,
  // a dataset schema's names and references (docs/SCHEMA.md; DatasetSchema.ts, schemaProblem)
  /^(entity|edge)_types\[\d+\]\.name repeats an (entity|edge) type /,
  /^entity_types\[\d+\]\.attributes\[\d+\]\.(name repeats an attribute|type must be \w+, as attribute )/,
  /^(entity|edge)_types must (not be empty when allow_other_(entity|edge)_types is false|have at most \d+ distinct)/,
  /^edge_types\[\d+\]\.(source|target)_types\[\d+\] is not an entity type of this schema /
]
const semantic = (res: TestResponse) =>
  res.status === 400 && SEMANTIC.some((rule) => rule.test(String(res.json?.error)))

layer(serveTest(rememberLayer(sqliteLayer(), answerAny)), { excludeTestServices: true })(
  "the OpenAPI document against the server",
  (it) => {
    it.effect("every documented example is answered in a documented status, media type and schema", () =>
      Effect.gen(function*() {
        const doc = yield* servedDocument
        const verdict = documentVerdict(doc)
        const operations = operationsInOrder(doc)
        const wrong: Array<string> = []
        let checked = 0
        let graphml = 0
        for (const operation of operations) {
          for (const example of examplesOf(doc, operation).requests) {
            const res = yield* send(
              toHttp({
                ...example,
                body: example.body === undefined ? { present: false } : { present: true, value: example.body }
              })
            )
            const problem = verdict.response(operation.method, operation.path, answerOf(res))
            checked++
            if (problem !== undefined) wrong.push(`${example.label}: ${problem} (${describeAnswer(res)})`)
            if (operation.path === "/v1/gb/graph") {
              // the export in its other media type, while the example's data is still there
              const xml = yield* send(
                HttpClientRequest.get(`${example.url}&format=graphml`.replace(/format=json&?/, ""))
              )
              expect(xml.status, xml.text).toBe(200)
              expect(xml.text).toMatch(/^<\?xml[^>]*\?>\s*<graphml\b/)
              const media = verdict.response("get", operation.path, answerOf(xml))
              if (media !== undefined) wrong.push(`GraphML export: ${media}`)
              graphml++
            }
          }
        }
        expect(graphml).toBe(1)
        expect(checked).toBeGreaterThan(30)
        expect(wrong).toEqual([])
      }))

    it.effect(
      "generated requests: the document and the server agree on which are valid, and on every answer",
      () =>
        Effect.gen(function*() {
          const doc = yield* servedDocument
          const verdict = documentVerdict(doc)
          const operations = operationsInOrder(doc)
          const disagreements: Array<string> = []
          let valid = 0
          let invalid = 0
          for (const operation of operations) {
            const example = examplesOf(doc, operation).requests[0]
            if (example === undefined) continue
            for (const g of generate(doc, verdict.resolve, operation.op, example)) {
              const documentSays = verdict.request(g.method, g.path, g.url, g.body)
              const res = yield* send(toHttp(g))
              const answer = verdict.response(g.method, g.path, answerOf(res))
              if (documentSays === undefined) valid++
              else invalid++
              // 502/503: a provider this server lacks (web_search without a key), as documented
              if (res.status === 500 || res.status > 503 || [401, 403, 415].includes(res.status)) {
                disagreements.push(`${g.label}: ${describeAnswer(res)}`)
              } else if (documentSays === undefined && refused(res.status) && !semantic(res)) {
                disagreements.push(`${g.label}: the document calls it valid, the server ${describeAnswer(res)}`)
              } else if (documentSays !== undefined && !refused(res.status)) {
                disagreements.push(
                  `${g.label}: the document calls it invalid (${documentSays}), the server ${res.status}`
                )
              } else if (answer !== undefined) {
                disagreements.push(`${g.label}: the answer is not as documented: ${answer} (${describeAnswer(res)})`)
              }
            }
          }
          // both verdicts are exercised, many times
          expect(valid).toBeGreaterThan(200)
          expect(invalid).toBeGreaterThan(500)
          expect(disagreements).toEqual([])
        }),
      { timeout: 240_000 }
    )
  }
)
