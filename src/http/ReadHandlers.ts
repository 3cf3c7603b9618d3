/**
 * Handlers of the read group: validate, run the program of src/query, map the outcome. Every
 * read names a user (and a dataset, default main) and sees only that user's dataset.
 */
import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Option, Stream } from "effect"
import type { DomainError, InvalidRequest } from "../domain/Errors.js"
import { runDeleteDataset, runListDatasets, runListSessions } from "../query/datasets.js"
import { type ReadDeps, readDepsOption } from "../query/deps.js"
import { runExportGraph } from "../query/export.js"
import {
  validateGraphRequest,
  validateQueryRequest,
  validateScope,
  validateSearchRequest,
  validateUserId
} from "../query/requests.js"
import { runQuery, runSearch } from "../query/search.js"
import { GligabaoApi } from "./Api.js"
import { actingFor } from "./authentication.js"
import { readJsonUpTo } from "./readBody.js"
import { domainErrorResponse, errorResponse, jsonResponse } from "./responses.js"

/** A search or query body: an 8 KiB query and a few fields fit many times over. */
export const READ_BODY_LIMIT = 64 * 1024

const GRAPH_PARAMS = ["user_id", "dataset", "format", "as_of", "known_at", "include_expired", "session_id", "kind"]

/** The named query parameters (the first value of each), absent ones undefined. */
const queryParams = (request: HttpServerRequest.HttpServerRequest, names: ReadonlyArray<string>) => {
  const search = new URL(request.url, "http://x").searchParams
  return Object.fromEntries(names.map((n) => [n, search.get(n) ?? undefined])) as Record<string, string | undefined>
}

const respond = <A, E extends DomainError>(effect: Effect.Effect<A, E>) =>
  Effect.match(effect, { onFailure: domainErrorResponse, onSuccess: (body) => jsonResponse(body) })

const invalid = (e: InvalidRequest) => Effect.succeed(domainErrorResponse(e))

const unavailable = errorResponse(503, "the read endpoints need storage, which is not configured on this server")

export const ReadHandlersLive = HttpApiBuilder.group(GligabaoApi, "read", (handlers) =>
  Effect.gen(function*() {
    // Optional, as for images: an app composed without storage still serves everything else.
    const found = yield* readDepsOption
    const withDeps = <E, R>(f: (deps: ReadDeps) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      Option.match(found, { onNone: () => Effect.succeed(unavailable), onSome: f })
    return handlers
      .handleRaw("search", ({ request }) =>
        withDeps((deps) =>
          Effect.gen(function*() {
            const body = yield* readJsonUpTo(request, READ_BODY_LIMIT)
            if (Either.isLeft(body)) return body.left
            return yield* Either.match(validateSearchRequest(body.right), {
              onLeft: invalid,
              onRight: (valid) => actingFor(valid.user_id, respond(runSearch(deps, valid)))
            })
          })
        ))
      .handleRaw("query", ({ request }) =>
        withDeps((deps) =>
          Effect.gen(function*() {
            const body = yield* readJsonUpTo(request, READ_BODY_LIMIT)
            if (Either.isLeft(body)) return body.left
            return yield* Either.match(validateQueryRequest(body.right), {
              onLeft: invalid,
              onRight: (valid) => actingFor(valid.user_id, respond(runQuery(deps, valid)))
            })
          })
        ))
      .handleRaw("graph", ({ request }) =>
        withDeps((deps) =>
          Either.match(validateGraphRequest(queryParams(request, GRAPH_PARAMS)), {
            onLeft: invalid,
            onRight: (valid) =>
              actingFor(
                valid.user_id,
                Effect.match(runExportGraph(deps, valid), {
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
          })
        ))
      .handleRaw("listDatasets", ({ request }) =>
        withDeps((deps) =>
          Either.match(validateUserId(queryParams(request, ["user_id"])), {
            onLeft: invalid,
            onRight: (userId) =>
              actingFor(userId, respond(runListDatasets(deps, userId)))
          })
        ))
      .handleRaw("deleteDataset", ({ path, request }) =>
        withDeps((deps) =>
          Either.match(validateScope({ ...queryParams(request, ["user_id"]), dataset: path.name }), {
            onLeft: invalid,
            onRight: (scope) =>
              actingFor(scope.user_id, respond(runDeleteDataset(deps, scope)))
          })
        ))
      .handleRaw("listSessions", ({ request }) =>
        withDeps((deps) =>
          Either.match(validateScope(queryParams(request, ["user_id", "dataset"])), {
            onLeft: invalid,
            onRight: (scope) =>
              actingFor(scope.user_id, respond(runListSessions(deps, scope)))
          })
        ))
  }))
