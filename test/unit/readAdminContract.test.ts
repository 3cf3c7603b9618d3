/**
 * The read and admin endpoints' contract as the schemas make it: the OpenAPI document shows a
 * valid example of every request (body, URL parameters, path), URL parameters are read as a
 * browser or form sends them, and a decode failure words its message as the hand validators did.
 */
import { OpenApi } from "@effect/platform"
import { Either, JSONSchema, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  AdminGraphRequest,
  RunPath,
  RunsRequest,
  UsageRequest,
  validateUsageRequest
} from "../../src/admin/requests.js"
import { decodeRequest, formatParseError, UserId } from "../../src/domain/Wire.js"
import { AdminApiGroup } from "../../src/http/AdminApi.js"
import { GligabaoApi } from "../../src/http/Api.js"
import { ReadGroup } from "../../src/http/ReadApi.js"
import { DatasetPath, GraphRequest, QueryRequest, SearchRequest, UserParams } from "../../src/query/requests.js"

const doc = OpenApi.fromApi(GligabaoApi) as unknown as {
  readonly paths: Record<string, Record<string, Operation>>
  readonly components: { readonly schemas: Record<string, { readonly examples?: ReadonlyArray<unknown> }> }
}
interface Operation {
  readonly operationId: string
  readonly parameters: ReadonlyArray<
    { readonly name: string; readonly in: string; readonly schema: { examples?: Array<unknown> } }
  >
  readonly requestBody?: {
    readonly content: { readonly "application/json": { readonly schema: { readonly $ref: string } } }
  }
}

const operation = (id: string): Operation => {
  for (const methods of Object.values(doc.paths)) {
    for (const op of Object.values(methods)) if (op.operationId === id) return op
  }
  throw new Error(`no operation ${id}`)
}

/** The documented example of the parameters `in` the path or query, as strings. */
const exampleParams = (op: Operation, where: "path" | "query") =>
  Object.fromEntries(
    op.parameters.filter((p) => p.in === where && p.schema.examples !== undefined).map((p) => [
      p.name,
      String(p.schema.examples![0])
    ])
  )

