/** Handlers of the correct group: the programs of src/forget/corrections.ts, for the user the token allows. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import type { DomainError } from "../domain/Errors.js"
import { deleteEntity, deleteFact, invalidateFact, mergeEntities, reopenFact } from "../forget/corrections.js"
import { forgetDepsOption } from "../forget/deps.js"
import type { ForgetDeps } from "../forget/forgetArtifact.js"
import { GligabaoApi } from "./Api.js"
import { requireUser } from "./authentication.js"
import { guarded } from "./guarded.js"

const unavailable = "corrections need storage, which is not configured on this server"

export const CorrectHandlersLive = HttpApiBuilder.group(GligabaoApi, "correct", (handlers) =>
  Effect.gen(function*() {
    const found = yield* forgetDepsOption
    const asUser = <A>(userId: string, program: (deps: ForgetDeps) => Effect.Effect<A, DomainError>) =>
      guarded(requireUser(userId), found, unavailable, program)
    return handlers
      .handle("deleteFact", ({ path, urlParams }) =>
        asUser(urlParams.user_id, (deps) => deleteFact(deps, urlParams, path.id)))
      .handle("deleteEntity", ({ path, urlParams }) =>
        asUser(urlParams.user_id, (deps) =>
          deleteEntity(deps, urlParams, path.id)))
      .handle("invalidateFact", ({ path, payload }) =>
        asUser(payload.user_id, (deps) =>
          invalidateFact(deps, path.id, payload)))
      .handle("reopenFact", ({ path, payload }) =>
        asUser(payload.user_id, (deps) =>
          reopenFact(deps, path.id, payload)))
      .handle("mergeEntities", ({ payload }) =>
        asUser(payload.user_id, (deps) => mergeEntities(deps, payload)))
  }))
