/**
 * Handlers of the admin API and page. The authentication middleware already refused anyone
 * but an admin (or everyone, when `[auth]` is off); these check the caller again, then run and
 * answer. HttpApi has decoded the parameters and path with the contract's schemas.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { adminDatabases } from "../admin/AdminDatabases.js"
import { ADMIN_CSP, adminAsset } from "../admin/assets.js"
import { memoryEntity, memoryFact, memorySearch } from "../admin/memory.js"
import { datasetGraph, getRun, inferenceUsage, listAllDatasets, listDatabases, listRuns } from "../admin/programs.js"
import { currentCaller } from "../auth/Authentication.js"
import { adminRefusal } from "../auth/tokens.js"
import type { DomainError } from "../domain/Errors.js"
import { GligabaoApi } from "./Api.js"
import { domainErrorResponse, errorResponse } from "./responses.js"

type Answer<A> = A | HttpServerResponse.HttpServerResponse

/** A domain failure (an unknown database, run or dataset) as its `{"error"}` response. */
const answer = <A, E extends DomainError>(effect: Effect.Effect<A, E>): Effect.Effect<Answer<A>> =>
  Effect.catchAll(effect, (e) => Effect.succeed(domainErrorResponse(e)))

/**
 * Runs `handle` for an admin (or anyone when `[auth]` is off), otherwise answers 403. The
 * middleware's check goes by the path as URL reads it, but the router reads paths more loosely
 * (case-insensitive, `//` collapsed, `%xx` decoded, `;` ending the path), so a path that
 * looks like no admin path to the middleware can still reach these handlers.
 */
const asAdmin = <A, E, R>(handle: Effect.Effect<Answer<A>, E, R>): Effect.Effect<Answer<A>, E, R> =>
  Effect.flatMap(currentCaller, (caller) => {
    const refusal = adminRefusal(caller)
    return refusal === undefined ? handle : Effect.succeed(errorResponse(403, refusal))
  })

export const AdminApiHandlersLive = HttpApiBuilder.group(GligabaoApi, "admin", (handlers) =>
  Effect.gen(function*() {
    const databases = yield* adminDatabases
    return handlers
      .handle("databases", () => asAdmin(Effect.succeed(listDatabases(databases))))
      .handle("rememberRuns", ({ urlParams }) => asAdmin(answer(listRuns(databases, urlParams))))
      .handle("rememberRun", ({ path, urlParams }) =>
        asAdmin(answer(getRun(databases, { db: urlParams.db, id: path.id }))))
      .handle("inferences", ({ urlParams }) =>
        asAdmin(answer(inferenceUsage(databases, urlParams))))
      .handle("datasets", ({ urlParams }) => asAdmin(answer(listAllDatasets(databases, urlParams))))
      .handle("graph", ({ urlParams }) => asAdmin(answer(datasetGraph(databases, urlParams))))
      .handle("memorySearch", ({ urlParams }) => asAdmin(answer(memorySearch(databases, urlParams))))
      .handle("memoryEntity", ({ urlParams }) => asAdmin(answer(memoryEntity(databases, urlParams))))
      .handle("memoryFact", ({ urlParams }) => asAdmin(answer(memoryFact(databases, urlParams))))
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
