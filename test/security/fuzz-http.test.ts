/**
 * Hostile input over HTTP (issue 13, item 2): POST /v1/gb/remember, /v1/gb/search and
 * /v1/gb/query (and the eval remember) fuzzed with fast-check over the in-process server, with
 * a scripted model that always answers valid JSON and SQLite in memory. Random JSON, right keys
 * of wrong types, ids with control characters and lone surrogates, huge strings, deep nesting,
 * invalid UTF-8, oversized bodies (declared, chunked, lying) and slow clients.
 *
 * The property: every answer is a 200 success or a 4xx `{"error": string}` (a 503 only for a
 * feature this server lacks), never a 500 and never a hang (each request has a deadline), and
 * a refused request stores nothing.
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Effect, type Fiber, Layer, Logger, LogLevel, ManagedRuntime, Supervisor } from "effect"
import * as fc from "fast-check"
import { createServer, type IncomingHttpHeaders, request as httpRequest, type ServerOptions } from "node:http"
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { LlmScript } from "../../layers/testing/ScriptedLlm.js"
import { Authentication } from "../../src/auth/Authentication.js"
import { MAX_LABEL_BYTES, MAX_TEXT_BYTES, MAX_USER_ID_BYTES } from "../../src/domain/Remember.js"
import { IMAGE_BODY_LIMIT, TEXT_BODY_LIMIT } from "../../src/http/Handlers.js"
import { HttpAppLive } from "../../src/http/Http.js"
import { READ_BODY_LIMIT } from "../../src/http/ReadHandlers.js"
import { McpSettings } from "../../src/mcp/settings.js"
import { MAX_QUERY_BYTES } from "../../src/query/requests.js"
import { rememberLayer } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { serveTest } from "../support/http.js"

const REMEMBER = "/v1/gb/remember"
const EVAL = "/v1/gb/eval/remember"
const SEARCH = "/v1/gb/search"
const QUERY = "/v1/gb/query"
const ENDPOINTS = [REMEMBER, EVAL, SEARCH, QUERY] as const

/** A hang is a failure: no request may take longer than this (a generous bound, not a timing). */
const DEADLINE_MS = 20_000

/** Valid answers for every stage, so that only the request decides the outcome. */
const script: LlmScript = (request) => {
  switch (request.stage) {
    case "extract_graph":
      return { text: JSON.stringify({ entities: [{ name: "Alice", type: "person" }], edges: [] }) }
    case "resolve_edges":
      return { text: JSON.stringify({ duplicates: [], contradictions: [] }) }
    case "summarize_chunk":
      return { text: "A part about Alice." }
    case "query":
      return { text: JSON.stringify({ answer: "Not known.", citations: [] }) }
    case "detect_geo":
      return { text: JSON.stringify({ places: [] }) }
    case "resolve_series":
      return { text: JSON.stringify({ fetches: [] }) }
    default:
      return { text: "{}" }
  }
}

// ---------------------------------------------------------------------------------------------
// A client with a deadline, and the checks every answer gets

interface Answer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly text: string
}

/**
 * POSTs `body` on a fresh connection: with its content-length, or chunked (no content-length)
 * when given as several chunks. Rejects when there is no answer by the deadline.
 */
const post = (port: number, path: string, body: string | Uint8Array | ReadonlyArray<string | Uint8Array>) =>
  new Promise<Answer>((resolve, reject) => {
    const chunked = Array.isArray(body)
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      path,
      method: "POST",
      agent: false,
      headers: {
        "content-type": "application/json",
        ...(chunked ? {} : { "content-length": Buffer.byteLength(body as string | Uint8Array) })
      }
    })
    const guard = setTimeout(
      () => req.destroy(new Error(`no answer to POST ${path} in ${DEADLINE_MS} ms: a hang`)),
      DEADLINE_MS
    )
    req.on("error", (e) => {
      clearTimeout(guard)
      reject(e)
    })
    req.on("response", (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("error", reject)
      res.on("end", () => {
        clearTimeout(guard)
        resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") })
      })
    })
    if (chunked) {
      for (const chunk of body as ReadonlyArray<string | Uint8Array>) req.write(chunk)
      req.end()
    } else {
      req.end(body)
    }
  })

