import { HttpServerResponse } from "@effect/platform"
import { statusOf } from "../domain/Errors.js"

/** `{"error": "..."}` with a status: the one error shape of the API. */
export const errorResponse = (status: number, message: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson({ error: message }, { status })

/** A domain error as its response (spec/contracts.md section 9). */
export const domainErrorResponse = (error: { readonly _tag: string; readonly message: string }) =>
  errorResponse(statusOf(error), error.message)

export const jsonResponse = (body: unknown, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(body, { status })
