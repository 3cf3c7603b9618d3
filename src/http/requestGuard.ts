/**
 * What a browser must not be able to do (docs/SECURITY.md, "Beside a browser"), as a global
 * middleware that runs before authentication and routing:
 * - DNS rebinding: with authentication off, a request whose `Host` is not a loopback name (or one
 *   of `server.allowed_hosts`) is refused, and so is one whose `Origin` is neither the server's own
 *   nor allowed; with tokens on, `Origin` is still checked on `/mcp`, as the MCP transport asks.
 * - Cross-site writes: a body must be JSON (`application/json` or `+json`); a page's "simple"
 *   `text/plain` POST gets a 415 and nothing is stored or queued.
 * - CORS: no CORS header unless `server.cors_origins` names the origin; those get a preflight.
 */
import { HttpApiBuilder, type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { jsonErrors } from "./jsonErrors.js"
import { errorResponse } from "./responses.js"

export interface RequestPolicy {
  /** host names accepted besides the loopback names (a deployment behind a proxy), port ignored */
  readonly allowedHosts: ReadonlyArray<string>
  /** origins (`scheme://host[:port]`) whose requests are accepted besides the server's own */
  readonly allowedOrigins: ReadonlyArray<string>
  /** origins that get CORS headers and a preflight; they are accepted too */
  readonly corsOrigins: ReadonlyArray<string>
}

export const LOOPBACK_ONLY: RequestPolicy = { allowedHosts: [], allowedOrigins: [], corsOrigins: [] }

/**
 * The policy the guard applies. A reference with a default rather than a required service: an
 * application that mounts `GligabaoRoutes` widens it by providing its own (docs/EMBEDDING.md),
 * from anywhere outside the routes, and one that provides nothing gets the narrowest policy,
 * loopback names only. The server provides its `server.*` lists.
 */
export class RequestPolicyTag extends Context.Reference<RequestPolicyTag>()("gligabao/RequestPolicy", {
  defaultValue: (): RequestPolicy => LOOPBACK_ONLY
}) {}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

/** The host name of a `Host` header (`name`, `name:port`, `[v6]:port`), lowercased; undefined when malformed. */
export const hostName = (header: string): string | undefined => {
  const value = header.trim().toLowerCase()
  const m = /^(\[[0-9a-f:.]+\]|[^\s:/[\]@]+)(?::(\d{1,5}))?$/.exec(value)
  return m === null ? undefined : m[1]
}

/** Whether a `Host` header names this server: a loopback name, or one of `allowed` (port ignored). */
export const hostAllowed = (header: string, allowed: ReadonlyArray<string>): boolean => {
  const name = hostName(header)
  if (name === undefined) return false
  return LOOPBACK_NAMES.has(name) || allowed.some((h) => hostName(h) === name)
}

/** An origin in its serialized form (`scheme://host[:port]`, default ports left out); undefined when it is not one. */
export const normalizeOrigin = (origin: string): string | undefined => {
  if (origin === "null" || !URL.canParse(origin)) return undefined
  const url = new URL(origin)
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
  return url.origin
}

/** Whether `origin` may call: the server's own (same host and port as `Host`), or listed. */
export const originAllowed = (origin: string, hostHeader: string | undefined, policy: RequestPolicy): boolean => {
  const normalized = normalizeOrigin(origin)
  if (normalized === undefined) return false
  const listed = [...policy.allowedOrigins, ...policy.corsOrigins].map(normalizeOrigin)
  if (listed.includes(normalized)) return true
  // the admin page's own requests: a browser sends Origin on its same-origin POSTs
  return hostHeader !== undefined && new URL(normalized).host === hostHeader.trim().toLowerCase()
}

/** `application/json`, or any `+json` type, with or without parameters. */
export const isJsonContentType = (header: string | undefined): boolean => {
  if (header === undefined) return false
  const type = header.split(";", 1)[0]!.trim().toLowerCase()
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type)
}

const hasBody = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const length = request.headers["content-length"]
  if (length !== undefined) return length.trim() !== "0"
  return request.headers["transfer-encoding"] !== undefined
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** The headers a browser page of an allowed CORS origin may send, and the ones it may read. */
const CORS_ALLOW_HEADERS = "authorization, content-type, idempotency-key, last-event-id, mcp-protocol-version"
const CORS_EXPOSE_HEADERS = "location, mcp-session-id, retry-after"

const withCors = (response: HttpServerResponse.HttpServerResponse, origin: string) =>
  HttpServerResponse.setHeaders(response, {
    "access-control-allow-origin": origin,
    "access-control-expose-headers": CORS_EXPOSE_HEADERS,
    vary: "Origin"
  })

export const guardRequests = (policy: RequestPolicy, authenticationOn: boolean) =>
(
  app: HttpApp.Default
): HttpApp.Default =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const host = request.headers["host"]
    const origin = request.headers["origin"]
    const path = new URL(request.url, "http://x").pathname
    const cors = origin === undefined
      ? undefined
      : policy.corsOrigins.map(normalizeOrigin).find((o) => o === normalizeOrigin(origin))

    if (!authenticationOn && host !== undefined && !hostAllowed(host, policy.allowedHosts)) {
      return errorResponse(
        403,
        `host ${
          JSON.stringify(host)
        } is not allowed: without authentication only loopback names are served (server.allowed_hosts)`
      )
    }
    if (
      origin !== undefined && (!authenticationOn || path === "/mcp") && !originAllowed(origin, host, policy)
    ) {
      return errorResponse(403, `origin ${JSON.stringify(origin)} is not allowed (server.allowed_origins)`)
    }
    if (request.method === "OPTIONS" && cors !== undefined) {
      return HttpServerResponse.empty({
        status: 204,
        headers: {
          "access-control-allow-origin": cors,
          "access-control-allow-methods": "GET, POST, PUT, DELETE, OPTIONS",
          "access-control-allow-headers": CORS_ALLOW_HEADERS,
          "access-control-max-age": "600",
          vary: "Origin"
        }
      })
    }
    if (BODY_METHODS.has(request.method) && hasBody(request) && !isJsonContentType(request.headers["content-type"])) {
      const refused = errorResponse(415, "content-type must be application/json")
      return cors === undefined ? refused : withCors(refused, cors)
    }
    // failures answered here, inside the guard, so an error carries the CORS headers too
    const response = yield* jsonErrors(app)
    return cors === undefined ? response : withCors(response, cors)
  })

/** The middleware layer: the policy of `RequestPolicyTag`, authentication as configured. */
export const RequestGuardMiddlewareLive = HttpApiBuilder.middleware(
  Effect.gen(function*() {
    const policy = yield* RequestPolicyTag
    const authentication = yield* Authentication
    return guardRequests(policy, authentication.enabled)
  })
)
