/**
 * The operations as library functions: each takes the request as the HTTP API takes it (the
 * schema's encoded side; a plain object), decodes it with the same schema, and runs the same
 * program as the endpoint. A request the API would answer 400 fails with `InvalidRequest`.
 */
import { Effect, Option, type Schema } from "effect"
import { DatasetSchemaDocument } from "./domain/DatasetSchema.js"
import { IdempotencyConflict, InvalidRequest, ServiceUnavailable, statusOf } from "./domain/Errors.js"
import { batchRequests, RememberBatchRequest, RememberRequest } from "./domain/Remember.js"
import type { RememberBatchQueued, RememberBatchResult, RememberSuccess } from "./domain/Responses.js"
import { CancelQueuedRequest, CancelRunRequest } from "./domain/runView.js"
import { decodeRequest } from "./domain/Wire.js"
import { correctWith } from "./forget/correct.js"
import { Corrections, Forgets } from "./forget/Forgets.js"
import { ForgetArtifactRequest, ForgetUserRequest, HardDeleteRequest } from "./forget/requests.js"
import { CorrectRequest } from "./forget/schemas.js"
import { RememberManager } from "./pipeline/RememberManager.js"
import { Reads } from "./query/Reads.js"
import { ContextRequest, QueryRequest, ReadScope, SearchRequest } from "./query/requests.js"
import { RunLogRepo } from "./services/RunLogRepo.js"

/** The decoded request's run: what `POST /v1/gb/remember` answers. */
export const runRemember = (request: RememberRequest) =>
  Effect.flatMap(RememberManager, (manager) => manager.submit(request)).pipe(
    Effect.map((result): RememberSuccess => ({ remember_run_id: result.runId, ...result.response }))
  )

/** What a batch answers: its runs once queued (a 202), or with `wait`, each item's outcome (a 200). */
export type RememberBatchOutcome =
  | { readonly _tag: "Queued"; readonly body: RememberBatchQueued }
  | { readonly _tag: "Done"; readonly body: RememberBatchResult }

/**
 * The decoded batch's runs (`POST /v1/gb/remember/batch`): queued in item order in one
 * transaction; an item whose Idempotency-Key names another request is a 422 naming it, a batch
 * on a server without an LLM a 503, and nothing is queued.
 */
export const runRememberBatch = (batch: RememberBatchRequest) =>
  Effect.gen(function*() {
    const manager = yield* RememberManager
    const runLog = yield* RunLogRepo
    const requests = batchRequests(batch)
    const runs = yield* manager.acceptMany(requests.map((request) => ({
      request,
      idempotencyKey: request.idempotency_key
    }))).pipe(
      Effect.mapError(({ error, index }) => {
        switch (error._tag) {
          case "IdempotencyConflict":
            return new IdempotencyConflict({ message: `items[${index}].idempotency_key: ${error.message}` })
          case "ServiceUnavailable":
            return new ServiceUnavailable({ message: `items[${index}]: ${error.message}` })
          case "InvalidRequest":
            return new InvalidRequest({ message: `items[${index}]: ${error.message}` })
        }
      })
    )
    if (batch.wait !== true) {
      const queued = yield* Effect.forEach(runs, (run) =>
        run.created
          ? Effect.succeed({ remember_run_id: run.runId, status: "queued" as const })
          : Effect.map(runLog.get(run.runId), (row) => ({
            remember_run_id: run.runId,
            status: Option.match(row, { onNone: () => "queued" as const, onSome: (r) => r.status })
          })))
      return { _tag: "Queued", body: { runs: queued } } satisfies RememberBatchOutcome as RememberBatchOutcome
    }
    const items = yield* Effect.forEach(runs, (run) =>
      run.await.pipe(
        Effect.match({
          onFailure: (e) => ({ error: e.message, status: statusOf(e) }),
          onSuccess: (result): RememberSuccess => ({ remember_run_id: result.runId, ...result.response })
        })
      ), { concurrency: "unbounded" })
    return { _tag: "Done", body: { items } } satisfies RememberBatchOutcome as RememberBatchOutcome
  })

const decoded = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = decodeRequest(schema)
  return (input: I) => Effect.suspend(() => decode(input))
}

const decodeRemember = decoded(RememberRequest)
const decodeSearch = decoded(SearchRequest)
const decodeQuery = decoded(QueryRequest)
const decodeContext = decoded(ContextRequest)
const decodeScope = decoded(ReadScope)

/** Remember a text (or an image): `POST /v1/gb/remember`. */
export const remember = (input: typeof RememberRequest.Encoded) => Effect.flatMap(decodeRemember(input), runRemember)

const decodeBatch = decoded(RememberBatchRequest)

/** Remember many texts (or images) of one user and dataset: `POST /v1/gb/remember/batch`. */
export const rememberBatch = (input: typeof RememberBatchRequest.Encoded) =>
  Effect.flatMap(decodeBatch(input), runRememberBatch)

const decodeCancelRun = decoded(CancelRunRequest)
const decodeCancelQueued = decoded(CancelQueuedRequest)

/** Cancel a queued remember run (a started one finishes: a Conflict): `POST /v1/gb/runs/{id}/cancel`. */
export const cancelRun = (input: typeof CancelRunRequest.Encoded & { readonly id: number }) =>
  Effect.flatMap(
    decodeCancelRun({ user_id: input.user_id }),
    (request) => Effect.flatMap(RememberManager, (manager) => manager.cancel({ ...request, id: input.id }))
  )

