/**
 * Forget an image artifact (docs/FORGET.md): its row, extractions and text blocks, its run's
 * kept response, then its stored file. Images have an id space of their own, so they have a
 * door of their own beside `DELETE /v1/gb/artifacts/{id}`.
 */
import { Effect, Option } from "effect"
import { NotFound } from "../domain/Errors.js"
import { datasetLockKey } from "../services/Database.js"
import type { ImageStore } from "../services/ImageStore.js"
import { compactAfterForget, type ForgetDeps, type ForgetScope } from "./forgetArtifact.js"
import type { ForgetImageResponse } from "./schemas.js"

export const forgetImage = (
  deps: ForgetDeps & { readonly images: ImageStore["Type"] },
  scope: ForgetScope,
  id: number
): Effect.Effect<ForgetImageResponse, NotFound> =>
  Effect.gen(function*() {
    const missing = new NotFound({ message: `image ${id} not found` })
    const path = yield* deps.database.withLock(datasetLockKey(scope))(
      deps.database.withTransaction(Effect.gen(function*() {
        const dataset = yield* deps.datasets.find(scope.user_id, scope.dataset)
        if (Option.isNone(dataset)) return yield* missing
        const deleted = yield* deps.forget.deleteImage(dataset.value.id, id)
        if (Option.isNone(deleted)) return yield* missing
        return deleted.value.path
      }))
    )
    // after the commit: a file that cannot be removed is logged, nothing refers to it any more
    const files = yield* deps.images.remove(path).pipe(
      Effect.as(1),
      Effect.catchAll((e) =>
        Effect.logWarning("forget: an image file could not be removed", { error: e.message })
          .pipe(Effect.as(0))
      )
    )
    yield* compactAfterForget(deps)
    return { image_artifact_id: id, deleted: { images: 1, files } }
  })
