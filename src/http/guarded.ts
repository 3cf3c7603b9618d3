/** The gate the forget and correct handlers share: the token's refusal, then the storage, then the program. */
import { Effect, Option } from "effect"
import { type Forbidden, ServiceUnavailable } from "../domain/Errors.js"

/**
 * `program` over `deps` unless `refusal` fails (Forbidden, 403) or `deps` is missing
 * (ServiceUnavailable, 503, saying `unavailable`); its failures stay failures.
 */
export const guarded = <D, A, E>(
  refusal: Effect.Effect<void, Forbidden>,
  deps: Option.Option<D>,
  unavailable: string,
  program: (deps: D) => Effect.Effect<A, E>
): Effect.Effect<A, E | Forbidden | ServiceUnavailable> =>
  Effect.zipRight(
    refusal,
    Option.match(deps, {
      onNone: (): Effect.Effect<A, E | ServiceUnavailable> =>
        Effect.fail(new ServiceUnavailable({ message: unavailable })),
      onSome: program
    })
  )
