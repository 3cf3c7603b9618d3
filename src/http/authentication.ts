/**
 * Authentication for the whole API, as a global middleware: it runs before routing, so no
 * endpoint can be added without it. It answers 401 itself and provides the `CurrentCaller` to the
 * handlers, which refuse (403) a caller acting for another user once they know the request's
 * user_id (see `requireUser`).
 */
import { HttpApiBuilder, type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Authentication, CurrentCaller, currentCaller } from "../auth/Authentication.js"
import { adminRefusal, eraseRefusal, identify, refusalFor, type TokenTable } from "../auth/tokens.js"
import { Forbidden } from "../domain/Errors.js"
import { errorResponse } from "./responses.js"

/** Paths that hold no user data: liveness, readiness, the API description, the admin page's static code. */
const isPublic = (path: string): boolean =>
  path === "/healthz" ||
  path === "/readyz" ||
  path === "/openapi.json" ||
  path === "/docs" ||
  path.startsWith("/docs/") ||
  path === "/v1/gb/admin" ||
  path === "/v1/gb/admin/" ||
  path.startsWith("/v1/gb/admin/assets/")

/** The request target's path as sent (an absolute-form target without its origin), before any query. */
const rawPath = (url: string): string => url.replace(/^https?:\/\/[^/]*/i, "").split(/[?#]/, 1)[0]!

/** A path as the router reads it: case ignored, `%xx` decoded, `//` collapsed. */
const asRouted = (path: string): string => {
  let decoded = path
  try {
    decoded = decodeURIComponent(path)
  } catch {
    // a malformed escape stays as sent, which no admin path matches
  }
  return decoded.toLowerCase().replace(/\/{2,}/g, "/")
}

/**
 * Judged on the URL's path and on the raw target, both as the router reads them. `/metrics`
 * counts as admin: it describes every user's activity.
 */
const isAdminApi = (path: string, url: string): boolean =>
  [path, rawPath(url)].some((p) => {
    const routed = asRouted(p)
    return routed.startsWith("/v1/gb/admin/api/") || routed === "/metrics" || routed === "/metrics/"
  })

const unauthorized = (reason: string) =>
  HttpServerResponse.setHeader(errorResponse(401, reason), "www-authenticate", "Bearer realm=\"gligabao\"")

export const authenticate = (table: TokenTable) => (app: HttpApp.Default): HttpApp.Default =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const path = new URL(request.url, "http://x").pathname
    // Public only when the path reads the same raw as URL-normalized: the router reads a raw
    // path differently (`;` ends it, `..` stays), so `/v1/gb/admin/api/x;/../../../../../healthz`
    // is `/healthz` to URL but the admin API to the router.
    if (isPublic(path) && rawPath(request.url) === path) return yield* app
    const caller = identify(table, request.headers["authorization"])
    if (caller._tag === "Unauthenticated") return unauthorized(caller.reason)
    if (isAdminApi(path, request.url)) {
      const refusal = adminRefusal(caller)
      if (refusal !== undefined) return errorResponse(403, refusal)
    }
    return yield* Effect.provideService(app, CurrentCaller, caller)
  })

/** The middleware layer over the tokens of `Authentication` (`Authentication.off`: none). */
export const AuthenticationMiddlewareLive = HttpApiBuilder.middleware(Effect.map(Authentication, authenticate))

/** Fails with Forbidden (403) unless the request's caller may act for `userId`. */
export const requireUser = (userId: string): Effect.Effect<void, Forbidden> =>
  Effect.flatMap(currentCaller, (caller) => {
    const refusal = refusalFor(caller, userId)
    return refusal === undefined ? Effect.void : Effect.fail(new Forbidden({ message: refusal }))
  })

/** As `requireUser`, for the erasing endpoints, which an admin token may also call (see `eraseRefusal`). */
export const requireUserOrAdmin = (userId: string): Effect.Effect<void, Forbidden> =>
  Effect.flatMap(currentCaller, (caller) => {
    const refusal = eraseRefusal(caller, userId)
    return refusal === undefined ? Effect.void : Effect.fail(new Forbidden({ message: refusal }))
  })
