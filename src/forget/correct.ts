/**
 * One correction under an `action` (MCP's `correct` tool, the library's `Gligabao.correct`, the
 * agent toolkits of src/ai): the HTTP corrections' programs, picked by the action.
 */
import { Effect } from "effect"
import { type DomainError, InvalidRequest } from "../domain/Errors.js"
import type { Corrections } from "./Forgets.js"
import type { CorrectRequest, CorrectResponse } from "./schemas.js"

/** The program `request.action` names; an argument the action needs and lacks is a 400 naming it. */
export const correctWith = (
  corrections: Corrections["Type"],
  request: CorrectRequest
): Effect.Effect<CorrectResponse, DomainError> => {
  const scope = { user_id: request.user_id, dataset: request.dataset }
  const needs = <A>(value: A | undefined, field: string): Effect.Effect<A, InvalidRequest> =>
    value === undefined
      ? Effect.fail(new InvalidRequest({ message: `${field} is required for action ${request.action}` }))
      : Effect.succeed(value)
  switch (request.action) {
    case "close":
      return Effect.flatMap(needs(request.id, "id"), (id) =>
        corrections.invalidateFact({
          ...scope,
          id,
          ...(request.invalid_at === undefined ? {} : { invalid_at: request.invalid_at })
        }))
    case "reopen":
      return Effect.flatMap(needs(request.id, "id"), (id) => corrections.reopenFact({ ...scope, id }))
    case "delete_fact":
      return Effect.flatMap(needs(request.id, "id"), (id) => corrections.deleteFact({ ...scope, id }))
    case "delete_entity":
      return Effect.flatMap(needs(request.id, "id"), (id) => corrections.deleteEntity({ ...scope, id }))
    case "merge":
      return Effect.flatMap(
        Effect.all([needs(request.into, "into"), needs(request.from, "from")]),
        ([into, from]) => corrections.mergeEntities({ ...scope, into, from })
      )
  }
}
