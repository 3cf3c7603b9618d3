import { Context, Data, type Effect } from "effect"

export class ImageStoreFailed extends Data.TaggedError("ImageStoreFailed")<{ readonly message: string }> {}

/** Image files, by path relative to the image directory (`<dataset id>/<sha256>.<ext>`). */
export class ImageStore extends Context.Tag("gligabao/ImageStore")<
  ImageStore,
  {
    /** atomic: temp file + rename; returns whether the file was created by this call */
    readonly write: (path: string, bytes: Uint8Array) => Effect.Effect<boolean, ImageStoreFailed>
    readonly exists: (path: string) => Effect.Effect<boolean, ImageStoreFailed>
    readonly read: (path: string) => Effect.Effect<Uint8Array, ImageStoreFailed>
    readonly remove: (path: string) => Effect.Effect<void, ImageStoreFailed>
  }
>() {}
