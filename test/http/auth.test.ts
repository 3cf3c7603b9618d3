/**
 * Authentication over HTTP, in process (spec/contracts.md section 20): with `[auth]` tokens every
 * endpoint but the public ones needs a bearer token (a sweep over the whole API, so a new
 * endpoint cannot be added without it), a user token acts for its user only (403 otherwise,
 * nothing stored), another user's run is as absent as a missing one, the admin API needs the
 * admin token and the admin token opens nothing else, paths the router reads differently from
 * URL do not get around any of it, and no token ever comes back in a response.
 */
import { HttpClientRequest, HttpServer } from "@effect/platform"
import { layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { createHash } from "node:crypto"
import { connect } from "node:net"
import { expect } from "vitest"
import { type LlmScript, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { Authentication } from "../../src/auth/Authentication.js"
import { tokenTable } from "../../src/auth/tokens.js"
import type { AuthToken } from "../../src/config/tables.js"
import { GligabaoApi } from "../../src/http/Api.js"
import { graph, rememberLayer, resolution } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { expectError, send, serveTest, type TestResponse } from "../support/http.js"

const SECRETS = {
  alice: "alice-token-Q7vX2",
  bob: "bob-token-M4kP9",
  admin: "admin-token-Z8rT1",
  carol: "carol-token-H3wN6"
}

const TOKENS: ReadonlyArray<AuthToken> = [
  { kind: "plain", secret: Redacted.make(SECRETS.alice), admin: false, userId: "alice" },
  { kind: "plain", secret: Redacted.make(SECRETS.bob), admin: false, userId: "bob" },
  { kind: "plain", secret: Redacted.make(SECRETS.admin), admin: true },
  // configured as sha256:<hex>: the server never sees carol's token itself
  {
    kind: "sha256",
    secret: Redacted.make(createHash("sha256").update(SECRETS.carol).digest("hex")),
    admin: false,
    userId: "carol"
  }
]

const script: LlmScript = (request) => {
  switch (request.stage) {
    case "extract_graph":
      return graph([{ name: "Alice Smith", type: "person" }, { name: "Berlin", type: "place" }], [{
        source: "Alice Smith",
        target: "Berlin",
        relation: "lives in"
      }])
    case "resolve_edges":
      return resolution([], [])
    case "query": {
      const facts = JSON.parse(request.messages[0]!.content as string).facts as Array<{ id: number }>
      return ScriptedLlm.json({ answer: "In Berlin.", citations: facts.slice(0, 1).map((f) => f.id) })
    }
    default:
      return { fail: { message: `unexpected stage ${request.stage}` } }
  }
}

const app = serveTest(
  Layer.merge(rememberLayer(sqliteLayer(), script), Layer.succeed(Authentication, tokenTable(TOKENS)))
)

// every response of the file, to check that no token ever comes back
const seen: Array<string> = []

type Who = keyof typeof SECRETS | "none" | { readonly header: string }

const call = (method: "GET" | "POST" | "DELETE", path: string, who: Who, body?: unknown) =>
  Effect.gen(function*() {
    let request = method === "GET"
      ? HttpClientRequest.get(path)
      : method === "POST"
      ? HttpClientRequest.post(path)
      : HttpClientRequest.del(path)
    if (body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, body)
    if (typeof who === "object") request = HttpClientRequest.setHeader(request, "authorization", who.header)
    else if (who !== "none") request = HttpClientRequest.bearerToken(request, SECRETS[who])
    const res = yield* send(request)
    seen.push(`${res.status} ${JSON.stringify(res.headers)} ${res.text}`)
    return res
  })

const GET = (path: string, who: Who) => call("GET", path, who)
const POST = (path: string, who: Who, body: unknown) => call("POST", path, who, body)
const DELETE = (path: string, who: Who) => call("DELETE", path, who)

const expectUnauthorized = (res: TestResponse, message?: RegExp) => {
  expectError(res, 401, message)
  expect(res.headers["www-authenticate"]).toMatch(/^Bearer realm=/)
}

/** A request as sent on the wire, path untouched (the HTTP client would normalize it). */
const raw = (target: string, token?: string) =>
  Effect.flatMap(HttpServer.HttpServer, (server) =>
    Effect.async<{ status: number; text: string }>((resume) => {
      const port = (server.address as HttpServer.TcpAddress).port
      const socket = connect(port, "127.0.0.1", () => {
        const auth = token === undefined ? "" : `Authorization: Bearer ${token}\r\n`
        socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Connection: close\r\n\r\n`)
      })
      let out = ""
      socket.on("data", (chunk) => (out += chunk.toString("utf8")))
      socket.on("end", () => {
        seen.push(out)
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? NaN)
        resume(Effect.succeed({ status, text: out.slice(out.indexOf("\r\n\r\n") + 4) }))
      })
      socket.on("error", (e) => resume(Effect.die(e)))
    }))

// ---------------------------------------------------------------------------------------------
// the sweep: every endpoint of the contract, found by reflection

interface Endpoint {
  readonly group: string
  readonly name: string
  readonly method: string
  readonly path: string
}

const ENDPOINTS: ReadonlyArray<Endpoint> = Object.values(GligabaoApi.groups).flatMap((group) =>
  Object.values(group.endpoints).map((endpoint) => ({
    group: group.identifier,
    name: endpoint.name,
    method: endpoint.method,
    // a concrete path for each parameter
    path: endpoint.path.replace(/:id\b/g, "1").replace(/:name\b/g, "main")
  }))
)

/** Holds no user data: liveness and the admin page's static code. */
const PUBLIC_GROUPS = new Set(["health", "adminPage"])

const sweepRequest = (endpoint: Endpoint, who: Who) =>
  Effect.gen(function*() {
    // a plausible request: a user id in the query and a body where one is expected
    const path = endpoint.group === "adminPage" && endpoint.name === "asset"
      ? endpoint.path.replace(/main$/, "admin.js")
      : `${endpoint.path}?user_id=alice&db=default&dataset=main`
    let request = HttpClientRequest.make(endpoint.method as "GET")(path)
    if (endpoint.method === "POST") {
      request = HttpClientRequest.bodyUnsafeJson(request, {
        user_id: "alice",
        text: "Alice Smith lives in Berlin.",
        query: "Alice"
      })
    }
    if (typeof who === "object") request = HttpClientRequest.setHeader(request, "authorization", who.header)
    else if (who !== "none") request = HttpClientRequest.bearerToken(request, SECRETS[who])
    const res = yield* send(request)
    seen.push(`${res.status} ${JSON.stringify(res.headers)} ${res.text}`)
    return res
  })

layer(app, { excludeTestServices: true })("authentication", (it) => {
  it.effect("the sweep sees the whole API", () =>
    Effect.sync(() => {
      const names = ENDPOINTS.map((e) => `${e.group}.${e.name}`)
      // as of this writing; more is fine, fewer means the reflection broke
      expect(ENDPOINTS.length).toBeGreaterThanOrEqual(18)
      expect(ENDPOINTS.filter((e) => !PUBLIC_GROUPS.has(e.group)).length).toBeGreaterThanOrEqual(15)
      expect(names).toEqual(expect.arrayContaining([
        "remember.remember",
        "remember.evalRemember",
        "remember.getRun",
        "images.getImage",
        "health.healthz",
        "health.readyz",
        "read.search",
        "read.query",
        "read.graph",
        "read.listDatasets",
        "read.deleteDataset",
        "read.listSessions",
        "admin.databases",
        "admin.rememberRuns",
        "admin.inferences",
        "admin.datasets",
        "admin.graph",
        "adminPage.page",
        "adminPage.asset"
      ]))
    }))

  it.effect("every non-public endpoint: 401 {error} with www-authenticate without a token, with a wrong one, with another scheme", () =>
    Effect.gen(function*() {
      let checked = 0
      for (const endpoint of ENDPOINTS.filter((e) => !PUBLIC_GROUPS.has(e.group))) {
        const label = `${endpoint.method} ${endpoint.path}`
        const none = yield* sweepRequest(endpoint, "none")
        expect(none.status, label).toBe(401)
        expectUnauthorized(none, /authentication required/)
        expectUnauthorized(yield* sweepRequest(endpoint, { header: "Bearer not-a-token" }), /not valid/)
        expectUnauthorized(
          yield* sweepRequest(endpoint, {
            header: `Basic ${Buffer.from(`alice:${SECRETS.alice}`).toString("base64")}`
          }),
          /Bearer/
        )
        checked++
      }
      expect(checked).toBeGreaterThanOrEqual(15)
    }))

  it.effect("the public endpoints answer without a token (and ignore a wrong one)", () =>
    Effect.gen(function*() {
      for (const endpoint of ENDPOINTS.filter((e) => PUBLIC_GROUPS.has(e.group))) {
        for (const who of ["none", { header: "Bearer not-a-token" }] as const) {
          const res = yield* sweepRequest(endpoint, who)
          expect(res.status, `${endpoint.method} ${endpoint.path}`).toBe(200)
        }
      }
      for (
        const path of [
          "/healthz",
          "/readyz",
          "/openapi.json",
          "/docs",
          "/v1/gb/admin/",
          "/v1/gb/admin/assets/cytoscape.min.js"
        ]
      ) {
        expect((yield* GET(path, "none")).status, path).toBe(200)
      }
      expect((yield* GET("/healthz", "none")).json).toEqual({ status: "ok" })
      expect((yield* GET("/openapi.json", "none")).json.openapi).toMatch(/^3\./)
    }))

  it.effect("a user token acts for its user: remember, search, query, graph, datasets, sessions, delete", () =>
    Effect.gen(function*() {
      const remembered = yield* POST("/v1/gb/remember", "alice", {
        user_id: "alice",
        text: "Alice Smith lives in Berlin."
      })
      expect(remembered.status, remembered.text).toBe(200)
      const search = yield* POST("/v1/gb/search", "alice", { user_id: "alice", query: "Alice" })
      expect(search.status, search.text).toBe(200)
      expect(search.json.facts.length).toBeGreaterThan(0)
      const query = yield* POST("/v1/gb/query", "alice", { user_id: "alice", query: "Where does Alice live?" })
      expect(query.status, query.text).toBe(200)
      expect(query.json.answer).toBe("In Berlin.")
      expect((yield* GET("/v1/gb/graph?user_id=alice", "alice")).status).toBe(200)
      expect((yield* GET("/v1/gb/datasets?user_id=alice", "alice")).json.datasets.map((d: { name: string }) => d.name))
        .toContain("main")
      expect((yield* GET("/v1/gb/sessions?user_id=alice&dataset=main", "alice")).status).toBe(200)
      expect((yield* GET(`/v1/gb/runs/${remembered.json.remember_run_id}`, "alice")).status).toBe(200)
      // a lower-case scheme is the same scheme
      expect((yield* GET("/v1/gb/datasets?user_id=alice", { header: `bearer ${SECRETS.alice}` })).status).toBe(200)

      expect(
        (yield* POST("/v1/gb/remember", "alice", {
          user_id: "alice",
          dataset: "scratch",
          text: "Alice Smith lives in Berlin."
        })).status
      ).toBe(200)
      expect((yield* DELETE("/v1/gb/datasets/scratch?user_id=alice", "alice")).status).toBe(200)
    }))

  it.effect("a sha256-configured token works like a plain one", () =>
    Effect.gen(function*() {
      expect((yield* GET("/v1/gb/datasets?user_id=carol", "carol")).json).toEqual({ datasets: [] })
      expectError(yield* GET("/v1/gb/datasets?user_id=alice", "carol"), 403)
    }))

  it.effect("a user token acting for another user: 403 {error} on every user endpoint, nothing stored", () =>
    Effect.gen(function*() {
      const refused = /may not act for that user_id/
      expectError(
        yield* POST("/v1/gb/remember", "alice", { user_id: "mallory", text: "Mallory lives in Rome." }),
        403,
        refused
      )
      expectError(
        yield* POST("/v1/gb/eval/remember", "alice", { user_id: "mallory", text: "Mallory lives in Rome." }),
        403,
        refused
      )
      expectError(yield* POST("/v1/gb/search", "alice", { user_id: "mallory", query: "Rome" }), 403, refused)
      expectError(yield* POST("/v1/gb/query", "alice", { user_id: "mallory", query: "Rome?" }), 403, refused)
      expectError(yield* GET("/v1/gb/graph?user_id=mallory", "alice"), 403, refused)
      expectError(yield* GET("/v1/gb/datasets?user_id=mallory", "alice"), 403, refused)
      expectError(yield* GET("/v1/gb/sessions?user_id=mallory&dataset=main", "alice"), 403, refused)
      expectError(yield* DELETE("/v1/gb/datasets/main?user_id=mallory", "alice"), 403, refused)
      expectError(yield* GET("/v1/gb/images/1?user_id=bob&dataset=main", "alice"), 403, refused)
      // nothing was stored for mallory: no run, no dataset
      const runs = (yield* GET("/v1/gb/admin/api/remember-runs?db=default&user_id=mallory", "admin")).json
      expect(runs).toMatchObject({ runs: [], total: 0 })
      const datasets = (yield* GET("/v1/gb/admin/api/datasets?db=default&limit=500", "admin")).json.datasets
      expect(datasets.map((d: { user_id: string }) => d.user_id)).not.toContain("mallory")
    }))

  it.effect("another user's dataset cannot be deleted with one's own token", () =>
    Effect.gen(function*() {
      expect(
        (yield* POST("/v1/gb/remember", "bob", {
          user_id: "bob",
          dataset: "keep",
          text: "Alice Smith lives in Berlin."
        })).status
      ).toBe(200)
      expectError(yield* DELETE("/v1/gb/datasets/keep?user_id=bob", "alice"), 403)
      expect((yield* GET("/v1/gb/datasets?user_id=bob", "bob")).json.datasets.map((d: { name: string }) => d.name))
        .toContain("keep")
    }))

  it.effect("GET /v1/gb/runs/{id}: another user's run is a 404 like a missing one; the owner's a 200", () =>
    Effect.gen(function*() {
      const bobs = yield* POST("/v1/gb/remember", "bob", { user_id: "bob", text: "Alice Smith lives in Berlin." })
      expect(bobs.status).toBe(200)
      const id = bobs.json.remember_run_id as number
      const asAlice = yield* GET(`/v1/gb/runs/${id}`, "alice")
      expectError(asAlice, 404)
      const missing = yield* GET("/v1/gb/runs/999999", "alice")
      expectError(missing, 404)
      // the same message, but for the id: nothing tells a foreign run from a missing one
      expect(asAlice.json.error.replace(String(id), "N")).toBe(missing.json.error.replace("999999", "N"))
      expect((yield* GET(`/v1/gb/runs/${id}`, "bob")).json).toMatchObject({ id, user_id: "bob", status: "succeeded" })
    }))

  it.effect("the admin API: a user token 403, the admin token 200; the admin token opens no user endpoint", () =>
    Effect.gen(function*() {
      for (
        const path of [
          "databases",
          "remember-runs?db=default",
          "inferences?db=default",
          "datasets?db=default",
          "graph?db=default&dataset_id=1"
        ]
      ) {
        expectError(yield* GET(`/v1/gb/admin/api/${path}`, "alice"), 403, /admin token/)
        expectError(yield* GET(`/v1/gb/admin/api/${path}`, "carol"), 403, /admin token/)
        expect((yield* GET(`/v1/gb/admin/api/${path}`, "admin")).status, path).toBe(200)
      }
      const adminOnly = /admin token opens the admin UI and API only/
      expectError(
        yield* POST("/v1/gb/remember", "admin", { user_id: "alice", text: "Alice Smith lives in Berlin." }),
        403,
        adminOnly
      )
      expectError(yield* POST("/v1/gb/search", "admin", { user_id: "alice", query: "Alice" }), 403, adminOnly)
      expectError(yield* GET("/v1/gb/datasets?user_id=alice", "admin"), 403, adminOnly)
      expectError(yield* GET("/v1/gb/runs/1", "admin"), 403, adminOnly)
      expectError(yield* GET("/v1/gb/images/1?user_id=alice&dataset=main", "admin"), 403, adminOnly)
    }))

  it.effect("a malformed request is a 400 before any 403 (validation comes first)", () =>
    Effect.gen(function*() {
      // observed: the body is validated before the caller is checked, whoever it names
      expectError(yield* POST("/v1/gb/remember", "alice", { user_id: "alice" }), 400, /text/)
      expectError(yield* POST("/v1/gb/remember", "alice", { user_id: "bob" }), 400, /text/)
      expectError(yield* POST("/v1/gb/search", "alice", { user_id: "bob" }), 400, /query is required/)
      expectError(yield* GET("/v1/gb/runs/abc", "alice"), 400, /id/)
      expectError(yield* GET("/v1/gb/admin/api/remember-runs?db=default&limit=0", "admin"), 400, /limit/)
      // but never before the 401: a stranger learns nothing about the request's shape
      expectUnauthorized(yield* POST("/v1/gb/remember", "none", { user_id: "alice" }))
    }))

  it.effect("paths the router reads differently from URL get around nothing", () =>
    Effect.gen(function*() {
      // `;` ends the path for the router, not for URL, which would see /healthz (public)
      for (
        const target of [
          "/v1/gb/admin/api/databases;/../../../../../healthz",
          "/v1/gb/admin/api/remember-runs;/../../../../../healthz?db=default",
          "/v1/gb/admin/api/datasets;/../../assets/admin.js?db=default",
          "/v1/gb/datasets;/../../../healthz?user_id=alice"
        ]
      ) {
        const res = yield* raw(target)
        expect(res.status, target).toBe(401)
        expect(res.text, target).not.toMatch(/"databases"|"counts"|"datasets"/)
      }
      // the router ignores case, collapses `//` and decodes `%xx`; URL does none of these
      for (
        const target of [
          "//v1/gb/admin/api/databases",
          "/V1/GB/ADMIN/API/databases",
          "/v1/gb/admin/%61pi/databases",
          "/v1/gb//admin/api/databases"
        ]
      ) {
        const res = yield* raw(target, SECRETS.alice)
        expect(res.status, target).toBe(403)
        expect(res.text, target).not.toMatch(/"databases"/)
        expect((yield* raw(target, SECRETS.admin)).status, target).toBe(200)
      }
      // a user token is refused before the parameters are decoded, however the path is spelled
      for (const target of ["/V1/GB/ADMIN/API/remember-runs/abc", "//v1/gb/admin/%61pi/remember-runs/abc"]) {
        expect((yield* raw(target, SECRETS.alice)).status, target).toBe(403)
        expect((yield* raw(target, SECRETS.admin)).status, target).toBe(400)
      }
      // the plain public paths stay public, also as an absolute-form target (as a proxy sends them)
      expect((yield* raw("/healthz")).status).toBe(200)
      expect((yield* raw("http://127.0.0.1/healthz")).status).toBe(200)
      expect((yield* raw("http://127.0.0.1/v1/gb/admin/api/databases;/../../../../../healthz")).status).toBe(401)
      expect((yield* raw("/v1/gb/admin/assets/admin.js")).status).toBe(200)
    }))

  it.effect("no response, body or header, ever contains a token", () =>
    Effect.sync(() => {
      // the earlier tests ran first (one file runs in order): make sure there is something to check
      expect(seen.length).toBeGreaterThan(100)
      const all = seen.join("\n")
      for (const secret of Object.values(SECRETS)) expect(all).not.toContain(secret)
      expect(all).not.toContain(createHash("sha256").update(SECRETS.carol).digest("hex"))
    }))
})
