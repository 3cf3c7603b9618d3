/**
 * The served OpenAPI document (`GET /openapi.json`) against the server that serves it (issue 19):
 * it is a valid OpenAPI 3.1 document (@readme/openapi-parser, and @seriousme/openapi-schema-validator,
 * which checks `$id` uniqueness), its request bodies refuse unknown fields as the server does, every endpoint that needs a body or parameters documents an example
 * request, and every documented example request, sent to the in-process app (SQLite, the
 * scripted LLM), gets one of its endpoint's documented 2xx statuses.
 *
 * The examples are read from the document, whatever it holds: a request body's media-type
 * `example`/`examples` and its schema's `examples`/`example`; a parameter's `example`/`examples`
 * and its schema's. Example i of an endpoint is body example i with, for each parameter, its
 * example i (or its last when it has fewer); an endpoint that needs nothing (no body, no
 * required parameter) and documents no example is sent bare.
 */
import { HttpClientRequest } from "@effect/platform"
import { layer } from "@effect/vitest"
import { compileErrors, validate } from "@readme/openapi-parser"
import { Validator } from "@seriousme/openapi-schema-validator"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { expect } from "vitest"
import { rememberLayer } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { send, serveTest } from "../support/http.js"
import {
  answerAny,
  examplesOf,
  JSON_TYPE,
  label,
  operationsInOrder,
  operationsOf,
  resolve,
  servedDocument,
  toRequest
} from "../support/openapi.js"

layer(serveTest(rememberLayer(sqliteLayer(), answerAny)), { excludeTestServices: true })(
  "the OpenAPI document",
  (it) => {
    it.effect("is a valid OpenAPI 3.1 document", () =>
      Effect.gen(function*() {
        const doc = yield* servedDocument
        expect(doc.openapi).toMatch(/^3\.1\./)
        // validate dereferences the document it is given: a copy
        const result = yield* Effect.promise(() => validate(structuredClone(doc)))
        expect(result.valid ? "valid" : compileErrors(result)).toBe("valid")
        expect(result.warnings).toEqual([])
      }))

    it.effect("passes an independent validator that checks $id uniqueness; its version is the package's", () =>
      Effect.gen(function*() {
        const doc = yield* servedDocument
        const result = yield* Effect.promise(() => new Validator().validate(structuredClone(doc)))
        expect(result.valid ? "valid" : JSON.stringify(result.errors)).toBe("valid")
        const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
          version: string
        }
        expect(doc.info.version).toBe(pkg.version)
        // the export's second media type is documented, and is what the server sends
        expect(Object.keys(doc.paths["/v1/gb/graph"].get.responses["200"].content).sort()).toEqual([
          "application/graphml+xml",
          JSON_TYPE
        ])
      }))

    it.effect("request bodies refuse unknown fields, as the server does; responses may grow", () =>
      Effect.gen(function*() {
        const doc = yield* servedDocument
        const remember = resolve(doc, doc.paths["/v1/gb/remember"].post.requestBody.content[JSON_TYPE].schema)
        expect(remember.additionalProperties).toBe(false)
        // text, image and messages exclude each other, one required
        expect(remember.oneOf).toEqual(["text", "image", "messages"].map((field) => ({
          required: [field],
          properties: { [field]: { not: { type: "null" } } }
        })))
        const search = resolve(doc, doc.paths["/v1/gb/search"].post.requestBody.content[JSON_TYPE].schema)
        expect(search.additionalProperties).toBe(false)
        const answer = resolve(doc, doc.paths["/v1/gb/search"].post.responses["200"].content[JSON_TYPE].schema)
        expect(answer.additionalProperties).not.toBe(false)
        // and the server agrees: the field the document refuses is a 400 naming it
        const res = yield* send(
          HttpClientRequest.post("/v1/gb/search").pipe(
            HttpClientRequest.bodyUnsafeJson({ user_id: "alice", query: "q", limt: 3 })
          )
        )
        expect(res.status).toBe(400)
        expect(res.json).toEqual({ error: "unknown field \"limt\" (did you mean \"limit\"?)" })
      }))

    it.effect("documents an example request for every endpoint that needs a body or parameters", () =>
      Effect.gen(function*() {
        const doc = yield* servedDocument
        const lacking = operationsOf(doc).flatMap((operation) => {
          const { missing } = examplesOf(doc, operation)
          return missing.length === 0 ? [] : [`${label(operation)}: no example of ${missing.join(", ")}`]
        })
        expect(lacking).toEqual([])
      }))

    it.effect("answers every documented example request with a documented 2xx", () =>
      Effect.gen(function*() {
        const doc = yield* servedDocument
        const examples = operationsInOrder(doc).flatMap((operation) => examplesOf(doc, operation).requests)
        const wrong: Array<string> = []
        for (const example of examples) {
          const res = yield* send(toRequest(example))
          // a cancel needs a queued run, and the examples' runs have ended when it is sent: its
          // documented 409 (the run has finished) is the answer (test/runs/ sends it to queued runs)
          const statuses = example.url.endsWith("/cancel") ? [...example.statuses, 409] : example.statuses
          if (!statuses.includes(res.status)) {
            wrong.push(
              `${example.label} (${example.method.toUpperCase()} ${example.url}): ${res.status}, documented ${
                example.statuses.join("/")
              }: ${res.text.slice(0, 200)}`
            )
          }
        }
        expect(examples.length).toBeGreaterThan(0)
        expect(wrong).toEqual([])
      }))
  }
)
