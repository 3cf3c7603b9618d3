/**
 * Small JSON bodies (search and query requests), read with a hard limit: past it the rest is
 * drained so the client gets its 413 rather than a reset connection, up to a point. Also the
 * decoding of every JSON body (remember's too): strict UTF-8, then JSON.
 */
import type { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Stream } from "effect"
import { errorResponse } from "./responses.js"

/** A chunked body past this is cut off instead of drained for its 413. */
const DRAIN_FACTOR = 4

export const readJsonUpTo = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<Either.Either<unknown, HttpServerResponse.HttpServerResponse>> =>
  Effect.gen(function*() {
    const tooLarge = errorResponse(413, `request body is over the limit of ${limit} bytes`)
    const declared = Number(request.headers["content-length"] ?? NaN)
    if (Number.isFinite(declared) && declared > limit) return Either.left(tooLarge)
    const chunks: Array<Uint8Array> = []
    let bytes = 0
    const read = yield* Effect.either(request.stream.pipe(
      Stream.takeWhile((chunk) => {
        bytes += chunk.length
        if (bytes <= limit) chunks.push(chunk)
        return bytes <= limit * DRAIN_FACTOR
      }),
      Stream.runDrain
    ))
    if (Either.isLeft(read)) return Either.left(errorResponse(400, "could not read the request body"))
    if (bytes > limit) return Either.left(tooLarge)
    return parseJsonBytes(Buffer.concat(chunks))
  })

/**
 * A body's bytes as JSON. They must be UTF-8 (RFC 8259): invalid bytes are refused rather than
 * silently replaced, which would change the text that gets stored. A leading BOM is skipped.
 */
export const parseJsonBytes = (bytes: Uint8Array): Either.Either<unknown, HttpServerResponse.HttpServerResponse> => {
  let text: string
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return Either.left(errorResponse(400, "the request body is not valid UTF-8"))
  }
  try {
    return Either.right(JSON.parse(text) as unknown)
  } catch (e) {
    return Either.left(errorResponse(400, `malformed JSON body: ${(e as Error).message}`))
  }
}
