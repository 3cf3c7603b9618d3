/**
 * Handlers of the read group: each checks the caller may act for the request's user and calls
 * the `Reads` service; a failure stays a failure (a domain error), which `jsonErrors` answers
 * with its status. HttpApi has already decoded the path and URL parameters with the contract's
 * schemas; search, query and context read their bodies here (the size limit comes before any
 * JSON is parsed) and decode them with the payload's schema.
 */
import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, type Either, Stream } from "effect"
import type { InvalidRequest } from "../domain/Errors.js"
import { Forgets } from "../forget/Forgets.js"
import { RunScheduler } from "../pipeline/RunScheduler.js"
import { Reads } from "../query/Reads.js"
import { validateContextRequest, validateQueryRequest, validateSearchRequest } from "../query/requests.js"
import { GligabaoApi } from "./Api.js"
import { requireUser, requireUserOrAdmin } from "./authentication.js"
import { readJsonBody } from "./readBody.js"

/** A search, query or context body: an 8 KiB query and a few fields fit many times over. */
export const READ_BODY_LIMIT = 64 * 1024

/** The body read with its limit, then decoded with the payload's schema. */
const readRequest = <A>(
  request: HttpServerRequest.HttpServerRequest,
  decode: (body: unknown) => Either.Either<A, InvalidRequest>
) => Effect.flatMap(readJsonBody(request, READ_BODY_LIMIT), decode)

/** `effect` for `userId`'s data: Forbidden (403) unless the caller may act for them. */
const asUser = <A, E, R>(userId: string, effect: Effect.Effect<A, E, R>) => Effect.zipRight(requireUser(userId), effect)

export const ReadHandlersLive = HttpApiBuilder.group(GligabaoApi, "read", (handlers) =>
  Effect.gen(function*() {
    const reads = yield* Reads
    const forgets = yield* Forgets
    // the remember runs take shorter slices while a search, query or context is answered
    const { reading } = yield* RunScheduler
    return handlers
      .handleRaw("search", ({ request }) =>
        Effect.flatMap(
          readRequest(request, validateSearchRequest),
          (valid) => asUser(valid.user_id, reading(reads.search(valid)))
        ).pipe(Effect.map((body) => HttpServerResponse.unsafeJson(body))))
      .handleRaw("query", ({ request }) =>
        Effect.flatMap(
          readRequest(request, validateQueryRequest),
          (valid) => asUser(valid.user_id, reading(reads.query(valid)))
        ).pipe(Effect.map((body) => HttpServerResponse.unsafeJson(body))))
      .handleRaw("context", ({ request }) =>
        Effect.flatMap(
          readRequest(request, validateContextRequest),
          (valid) => asUser(valid.user_id, reading(reads.context(valid)))
        ).pipe(Effect.map((body) => HttpServerResponse.unsafeJson(body))))
      // streamed: the response is built here, the schema documents (and types the client for) its JSON form
      .handleRaw("graph", ({ urlParams }) =>
        asUser(
          urlParams.user_id,
          Effect.map(reads.exportGraph(urlParams), (exported) =>
            HttpServerResponse.stream(exported.body.pipe(Stream.encodeText), {
              contentType: exported.contentType,
              headers: exported.format === "graphml"
                ? { "content-disposition": `attachment; filename="${exported.filename}"` }
                : {}
            }))
        ))
      .handle("getEntity", ({ path, urlParams }) =>
        asUser(urlParams.user_id, reads.entityStoryById({ ...urlParams, id: path.id })))
      .handle("findEntity", ({ urlParams }) =>
        asUser(urlParams.user_id, reads.entityStory(urlParams)))
      .handle("listDatasets", ({ urlParams }) => asUser(urlParams.user_id, reads.datasets(urlParams.user_id)))
      .handle("deleteDataset", ({ path, urlParams }) => {
        const scope = { user_id: urlParams.user_id, dataset: path.name }
        if (urlParams.hard !== true) return asUser(scope.user_id, reads.deleteDataset(scope))
        // a hard delete erases: the user's token, or an admin's (operators honour deletion requests)
        return Effect.zipRight(requireUserOrAdmin(scope.user_id), forgets.hardDeleteDataset(scope))
      })
      .handle("listSessions", ({ urlParams }) => asUser(urlParams.user_id, reads.sessions(urlParams)))
      .handle("getFact", ({ path, urlParams }) =>
        asUser(urlParams.user_id, reads.factView({ ...urlParams, id: path.id })))
      .handle("getDatasetSchema", ({ path, urlParams }) =>
        asUser(urlParams.user_id, reads.datasetSchema({ user_id: urlParams.user_id, dataset: path.name })))
      .handle("setDatasetSchema", ({ path, payload, urlParams }) =>
        asUser(urlParams.user_id, reads.setDatasetSchema({ user_id: urlParams.user_id, dataset: path.name }, payload)))
  }))
