/**
 * The plain client's errors. Every answer outside 2xx (and the entity lookup's 300) is one
 * `GligabaoError` carrying the status and the server's `{"error"}` text; a request that got no
 * answer at all is a `GligabaoConnectionError`. An abort through the caller's own signal is
 * rethrown as fetch threw it, as with any fetch.
 */

/** The server answered with a status that is not a success (400, 401, 404, 503, ...). */
export class GligabaoError extends Error {
  override readonly name = "GligabaoError"
  /** the HTTP status */
  readonly status: number
  /** the server's `error` text (for a body that is not gligabao's `{"error"}`, its start or the status text) */
  readonly error: string
  /** the parsed JSON body (e.g. an eval failure's `trajectory`, a 503 readiness report), or the text */
  readonly body: unknown
  /** e.g. `POST /v1/gb/search` */
  readonly request: string

  constructor(options: { status: number; error: string; body: unknown; request: string }) {
    super(`${options.request} answered ${options.status}: ${options.error}`)
    this.status = options.status
    this.error = options.error
    this.body = options.body
    this.request = options.request
  }
}

/** No answer: the server is unreachable, the connection broke, or a body could not be read. */
export class GligabaoConnectionError extends Error {
  override readonly name = "GligabaoConnectionError"
  /** e.g. `POST /v1/gb/search` */
  readonly request: string

  constructor(request: string, cause: unknown) {
    super(`${request} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
    this.request = request
  }
}

export const isGligabaoError = (u: unknown): u is GligabaoError => u instanceof GligabaoError

/** The error text of a body: gligabao's `{"error"}`, else the start of the text, else the status text. */
export const errorText = (body: unknown, text: string, statusText: string): string => {
  if (typeof body === "object" && body !== null && typeof (body as { error?: unknown }).error === "string") {
    return (body as { error: string }).error
  }
  const trimmed = text.trim()
  return trimmed === "" ? statusText : trimmed.slice(0, 500)
}
