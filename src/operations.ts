/**
 * The operations as library functions: each takes the request as the HTTP API takes it (the
 * schema's encoded side; a plain object), decodes it with the same schema, and runs the same
 * program as the endpoint. A request the API would answer 400 fails with `InvalidRequest`.
 */
import { Effect, type Schema } from "effect"
import { RememberRequest } from "./domain/Remember.js"
import type { RememberSuccess } from "./domain/Responses.js"
import { decodeRequest } from "./domain/Wire.js"
import { RememberManager } from "./pipeline/RememberManager.js"
import { listDatasets, listSessions } from "./query/datasets.js"
import { exportGraph } from "./query/export.js"
import { QueryRequest, ReadScope, SearchRequest } from "./query/requests.js"
import { query, search } from "./query/search.js"

/** The decoded request's run: what `POST /v1/gb/remember` answers. */
export const runRemember = (request: RememberRequest) =>
  Effect.flatMap(RememberManager, (manager) => manager.submit(request)).pipe(
    Effect.map((result): RememberSuccess => ({ remember_run_id: result.runId, ...result.response }))
  )

const decoded = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = decodeRequest(schema)
  return (input: I) => Effect.suspend(() => decode(input))
}

const decodeRemember = decoded(RememberRequest)
const decodeSearch = decoded(SearchRequest)
const decodeQuery = decoded(QueryRequest)
const decodeScope = decoded(ReadScope)

/** Remember a text (or an image): `POST /v1/gb/remember`. */
export const remember = (input: typeof RememberRequest.Encoded) => Effect.flatMap(decodeRemember(input), runRemember)

/** Search a dataset: `POST /v1/gb/search`. */
export const searchMemory = (input: typeof SearchRequest.Encoded) => Effect.flatMap(decodeSearch(input), search)

/** Answer a question from a dataset: `POST /v1/gb/query`. */
export const queryMemory = (input: typeof QueryRequest.Encoded) => Effect.flatMap(decodeQuery(input), query)

/** A dataset's entities, facts and artifacts: `GET /v1/gb/graph` (JSON). */
export const exportMemory = (input: typeof ReadScope.Encoded & { readonly include_expired?: boolean }) =>
  Effect.flatMap(
    decodeScope(input),
    (scope) => exportGraph({ ...scope, format: "json", include_expired: input.include_expired ?? false })
  )

/** A user's datasets: `GET /v1/gb/datasets`. */
export const datasetsOf = (userId: string) =>
  Effect.flatMap(decodeScope({ user_id: userId }), (scope) => listDatasets(scope.user_id))

/** A dataset's sessions: `GET /v1/gb/sessions`. */
export const sessionsOf = (input: typeof ReadScope.Encoded) => Effect.flatMap(decodeScope(input), listSessions)
