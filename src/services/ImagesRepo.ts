import { Context, type Effect, type Option } from "effect"
import type { ImageArtifactRow, ImageExtractionRow } from "../domain/Image.js"

export type NewImageArtifact = Omit<ImageArtifactRow, "id">

export type NewImageExtraction = Omit<ImageExtractionRow, "id" | "image_artifact_id">

/**
 * gb_image_artifacts, gb_image_extractions and gb_image_text_blocks. Image artifacts are not
 * gb_artifacts: they hold a file's metadata and path, never its bytes (those are in the
 * ImageStore). Infrastructure errors are defects.
 */
export class ImagesRepo extends Context.Tag("gligabao/ImagesRepo")<
  ImagesRepo,
  {
    /** the dataset's artifact of that content, if it holds one (repeats are recognised by hash) */
    readonly findBySha256: (datasetId: number, sha256: string) => Effect.Effect<Option.Option<ImageArtifactRow>>
    /** a new artifact with its extraction and text blocks, in one transaction */
    readonly insert: (
      artifact: NewImageArtifact,
      extraction: NewImageExtraction
    ) => Effect.Effect<{ readonly artifact: ImageArtifactRow; readonly extraction: ImageExtractionRow }>
    /** one more extraction (with its blocks) of a stored artifact */
    readonly insertExtraction: (
      imageArtifactId: number,
      extraction: NewImageExtraction
    ) => Effect.Effect<ImageExtractionRow>
    /** the artifact's newest extraction, with its blocks */
    readonly newestExtraction: (imageArtifactId: number) => Effect.Effect<Option.Option<ImageExtractionRow>>
    readonly getArtifact: (imageArtifactId: number) => Effect.Effect<Option.Option<ImageArtifactRow>>
    /** the dataset's image artifacts, oldest first */
    readonly listArtifacts: (datasetId: number) => Effect.Effect<ReadonlyArray<ImageArtifactRow>>
    /** every extraction of the dataset's images, with their blocks, oldest first */
    readonly listExtractions: (datasetId: number) => Effect.Effect<ReadonlyArray<ImageExtractionRow>>
  }
>() {}
