/** Handlers of the correct group: the `Corrections` service, for the user the token allows. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Corrections } from "../forget/Forgets.js"
import { GligabaoApi } from "./Api.js"
import { requireUser } from "./authentication.js"

/** `effect` for `userId`'s data: Forbidden (403) unless the caller may act for them. */
const asUser = <A, E, R>(userId: string, effect: Effect.Effect<A, E, R>) => Effect.zipRight(requireUser(userId), effect)

export const CorrectHandlersLive = HttpApiBuilder.group(GligabaoApi, "correct", (handlers) =>
  Effect.gen(function*() {
    const corrections = yield* Corrections
    return handlers
      .handle("deleteFact", ({ path, urlParams }) =>
        asUser(urlParams.user_id, corrections.deleteFact({ ...urlParams, id: path.id })))
      .handle("deleteEntity", ({ path, urlParams }) =>
        asUser(urlParams.user_id, corrections.deleteEntity({ ...urlParams, id: path.id })))
      .handle("invalidateFact", ({ path, payload }) =>
        asUser(payload.user_id, corrections.invalidateFact({ ...payload, id: path.id })))
      .handle("reopenFact", ({ path, payload }) =>
        asUser(payload.user_id, corrections.reopenFact({ ...payload, id: path.id })))
      .handle("mergeEntities", ({ payload }) =>
        asUser(payload.user_id, corrections.mergeEntities(payload)))
  }))
