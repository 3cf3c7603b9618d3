import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

/**
 * Domain errors. Each carries a human message and its HTTP status (spec/contracts.md section 9),
 * written once, in its class's annotation: the OpenAPI document reads it, and so does `statusOf`,
 * what the doors answer with; the body is `{"error": message}`.
 */

/** The request is malformed (400). `message` names the field. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String
}, HttpApiSchema.annotations({ status: 400 })) {
  /** the message under its wire name: a domain error is its own `{"error"}` body */
  get error(): string {
    return this.message
  }
}

/** The request body is over the size limit (413). */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  message: Schema.String
}, HttpApiSchema.annotations({ status: 413 })) {
  /** the message under its wire name: a domain error is its own `{"error"}` body */
  get error(): string {
    return this.message
  }
}

/** The caller may not do this: act for another user, or use the admin API without an admin token (403). */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String
}, HttpApiSchema.annotations({ status: 403 })) {
  /** the message under its wire name: a domain error is its own `{"error"}` body */
  get error(): string {
    return this.message
  }
}

/** A thing asked for by id does not exist (404). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String
}, HttpApiSchema.annotations({ status: 404 })) {
  /** the message under its wire name: a domain error is its own `{"error"}` body */
  get error(): string {
    return this.message
  }
}

/** No LLM is configured (no key), so the call cannot run (503). */
export class LlmUnavailable extends Schema.TaggedError<LlmUnavailable>()("LlmUnavailable", {
  message: Schema.String
}, HttpApiSchema.annotations({ status: 503 })) {
  /** the message under its wire name: a domain error is its own `{"error"}` body */
  get error(): string {
    return this.message
  }
}

/**
 * The LLM provider failed, timed out or returned an unusable answer, after retries (502).
 * `retryable`: the provider's last failure was one a later attempt may not meet (a timeout, a
 * lost connection, 429, 5xx), so the run may be queued again; an unusable answer is not.
 */
export class LlmFailed extends Schema.TaggedError<LlmFailed>()("LlmFailed", {
  message: Schema.String,
  stage: Schema.optional(Schema.String),
  status: Schema.optional(Schema.Number),
  retryable: Schema.optional(Schema.Boolean)
}, HttpApiSchema.annotations({ status: 502 })) {
  /** the message under its wire name: a domain error is its own `{"error"}` body */
  get error(): string {
    return this.message
  }
}

/** The embeddings provider failed (502); `retryable` as for LlmFailed. */
export class EmbeddingFailed extends Schema.TaggedError<EmbeddingFailed>()("EmbeddingFailed", {
  message: Schema.String,
  retryable: Schema.optional(Schema.Boolean)
}, HttpApiSchema.annotations({ status: 502 })) {
  /** the message under its wire name: a domain error is its own `{"error"}` body */
  get error(): string {
    return this.message
  }
}

/**
 * A vector write failed (502). After a commit the rows are stored: `artifact_id` and
 * `dataset_id` then say what was, and the vectors wait in the outbox.
 */
export class VectorWriteFailed extends Schema.TaggedError<VectorWriteFailed>()("VectorWriteFailed", {
  message: Schema.String,
  dataset_id: Schema.optional(Schema.Number),
  artifact_id: Schema.optional(Schema.Number)
}, HttpApiSchema.annotations({ status: 502 })) {
  /** the message under its wire name: a domain error is its own `{"error"}` body */
  get error(): string {
    return this.message
  }
}

/** A required timeseries anchor matched nothing (422). */
export class AnchorNotFound extends Schema.TaggedError<AnchorNotFound>()("AnchorNotFound", {
  message: Schema.String
}, HttpApiSchema.annotations({ status: 422 })) {
  /** the message under its wire name: a domain error is its own `{"error"}` body */
  get error(): string {
    return this.message
  }
}

/** An Idempotency-Key already names a submission with another body (422). */
export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()("IdempotencyConflict", {
  message: Schema.String
}, HttpApiSchema.annotations({ status: 422 })) {
  /** the message under its wire name: a domain error is its own `{"error"}` body */
  get error(): string {
    return this.message
  }
}

/** The request contradicts the row's state, e.g. invalidating a fact that is not live (409). */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String
}, HttpApiSchema.annotations({ status: 409 })) {
  /** the message under its wire name: a domain error is its own `{"error"}` body */
  get error(): string {
    return this.message
  }
}

/** A feature the request needs is not configured on this server (503). */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  message: Schema.String
}, HttpApiSchema.annotations({ status: 503 })) {
  /** the message under its wire name: a domain error is its own `{"error"}` body */
  get error(): string {
    return this.message
  }
}

/** Anything else; the message names the failing stage, never a stack trace (500). */
export class InternalFailure extends Schema.TaggedError<InternalFailure>()("InternalFailure", {
  message: Schema.String
}, HttpApiSchema.annotations({ status: 500 })) {
  /** the message under its wire name: a domain error is its own `{"error"}` body */
  get error(): string {
    return this.message
  }
}

/**
 * Every error a remember run can fail with (NotFound: a forget removed the run before it stored;
 * Conflict: the run was cancelled while it was queued).
 */
export type RememberError =
  | InvalidRequest
  | NotFound
  | Conflict
  | LlmUnavailable
  | LlmFailed
  | EmbeddingFailed
  | VectorWriteFailed
  | AnchorNotFound
  | ServiceUnavailable
  | InternalFailure

/** Every domain error, as one schema: `isDomainError` is its guard. */
export const DomainError = Schema.Union(
  InvalidRequest,
  Forbidden,
  PayloadTooLarge,
  NotFound,
  LlmUnavailable,
  LlmFailed,
  EmbeddingFailed,
  VectorWriteFailed,
  AnchorNotFound,
  IdempotencyConflict,
  Conflict,
  ServiceUnavailable,
  InternalFailure
)
export type DomainError = typeof DomainError.Type

/** Whether a failure is a domain error (and so answers its own status). */
export const isDomainError: (u: unknown) => u is DomainError = Schema.is(DomainError)

/** The HTTP status of a domain error (spec/contracts.md section 9): its class's annotation. */
export const statusOf = (error: DomainError): number =>
  HttpApiSchema.getStatusError(error.constructor as unknown as Schema.Schema.All)

/**
 * The errors a finished run's row is read back as, by its `error_tag` (a repeated submission
 * fails the same way); any other tag reads as an InternalFailure.
 */
export const StoredRunError = Schema.Union(
  InvalidRequest,
  LlmUnavailable,
  LlmFailed,
  EmbeddingFailed,
  VectorWriteFailed,
  AnchorNotFound,
  ServiceUnavailable
)
