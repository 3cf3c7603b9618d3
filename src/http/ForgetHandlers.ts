/** Handlers of the forget group: the programs of src/forget, for the user the token allows. */
import { HttpApiBuilder, type HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { forgetDepsOption } from "../forget/deps.js"
import { forgetArtifact } from "../forget/forgetArtifact.js"
import type { ForgetArtifactResponse } from "../forget/schemas.js"
import { GligabaoApi } from "./Api.js"
import { refuseCaller } from "./authentication.js"
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
