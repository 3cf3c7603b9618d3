/**
 * Beside a browser (issue 37, items 1 and 2; docs/SECURITY.md): DNS rebinding (a foreign Host or
 * Origin) and cross-site "simple" writes (`text/plain` bodies) are refused and store nothing;
 * no CORS header unless `server.cors_origins` names the origin, which gets a preflight; a
 * deployment behind a proxy widens the lists. Requests go through node:http, so Host, Origin and
 * the content type are exactly what a browser page would send.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { Authentication } from "../../src/auth/Authentication.js"
import { tokenTable } from "../../src/auth/tokens.js"
import {
  hostAllowed,
  isJsonContentType,
  LOOPBACK_ONLY,
  normalizeOrigin,
  originAllowed,
  type RequestPolicy,
  RequestPolicyTag
} from "../../src/http/requestGuard.js"
import { graph, rememberLayer } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { sendRaw, serveTest } from "../support/http.js"

const script = () =>
  graph([{ name: "Alice Smith", type: "person" }, { name: "Paris", type: "place" }], [
    { source: "Alice Smith", target: "Paris", relation: "lives in", valid_at: null }
  ])
const TOKEN = "a-token-long-enough-for-the-rule-0123456789"

const app = (options: { readonly policy?: RequestPolicy; readonly auth?: boolean } = {}) => {
  // the tokens among the app's services, where serveTest looks for them (else authentication off)
  const tokens = Layer.succeed(
    Authentication,
    tokenTable([{ kind: "plain", secret: Redacted.make(TOKEN), admin: false, userId: "alice" }])
  )
  const services = rememberLayer(sqliteLayer(), () => script())
  const layer = serveTest(options.auth === true ? Layer.merge(services, tokens) : services)
  // the policy is a reference: provided from outside the app, as an embedding application does
  return options.policy === undefined
    ? layer
    : layer.pipe(Layer.provide(Layer.succeed(RequestPolicyTag, options.policy)))
}

const run = <A>(program: Effect.Effect<A, unknown, any>, options?: Parameters<typeof app>[0]) =>
  Effect.runPromise(program.pipe(Effect.provide(app(options))) as Effect.Effect<A>)

const stored = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ n: number }>`SELECT (SELECT COUNT(*) FROM gb_artifacts) + (SELECT COUNT(*) FROM gb_remember_runs) AS n`
).pipe(Effect.map((rows) => Number(rows[0]!.n)), Effect.orDie)

const REMEMBER = JSON.stringify({ user_id: "alice", text: "Alice Smith lives in Paris." })
const MCP_CALL = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "list_datasets", arguments: { user_id: "alice" } }
})
const json = { "content-type": "application/json" }

describe("the rules, as pure functions", () => {
  it("Host: loopback names with or without a port, and the allowed ones", () => {
    for (const h of ["localhost", "localhost:8080", "127.0.0.1", "127.0.0.1:80", "[::1]", "[::1]:8080", "LOCALHOST"]) {
      expect(hostAllowed(h, [])).toBe(true)
    }
    for (const h of ["evil.example.com", "evil.example.com:8080", "127.0.0.1.evil.com", "localhost.evil", "", "a b"]) {
      expect(hostAllowed(h, [])).toBe(false)
    }
    expect(hostAllowed("memory.example.com:443", ["memory.example.com"])).toBe(true)
  })

  it("Origin: the server's own, or listed; `null` and other schemes never", () => {
    expect(originAllowed("http://127.0.0.1:8080", "127.0.0.1:8080", LOOPBACK_ONLY)).toBe(true)
    expect(originAllowed("http://127.0.0.1:9999", "127.0.0.1:8080", LOOPBACK_ONLY)).toBe(false)
    expect(originAllowed("http://evil.example.com", "127.0.0.1:8080", LOOPBACK_ONLY)).toBe(false)
    expect(originAllowed("null", "127.0.0.1:8080", LOOPBACK_ONLY)).toBe(false)
    const policy = { ...LOOPBACK_ONLY, allowedOrigins: ["https://app.example.com"] }
    expect(originAllowed("https://app.example.com", "127.0.0.1:8080", policy)).toBe(true)
    expect(originAllowed("https://app.example.com:443", undefined, policy)).toBe(true)
    expect(normalizeOrigin("file://x")).toBeUndefined()
  })

  it("content types: application/json and +json, with parameters", () => {
    for (
      const t of [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/merge-patch+json"
      ]
    ) {
      expect(isJsonContentType(t)).toBe(true)
    }
    for (
      const t of [
        undefined,
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
        "application/jsonp"
      ]
    ) {
      expect(isJsonContentType(t)).toBe(false)
    }
  })
})

describe("DNS rebinding and cross-site writes, authentication off", () => {
  it("a foreign Host is refused on the API and on /mcp, and nothing is read or stored", () =>
    run(Effect.gen(function*() {
      const listed = yield* sendRaw({
        method: "GET",
        path: "/v1/gb/datasets?user_id=victim",
        headers: { host: "evil.example.com" }
      })
      expect(listed.status).toBe(403)
      expect(listed.json.error).toMatch(/host "evil\.example\.com" is not allowed/)
      const mcp = yield* sendRaw({
        method: "POST",
        path: "/mcp",
        headers: {
          host: "evil.example.com",
          origin: "http://evil.example.com",
          ...json,
          accept: "application/json, text/event-stream"
        },
        body: MCP_CALL
      })
      expect(mcp.status).toBe(403)
      const remember = yield* sendRaw({
        method: "POST",
        path: "/v1/gb/remember",
        headers: { host: "evil.example.com:8080", ...json },
        body: REMEMBER
      })
      expect(remember.status).toBe(403)
      expect(yield* stored).toBe(0)
    })))

  it("a foreign Origin is refused even with a loopback Host; the server's own origin is not", () =>
    run(Effect.gen(function*() {
      const foreign = yield* sendRaw({
        method: "POST",
        path: "/v1/gb/remember",
        headers: { host: "127.0.0.1:8080", origin: "http://evil.example.com", ...json },
        body: REMEMBER
      })
      expect(foreign.status).toBe(403)
      expect(foreign.json.error).toMatch(/origin "http:\/\/evil\.example\.com" is not allowed/)
      expect(yield* stored).toBe(0)
      const own = yield* sendRaw({
        method: "POST",
        path: "/v1/gb/remember",
        headers: { host: "127.0.0.1:8080", origin: "http://127.0.0.1:8080", ...json },
        body: REMEMBER
      })
      expect(own.status, own.text).toBe(200)
      // no CORS header unless configured
      expect(own.headers["access-control-allow-origin"]).toBeUndefined()
    })))

  it("a text/plain body (a page's simple request) is a 415 on every writing endpoint, nothing queued", () =>
    run(Effect.gen(function*() {
      for (
        const path of [
          "/v1/gb/remember",
          "/v1/gb/remember/batch",
          "/v1/gb/eval/remember",
          "/v1/gb/search",
          "/v1/gb/query",
          "/v1/gb/context",
          "/mcp"
        ]
      ) {
        for (const type of ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded"]) {
          const res = yield* sendRaw({ method: "POST", path, headers: { "content-type": type }, body: REMEMBER })
          expect({ path, type, status: res.status, body: res.json }).toEqual({
            path,
            type,
            status: 415,
            body: { error: "content-type must be application/json" }
          })
        }
      }
      const none = yield* sendRaw({ method: "POST", path: "/v1/gb/remember", body: REMEMBER })
      expect(none.status).toBe(415)
      expect(yield* stored).toBe(0)
      // a body-less DELETE needs no content type
      const del = yield* sendRaw({ method: "DELETE", path: "/v1/gb/artifacts/1?user_id=alice" })
      expect(del.status).toBe(404)
    })))
})

describe("a deployment's lists", () => {
  it("server.allowed_hosts and allowed_origins widen what is served", () =>
    run(
      Effect.gen(function*() {
        const res = yield* sendRaw({
          method: "POST",
          path: "/v1/gb/remember",
          headers: { host: "memory.example.com", origin: "https://app.example.com", ...json },
          body: REMEMBER
        })
        expect(res.status, res.text).toBe(200)
        const other = yield* sendRaw({ method: "GET", path: "/healthz", headers: { host: "other.example.com" } })
        expect(other.status).toBe(403)
      }),
      { policy: { allowedHosts: ["memory.example.com"], allowedOrigins: ["https://app.example.com"], corsOrigins: [] } }
    ))

  it("server.cors_origins: a correct preflight and CORS headers for those origins only", () =>
    run(
      Effect.gen(function*() {
        const preflight = yield* sendRaw({
          method: "OPTIONS",
          path: "/v1/gb/search",
          headers: {
            origin: "https://app.example.com",
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type, authorization"
          }
        })
        expect(preflight.status).toBe(204)
        expect(preflight.headers["access-control-allow-origin"]).toBe("https://app.example.com")
        expect(preflight.headers["access-control-allow-methods"]).toMatch(/POST/)
        expect(preflight.headers["access-control-allow-headers"]).toMatch(/content-type/)
        expect(preflight.headers["access-control-allow-headers"]).toMatch(/authorization/)
        const search = yield* sendRaw({
          method: "POST",
          path: "/v1/gb/search",
          headers: { origin: "https://app.example.com", ...json },
          body: JSON.stringify({ user_id: "alice", query: "" })
        })
        // an error answer carries the CORS headers too, so the page can read what went wrong
        // (a search of a dataset with nothing stored is a 200 since issue 40: an empty query is the error here)
        expect(search.status, search.text).toBe(400)
        expect(search.headers["access-control-allow-origin"]).toBe("https://app.example.com")
        expect(search.headers["vary"]).toMatch(/Origin/)
        const foreign = yield* sendRaw({
          method: "OPTIONS",
          path: "/v1/gb/search",
          headers: { origin: "https://evil.example.com", "access-control-request-method": "POST" }
        })
        expect(foreign.status).toBe(403)
        expect(foreign.headers["access-control-allow-origin"]).toBeUndefined()
      }),
      { policy: { allowedHosts: [], allowedOrigins: [], corsOrigins: ["https://app.example.com"] } }
    ))
})

describe("authentication on", () => {
  it("Host is the tokens' business, but /mcp still checks Origin", () =>
    run(
      Effect.gen(function*() {
        const bearer = { authorization: `Bearer ${TOKEN}` }
        const proxied = yield* sendRaw({
          method: "GET",
          path: "/v1/gb/datasets?user_id=alice",
          headers: { host: "memory.example.com", ...bearer }
        })
        expect(proxied.status, proxied.text).toBe(200)
        const mcp = yield* sendRaw({
          method: "POST",
          path: "/mcp",
          headers: {
            host: "memory.example.com",
            origin: "http://evil.example.com",
            ...bearer,
            ...json,
            accept: "application/json, text/event-stream"
          },
          body: MCP_CALL
        })
        expect(mcp.status).toBe(403)
        expect(mcp.json.error).toMatch(/origin/)
      }),
      { auth: true }
    ))
})
