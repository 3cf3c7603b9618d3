/**
 * A typed client of a gligabao server for other Effect applications, derived from the HTTP
 * contract: `const client = yield* makeGligabaoClient("http://127.0.0.1:8080")`, then
 * `client.read.search({ payload: { user_id, query } })`, `client.read.graph({ urlParams: {...} })`,
 * `client.remember.remember({ payload })`, `client.remember.getRun({ path: { id } })`, ... It needs
 * an `HttpClient` (e.g. `FetchHttpClient.layer`).
 *
 * A payload is the request as the server decodes it, defaults included; build a remember payload
 * from a body with `Schema.decodeUnknownSync(RememberRequest)(body)` (or `validateRememberRequest`),
 * and the client encodes it back. Responses are the response schemas' Types (a remember's is a
 * text's or an image's: `isImageBody` tells them apart). Error responses fail with their `{error}`
 * body. The graph endpoint is typed for its JSON form.
 */
import { HttpApiClient } from "@effect/platform"
import type { Effect } from "effect"
import { GligabaoApi } from "./Api.js"

export const makeGligabaoClient = (baseUrl: string | URL) => HttpApiClient.make(GligabaoApi, { baseUrl })

/** The client's type, for signatures in your own code. */
export type GligabaoClient = Effect.Effect.Success<ReturnType<typeof makeGligabaoClient>>