const ok = <A>(result: Either.Either<A, { readonly message: string }>): A => {
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

const problem = <A>(result: Either.Either<A, { readonly message: string }>): string => {
  if (Either.isRight(result)) throw new Error(`expected a 400, got ${JSON.stringify(result.right)}`)
  return result.left.message
}

describe("the documented examples", () => {
  const groups = [["read", ReadGroup], ["admin", AdminApiGroup]] as const
  for (const [name, group] of groups) {
    for (const endpoint of Object.values(group.endpoints)) {
      it(`${name}.${endpoint.name}: every part of the request has a valid example`, () => {
        const op = operation(`${name}.${endpoint.name}`)
        if (endpoint.payloadSchema._tag === "Some") {
          const ref = op.requestBody!.content["application/json"].schema.$ref.split("/").pop()!
          const examples = doc.components.schemas[ref]!.examples
          expect(examples?.length, ref).toBeGreaterThan(0)
          for (const example of examples!) ok(decodeRequest(endpoint.payloadSchema.value as never)(example))
        }
        if (endpoint.urlParamsSchema._tag === "Some") {
          const params = exampleParams(op, "query")
          // parameters that are all optional (remember-runs/{id}'s db) need no example
          if (op.parameters?.some((p: { in: string; required?: boolean }) => p.in === "query" && p.required)) {
            expect(Object.keys(params).length).toBeGreaterThan(0)
          }
          ok(decodeRequest(endpoint.urlParamsSchema.value as never)(params))
        }
        if (endpoint.pathSchema._tag === "Some") {
          ok(decodeRequest(endpoint.pathSchema.value as never)(exampleParams(op, "path")))
        }
      })
    }
  }

  it("the request bodies document the wire's shape (models and reasoning as stage maps)", () => {
    const [example] = doc.components.schemas["QueryRequest"]!.examples!
    expect(example).toMatchObject({ reasoning: { query: "none" } })
    expect(ok(decodeRequest(QueryRequest)(example))).toMatchObject({ reasoning: "none", limit: 20 })
    expect(ok(decodeRequest(SearchRequest)(doc.components.schemas["SearchRequest"]!.examples![0]))).toMatchObject({
      user_id: "alice",
      limit: 10
    })
  })
})

describe("URL parameters", () => {
  it("the documented limits of a user_id say what the server enforces: control characters by a pattern", () => {
    const doc = JSONSchema.make(UserId) as { pattern: string; maxLength: number; description: string }
    const pattern = new RegExp(doc.pattern, "u")
    expect(pattern.test("alice")).toBe(true)
    expect(pattern.test("ali\u0007ce")).toBe(false)
    expect(pattern.test("ali\u0085ce")).toBe(false)
    expect(doc.maxLength).toBe(256)
    expect(doc.description).toMatch(/256 bytes/)
    expect(problem(decodeRequest(UserParams)({ user_id: "ali\u0007ce" }))).toMatch(/control characters/)
  })

  it("in a JSON body an integer or a boolean is JSON's own: \"10\" and \"true\" are 400s; a URL's words are read", () => {
    expect(problem(decodeRequest(SearchRequest)({ user_id: "u", query: "q", limit: "10" }))).toMatch(
      /^limit must be an integer/
    )
    expect(problem(decodeRequest(SearchRequest)({ user_id: "u", query: "q", include_expired: "true" }))).toBe(
      "include_expired must be a boolean"
    )
    expect(ok(decodeRequest(SearchRequest)({ user_id: "u", query: "q", limit: 10, include_expired: true })))
      .toMatchObject({ limit: 10, include_expired: true })
    expect(ok(decodeRequest(GraphRequest)({ user_id: "u", include_expired: "true" })).include_expired).toBe(true)
    expect(ok(decodeRequest(GraphRequest)({ user_id: "u", include_expired: "false" })).include_expired).toBe(false)
    // the words true and false only, as a validating proxy reads a boolean parameter
    for (const word of ["0", "1", "", "TRUE", " true"]) {
      expect(problem(decodeRequest(GraphRequest)({ user_id: "u", include_expired: word }))).toBe(
        "include_expired must be a boolean"
      )
    }
    expect(problem(decodeRequest(RunsRequest)({ limit: " 10" }))).toMatch(/^limit must be an integer/)
    expect(problem(decodeRequest(GraphRequest)({ user_id: "u", include_expired: "perhaps" }))).toBe(
      "include_expired must be a boolean"
    )
  })

  it("a repeated parameter is refused, naming it; an unknown one too, with the closest known one", () => {
    expect(problem(decodeRequest(GraphRequest)({ user_id: ["alice", "mallory"] }))).toBe(
      "user_id is given more than once"
    )
    expect(ok(decodeRequest(GraphRequest)({ user_id: ["alice"] }))).toMatchObject({ user_id: "alice" })
    expect(problem(decodeRequest(GraphRequest)({ user_id: "alice", include_expird: "1" }))).toBe(
      "unknown field \"include_expird\" (did you mean \"include_expired\"?)"
    )
  })

  it("an empty parameter is a value on every endpoint, judged by its field", () => {
    expect(problem(decodeRequest(UserParams)({ user_id: "" }))).toBe("user_id must not be empty")
    expect(problem(decodeRequest(GraphRequest)({ user_id: "u", include_expired: "" }))).toBe(
      "include_expired must be a boolean"
    )
    expect(problem(decodeRequest(RunsRequest)({ db: "d", limit: "" }))).toMatch(/^limit must be an integer/)
    expect(ok(decodeRequest(RunsRequest)({})).db).toBeUndefined()
    expect(problem(decodeRequest(AdminGraphRequest)({ db: "d", dataset_id: "" }))).toMatch(
      /^dataset_id must be an integer/
    )
  })

  it("the client's side: a request encodes to the parameters it decodes from", () => {
    const request = ok(decodeRequest(GraphRequest)({ user_id: "alice", include_expired: "true", kind: "episode" }))
    const params = Schema.encodeSync(GraphRequest)(request)
    expect(params).toEqual({
      format: "json",
      user_id: "alice",
      dataset: "main",
      include_expired: "true",
      kind: "episode"
    })
    expect(ok(decodeRequest(GraphRequest)(params))).toEqual(request)
  })
})

describe("paths", () => {
  it("a dataset's name in the path is checked as any dataset name, and named so", () => {
    expect(ok(decodeRequest(DatasetPath)({ name: "scratch pad" }))).toEqual({ name: "scratch pad" })
    expect(problem(decodeRequest(DatasetPath)({ name: "a\nb" }))).toBe("dataset must not contain control characters")
    expect(problem(decodeRequest(DatasetPath)({ name: "x".repeat(129) }))).toBe("dataset must be at most 128 bytes")
  })

  it("a run's id is a positive integer", () => {
    expect(ok(decodeRequest(RunPath)({ id: "12" }))).toEqual({ id: 12 })
    for (const id of ["0", "-1", "1.5", "abc", "1".repeat(16)]) {
      expect(problem(decodeRequest(RunPath)({ id })), id).toBe("id must be a positive integer")
    }
  })
})

describe("the usage request reads the clock for its defaults", () => {
  it("as HttpApi decodes it (the fiber's clock) and as validateUsageRequest does (a given time)", () => {
    const now = Date.parse("2026-03-10T12:00:00Z")
    expect(ok(validateUsageRequest({ db: "d" }, now))).toEqual({
      db: "d",
      from: "2026-03-03T12:00:00.000Z",
      to: "2026-03-10T12:00:00.000Z",
      bucket: "day"
    })
    const decoded = Schema.decodeUnknownEither(UsageRequest)({
      db: "d",
      from: "2026-03-10T00:00:00Z",
      to: "2026-03-10T06:00:00Z"
    })
    expect(Either.map(decoded, (r) => r.bucket)).toEqual(Either.right("hour"))
    const backwards = Schema.decodeUnknownEither(UsageRequest)({
      db: "d",
      from: "2026-03-10T06:00:00Z",
      to: "2026-03-10T00:00:00Z"
    })
    expect(Either.mapLeft(backwards, formatParseError)).toEqual(Either.left("from must be before to"))
  })
})
