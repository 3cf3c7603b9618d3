/**
 * Two users' plain tokens and requests sent with one of them, or with none: the HTTP tests of
 * who may read what.
 */
import { HttpClientRequest } from "@effect/platform"
import { Redacted } from "effect"
import type { AuthToken } from "../../src/config/tables.js"
import { send } from "./http.js"

export const SECRETS = { alice: "alice-token-Q8r2p", bob: "bob-token-T4v7n" } as const

/** alice's and bob's tokens, neither an admin's */
export const USER_TOKENS: ReadonlyArray<AuthToken> = [
  { kind: "plain", secret: Redacted.make(SECRETS.alice), admin: false, userId: "alice" },
  { kind: "plain", secret: Redacted.make(SECRETS.bob), admin: false, userId: "bob" }
]

const withToken = (request: HttpClientRequest.HttpClientRequest, secret: string | undefined) =>
  secret === undefined ? request : request.pipe(HttpClientRequest.bearerToken(secret))

/** GET `path` with the bearer token `secret`, or without a token */
export const getAs = (path: string, secret?: string) => send(withToken(HttpClientRequest.get(path), secret))

/** POST `body` as JSON to `path` with the bearer token `secret`, or without a token */
export const postAs = (path: string, body: unknown, secret?: string) =>
  send(withToken(HttpClientRequest.post(path).pipe(HttpClientRequest.bodyUnsafeJson(body)), secret))
