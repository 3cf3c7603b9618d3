import { HttpServerResponse } from "@effect/platform"
import { type DomainError, statusOf } from "../domain/Errors.js"

/** `{"error": "..."}` with a status: the one error shape of the API. */
export const errorResponse = (status: number, message: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson({ error: message }, { status })

/** A domain error as its response (spec/contracts.md section 9). */
export const domainErrorResponse = (error: DomainError) => errorResponse(statusOf(error), error.message)

export const jsonResponse = (body: unknown, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(body, { status })
