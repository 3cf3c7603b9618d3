/**
 * Reading stored images back, by user and dataset name (the library API, and the
 * `GET /v1/gb/images/{id}` endpoint). Datasets are isolated: an id of another dataset (or
 * user) is not found.
 */
import { Effect, Option } from "effect"
import type { ImageArtifactRow, ImageExtractionRow } from "../../domain/Image.js"
import { DatasetsRepo } from "../../services/DatasetsRepo.js"
import { ImagesRepo } from "../../services/ImagesRepo.js"
import { ImageStore, type ImageStoreFailed } from "../../services/ImageStore.js"

export interface LoadedImage {
  readonly artifact: ImageArtifactRow
  readonly bytes: Uint8Array
}

/** Why an image could not be loaded (each a 404 on the wire). */
export type ImageMissing =
  | { readonly _tag: "NoDataset" }
  | { readonly _tag: "NoArtifact" }
  | { readonly _tag: "NoFile"; readonly artifact: ImageArtifactRow }

/** The dataset's artifact `imageArtifactId`, if it is one of that user's dataset. */
export const getImageArtifact = (userId: string, dataset: string, imageArtifactId: number) =>
  Effect.gen(function*() {
    const found = yield* (yield* DatasetsRepo).find(userId, dataset)
    if (Option.isNone(found)) return Option.none<ImageArtifactRow>()
    const artifact = yield* (yield* ImagesRepo).getArtifact(imageArtifactId)
    return Option.filter(artifact, (a) => a.dataset_id === found.value.id)
  })

/** The stored image and its bytes (seed: memory_image.LoadImage), or what is missing. */
export const loadImage = (
  userId: string,
  dataset: string,
  imageArtifactId: number
): Effect.Effect<
  { readonly _tag: "Loaded"; readonly image: LoadedImage } | ImageMissing,
  ImageStoreFailed,
  DatasetsRepo | ImagesRepo | ImageStore
> =>
  Effect.gen(function*() {
    const found = yield* (yield* DatasetsRepo).find(userId, dataset)
    if (Option.isNone(found)) return { _tag: "NoDataset" } as const
    const artifact = Option.filter(
      yield* (yield* ImagesRepo).getArtifact(imageArtifactId),
      (a) => a.dataset_id === found.value.id
    )
    if (Option.isNone(artifact)) return { _tag: "NoArtifact" } as const
    const files = yield* ImageStore
    if (!(yield* files.exists(artifact.value.path))) return { _tag: "NoFile", artifact: artifact.value } as const
    return {
      _tag: "Loaded",
      image: { artifact: artifact.value, bytes: yield* files.read(artifact.value.path) }
    } as const
  })

/** The image artifacts of a user's dataset, oldest first (empty if the dataset does not exist). */
export const listImageArtifacts = (userId: string, dataset: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* DatasetsRepo).find(userId, dataset)
    if (Option.isNone(found)) return [] as ReadonlyArray<ImageArtifactRow>
    return yield* (yield* ImagesRepo).listArtifacts(found.value.id)
  })

/** Every extraction of a user's dataset's images, with their text blocks, oldest first. */
export const listImageExtractions = (userId: string, dataset: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* DatasetsRepo).find(userId, dataset)
    if (Option.isNone(found)) return [] as ReadonlyArray<ImageExtractionRow>
    return yield* (yield* ImagesRepo).listExtractions(found.value.id)
  })
