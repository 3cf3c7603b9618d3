/**
 * Helpers of the read commands (`gligabao search`, `query`, `export`): the flags as the same
 * request body the HTTP endpoints validate, and a streamed document written to stdout or a file
 * with backpressure.
 */
import { Effect, Option, Stream } from "effect"
import { createWriteStream } from "node:fs"
import type { Writable } from "node:stream"

export interface ReadFlags {
  readonly userId: string
  readonly dataset: Option.Option<string>
  readonly asOf: Option.Option<string>
  readonly knownAt: Option.Option<string>
  readonly includeExpired: boolean
  readonly sessionId: Option.Option<string>
  readonly kind: Option.Option<string>
}

/** The common flags as wire fields (absent ones left out). */
export const readBody = (o: ReadFlags): Record<string, unknown> => ({
  user_id: o.userId,
  dataset: Option.getOrUndefined(o.dataset),
  as_of: Option.getOrUndefined(o.asOf),
  known_at: Option.getOrUndefined(o.knownAt),
  include_expired: o.includeExpired,
  session_id: Option.getOrUndefined(o.sessionId),
  kind: Option.getOrUndefined(o.kind)
})

/** Query parameters are strings: the same fields for the graph request's validation. */
export const readParams = (o: ReadFlags): Record<string, string | undefined> => ({
  ...Object.fromEntries(Object.entries(readBody(o)).map(([k, v]) => [k, v === undefined ? undefined : String(v)]))
})

const write = (out: Writable, chunk: string) =>
  Effect.async<void, Error>((resume) => {
    const onError = (e: Error) => resume(Effect.fail(e))
    out.once("error", onError)
    const flushed = out.write(chunk, "utf8")
    const done = () => {
      out.off("error", onError)
      resume(Effect.void)
    }
    if (flushed) done()
    else out.once("drain", done)
  })

/** Writes the pieces in order, waiting whenever the destination is full; a file is closed at the end. */
export const writeDocument = (body: Stream.Stream<string>, output: Option.Option<string>): Effect.Effect<void, Error> =>
  Option.match(output, {
    // a reader that stops early (`| head`) closes the pipe: that ends the export, quietly
    onNone: () =>
      Stream.runForEach(body, (piece) => write(process.stdout, piece)).pipe(
        Effect.catchIf((e) => (e as NodeJS.ErrnoException).code === "EPIPE", () => Effect.void)
      ),
    onSome: (path) =>
      Effect.acquireUseRelease(
        Effect.sync(() => createWriteStream(path)),
        (file) => Stream.runForEach(body, (piece) => write(file, piece)),
        (file) =>
          Effect.async<void>((resume) => {
            file.end(() => resume(Effect.void))
          })
      )
  })
