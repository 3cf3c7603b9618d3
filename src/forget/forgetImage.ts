/**
 * Forget an image artifact (docs/FORGET.md): its row, extractions and text blocks, its run's
 * kept response, then its stored file. Images have an id space of their own, so they have a
 * door of their own beside `DELETE /v1/gb/artifacts/{id}`.
 */
import { Effect, Option } from "effect"
import { NotFound } from "../domain/Errors.js"
import { ForgetRepo } from "../services/ForgetRepo.js"
import { ImageStore } from "../services/ImageStore.js"
import { afterForget, type ForgetScope, inDataset } from "./envelope.js"
import type { ForgetImageResponse } from "./schemas.js"

export const forgetImage = (scope: ForgetScope, id: number) =>
  Effect.gen(function*() {
    const path = yield* inDataset(scope, `image ${id}`, (dataset) =>
      Effect.flatMap(
        Effect.flatMap(ForgetRepo, (repo) => repo.deleteImage(dataset.id, id)),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: `image ${id} not found` })),
          onSome: (deleted) => Effect.succeed(deleted.path)
        })
      ))
    // after the commit: a file that cannot be removed is logged, nothing refers to it any more
    const store = yield* ImageStore
    const { filesRemoved } = yield* afterForget({ vectors: [], files: { store, paths: [path] } })
    return { image_artifact_id: id, deleted: { images: 1, files: filesRemoved } } satisfies ForgetImageResponse
  })
