import { Context, type Effect } from "effect"

/** What a dataset holds, counted before it goes. */
export interface DatasetContents {
  readonly artifacts: number
  readonly entities: number
  readonly facts: number
  readonly images: number
}

/** The rows of a dataset that may have a vector in the vector store. */
export interface DatasetVectors {
  /** entities and facts whose vector was written or queued (embedded_at set) */
  readonly entityIds: ReadonlyArray<number>
  readonly edgeIds: ReadonlyArray<number>
  /** chunk and chunk summary artifacts (their vectors are not flagged: every one is deleted) */
  readonly chunkIds: ReadonlyArray<number>
  readonly summaryIds: ReadonlyArray<number>
}

/**
 * The reads and writes of forgetting a user or hard-deleting a dataset (docs/FORGET.md): whole
 * datasets and runs go, the rows under them by their foreign keys' cascades (every child column
 * they follow is indexed). The caller holds the dataset's lock and one transaction.
 * Infrastructure errors are defects.
 */
export class EraseRepo extends Context.Tag("gligabao/EraseRepo")<
  EraseRepo,
  {
    /** the dataset names a user has rows or runs of, soft-deleted datasets included, by name */
    readonly datasetNames: (userId: string) => Effect.Effect<ReadonlyArray<string>>
    /** the ids of the user's datasets of this name, live or soft-deleted, oldest first */
    readonly datasetIds: (userId: string, name: string) => Effect.Effect<ReadonlyArray<number>>
    readonly contents: (datasetId: number) => Effect.Effect<DatasetContents>
    readonly vectors: (datasetId: number) => Effect.Effect<DatasetVectors>
    /** the image files of the dataset, by their path in the ImageStore */
    readonly imagePaths: (datasetId: number) => Effect.Effect<ReadonlyArray<string>>
    /** the dataset's pending vector upserts are dropped (they would write back what goes); deletes stay */
    readonly dropPendingUpserts: (datasetId: number) => Effect.Effect<void>
    /**
     * the model calls of these datasets and of the user's runs of this name keep their cost
     * but lose their error text (it may quote a model's answer); their references are cleared
     * by the deletes that follow
     */
    readonly scrubInferences: (
      datasetIds: ReadonlyArray<number>,
      userId: string,
      name: string
    ) => Effect.Effect<void>
    /** deletes the user's runs of this name (their stages, queued requests and keys cascade); how many */
    readonly deleteRuns: (userId: string, name: string) => Effect.Effect<number>
    /** deletes the dataset (everything in it cascades) */
    readonly deleteDataset: (datasetId: number) => Effect.Effect<void>
    /** deletes the user's Idempotency-Keys that are left; how many */
    readonly deleteIdempotencyKeys: (userId: string) => Effect.Effect<number>
  }
>() {}
