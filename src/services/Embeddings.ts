import { Context, type Effect } from "effect"
import type { EmbeddingFailed } from "../domain/Errors.js"

export interface EmbeddingBatch {
  /** one vector per input text, in input order */
  readonly vectors: ReadonlyArray<ReadonlyArray<number>>
  readonly model: string
  readonly inputTokens: number
}

/** The embeddings port: one batch per call. `enabled` is false when no provider is configured. */
export class Embeddings extends Context.Tag("gligabao/Embeddings")<
  Embeddings,
  {
    readonly enabled: boolean
    readonly provider: string
    readonly model: string
    readonly dimensions: number
    readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<EmbeddingBatch, EmbeddingFailed>
  }
>() {}
