/**
 * The forget side of the HTTP contract (docs/FORGET.md): exact deletion, scoped by user and
 * dataset like every read (another user's artifact is a 404).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PathId } from "../domain/Wire.js"
import { UserPath } from "../forget/requests.js"
import { ForgetArtifactResponse, ForgetImageResponse, ForgetUserResponse } from "../forget/schemas.js"
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
  .add(
    HttpApiEndpoint.del("forgetImage", "/v1/gb/images/:id")
      .setPath(
        Schema.Struct({ id: PathId.annotations({ description: "the image's id (image_artifact_id)", examples: [1] }) })
      )
      .setUrlParams(ScopeParams)
      .addSuccess(ForgetImageResponse)
      .addError(Error400)
      .addError(Error404)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Forget an image: its row, extractions and stored file")
  )
  .addError(Error401)
  .addError(Error403)
{}

/**
 * Forgetting a user. A group of its own, after the read group in the API: the OpenAPI test
 * sends the example deletes in document order, and this one takes everything of the example user.
 */
export class UsersGroup extends HttpApiGroup.make("users")
  .add(
    HttpApiEndpoint.del("forgetUser", "/v1/gb/users/:user_id")
      .setPath(UserPath)
      .addSuccess(ForgetUserResponse)
      .addError(Error400)
      .addError(Error404)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Forget a user: every dataset, run, vector and image file of theirs")
      .annotate(
        OpenApi.Description,
        "A hard delete of every dataset of the user (soft-deleted ones too) with everything in it, and of their " +
          "remember runs (queued requests and Idempotency-Keys with them); a queued run of theirs stores nothing. " +
          "Vectors are deleted through the outbox, image files after the commit. Model calls stay for cost " +
          "accounting, without their error text and their run and dataset references. The user's own token or an " +
          "admin token; 404 when the user has nothing stored. See docs/FORGET.md."
      )
  )
  .addError(Error401)
  .addError(Error403)
{}
