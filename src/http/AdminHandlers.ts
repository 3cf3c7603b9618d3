/**
 * Handlers of the admin API and page. The authentication middleware already refused anyone
 * but an admin (or everyone, when `[auth]` is off); these check the caller again, then run; a
 * failure (an unknown database, run or dataset) stays a domain error. HttpApi has decoded the parameters and path with the contract's schemas.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { AdminDatabases } from "../admin/AdminDatabases.js"
import { ADMIN_CSP, adminAsset } from "../admin/assets.js"
import { memoryEntity, memoryFact, memorySearch } from "../admin/memory.js"
import { datasetGraph, getRun, inferenceUsage, listAllDatasets, listDatabases, listRuns } from "../admin/programs.js"
import { currentCaller } from "../auth/Authentication.js"
import { adminRefusal } from "../auth/tokens.js"
import { Forbidden } from "../domain/Errors.js"
import { GligabaoApi } from "./Api.js"
import { errorResponse } from "./responses.js"

/**
 * Runs `handle` for an admin (or anyone when `[auth]` is off), otherwise fails with Forbidden. The
 * middleware's check goes by the path as URL reads it, but the router reads paths more loosely
 * (case-insensitive, `//` collapsed, `%xx` decoded, `;` ending the path), so a path that
 * looks like no admin path to the middleware can still reach these handlers.
 */
const asAdmin = <A, E, R>(handle: Effect.Effect<A, E, R>): Effect.Effect<A, E | Forbidden, R> =>
  Effect.flatMap(currentCaller, (caller): Effect.Effect<A, E | Forbidden, R> => {
    const refusal = adminRefusal(caller)
    return refusal === undefined ? handle : Effect.fail(new Forbidden({ message: refusal }))
  })

export const AdminApiHandlersLive = HttpApiBuilder.group(GligabaoApi, "admin", (handlers) =>
  Effect.gen(function*() {
    const databases = yield* AdminDatabases
    return handlers
      .handle("databases", () => asAdmin(Effect.succeed(listDatabases(databases))))
      .handle("rememberRuns", ({ urlParams }) => asAdmin(listRuns(databases, urlParams)))
      .handle("rememberRun", ({ path, urlParams }) => asAdmin(getRun(databases, { db: urlParams.db, id: path.id })))
      .handle("inferences", ({ urlParams }) => asAdmin(inferenceUsage(databases, urlParams)))
      .handle("datasets", ({ urlParams }) => asAdmin(listAllDatasets(databases, urlParams)))
      .handle("graph", ({ urlParams }) => asAdmin(datasetGraph(databases, urlParams)))
      .handle("memorySearch", ({ urlParams }) => asAdmin(memorySearch(databases, urlParams)))
      .handle("memoryEntity", ({ urlParams }) => asAdmin(memoryEntity(databases, urlParams)))
      .handle("memoryFact", ({ urlParams }) => asAdmin(memoryFact(databases, urlParams)))
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
