import { HttpServerResponse } from "@effect/platform"

/** `{"error": "..."}` with a status: the one error shape of the API. */
export const errorResponse = (status: number, message: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson({ error: message }, { status })

export const jsonResponse = (body: unknown, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(body, { status })
