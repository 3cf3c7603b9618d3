/**
 * The served application: the API, its OpenAPI document and docs page, and a last-resort
 * middleware that turns every failure into the wire's `{"error": "..."}`: unknown routes (404),
 * HttpApi's own decoding of a path, URL parameters or payload (400, worded by Wire.ts's
 * formatter), domain errors failing a handler (their own status), a body that is not JSON
 * (400), and defects (500). It is an API-level middleware because it then runs before HttpApi
 * encodes errors (into its `{_tag, issues}` shapes) and a `serve` middleware only sees a
 * failure after its default (empty) response was already sent.
 */
import {
  HttpApiBuilder,
  HttpApiError,
  HttpApiSwagger,
  type HttpApp,
  HttpLayerRouter,
  HttpMiddleware,
  HttpRouter,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse,
  OpenApi
} from "@effect/platform"
import { Cause, Effect, Equal, HashSet, Layer } from "effect"
import { isDomainError, statusOf } from "../domain/Errors.js"
import { BODY_NOT_OBJECT, formatDecodeIssues } from "../domain/Wire.js"
import { GligabaoApi } from "./Api.js"
import { AuthenticationMiddlewareLive } from "./authentication.js"
import { ApiHandlersLive } from "./Handlers.js"
import { MCP_PATH, McpRouteLive } from "./McpRoute.js"
import { RequestGuardMiddlewareLive } from "./requestGuard.js"
import { errorResponse } from "./responses.js"

const pathOf = (request: HttpServerRequest.HttpServerRequest) => new URL(request.url, "http://x").pathname

/**
 * A body HttpApi could not read for a payload schema: `request.json` (or the form, text) failed
 * and HttpApi made it a defect. The same words as the endpoints that read their own bodies.
 */
const unreadableBody = (failure: unknown): string | undefined => {
  if (!HttpServerError.isServerError(failure) || failure._tag !== "RequestError") return undefined
  if (failure.reason !== "Decode") return "could not read the request body"
  const cause = failure.cause
  return cause instanceof Error ? `malformed JSON body: ${cause.message}` : "malformed JSON body"
}

export const jsonErrors = (app: HttpApp.Default): HttpApp.Default =>
  Effect.catchAllCause(app, (cause) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const failure: unknown = Cause.squash(cause)
      if ((failure as { _tag?: string } | undefined)?._tag === "RouteNotFound") {
        return errorResponse(404, `no route for ${request.method} ${pathOf(request)}`)
      }
      if (Cause.isInterruptedOnly(cause)) {
        // The client went away (or Node's request timeout cut it off): nobody reads an answer, and
        // writing a body to the closed socket never calls back, which would keep this fiber forever.
        if (HashSet.some(Cause.interruptors(cause), (id) => Equal.equals(id, HttpServerError.clientAbortFiberId))) {
          return HttpServerResponse.empty({ status: 499 })
        }
        return errorResponse(503, "the server is shutting down")
      }
      // HttpApi decoding the path, URL parameters, headers or payload with the endpoint's schema
      if (failure instanceof HttpApiError.HttpApiDecodeError) {
        // a payload that is not an object at all (`null`, an array, a number): Schema says
        // "Expected Struct (Encoded side), actual null", which names nothing a client sent
        const first = failure.issues[0]
        const notAnObject = first !== undefined && first.path.length === 0 &&
          /^Expected .*, actual /.test(first.message)
        return errorResponse(400, notAnObject ? BODY_NOT_OBJECT : formatDecodeIssues(failure.issues))
      }
      if (isDomainError(failure)) return errorResponse(statusOf(failure), failure.message)
      const unreadable = unreadableBody(failure)
      if (unreadable !== undefined) return errorResponse(400, unreadable)
      yield* Effect.logError("request failed", cause)
      return errorResponse(500, `internal error while handling ${request.method} ${pathOf(request)}`)
    }))

/**
 * The OpenAPI document. Responses may grow, so their objects allow more fields
 * (`additionalProperties: true`, HttpApi's "allow"); request bodies refuse unknown fields and say
 * so (Api.ts, strictRequestBodies). Built here,
 * when this module loads: `OpenApi.fromApi` caches its first document per API whatever the
 * options of a later call, and the docs page (HttpApiSwagger) calls it without any.
 */
export const openApiDocument: OpenApi.OpenAPISpec = OpenApi.fromApi(GligabaoApi, {
  additionalPropertiesStrategy: "allow"
})

export const ApiLive = HttpApiBuilder.api(GligabaoApi).pipe(Layer.provide(ApiHandlersLive))

/**
 * The longest path parameter the router matches, decoded (its default, 100, turned a longer one
 * into a 404 before the endpoint's schema could say what is wrong with it): a user id is up to
 * 256 bytes, a dataset name up to 128.
 */
export const MAX_PATH_PARAM_LENGTH = 1024

/** The API with its middleware, its OpenAPI document and docs page, whichever server serves it. */
const withApi = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  layer.pipe(
    Layer.provide(HttpRouter.setRouterConfig({ maxParamLength: MAX_PATH_PARAM_LENGTH })),
    Layer.provide(HttpApiBuilder.middleware(jsonErrors)),
    Layer.provide(AuthenticationMiddlewareLive),
    Layer.provide(RequestGuardMiddlewareLive),
    Layer.provide(HttpApiSwagger.layer({ path: "/docs" })),
    Layer.provide(McpRouteLive),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json", additionalPropertiesStrategy: "allow" })),
    Layer.provide(ApiLive)
  )

/** Probes answer every few seconds from every prober: a span each would drown the traces. */
const PROBE_URLS = ["/healthz", "/readyz"]

/** Needs an HttpServer and the services the handlers use. */
export const HttpAppLive = withApi(HttpApiBuilder.serve(HttpMiddleware.logger)).pipe(
  HttpMiddleware.withTracerDisabledForUrls(PROBE_URLS)
)

/** The paths gligabao answers when it is mounted in another app's router. */
export const MOUNTED_PATHS = ["/v1/gb/*", "/healthz", "/openapi.json", "/docs", MCP_PATH] as const

/**
 * gligabao's routes in an application's own `HttpLayerRouter` server, answered exactly as
 * `gligabao serve` answers them (the same middleware and error bodies). Needs the services the
 * handlers use, like `HttpAppLive`.
 */
export const GligabaoRoutes = withApi(
  Layer.unwrapEffect(
    Effect.map(
      HttpApiBuilder.httpApp,
      (app) =>
        HttpLayerRouter.use((router) =>
          Effect.forEach(MOUNTED_PATHS, (path) => router.add("*", path, app), { discard: true })
        )
    )
  ).pipe(Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]))
)
