/**
 * The last-resort conversion of every failure into the wire's `{"error": "..."}`: unknown routes
 * (404), HttpApi's own decoding of a path, URL parameters or payload (400, worded by Wire.ts's
 * formatter), domain errors failing a handler (their class's status), a body that is not JSON
 * (400), a client gone (499), shutdown (503) and defects (500). The request guard applies it too,
 * inside itself, so that an error answer carries the CORS headers a success would.
 */
import { HttpApiError, type HttpApp, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Equal, HashSet } from "effect"
import { isDomainError, statusOf } from "../domain/Errors.js"
import { BODY_NOT_OBJECT, formatDecodeIssues } from "../domain/Wire.js"
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
