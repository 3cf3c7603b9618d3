/**
 * Corrections by hand (docs/FORGET.md): delete a fact or an entity, close a live fact or undo
 * that, merge entities; scoped by user and dataset (another user's row is a 404).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PathId } from "../domain/Wire.js"
import {
  FactResponse,
  ForgetResponse,
  InvalidateFactRequest,
  MergeEntitiesRequest,
  MergeEntitiesResponse,
  ReopenFactRequest
} from "../forget/schemas.js"
import { ScopeParams } from "../query/requests.js"
import { Error400, Error401, Error403, Error404, Error409, Error415, Error500 } from "./ErrorBodies.js"

const IdPath = (what: string) =>
  Schema.Struct({ id: PathId.annotations({ description: `the ${what}'s id`, examples: [1] }) })

export class CorrectGroup extends HttpApiGroup.make("correct")
  .add(
    HttpApiEndpoint.del("deleteFact", "/v1/gb/facts/:id")
      .setPath(IdPath("fact"))
      .setUrlParams(ScopeParams)
      .addSuccess(ForgetResponse)
      .addError(Error400)
      .addError(Error404)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Delete a fact; what it closed is reopened")
  )
  .add(
    HttpApiEndpoint.del("deleteEntity", "/v1/gb/entities/:id")
      .setPath(IdPath("entity"))
      .setUrlParams(ScopeParams)
      .addSuccess(ForgetResponse)
      .addError(Error400)
      .addError(Error404)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Delete an entity with every fact that touches it")
  )
  .add(
    HttpApiEndpoint.post("invalidateFact", "/v1/gb/facts/:id/invalidate")
      .setPath(IdPath("fact"))
      .setPayload(InvalidateFactRequest)
      .addError(Error415)
      .addSuccess(FactResponse)
      .addError(Error400)
      .addError(Error404)
      .addError(Error409)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Close a live fact by hand (undone by reopen)")
  )
  .add(
    HttpApiEndpoint.post("reopenFact", "/v1/gb/facts/:id/reopen")
      .setPath(IdPath("fact"))
      .setPayload(ReopenFactRequest)
      .addError(Error415)
      .addSuccess(FactResponse)
      .addError(Error400)
      .addError(Error404)
      .addError(Error409)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Undo a closing by hand")
  )
  .add(
    HttpApiEndpoint.post("mergeEntities", "/v1/gb/entities/merge")
      .setPayload(MergeEntitiesRequest)
      .addError(Error415)
      .addSuccess(MergeEntitiesResponse)
      .addError(Error400)
      .addError(Error404)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Merge entities: their facts, links and sessions move to `into` (not undoable)")
  )
  .addError(Error401)
  .addError(Error403)
{}
