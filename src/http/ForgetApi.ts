/**
 * The forget side of the HTTP contract (docs/FORGET.md): exact deletion, scoped by user and
 * dataset like every read (another user's artifact is a 404).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PathId } from "../domain/Wire.js"
import { ForgetArtifactResponse } from "../forget/schemas.js"
import { ScopeParams } from "../query/requests.js"
import { Error400, Error401, Error403, Error404, Error500 } from "./ErrorBodies.js"

export class ForgetGroup extends HttpApiGroup.make("forget")
  .add(
    HttpApiEndpoint.del("forgetArtifact", "/v1/gb/artifacts/:id")
      .setPath(
        Schema.Struct({ id: PathId.annotations({ description: "the artifact's id (artifact_id)", examples: [1] }) })
      )
      .setUrlParams(ScopeParams)
      .addSuccess(ForgetArtifactResponse)
      .addError(Error400)
      .addError(Error404)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Forget an artifact: it, what was derived from it, and what it caused")
      .annotate(
        OpenApi.Description,
        "A hard delete. Its chunks, summaries and derived artifacts go; a fact no remaining artifact supports " +
          "goes, one still supported is re-anchored to its oldest remaining supporter and takes its words; the " +
          "facts it closed are reopened unless a remaining decision still closes them; entities nothing supports " +
          "go; vectors are deleted through the outbox. See docs/FORGET.md."
      )
  )
  .addError(Error401)
  .addError(Error403)
{}
