/**
 * Bearer tokens: who a presented token stands for. Pure, apart from hashing.
 *
 * Every configured token is kept as its SHA-256 digest (a `sha256:` token in the config already
 * is one), and a presented token is hashed and compared with every digest in constant time,
 * without stopping at the first match: how long a check takes says nothing about which byte or
 * which entry differed. Hashing first also makes the comparison length-independent.
 */
import { Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import type { AuthToken } from "../config/tables.js"

/** Who is calling. `Open`: authentication is off, anyone may act for any user. */
export type Caller =
  | { readonly _tag: "Open" }
  | { readonly _tag: "User"; readonly userId: string }
  | { readonly _tag: "Admin" }

/** Why a request was not authenticated (a 401). */
export type Unauthenticated = { readonly _tag: "Unauthenticated"; readonly reason: string }

interface Entry {
  readonly digest: Buffer
  readonly caller: Caller
}

export interface TokenTable {
  /** false: no tokens configured, authentication is off */
  readonly enabled: boolean
  readonly entries: ReadonlyArray<Entry>
}

const sha256 = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

export const tokenTable = (tokens: ReadonlyArray<AuthToken>): TokenTable => ({
  enabled: tokens.length > 0,
  entries: tokens.map((token) => {
    const secret = Redacted.value(token.secret)
    return {
      digest: token.kind === "sha256" ? Buffer.from(secret, "hex") : sha256(secret),
      caller: token.admin ? { _tag: "Admin" } : { _tag: "User", userId: token.userId }
    }
  })
})

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i

/** The caller an `Authorization` header stands for. */
export const identify = (table: TokenTable, authorization: string | undefined): Caller | Unauthenticated => {
  if (!table.enabled) return { _tag: "Open" }
  if (authorization === undefined || authorization.trim() === "") {
    return { _tag: "Unauthenticated", reason: "authentication required: send Authorization: Bearer <token>" }
  }
  const match = BEARER.exec(authorization)
  if (match === null) {
    return { _tag: "Unauthenticated", reason: "the Authorization header must be Bearer <token>" }
  }
  const presented = sha256(match[1]!)
  let found: Caller | undefined
  for (const entry of table.entries) {
    // no early exit: every entry is compared whatever matched before
    if (timingSafeEqual(entry.digest, presented) && found === undefined) found = entry.caller
  }
  return found ?? { _tag: "Unauthenticated", reason: "the bearer token is not valid" }
}

export const ADMIN_ONLY = "an admin token opens the admin UI and API only; use the user's token"

/**
 * Whether the caller may act for `userId` on the user endpoints: None when it may, otherwise
 * why not (a 403). An admin token is for the admin UI and API only.
 */
export const refusalFor = (caller: Caller, userId: string): string | undefined => {
  switch (caller._tag) {
    case "Open":
      return undefined
    case "User":
      return caller.userId === userId ? undefined : "this token may not act for that user_id"
    case "Admin":
      return ADMIN_ONLY
  }
}

/**
 * Whether the caller may erase `userId`'s data (forget the user, hard-delete a dataset): the
 * user's own token, or an admin token, since operators honour deletion requests. Undefined when
 * it may, otherwise why not (a 403).
 */
export const eraseRefusal = (caller: Caller, userId: string): string | undefined =>
  caller._tag === "Admin" ? undefined : refusalFor(caller, userId)

/** Whether the caller may use the admin API: None when it may, otherwise why not (a 403). */
export const adminRefusal = (caller: Caller): string | undefined =>
  caller._tag === "User" ? "the admin API needs an admin token" : undefined
