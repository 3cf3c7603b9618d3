/** The gate the forget and correct handlers share: the token's refusal, then the storage, then the program. */
import type { HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import type { DomainError } from "../domain/Errors.js"
import { domainErrorResponse } from "./responses.js"

export type Answer<A> = A | HttpServerResponse.HttpServerResponse

/**
 * `program` over `deps` unless `refusal` answers (403) or `deps` is missing (`unavailable`);
 * its domain failure is its `{"error"}` response.
 */
export const guarded = <D, A>(
  refusal: Effect.Effect<Option.Option<HttpServerResponse.HttpServerResponse>>,
  deps: Option.Option<D>,
  unavailable: HttpServerResponse.HttpServerResponse,
  program: (deps: D) => Effect.Effect<A, DomainError>
): Effect.Effect<Answer<A>> =>
  Effect.flatMap(
    refusal,
    Option.match({
      onSome: (refused): Effect.Effect<Answer<A>> => Effect.succeed(refused),
      onNone: () =>
        Option.match(deps, {
          onNone: (): Effect.Effect<Answer<A>> => Effect.succeed(unavailable),
          onSome: (found) => program(found).pipe(Effect.catchAll((e) => Effect.succeed(domainErrorResponse(e))))
        })
    })
  )
