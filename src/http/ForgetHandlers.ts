/** Handlers of the forget and users groups: the programs of src/forget, for the user the token allows. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { type DomainError, ServiceUnavailable } from "../domain/Errors.js"
import { forgetDepsOption } from "../forget/deps.js"
import { eraseDepsOption, forgetUser } from "../forget/erase.js"
import { forgetArtifact, type ForgetDeps } from "../forget/forgetArtifact.js"
import { forgetImage } from "../forget/forgetImage.js"
import { ImageStore } from "../services/ImageStore.js"
import { GligabaoApi } from "./Api.js"
import { requireUser, requireUserOrAdmin } from "./authentication.js"
import { guarded } from "./guarded.js"

const unavailable = "forget needs storage, which is not configured on this server"

export const ForgetHandlersLive = HttpApiBuilder.group(GligabaoApi, "forget", (handlers) =>
  Effect.gen(function*() {
    const found = yield* forgetDepsOption
    const images = yield* Effect.serviceOption(ImageStore)
    const asUser = <A>(userId: string, program: (deps: ForgetDeps) => Effect.Effect<A, DomainError>) =>
      guarded(requireUser(userId), found, unavailable, program)
    return handlers
      .handle("forgetArtifact", ({ path, urlParams }) =>
        asUser(urlParams.user_id, (deps) => forgetArtifact(deps, urlParams, path.id)))
      .handle("forgetImage", ({ path, urlParams }) =>
        asUser(urlParams.user_id, (deps) =>
          Option.match(images, {
            onNone: () =>
              Effect.fail(new ServiceUnavailable({ message: "no image store is configured" })),
            onSome: (store) => forgetImage({ ...deps, images: store }, urlParams, path.id)
          })))
  }))

/** `DELETE /v1/gb/users/{user_id}`: the user's own token, or an admin token. */
export const UsersHandlersLive = HttpApiBuilder.group(GligabaoApi, "users", (handlers) =>
  Effect.gen(function*() {
    const found = yield* eraseDepsOption
    return handlers.handle("forgetUser", ({ path }) =>
      guarded(requireUserOrAdmin(path.user_id), found, unavailable, (deps) =>
        forgetUser(deps, path.user_id)))
  }))