const getStatus = (port: number, path: string) =>
  new Promise<number>((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode!))
    })
    req.setTimeout(DEADLINE_MS, () => req.destroy(new Error(`no answer to GET ${path}`)))
    req.on("error", reject)
    req.end()
  })

/** The one error shape: exactly `{"error": "<message>"}` as JSON, no stack trace. */
const expectError = (res: Answer, what: string) => {
  expect(res.headers["content-type"], what).toContain("application/json")
  const json = JSON.parse(res.text)
  expect(Object.keys(json), what).toEqual(["error"])
  expect(typeof json.error, what).toBe("string")
  expect(json.error.length, what).toBeGreaterThan(0)
  expect(json.error, what).not.toMatch(/\n\s+at /)
}

/** A success (a JSON object, no `error`) or an error in its one shape; never a 5xx but a 503. */
const expectAnswer = (res: Answer, what: string) => {
  const label = `${what} -> ${res.status} ${res.text.slice(0, 300)}`
  if (res.status === 200) {
    const json = JSON.parse(res.text)
    expect(typeof json === "object" && json !== null && !Array.isArray(json), label).toBe(true)
    expect(json, label).not.toHaveProperty("error")
    return
  }
  // 503: a feature this test server does not have (web_search, timeseries providers)
  expect(res.status >= 400 && res.status < 500 || res.status === 503, label).toBe(true)
  expectError(res, label)
}

const describeBody = (body: string | Uint8Array) =>
  typeof body === "string" ? `body ${JSON.stringify(body.slice(0, 200))}` : `${body.length} bytes`

// ---------------------------------------------------------------------------------------------
// Hostile values

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
const bytes = (s: string) => Buffer.byteLength(s, "utf8")

/** The label rules (contracts section 9): non-empty, bounded in bytes, no control characters, valid Unicode. */
const validLabel = (s: string, maxBytes = MAX_LABEL_BYTES) =>
  s.length > 0 && bytes(s) <= maxBytes && !CONTROL.test(s) && !LONE_SURROGATE.test(s)
const validUserId = (s: string) => s.trim() !== "" && validLabel(s, MAX_USER_ID_BYTES)
/** A text is stored as is: not blank, no NUL, no lone surrogate. */
const storableText = (s: string, maxBytes: number) =>
  s.trim() !== "" && bytes(s) <= maxBytes && !s.includes("\u0000") && !LONE_SURROGATE.test(s)

const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))
const nasty = fc.constantFrom(
  "\u0000",
  "\u0001",
  "\n",
  "\r",
  "\t",
  "\u001b",
  "\u007f",
  "\u0085",
  "\u009f",
  "\u00a0",
  "\u2028",
  "\u202e",
  "\ufeff",
  "\ud800",
  "\udbff",
  "\udc00",
  "\udfff",
  "\ud83d\ude00",
  "é",
  "a",
  " ",
  "/",
  "..",
  "%00",
  "'",
  "\"",
  "\\"
)
/** Strings of any code units: control characters, lone and paired surrogates, and near-limit lengths. */
const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: codeUnit, maxLength: 40 }),
  fc.string({ unit: nasty, maxLength: 12 }),
  fc.constantFrom(
    "",
    " ",
    "main",
    "x".repeat(MAX_LABEL_BYTES),
    "x".repeat(MAX_LABEL_BYTES + 1),
    "é".repeat(65),
    "x".repeat(MAX_USER_ID_BYTES + 1)
  )
)

/** A value of any JSON type (strings hostile). */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(true, false, null, 0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER + 2, [], {})
)

/** Each field given a valid value or anything at all (or left out). */
const wrongTyped = (valid: Record<string, unknown>, extra: ReadonlyArray<string>) =>
  fc.record(
    Object.fromEntries(
      [...Object.keys(valid), ...extra].map((key) => [
        key,
        valid[key] === undefined ? anyValue : fc.oneof(fc.constant(valid[key]), anyValue)
      ])
    ),
    { requiredKeys: [] }
  )

const VALID_REMEMBER = { user_id: "alice", text: "Alice lives in Berlin." }
const VALID_SEARCH = { user_id: "alice", query: "Where does Alice live?" }
const REMEMBER_FIELDS = [
  "dataset",
  "session_id",
  "kind",
  "reference_time",
  "models",
  "reasoning",
  "web_search",
  "timeseries",
  "image"
]
const READ_FIELDS = ["dataset", "session_id", "as_of", "known_at", "include_expired", "kind", "limit", "hops"]

