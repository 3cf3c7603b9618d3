import { Schema } from "effect"

/**
 * Domain errors. Each carries a human message; the HTTP layer maps the tag to a status
 * (spec/contracts.md section 9) and the message to `{"error": "..."}`.
 */

/** The request is malformed (400). `message` names the field. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String
}) {}

/** The request body is over the size limit (413). */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  message: Schema.String
}) {}

/** A thing asked for by id does not exist (404). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String
}) {}

/** No LLM is configured (no key), so the call cannot run (503). */
export class LlmUnavailable extends Schema.TaggedError<LlmUnavailable>()("LlmUnavailable", {
  message: Schema.String
}) {}

/** The LLM provider failed, timed out or returned an unusable answer, after retries (502). */
export class LlmFailed extends Schema.TaggedError<LlmFailed>()("LlmFailed", {
  message: Schema.String,
  stage: Schema.optional(Schema.String),
  status: Schema.optional(Schema.Number)
}) {}

/** The embeddings provider failed (502). */
export class EmbeddingFailed extends Schema.TaggedError<EmbeddingFailed>()("EmbeddingFailed", {
  message: Schema.String
}) {}

/**
 * A vector write failed (502). After a commit the rows are stored: `artifact_id` and
 * `dataset_id` then say what was, and the vectors wait in the outbox.
 */
export class VectorWriteFailed extends Schema.TaggedError<VectorWriteFailed>()("VectorWriteFailed", {
  message: Schema.String,
  dataset_id: Schema.optional(Schema.Number),
  artifact_id: Schema.optional(Schema.Number)
}) {}

/** A required timeseries anchor matched nothing (422). */
export class AnchorNotFound extends Schema.TaggedError<AnchorNotFound>()("AnchorNotFound", {
  message: Schema.String
}) {}

/** A feature the request needs is not configured on this server (503). */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  message: Schema.String
}) {}

/** Anything else; the message names the failing stage, never a stack trace (500). */
export class InternalFailure extends Schema.TaggedError<InternalFailure>()("InternalFailure", {
  message: Schema.String
}) {}

/** Every error a remember run can fail with. */
export type RememberError =
  | InvalidRequest
  | LlmUnavailable
  | LlmFailed
  | EmbeddingFailed
  | VectorWriteFailed
  | AnchorNotFound
  | ServiceUnavailable
  | InternalFailure

/** The HTTP status of each domain error (spec/contracts.md section 9). */
export const statusOf = (error: { readonly _tag: string }): number => {
  switch (error._tag) {
    case "InvalidRequest":
      return 400
    case "NotFound":
      return 404
    case "PayloadTooLarge":
      return 413
    case "AnchorNotFound":
      return 422
    case "LlmFailed":
    case "EmbeddingFailed":
    case "VectorWriteFailed":
      return 502
    case "LlmUnavailable":
    case "ServiceUnavailable":
      return 503
    default:
      return 500
  }
}
