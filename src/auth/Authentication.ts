import { Context, Effect, Option } from "effect"
import type { Caller, TokenTable } from "./tokens.js"

/**
 * The configured bearer tokens. An app composed without it has authentication off (the server
 * then listens on 127.0.0.1 unless told otherwise; see `bindRefusal`).
 */
export class Authentication extends Context.Tag("gligabao/Authentication")<Authentication, TokenTable>() {}

/** Who sent the request being handled: provided per request by the HTTP authentication middleware. */
export class CurrentCaller extends Context.Tag("gligabao/CurrentCaller")<CurrentCaller, Caller>() {}

/**
 * The caller of the request being handled. Fails closed: a handler run without the
 * authentication middleware in front of it (a composition mistake) gets a caller that may act
 * for nobody.
 */
export const currentCaller: Effect.Effect<Caller> = Effect.map(
  Effect.serviceOption(CurrentCaller),
  Option.getOrElse((): Caller => ({ _tag: "User", userId: "" }))
)