// ---------------------------------------------------------------------------------------------

describe("hostile request bodies", () => {
  let runtime: ManagedRuntime.ManagedRuntime<any, any>
  let port: number
  beforeAll(async () => {
    runtime = ManagedRuntime.make(serveTest(rememberLayer(sqliteLayer(), script)) as Layer.Layer<any, any, never>)
    const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
    port = (address as HttpServer.TcpAddress).port
  })
  afterAll(() => runtime.dispose())

  const TABLES = ["gb_remember_runs", "gb_artifacts", "gb_datasets"] as const
  const counts = () =>
    runtime.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.all(TABLES.map((t) =>
          Effect.map(sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${t}`), (r) =>
            Number(r[0]!.n))
        )))
    ).then(([runs, artifacts, datasets]) => ({ runs, artifacts, datasets }))

  /** Sends, checks the answer's shape, and that a refused request left no row behind. */
  const send = async (path: string, body: string | Uint8Array | ReadonlyArray<string | Uint8Array>) => {
    const what = `POST ${path} ${Array.isArray(body) ? "chunked" : describeBody(body as string | Uint8Array)}`
    const before = await counts()
    const res = await post(port, path, body)
    expectAnswer(res, what)
    const after = await counts()
    // refused before anything runs: no run, no dataset, no artifact
    if (res.status === 400 || res.status === 413) expect(after, what).toEqual(before)
    // refused later (a 503 or 422): still nothing stored
    if (res.status !== 200) expect([after.artifacts, after.datasets], what).toEqual([before.artifacts, before.datasets])
    return res
  }
  const sendJson = (path: string, body: unknown) => send(path, JSON.stringify(body))

  it("random JSON values on every endpoint", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS), fc.jsonValue(), async (path, value) => {
        await sendJson(path, value)
      }),
      { numRuns: 200 }
    )
  })

  it("any JavaScript value mapped to JSON", async () => {
    const value = fc.anything({ maxDepth: 3, withObjectString: true, withNullPrototype: true, withSparseArray: true })
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS), value, async (path, v) => {
        await send(path, JSON.stringify(v) ?? "null")
      }),
      { numRuns: 150 }
    )
  })

  it("remember: the right keys with values of any type", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(REMEMBER, EVAL),
        wrongTyped(VALID_REMEMBER, REMEMBER_FIELDS),
        async (path, body) => {
          await sendJson(path, body)
        }
      ),
      { numRuns: 150 }
    )
  })

  it("search and query: the right keys with values of any type", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(SEARCH, QUERY),
        wrongTyped(VALID_SEARCH, [...READ_FIELDS, "models", "reasoning"]),
        async (path, body) => {
          await sendJson(path, body)
        }
      ),
      { numRuns: 150 }
    )
  })

  it("ids with control characters, lone surrogates or too many bytes are a 400; valid ones are served", async () => {
    const ids = fc.record({
      user_id: fc.oneof(fc.constant("alice"), hostileString),
      dataset: fc.option(hostileString, { nil: undefined }),
      session_id: fc.option(hostileString, { nil: undefined })
    }, { requiredKeys: ["user_id"] })
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS), ids, async (path, id) => {
        const body = path === REMEMBER || path === EVAL ? { ...VALID_REMEMBER, ...id } : { ...VALID_SEARCH, ...id }
        const res = await sendJson(path, body)
        const valid = validUserId(id.user_id) &&
          (id.dataset === undefined || validLabel(id.dataset)) &&
          (id.session_id === undefined || validLabel(id.session_id))
        // a valid read of a dataset never written is a 404, not a 400
        const served = path === REMEMBER || path === EVAL ? [200] : [200, 404]
        expect(valid ? served : [400], `${JSON.stringify(id)}: ${res.text.slice(0, 200)}`).toContain(res.status)
      }),
      { numRuns: 200 }
    )
  })

  it("a text or query of any code units: exactly the storable ones are served", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(REMEMBER, SEARCH, QUERY), hostileString, async (path, text) => {
        const body = path === REMEMBER ? { user_id: "alice", text } : { user_id: "alice", query: text }
        const res = await sendJson(path, body)
        const served = storableText(text, path === REMEMBER ? MAX_TEXT_BYTES : MAX_QUERY_BYTES)
        expect(res.status, `${JSON.stringify(text)}: ${res.text.slice(0, 200)}`).toBe(served ? 200 : 400)
      }),
      { numRuns: 150 }
    )
  })

  it("a lone surrogate names no one: two ids that would both be stored as U+FFFD are refused", async () => {
    for (const user_id of ["\ud800", "\udc00", "a\udbff"]) {
      const res = await sendJson(REMEMBER, { user_id, text: "Alice lives in Berlin." })
      expect(res.status).toBe(400)
      expect(JSON.parse(res.text).error).toMatch(/user_id.*(Unicode|surrogate)/)
    }
  })

  // ---------------------------------------------------------------------------------------------

  const INVALID_UTF8 = [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x80], [0xf5, 0x80, 0x80, 0x80], [
    0xf0,
    0x9f,
    0x98
  ]]

  it("invalid UTF-8 inside a JSON string is a 400 naming UTF-8, not silently replaced", async () => {
    const where = fc.constantFrom("text", "user_id", "query")
    await fc.assert(
      fc.asyncProperty(
        where,
        fc.constantFrom(...INVALID_UTF8),
        fc.string({ maxLength: 10 }),
        async (field, bad, around) => {
          const path = field === "query" ? SEARCH : REMEMBER
          const fields: Record<string, string> = path === SEARCH
            ? { user_id: "alice", query: "x" }
            : { user_id: "alice", text: "x" }
          const head = JSON.stringify({ ...fields, [field]: around }).slice(0, -2) // up to the string's closing quote
          const body = Buffer.concat([Buffer.from(head), Buffer.from(bad), Buffer.from("\"}")])
          const res = await send(path, body)
          expect(res.status).toBe(400)
          expect(JSON.parse(res.text).error).toMatch(/UTF-8/)
        }
      ),
      { numRuns: 100 }
    )
  })

  it("random bytes as the body", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS), fc.uint8Array({ maxLength: 200 }), async (path, raw) => {
        const res = await send(path, raw)
        expect(res.status).toBe(400)
      }),
      { numRuns: 100 }
    )
  })

  it("a byte order mark before the JSON is accepted", async () => {
    const res = await send(
      REMEMBER,
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(VALID_REMEMBER))])
    )
    expect(res.status, res.text).toBe(200)
  })

  // ---------------------------------------------------------------------------------------------

  it("huge strings over the limits are refused (400 by field, 413 by body)", async () => {
    const MiB = 1024 * 1024
    const cases: ReadonlyArray<readonly [string, unknown, number, RegExp]> = [
      [REMEMBER, { user_id: "alice", text: "a".repeat(MAX_TEXT_BYTES + 1) }, 400, /text/],
      [REMEMBER, { user_id: "alice", text: "€".repeat(Math.ceil(MAX_TEXT_BYTES / 3) + 1) }, 400, /text/],
      [REMEMBER, { user_id: "u".repeat(MiB), text: "x" }, 400, /user_id/],
      [REMEMBER, { user_id: "alice", text: "x", dataset: "d".repeat(MiB) }, 400, /dataset/],
      [REMEMBER, { user_id: "alice", text: "x", session_id: "s".repeat(MiB) }, 400, /session_id/],
      [REMEMBER, { user_id: "alice", text: "x", models: { extract_graph: "m".repeat(MiB) } }, 400, /models/],
      [REMEMBER, { user_id: "alice", text: "x", reference_time: "2".repeat(MiB) }, 400, /reference_time/],
      [REMEMBER, { user_id: "alice", text: "x", kind: "k".repeat(MiB) }, 400, /kind/],
      [REMEMBER, { user_id: "alice", image: "A".repeat(6 * MiB) }, 400, /image/],
      [REMEMBER, { user_id: "alice", text: "a".repeat(TEXT_BODY_LIMIT) }, 413, /limit/],
      [REMEMBER, { user_id: "alice", image: "A".repeat(IMAGE_BODY_LIMIT) }, 413, /limit/],
      [EVAL, { user_id: "alice", text: "a".repeat(TEXT_BODY_LIMIT) }, 413, /limit/],
      [SEARCH, { user_id: "alice", query: "q".repeat(MAX_QUERY_BYTES + 1) }, 400, /query/],
      [QUERY, { user_id: "alice", query: "q".repeat(MAX_QUERY_BYTES + 1) }, 400, /query/],
      [SEARCH, { user_id: "alice", query: "q", pad: "p".repeat(READ_BODY_LIMIT) }, 413, /limit/],
      [QUERY, { user_id: "alice", query: "q".repeat(READ_BODY_LIMIT) }, 413, /limit/]
    ]
    for (const [path, body, status, message] of cases) {
      const res = await sendJson(path, body)
      expect(res.status, `${path} ${JSON.stringify(body).slice(0, 80)}: ${res.text.slice(0, 200)}`).toBe(status)
      expect(JSON.parse(res.text).error).toMatch(message)
    }
  })

  it("deep nesting (JSON.parse of 10,000+ levels) is a 400, in a known field or an unknown one", async () => {
    const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`
    const objects = (depth: number) => `${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}`
    const cases: ReadonlyArray<readonly [string, string, number]> = [
      [REMEMBER, nested(10_000), 400],
      [REMEMBER, nested(500_000), 400],
      [REMEMBER, `{"user_id": "alice", "text": ${nested(10_000)}}`, 400],
      [REMEMBER, `{"user_id": ${objects(10_000)}, "text": "x"}`, 400],
      [REMEMBER, `{"user_id": "alice", "text": "x", "models": ${objects(10_000)}}`, 400],
      [REMEMBER, `{"user_id": "alice", "text": "x", "reasoning": {"extract_graph": ${nested(10_000)}}}`, 400],
      [REMEMBER, `{"user_id": "alice", "text": "x", "timeseries": {"series": ${nested(10_000)}}}`, 400],
      [
        REMEMBER,
        `{"user_id": "alice", "text": "x", "timeseries": {"series": [{"key": "k", "points": [${nested(10_000)}]}]}}`,
        400
      ],
      [REMEMBER, `{"user_id": "alice", "text": "x", "unknown": ${nested(100_000)}}`, 400],
      [EVAL, `{"user_id": "alice", "text": "x", "unknown": ${objects(10_000)}}`, 400],
      [EVAL, `{"user_id": "alice", "text": ${objects(10_000)}}`, 400],
      [SEARCH, nested(30_000), 400],
      [SEARCH, `{"user_id": "alice", "query": "q", "as_of": ${nested(10_000)}}`, 400],
      [QUERY, `{"user_id": "alice", "query": "q", "models": {"query": ${nested(10_000)}}}`, 400],
      [QUERY, `{"user_id": "alice", "query": "q", "unknown": ${objects(5_000)}}`, 400]
    ]
    for (const [path, body, status] of cases) {
      const res = await send(path, body)
      expect(res.status, `${path} ${body.slice(0, 60)}: ${res.text.slice(0, 200)}`).toBe(status)
    }
  })

  // ---------------------------------------------------------------------------------------------
  // Oversized and malformed transfers, on raw sockets

  /** Writes `head` (and `rest` after it), then collects what the server sends until it closes or the deadline. */
  const raw = (head: string | Buffer, options: { readonly end?: boolean } = {}) =>
    new Promise<{ readonly text: string; readonly closed: boolean }>((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port })
      const chunks: Array<Buffer> = []
      const done = (closed: boolean) => {
        clearTimeout(guard)
        socket.destroy()
        resolve({ text: Buffer.concat(chunks).toString("latin1"), closed })
      }
      // an answer (one full response) is enough; the connection may be kept open for the unread body
      const guard = setTimeout(
        () => (chunks.length > 0 ? done(false) : reject(new Error("no answer: a hang"))),
        DEADLINE_MS
      )
      socket.on("data", (c: Buffer) => {
        chunks.push(c)
        const text = Buffer.concat(chunks).toString("latin1")
        const m = /content-length: (\d+)\r\n[\s\S]*?\r\n\r\n/i.exec(text)
        if (m !== null && text.length >= m.index + m[0].length + Number(m[1])) done(false)
      })
      socket.on("end", () => done(true))
      socket.on("error", () => done(true))
      socket.write(head)
      if (options.end === true) socket.end()
    })

  const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? NaN)

  it("a declared content-length over the limit is a 413 before the body is sent", async () => {
    for (
      const [path, length] of [[REMEMBER, 100 * 1024 * 1024], [SEARCH, 10 * 1024 * 1024], [
        QUERY,
        READ_BODY_LIMIT + 1
      ]] as const
    ) {
      const before = await counts()
      const answer = await raw(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`
      )
      expect(statusOf(answer.text), answer.text.slice(0, 200)).toBe(413)
      expect(await counts()).toEqual(before)
    }
  })

  it("a chunked body over the limit is a 413 (or, far over it, a cut connection), never a hang", async () => {
    const MiB = 1024 * 1024
    const filler = (n: number) => Array.from({ length: n }, () => "A".repeat(MiB))
    const read = await send(SEARCH, [
      "{\"user_id\": \"alice\", \"query\": \"",
      ...filler(1).map((s) => s.slice(0, 100_000)),
      "\"}"
    ])
    expect(read.status).toBe(413)
    const remember = await send(REMEMBER, ["{\"user_id\": \"alice\", \"image\": \"", ...filler(8), "\"}"])
    expect(remember.status).toBe(413)
    // past the drain limit the server stops reading: a 413 or a reset, but an answer either way
    for (const [path, chunks] of [[REMEMBER, filler(4 * IMAGE_BODY_LIMIT / MiB + 2)], [SEARCH, filler(2)]] as const) {
      const before = await counts()
      const outcome = await post(port, path, chunks).then(
        (r) => r.status,
        (e: NodeJS.ErrnoException) => e.code ?? e.message
      )
      expect([413, "ECONNRESET", "EPIPE"], `${path}: ${outcome}`).toContain(outcome)
      expect(await counts()).toEqual(before)
    }
  })

  it("a content-length shorter than the body: the first request is judged on its declared bytes", async () => {
    const body = JSON.stringify(VALID_REMEMBER)
    const answer = await raw(
      `POST ${REMEMBER} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n${body}`
    )
    expect(statusOf(answer.text), answer.text.slice(0, 200)).toBe(400)
  })

  it("a body cut short by the client (it closes its side) is answered or dropped, and stores nothing", async () => {
    const before = await counts()
    const answer = await raw(
      `POST ${REMEMBER} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"user_id": "alice", "text": "x`,
      { end: true }
    )
    const status = statusOf(answer.text)
    if (!Number.isNaN(status)) expect(status, answer.text.slice(0, 200)).toBe(400)
    expect(answer.closed || !Number.isNaN(status)).toBe(true)
    expect(await counts()).toEqual(before)
  })

  it("still serves after all of it", async () => {
    expect(await getStatus(port, "/healthz")).toBe(200)
    expect((await sendJson(REMEMBER, VALID_REMEMBER)).status).toBe(200)
  })
})

