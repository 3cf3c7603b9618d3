/**
 * A typed client of a gligabao server for other Effect applications, derived from the HTTP
 * contract: `const client = yield* makeGligabaoClient("http://127.0.0.1:8080")`, then
 * `client.read.search({ payload: { user_id, query } })`, `client.read.graph({ urlParams: {...} })`,
 * `client.remember.remember({ payload })`, ... It needs an `HttpClient` (e.g. `FetchHttpClient.layer`).
 * Error responses fail with their `{error}` body. The graph endpoint is typed for its JSON form.
 */
import { HttpApiClient } from "@effect/platform"
import type { Effect } from "effect"
import { GligabaoApi } from "./Api.js"

export const makeGligabaoClient = (baseUrl: string | URL) => HttpApiClient.make(GligabaoApi, { baseUrl })

/** The client's type, for signatures in your own code. */
export type GligabaoClient = Effect.Effect.Success<ReturnType<typeof makeGligabaoClient>>
