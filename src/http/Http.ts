/**
 * The served application: the API, its OpenAPI document and docs page, and a last-resort
 * middleware that turns unknown routes and defects into `{"error": "..."}` (404 / 500).
 * It is an API-level middleware because a `serve` middleware only sees a failure after its
 * default (empty) response was already sent.
 */
import {
  HttpApiBuilder,
  HttpApiSwagger,
  type HttpApp,
  HttpMiddleware,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Cause, Effect, Equal, HashSet, Layer } from "effect"
import { GligabaoApi } from "./Api.js"
import { AuthenticationMiddlewareLive } from "./authentication.js"
import { ApiHandlersLive } from "./Handlers.js"
import { errorResponse } from "./responses.js"

const jsonErrors = (app: HttpApp.Default): HttpApp.Default =>
  Effect.catchAllCause(app, (cause) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const failure = Cause.squash(cause) as { _tag?: string }
      if (failure?._tag === "RouteNotFound") {
        return errorResponse(404, `no route for ${request.method} ${new URL(request.url, "http://x").pathname}`)
      }
      if (Cause.isInterruptedOnly(cause)) {
        // The client went away (or Node's request timeout cut it off): nobody reads an answer, and
        // writing a body to the closed socket never calls back, which would keep this fiber forever.
        if (HashSet.some(Cause.interruptors(cause), (id) => Equal.equals(id, HttpServerError.clientAbortFiberId))) {
          return HttpServerResponse.empty({ status: 499 })
        }
        return errorResponse(503, "the server is shutting down")
      }
      yield* Effect.logError("request failed", cause)
      return errorResponse(
        500,
        `internal error while handling ${request.method} ${new URL(request.url, "http://x").pathname}`
      )
    }))

export const ApiLive = HttpApiBuilder.api(GligabaoApi).pipe(Layer.provide(ApiHandlersLive))

/** Needs an HttpServer and the services the handlers use. */
export const HttpAppLive = HttpApiBuilder.serve(HttpMiddleware.logger).pipe(
  Layer.provide(HttpApiBuilder.middleware(jsonErrors)),
  Layer.provide(AuthenticationMiddlewareLive),
  Layer.provide(HttpApiSwagger.layer({ path: "/docs" })),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
  Layer.provide(ApiLive)
)