// ---------------------------------------------------------------------------------------------
// Slow and vanishing clients

describe("slow clients, on a server with a short request timeout", () => {
  /**
   * Short deadlines so the test sees the cut-off. `gligabao serve` (src/cli/main.ts) runs on
   * node's defaults: a request may take 300 s to arrive and its headers 60 s.
   */
  const SERVER: ServerOptions = { requestTimeout: 1_500, headersTimeout: 1_000, connectionsCheckingInterval: 100 }
  /** the model answers after this: longer than the request timeout */
  const LLM_DELAY_MS = 2_500
  let runtime: ManagedRuntime.ManagedRuntime<any, any>
  let port: number
  let supervisor: Supervisor.Supervisor<Array<Fiber.RuntimeFiber<any, any>>>

  beforeAll(async () => {
    // every fiber the server forks (one per request) is tracked, to see that none outlives its request
    supervisor = await Effect.runPromise(Supervisor.track)
    const app = HttpAppLive.pipe(
      Layer.provideMerge(NodeHttpServer.layer(() => createServer(SERVER), { port: 0, host: "127.0.0.1" })),
      Layer.provideMerge(rememberLayer(sqliteLayer(), script, { llmDelayMs: () => LLM_DELAY_MS })),
      Layer.provide(Layer.mergeAll(
        Authentication.off,
        McpSettings.default,
        Supervisor.addSupervisor(supervisor),
        Logger.minimumLogLevel(LogLevel.Warning)
      ))
    )
    runtime = ManagedRuntime.make(app as Layer.Layer<any, any, never>)
    const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
    port = (address as HttpServer.TcpAddress).port
  })
  afterAll(() => runtime.dispose())

  const rows = () =>
    runtime.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: number }>("SELECT COUNT(*) AS n FROM gb_artifacts"))
    )
      .then((r) => Number(r[0]!.n))
  const fibers = () => Effect.runPromise(supervisor.value).then((live) => live.length)

  /**
   * Whether the live fibers come back down to `baseline` in time: a bound for "eventually"
   * (a request's fiber ends at once, a remember run after its model call), not a timing.
   */
  const settlesTo = async (baseline: number) => {
    for (let waited = 0; waited < 3 * LLM_DELAY_MS; waited += 50) {
      if ((await fibers()) <= baseline) return true
      await new Promise((r) => setTimeout(r, 50))
    }
    return false
  }

  /**
   * Sends `head`, then `trickle` one byte every `everyMs`; resolves with what the server sent
   * once it closes the connection (rejects at the deadline: a hang).
   */
  const stall = (head: string, trickle = "", everyMs = 200) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port })
      const chunks: Array<Buffer> = []
      let i = 0
      const timer = setInterval(() => {
        if (i < trickle.length && !socket.destroyed) socket.write(trickle[i++]!)
      }, everyMs)
      const guard = setTimeout(() => {
        clearInterval(timer)
        socket.destroy()
        reject(new Error("the server never cut off the stalled request"))
      }, DEADLINE_MS)
      socket.on("data", (c: Buffer) => chunks.push(c))
      socket.on("close", () => {
        clearInterval(timer)
        clearTimeout(guard)
        resolve(Buffer.concat(chunks).toString("latin1"))
      })
      socket.on("error", () => {})
      socket.write(head)
    })

  /** Sends `head` and closes the connection after `afterMs`, as a client that gives up. */
  const abandon = (head: string, afterMs: number) =>
    new Promise<void>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port })
      socket.on("error", () => {})
      socket.write(head)
      setTimeout(() => {
        socket.destroy()
        resolve()
      }, afterMs)
    })

  const postHead = (path: string, length: number) =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`

  it("a body that stops coming is cut off with 408, and nothing is stored", async () => {
    const before = await rows()
    expect(await stall(`${postHead(REMEMBER, 100)}{"user_id":`)).toMatch(/^HTTP\/1\.1 408/)
    expect(await rows()).toBe(before)
  })

  it("a body trickled a byte at a time does not extend the deadline", async () => {
    const body = JSON.stringify({ user_id: "alice", query: "x".repeat(200) })
    expect(await stall(postHead(SEARCH, body.length), body)).toMatch(/^HTTP\/1\.1 408/)
  })

  it("headers that never end are cut off", async () => {
    expect(await stall(`POST ${REMEMBER} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `, "a".repeat(200))).toMatch(
      /^HTTP\/1\.1 408/
    )
  })

  it("a slow pipeline is not cut off: the timeout is for receiving the request only", async () => {
    const res = await post(port, REMEMBER, JSON.stringify(VALID_REMEMBER))
    expect(res.status, res.text).toBe(200)
  })

  it("a finished request leaves no fiber behind (the baseline of the checks below)", async () => {
    const baseline = await fibers()
    expect((await post(port, SEARCH, JSON.stringify(VALID_SEARCH))).status).not.toBe(500)
    expect(await settlesTo(baseline)).toBe(true)
  })

  // The last-resort middleware of src/http/Http.ts once answered an interrupted request (the
  // client went away) with a JSON 503; writing a body to a closed socket never calls back, so
  // the request's fiber waited forever (about 33 KB each). A client abort now gets an empty 499.
  it("a request whose body never finishes (cut off, or its client gone) leaves no fiber behind", async () => {
    const baseline = await fibers()
    await stall(`${postHead(SEARCH, 100)}{"user_id":`)
    await abandon(`${postHead(REMEMBER, 100)}{"user_id":`, 200)
    expect(await settlesTo(baseline)).toBe(true)
  })

  it("a remember whose client gives up while the model works leaves no fiber behind once its run ends", async () => {
    const baseline = await fibers()
    const body = JSON.stringify(VALID_REMEMBER)
    await abandon(`${postHead(REMEMBER, Buffer.byteLength(body))}${body}`, 300)
    expect(await settlesTo(baseline)).toBe(true)
  })
})
