/**
 * The documented error bodies of the contract: always exactly `{"error": "..."}`, one schema per
 * status. A handler fails with a domain error (src/domain/Errors.ts), which is such a body by
 * type (its `error` is its message) and which `jsonErrors` answers with its class's status.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

const ErrorBody = (status: number, description: string) =>
  Schema.Struct({ error: Schema.String }).annotations({
    ...HttpApiSchema.annotations({ status }),
    identifier: `Error${status}`,
    description
  })

export const Error400 = ErrorBody(400, "The request is malformed; the message names the field.")
export const Error401 = ErrorBody(401, "Authentication is configured and the request has no valid bearer token.")
export const Error403 = ErrorBody(
  403,
  "Refused: a Host or Origin this server does not serve (docs/SECURITY.md), or a token that may not do this (act for another user, the admin API without an admin token)."
)
export const Error404 = ErrorBody(404, "Not found.")
export const Error413 = ErrorBody(413, "The body is over the size limit.")
export const Error415 = ErrorBody(415, "The body is not JSON: content-type must be application/json (or a +json type).")
export const Error409 = ErrorBody(409, "The row is not in the state the request needs (e.g. the fact is not live).")
export const Error422 = ErrorBody(422, "A required timeseries anchor matched nothing; nothing was stored.")
export const Error502 = ErrorBody(502, "The LLM or embeddings provider failed, or a vector write after commit failed.")
export const Error503 = ErrorBody(503, "A provider the request needs is not configured.")
export const Error500 = ErrorBody(500, "Anything else; the message names the failing stage.")
