/** Handlers of the forget and users groups: the programs of src/forget, for the user the token allows. */
import { HttpApiBuilder, type HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { forgetDepsOption } from "../forget/deps.js"
import { eraseDepsOption, forgetUser } from "../forget/erase.js"
import { forgetArtifact } from "../forget/forgetArtifact.js"
import type { ForgetArtifactResponse, ForgetUserResponse } from "../forget/schemas.js"
import { GligabaoApi } from "./Api.js"
import { refuseCaller, refuseUnlessUserOrAdmin } from "./authentication.js"
import { domainErrorResponse, errorResponse } from "./responses.js"

type Answer<A> = A | HttpServerResponse.HttpServerResponse

const unavailable = errorResponse(503, "forget needs storage, which is not configured on this server")

export const ForgetHandlersLive = HttpApiBuilder.group(GligabaoApi, "forget", (handlers) =>
  Effect.gen(function*() {
    const found = yield* forgetDepsOption
    return handlers.handle("forgetArtifact", ({ path, urlParams }) =>
      Effect.flatMap(
        refuseCaller(urlParams.user_id),
        Option.match({
          onSome: (refused): Effect.Effect<Answer<ForgetArtifactResponse>> => Effect.succeed(refused),
          onNone: () =>
            Option.match(found, {
              onNone: (): Effect.Effect<Answer<ForgetArtifactResponse>> => Effect.succeed(unavailable),
              onSome: (deps) =>
                forgetArtifact(deps, urlParams, path.id).pipe(
                  Effect.catchAll((e) => Effect.succeed(domainErrorResponse(e)))
                )
            })
        })
      ))
  }))

/** `DELETE /v1/gb/users/{user_id}`: the user's own token, or an admin token. */
export const UsersHandlersLive = HttpApiBuilder.group(GligabaoApi, "users", (handlers) =>
  Effect.gen(function*() {
    const found = yield* eraseDepsOption
    return handlers.handle("forgetUser", ({ path }) =>
      Effect.flatMap(
        refuseUnlessUserOrAdmin(path.user_id),
        Option.match({
          onSome: (refused): Effect.Effect<Answer<ForgetUserResponse>> => Effect.succeed(refused),
          onNone: () =>
            Option.match(found, {
              onNone: (): Effect.Effect<Answer<ForgetUserResponse>> => Effect.succeed(unavailable),
              onSome: (deps) =>
                forgetUser(deps, path.user_id).pipe(Effect.catchAll((e) => Effect.succeed(domainErrorResponse(e))))
            })
        })
      ))
  }))
