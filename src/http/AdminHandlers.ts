/**
 * Handlers of the admin API and page. The authentication middleware already refused anyone
 * but an admin (or everyone, when `[auth]` is off); these check the caller again, then validate,
 * run, and map the outcome.
 */
import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Either, Layer } from "effect"
import { adminDatabases } from "../admin/AdminDatabases.js"
import { ADMIN_CSP, adminAsset } from "../admin/assets.js"
import { datasetGraph, getRun, inferenceUsage, listAllDatasets, listDatabases, listRuns } from "../admin/programs.js"
import {
  type Params,
  validateAdminGraphRequest,
  validateDatasetsRequest,
  validateRunRequest,
  validateRunsRequest,
  validateUsageRequest
} from "../admin/requests.js"
import { currentCaller } from "../auth/Authentication.js"
import { adminRefusal } from "../auth/tokens.js"
import type { DomainError, InvalidRequest } from "../domain/Errors.js"
import { GligabaoApi } from "./Api.js"
import { domainErrorResponse, errorResponse, jsonResponse } from "./responses.js"

const paramsOf = (request: HttpServerRequest.HttpServerRequest): Params =>
  Object.fromEntries(new URL(request.url, "http://x").searchParams)

const answer = <A, E extends DomainError>(
  valid: Either.Either<A, InvalidRequest>,
  run: (request: A) => Effect.Effect<unknown, E>
) =>
  Either.match(valid, {
    onLeft: (e) => Effect.succeed(domainErrorResponse(e)),
    onRight: (request) =>
      Effect.match(run(request), { onFailure: domainErrorResponse, onSuccess: (body) => jsonResponse(body) })
  })

/**
 * Runs `handle` for an admin (or anyone when `[auth]` is off), otherwise answers 403. The
 * middleware's check goes by the path as URL reads it, but the router reads paths more loosely
 * (case-insensitive, `//` collapsed, `%xx` decoded, `;` ending the path), so a path that
 * looks like no admin path to the middleware can still reach these handlers.
 */
const asAdmin = <E, R>(handle: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(currentCaller, (caller) => {
    const refusal = adminRefusal(caller)
    return refusal === undefined ? handle : Effect.succeed(errorResponse(403, refusal))
  })

export const AdminApiHandlersLive = HttpApiBuilder.group(GligabaoApi, "admin", (handlers) =>
  Effect.gen(function*() {
    const databases = yield* adminDatabases
    return handlers
      .handleRaw("databases", () => asAdmin(Effect.succeed(jsonResponse(listDatabases(databases)))))
      .handleRaw("rememberRuns", ({ request }) =>
        asAdmin(answer(validateRunsRequest(paramsOf(request)), (r) => listRuns(databases, r))))
      .handleRaw("rememberRun", ({ path, request }) =>
        asAdmin(answer(validateRunRequest(paramsOf(request), path.id), (r) =>
          getRun(databases, r))))
      .handleRaw("inferences", ({ request }) =>
        asAdmin(Effect.flatMap(Clock.currentTimeMillis, (now) =>
          answer(validateUsageRequest(paramsOf(request), now), (r) =>
            inferenceUsage(databases, r)))))
      .handleRaw("datasets", ({ request }) =>
        asAdmin(answer(validateDatasetsRequest(paramsOf(request)), (r) =>
          listAllDatasets(databases, r))))
      .handleRaw("graph", ({ request }) =>
        asAdmin(answer(validateAdminGraphRequest(paramsOf(request)), (r) =>
          datasetGraph(databases, r))))
  }))

const serveAsset = (name: string) =>
  Effect.sync(() => {
    const asset = adminAsset(name)
    if (asset === undefined) return errorResponse(404, `no admin asset ${JSON.stringify(name)}`)
    return HttpServerResponse.uint8Array(asset.body, {
      contentType: asset.contentType,
      headers: {
        "content-security-policy": ADMIN_CSP,
        "x-content-type-options": "nosniff",
        "cache-control": "no-cache",
        "referrer-policy": "no-referrer"
      }
    })
  })

export const AdminPageHandlersLive = HttpApiBuilder.group(GligabaoApi, "adminPage", (handlers) =>
  handlers
    // the router answers /v1/gb/admin too, where the page's relative asset links would miss
    .handleRaw("page", ({ request }) =>
      request.url.split(/[?#]/, 1)[0]!.endsWith("/")
        ? serveAsset("index.html")
        : Effect.succeed(HttpServerResponse.redirect("/v1/gb/admin/", { status: 308 })))
    .handleRaw("asset", ({ path }) => (path.name === "index.html"
      ? Effect.succeed(errorResponse(404, "no admin asset \"index.html\""))
      : serveAsset(path.name))))

export const AdminHandlersLive = Layer.mergeAll(AdminApiHandlersLive, AdminPageHandlersLive)