/** Cancel every queued run of a user, or of one dataset of theirs: `gligabao runs cancel --queued`. */
export const cancelQueuedRuns = (input: typeof CancelQueuedRequest.Encoded) =>
  Effect.flatMap(
    decodeCancelQueued(input),
    (request) => Effect.flatMap(RememberManager, (manager) => manager.cancelQueued(request))
  )

/** Search a dataset: `POST /v1/gb/search`. */
export const searchMemory = (input: typeof SearchRequest.Encoded) =>
  Effect.flatMap(decodeSearch(input), (request) => Effect.flatMap(Reads, (reads) => reads.search(request)))

/** A context block for a prompt, cut to `max_tokens` (no LLM): `POST /v1/gb/context`. */
export const contextMemory = (input: typeof ContextRequest.Encoded) =>
  Effect.flatMap(decodeContext(input), (request) => Effect.flatMap(Reads, (reads) => reads.context(request)))

/** Answer a question from a dataset: `POST /v1/gb/query`. */
export const queryMemory = (input: typeof QueryRequest.Encoded) =>
  Effect.flatMap(decodeQuery(input), (request) => Effect.flatMap(Reads, (reads) => reads.query(request)))

/** A dataset's entities, facts and artifacts: `GET /v1/gb/graph` (JSON). */
export const exportMemory = (input: typeof ReadScope.Encoded & { readonly include_expired?: boolean }) =>
  Effect.flatMap(
    // the scope alone is decoded strictly: include_expired is this function's own option
    decodeScope({ user_id: input.user_id, ...(input.dataset === undefined ? {} : { dataset: input.dataset }) }),
    (scope) =>
      Effect.flatMap(
        Reads,
        (reads) => reads.exportGraph({ ...scope, format: "json", include_expired: input.include_expired ?? false })
      )
  )

/** A user's datasets: `GET /v1/gb/datasets`. */
export const datasetsOf = (userId: string) =>
  Effect.flatMap(
    decodeScope({ user_id: userId }),
    (scope) => Effect.flatMap(Reads, (reads) => reads.datasets(scope.user_id))
  )

/** A dataset's sessions: `GET /v1/gb/sessions`. */
export const sessionsOf = (input: typeof ReadScope.Encoded) =>
  Effect.flatMap(decodeScope(input), (scope) => Effect.flatMap(Reads, (reads) => reads.sessions(scope)))

/** Soft-delete a dataset (its rows stay; the name starts afresh): `DELETE /v1/gb/datasets/{name}`. */
export const deleteDatasetMemory = (input: typeof ReadScope.Encoded) =>
  Effect.flatMap(decodeScope(input), (scope) => Effect.flatMap(Reads, (reads) => reads.deleteDataset(scope)))

/** A dataset's schema, the empty one when it has none: `GET /v1/gb/datasets/{name}/schema` (docs/SCHEMA.md). */
export const datasetSchemaOf = (input: typeof ReadScope.Encoded) =>
  Effect.flatMap(decodeScope(input), (scope) => Effect.flatMap(Reads, (reads) => reads.datasetSchema(scope)))

const decodeSchema = decoded(DatasetSchemaDocument)

/**
 * Set a dataset's schema (created when it is not there yet), for the remembers that start after
 * it; the stored graph is not rewritten: `PUT /v1/gb/datasets/{name}/schema` (docs/SCHEMA.md).
 */
export const setDatasetSchema = (input: typeof ReadScope.Encoded & { readonly schema: unknown }) =>
  Effect.flatMap(
    Effect.all([decodeScope({ user_id: input.user_id, dataset: input.dataset }), decodeSchema(input.schema as never)]),
    ([scope, schema]) => Effect.flatMap(Reads, (reads) => reads.setDatasetSchema(scope, schema))
  )

const decodeHardDelete = decoded(HardDeleteRequest)

/**
 * Hard-delete a dataset: every row of the name (soft-deleted ones too), everything in them, the
 * user's runs of it, their vectors and image files: `DELETE /v1/gb/datasets/{name}?hard=true`.
 */
export const hardDeleteDatasetMemory = (input: typeof HardDeleteRequest.Encoded) =>
  Effect.flatMap(
    decodeHardDelete(input),
    (request) => Effect.flatMap(Forgets, (forgets) => forgets.hardDeleteDataset(request))
  )

const decodeForgetUser = decoded(ForgetUserRequest)

/** Forget a user: every dataset, run, vector and image file of theirs: `DELETE /v1/gb/users/{user_id}`. */
export const forgetUserMemory = (input: typeof ForgetUserRequest.Encoded) =>
  Effect.flatMap(
    decodeForgetUser(input),
    (request) => Effect.flatMap(Forgets, (forgets) => forgets.forgetUser(request))
  )

const decodeForgetArtifact = decoded(ForgetArtifactRequest)

/**
 * Forget an artifact, and what was derived from it and what it caused:
 * `DELETE /v1/gb/artifacts/{id}?user_id=&dataset=`.
 */
export const forgetArtifactMemory = (input: typeof ForgetArtifactRequest.Encoded) =>
  Effect.flatMap(
    decodeForgetArtifact(input),
    (request) => Effect.flatMap(Forgets, (forgets) => forgets.forgetArtifact(request))
  )

const decodeCorrect = decoded(CorrectRequest)

/**
 * Correct the memory, one `action` at a time as MCP's `correct` tool does: close, reopen,
 * delete_fact, delete_entity or merge (the endpoints of docs/FORGET.md, Corrections by hand).
 */
export const correctMemory = (input: typeof CorrectRequest.Encoded) =>
  Effect.flatMap(
    decodeCorrect(input),
    (request) => Effect.flatMap(Corrections, (corrections) => correctWith(corrections, request))
  )
