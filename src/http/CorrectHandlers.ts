/** Handlers of the correct group: the programs of src/forget/corrections.ts, for the user the token allows. */
import { HttpApiBuilder, type HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import type { DomainError } from "../domain/Errors.js"
import { deleteEntity, deleteFact, invalidateFact, mergeEntities, reopenFact } from "../forget/corrections.js"
import { forgetDepsOption } from "../forget/deps.js"
import type { ForgetDeps } from "../forget/forgetArtifact.js"
import { GligabaoApi } from "./Api.js"
import { refuseCaller } from "./authentication.js"
import { domainErrorResponse, errorResponse } from "./responses.js"

type Answer<A> = A | HttpServerResponse.HttpServerResponse

const unavailable = errorResponse(503, "corrections need storage, which is not configured on this server")

export const CorrectHandlersLive = HttpApiBuilder.group(GligabaoApi, "correct", (handlers) =>
  Effect.gen(function*() {
    const found = yield* forgetDepsOption
    /** the program for `userId` when the token may act for that user, its failure as `{"error"}` */
    const asUser = <A>(
      userId: string,
      program: (deps: ForgetDeps) => Effect.Effect<A, DomainError>
    ): Effect.Effect<Answer<A>> =>
      Effect.flatMap(
        refuseCaller(userId),
        Option.match({
          onSome: (refused): Effect.Effect<Answer<A>> => Effect.succeed(refused),
          onNone: () =>
            Option.match(found, {
              onNone: (): Effect.Effect<Answer<A>> => Effect.succeed(unavailable),
              onSome: (deps) => program(deps).pipe(Effect.catchAll((e) => Effect.succeed(domainErrorResponse(e))))
            })
        })
      )
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
