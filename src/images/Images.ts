/**
 * A remembered image read back (`GET /v1/gb/images/{id}`) as a service, built once in the
 * composition over the app's repositories and image files. An image of another dataset or
 * user is as missing as an absent one; a store that cannot read its own file is a defect (500).
 */
import { Context, Effect, Layer } from "effect"
import { NotFound } from "../domain/Errors.js"
import { type LoadedImage, loadImage } from "../pipeline/image/library.js"
import { DatasetsRepo } from "../services/DatasetsRepo.js"
import { ImagesRepo } from "../services/ImagesRepo.js"
import { ImageStore } from "../services/ImageStore.js"
import { traced } from "../telemetry/traced.js"

/** An image of a user's dataset, by its id (image_artifact_id). */
export interface ImageRequest {
  readonly user_id: string
  readonly dataset: string
  readonly id: number
}

export interface ImagesService {
  /** the stored image and its bytes, or NotFound (404) saying what is missing */
  readonly image: (request: ImageRequest) => Effect.Effect<LoadedImage, NotFound>
}

export class Images extends Context.Tag("gligabao/Images")<Images, ImagesService>() {}

/** The image reads over one set of repositories and files. */
export const makeImages = (ports: Context.Context<DatasetsRepo | ImagesRepo | ImageStore>): ImagesService =>
  traced(
    "Images",
    {
      image: ({ dataset, id, user_id }) =>
        Effect.flatMap(Effect.orDie(Effect.provide(loadImage(user_id, dataset, id), ports)), (found) => {
          switch (found._tag) {
            case "NoDataset":
              return new NotFound({ message: `no dataset ${JSON.stringify(dataset)} for this user` })
            case "NoArtifact":
              return new NotFound({ message: `no image ${id} in dataset ${JSON.stringify(dataset)}` })
            case "NoFile":
              return new NotFound({ message: `the file of image ${id} is missing from the image directory` })
            case "Loaded":
              return Effect.succeed(found.image)
          }
        })
    } satisfies ImagesService
  )

/** The app's images, over its repositories and image files. */
export const ImagesLive = Layer.effect(
  Images,
  Effect.map(
    Effect.context<DatasetsRepo | ImagesRepo | ImageStore>(),
    (context) => makeImages(Context.pick(DatasetsRepo, ImagesRepo, ImageStore)(context))
  )
)
