/**
 * The served application: the API, its OpenAPI document and docs page, and `jsonErrors`
 * (jsonErrors.ts) as a last-resort middleware that turns every failure into the wire's
 * `{"error": "..."}`. It is an API-level middleware because it then runs before HttpApi encodes
 * errors (into its `{_tag, issues}` shapes) and a `serve` middleware only sees a failure after
 * its default (empty) response was already sent.
 */
import { HttpApiBuilder, HttpApiSwagger, HttpLayerRouter, HttpMiddleware, HttpRouter, OpenApi } from "@effect/platform"
import { Effect, Layer } from "effect"
import { GligabaoApi } from "./Api.js"
import { AuthenticationMiddlewareLive } from "./authentication.js"
import { ApiHandlersLive } from "./Handlers.js"
import { jsonErrors } from "./jsonErrors.js"
import { MCP_PATH, McpRouteLive } from "./McpRoute.js"
import { RequestGuardMiddlewareLive } from "./requestGuard.js"

export { jsonErrors } from "./jsonErrors.js"

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
    // the guard before authentication: a CORS preflight carries no token, and a 401 needs the
    // CORS headers for a page to read it
    Layer.provide(RequestGuardMiddlewareLive),
    Layer.provide(AuthenticationMiddlewareLive),
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
