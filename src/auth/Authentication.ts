import { Context, type Effect, Layer } from "effect"
import type { Caller, TokenTable } from "./tokens.js"

/**
 * The configured bearer tokens. Every composition that serves HTTP provides it: the server its
 * `[auth]` tokens, `Gligabao.layer` and the tests without tokens `Authentication.off` (the
 * server then listens on 127.0.0.1 unless told otherwise; see `bindRefusal`).
 */
export class Authentication extends Context.Tag("gligabao/Authentication")<Authentication, TokenTable>() {
  /** No tokens: authentication off. */
  static readonly off: Layer.Layer<Authentication> = Layer.succeed(this, { enabled: false, entries: [] })
}

/**
 * Who sent the request being handled: provided per request by the HTTP authentication
 * middleware. Fails closed: a handler run without the middleware in front of it (a composition
 * mistake) gets a caller that may act for nobody.
 */
export class CurrentCaller extends Context.Reference<CurrentCaller>()("gligabao/CurrentCaller", {
  defaultValue: (): Caller => ({ _tag: "User", userId: "" })
}) {}

/** The caller of the request being handled (see `CurrentCaller`). */
export const currentCaller: Effect.Effect<Caller> = CurrentCaller
