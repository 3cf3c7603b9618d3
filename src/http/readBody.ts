/**
 * Small JSON bodies (search and query requests), read with a hard limit: past it the rest is
 * drained so the client gets its 413 rather than a reset connection, up to a point. Also the
 * decoding of every JSON body (remember's too): strict UTF-8, then JSON.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect, Either, Option, Stream } from "effect"
import { InvalidRequest, PayloadTooLarge } from "../domain/Errors.js"

/** A chunked body past this is cut off instead of drained for its 413. */
const DRAIN_FACTOR = 4

/**
 * The body's bytes, or None when it is over `limit`. A body whose declared length is within the
 * limit is read in one piece (Node delivers exactly the declared bytes, no more), without a
 * Stream per request; any other body is streamed, and past the limit the rest is read and
 * discarded up to `drainLimit` (then cut off) so that the client still gets its 413: the
 * platform's own `withMaxBodySize` destroys the request stream, which resets the connection
 * before any response (a chunked body has no content-length to refuse it by).
 */
export const readBytesUpTo = (request: HttpServerRequest.HttpServerRequest, limit: number, drainLimit: number) =>
  Effect.suspend((): Effect.Effect<Option.Option<Uint8Array>, unknown> => {
    const declared = Number(request.headers["content-length"] ?? NaN)
    if (Number.isFinite(declared) && declared <= limit) {
      return Effect.map(request.arrayBuffer, (buffer) => Option.some(new Uint8Array(buffer)))
    }
    const chunks: Array<Uint8Array> = []
    let bytes = 0
    return request.stream.pipe(
      Stream.takeWhile((chunk) => {
        bytes += chunk.length
        if (bytes <= limit) chunks.push(chunk)
        else chunks.length = 0
        return bytes <= drainLimit
      }),
      Stream.runDrain,
      Effect.map(() => (bytes > limit ? Option.none() : Option.some(Buffer.concat(chunks))))
    )
  })

/** The body as JSON, read with its limit: PayloadTooLarge (413) past it, InvalidRequest (400) when unreadable. */
export const readJsonBody = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<unknown, PayloadTooLarge | InvalidRequest> =>
  Effect.gen(function*() {
    const tooLarge = new PayloadTooLarge({ message: `request body is over the limit of ${limit} bytes` })
    const declared = Number(request.headers["content-length"] ?? NaN)
    if (Number.isFinite(declared) && declared > limit) return yield* tooLarge
    const read = yield* Effect.either(readBytesUpTo(request, limit, limit * DRAIN_FACTOR))
    if (Either.isLeft(read)) return yield* new InvalidRequest({ message: "could not read the request body" })
    if (Option.isNone(read.right)) return yield* tooLarge
    return yield* jsonOfBytes(read.right.value)
  })

/**
 * A body's bytes as JSON. They must be UTF-8 (RFC 8259): invalid bytes are refused rather than
 * silently replaced, which would change the text that gets stored. A leading BOM is skipped.
 */
export const jsonOfBytes = (bytes: Uint8Array): Either.Either<unknown, InvalidRequest> => {
  let text: string
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return Either.left(new InvalidRequest({ message: "the request body is not valid UTF-8" }))
  }
  try {
    return Either.right(JSON.parse(text) as unknown)
  } catch (e) {
    return Either.left(new InvalidRequest({ message: `malformed JSON body: ${(e as Error).message}` }))
  }
}
