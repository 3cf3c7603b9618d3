/**
 * Handlers of the read group: decode, run the program of src/query, answer. HttpApi has
 * already decoded the path and URL parameters with the contract's schemas; search, query and
 * context read their bodies here (the size limit comes before any JSON is parsed) and decode
 * them with the payload's schema. Every read names a user (and a dataset, default main) and
 * sees only that user's dataset.
 */
import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Option, Stream } from "effect"
import type { DomainError, InvalidRequest } from "../domain/Errors.js"
import { eraseDepsOption, hardDeleteDataset } from "../forget/erase.js"
import { RunScheduler } from "../pipeline/RunScheduler.js"
import { runContext } from "../query/context.js"
import { runDeleteDataset, runListDatasets, runListSessions } from "../query/datasets.js"
import { type ReadDeps, readDepsOption } from "../query/deps.js"
import { runEntityStory } from "../query/entity.js"
import { runExportGraph } from "../query/export.js"
import { runFactView } from "../query/fact.js"
import { validateContextRequest, validateQueryRequest, validateSearchRequest } from "../query/requests.js"
import { runQuery, runSearch } from "../query/search.js"
import { GligabaoApi } from "./Api.js"
import { refuseCaller, refuseUnlessUserOrAdmin } from "./authentication.js"
import { readJsonUpTo } from "./readBody.js"
import { domainErrorResponse, errorResponse } from "./responses.js"

/** A search, query or context body: an 8 KiB query and a few fields fit many times over. */
export const READ_BODY_LIMIT = 64 * 1024

type Answer<A> = A | HttpServerResponse.HttpServerResponse

/** The body read with its limit, then decoded; a problem with either is its response. */
const readRequest = <A>(
  request: HttpServerRequest.HttpServerRequest,
  decode: (body: unknown) => Either.Either<A, InvalidRequest>
): Effect.Effect<Either.Either<A, HttpServerResponse.HttpServerResponse>> =>
  Effect.map(
    readJsonUpTo(request, READ_BODY_LIMIT),
    Either.flatMap((body) => Either.mapLeft(decode(body), domainErrorResponse))
  )

/** Runs `effect` when the caller may act for `userId`; otherwise answers the 403. */
const asUser = <A, E, R>(userId: string, effect: Effect.Effect<Answer<A>, E, R>): Effect.Effect<Answer<A>, E, R> =>
  Effect.flatMap(refuseCaller(userId), Option.match({ onSome: Effect.succeed, onNone: () => effect }))

/** A domain failure as its `{"error"}` response. */
const orErrorResponse = <A, E extends DomainError>(effect: Effect.Effect<A, E>): Effect.Effect<Answer<A>> =>
  Effect.catchAll(effect, (e) => Effect.succeed(domainErrorResponse(e)))

const unavailable = errorResponse(503, "the read endpoints need storage, which is not configured on this server")

export const ReadHandlersLive = HttpApiBuilder.group(GligabaoApi, "read", (handlers) =>
  Effect.gen(function*() {
    // Optional, as for images: an app composed without storage still serves everything else.
    const found = yield* readDepsOption
    const erasing = yield* eraseDepsOption
    // the remember runs take shorter slices while a search, query or context is answered
    const { reading } = yield* RunScheduler
    const withDeps = <A, E, R>(f: (deps: ReadDeps) => Effect.Effect<Answer<A>, E, R>): Effect.Effect<Answer<A>, E, R> =>
      Option.match(found, { onNone: () => Effect.succeed(unavailable), onSome: f })
    return handlers
      .handleRaw("search", ({ request }) =>
        withDeps((deps) =>
          Effect.flatMap(
            readRequest(request, validateSearchRequest),
            Either.match({
              onLeft: Effect.succeed,
              onRight: (valid) => asUser(valid.user_id, orErrorResponse(reading(runSearch(deps, valid))))
            })
          )
        ))
      .handleRaw("query", ({ request }) =>
        withDeps((deps) =>
          Effect.flatMap(
            readRequest(request, validateQueryRequest),
            Either.match({
              onLeft: Effect.succeed,
              onRight: (valid) => asUser(valid.user_id, orErrorResponse(reading(runQuery(deps, valid))))
            })
          )
        ))
      .handleRaw("context", ({ request }) =>
        withDeps((deps) =>
          Effect.flatMap(
            readRequest(request, validateContextRequest),
            Either.match({
              onLeft: Effect.succeed,
              onRight: (valid) => asUser(valid.user_id, orErrorResponse(reading(runContext(deps, valid))))
            })
          )
        ))
      // streamed: the response is built here, the schema documents (and types the client for) its JSON form
      .handleRaw("graph", ({ urlParams }) =>
        withDeps((deps) =>
          asUser(
            urlParams.user_id,
            Effect.match(runExportGraph(deps, urlParams), {
              onFailure: domainErrorResponse,
              onSuccess: (exported) =>
                HttpServerResponse.stream(exported.body.pipe(Stream.encodeText), {
                  contentType: exported.contentType,
                  headers: exported.format === "graphml"
                    ? { "content-disposition": `attachment; filename="${exported.filename}"` }
                    : {}
                })
            })
          )
        ))
      .handle("getEntity", ({ path, urlParams }) =>
        withDeps((deps) =>
          asUser(urlParams.user_id, orErrorResponse(runEntityStory(deps, { ...urlParams, id: path.id })))
        ))
      .handle("findEntity", ({ urlParams }) =>
        withDeps((deps) =>
          asUser(urlParams.user_id, orErrorResponse(runEntityStory(deps, urlParams)))
        ))
      .handle("listDatasets", ({ urlParams }) =>
        withDeps((deps) =>
          asUser(urlParams.user_id, runListDatasets(deps, urlParams.user_id))
        ))
      .handle("deleteDataset", ({ path, urlParams }) => {
        const scope = { user_id: urlParams.user_id, dataset: path.name }
        if (urlParams.hard !== true) {
          return withDeps((deps) =>
            asUser(scope.user_id, orErrorResponse(runDeleteDataset(deps, scope)))
          )
        }
        // a hard delete erases: the user's token, or an admin's (operators honour deletion requests)
        return Option.match(erasing, {
          onNone: () => Effect.succeed(unavailable),
          onSome: (deps) =>
            Effect.flatMap(
              refuseUnlessUserOrAdmin(scope.user_id),
              Option.match({
                onSome: Effect.succeed,
                onNone: () => orErrorResponse(hardDeleteDataset(deps, scope))
              })
            )
        })
      })
      .handle("listSessions", ({ urlParams }) =>
        withDeps((deps) =>
          asUser(urlParams.user_id, orErrorResponse(runListSessions(deps, urlParams)))
        ))
      .handle("getFact", ({ path, urlParams }) =>
        withDeps((deps) =>
          asUser(urlParams.user_id, orErrorResponse(runFactView(deps, { ...urlParams, id: path.id })))
        ))
  }))
