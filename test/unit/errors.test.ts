/**
 * Domain errors carry their HTTP status once, in their class's annotation: `statusOf` reads it,
 * `isDomainError` knows every class and nothing else, and a finished run's stored error reads
 * back as the class it was (anything unknown as an InternalFailure).
 */
import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  AnchorNotFound,
  Conflict,
  EmbeddingFailed,
  IdempotencyConflict,
  InternalFailure,
  InvalidRequest,
  isDomainError,
  LlmFailed,
  LlmUnavailable,
  NotFound,
  PayloadTooLarge,
  ServiceUnavailable,
  statusOf,
  StoredRunError,
  VectorWriteFailed
} from "../../src/domain/Errors.js"

const STATUSES = [
  [new InvalidRequest({ message: "m" }), 400],
  [new PayloadTooLarge({ message: "m" }), 413],
  [new NotFound({ message: "m" }), 404],
  [new LlmUnavailable({ message: "m" }), 503],
  [new LlmFailed({ message: "m", retryable: true }), 502],
  [new EmbeddingFailed({ message: "m" }), 502],
  [new VectorWriteFailed({ message: "m", dataset_id: 1 }), 502],
  [new AnchorNotFound({ message: "m" }), 422],
  [new IdempotencyConflict({ message: "m" }), 422],
  [new Conflict({ message: "m" }), 409],
  [new ServiceUnavailable({ message: "m" }), 503],
  [new InternalFailure({ message: "m" }), 500]
] as const

describe("domain errors", () => {
  it("answer the status of their class's annotation (spec/contracts.md section 9)", () => {
    for (const [error, status] of STATUSES) expect(statusOf(error), error._tag).toBe(status)
  })

  it("are told apart from anything else", () => {
    for (const [error] of STATUSES) expect(isDomainError(error), error._tag).toBe(true)
    for (const other of [new Error("x"), { _tag: "NotFound", message: "m" }, null, "NotFound", { _tag: "Other" }]) {
      expect(isDomainError(other)).toBe(false)
    }
  })

  it("a stored run error reads back as its class; an unknown tag does not read", () => {
    const read = Schema.decodeUnknownEither(StoredRunError)
    const failed = read({ _tag: "LlmFailed", message: "the model failed" })
    expect(Either.isRight(failed) && failed.right).toBeInstanceOf(LlmFailed)
    expect(Either.isRight(failed) && statusOf(failed.right)).toBe(502)
    expect(Either.isLeft(read({ _tag: "Mystery", message: "m" }))).toBe(true)
    expect(Either.isLeft(read({ _tag: null, message: "m" }))).toBe(true)
  })
})
