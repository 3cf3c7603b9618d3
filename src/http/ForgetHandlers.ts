/** Handlers of the forget and users groups: the `Forgets` service, for the user the token allows. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Forgets } from "../forget/Forgets.js"
import { GligabaoApi } from "./Api.js"
import { requireUser, requireUserOrAdmin } from "./authentication.js"

export const ForgetHandlersLive = HttpApiBuilder.group(GligabaoApi, "forget", (handlers) =>
  Effect.gen(function*() {
    const forgets = yield* Forgets
    return handlers
      .handle("forgetArtifact", ({ path, urlParams }) =>
        Effect.zipRight(
          requireUser(urlParams.user_id),
          forgets.forgetArtifact({ ...urlParams, artifact_id: path.id })
        ))
      .handle("forgetImage", ({ path, urlParams }) =>
        Effect.zipRight(requireUser(urlParams.user_id), forgets.forgetImage({ ...urlParams, id: path.id })))
  }))

/** `DELETE /v1/gb/users/{user_id}`: the user's own token, or an admin token. */
export const UsersHandlersLive = HttpApiBuilder.group(GligabaoApi, "users", (handlers) =>
  Effect.gen(function*() {
    const forgets = yield* Forgets
    return handlers.handle("forgetUser", ({ path }) =>
      Effect.zipRight(requireUserOrAdmin(path.user_id), forgets.forgetUser(path)))
  }))
