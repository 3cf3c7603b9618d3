/**
 * Deterministic embeddings for tests: a text's lowercased words and character trigrams
 * are hashed into a signed vector (feature hashing), normalized to unit length. Identical
 * texts get identical vectors and texts sharing words or spellings get a high cosine
 * similarity, e.g. at 1536 dimensions "Alicia (person): " vs "Alice Smith (person): an
 * engineer" is about 0.5 while two unrelated names are about 0.
 */
import { Context, Effect, Layer } from "effect"
import { EmbeddingFailed } from "../../src/domain/Errors.js"
import { type EmbeddingBatch, Embeddings } from "../../src/services/Embeddings.js"
import { fnv1a } from "../vectors/binaryCodes.js"

const features = (text: string): ReadonlyArray<string> => {
  const words = text.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
  const out: Array<string> = []
  for (const word of words) {
    out.push(`w:${word}`)
    // the padding marks word starts and ends, so "alice" and "alicia" share " al", "ali", "lic"
    const padded = ` ${word} `
    for (let i = 0; i + 3 <= padded.length; i++) out.push(`g:${padded.slice(i, i + 3)}`)
  }
  return out
}

/** The unit vector of `text` (all zeros for a text without letters or digits). */
export const hashEmbedding = (text: string, dimensions: number): Array<number> => {
  const vector = new Array<number>(dimensions).fill(0)
  for (const feature of features(text)) {
    const hash = fnv1a(feature)
    // the top bit picks the sign, so collisions cancel out on average instead of piling up
    vector[hash % dimensions]! += hash & 0x80000000 ? -1 : 1
  }
  const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0))
  return norm === 0 ? vector : vector.map((x) => x / norm)
}

/** A rough token count (4 characters a token), the same as the fake servers report. */
export const roughTokenCount = (texts: ReadonlyArray<string>): number =>
  texts.reduce((sum, text) => sum + Math.max(1, Math.ceil(text.length / 4)), 0)

export interface HashEmbeddingsOptions {
  readonly dimensions?: number
  readonly model?: string
  readonly provider?: string
  /** true: this call fails with EmbeddingFailed (it is still recorded) */
  readonly failWhen?: (texts: ReadonlyArray<string>) => boolean
}

/** The recorder: `(yield* HashEmbeddings).calls` is every non-empty batch received, in order. */
export class HashEmbeddings extends Context.Tag("gligabao/testing/HashEmbeddings")<
  HashEmbeddings,
  { readonly calls: ReadonlyArray<ReadonlyArray<string>> }
>() {
  static readonly MODEL = "hash-embedding"
  static readonly PROVIDER = "hash"

  /** Both services over one shared record of calls (for use outside a Layer too). */
  static make(options: HashEmbeddingsOptions = {}) {
    const dimensions = options.dimensions ?? 64
    const model = options.model ?? HashEmbeddings.MODEL
    const provider = options.provider ?? HashEmbeddings.PROVIDER
    const calls: Array<ReadonlyArray<string>> = []
    const embed = (texts: ReadonlyArray<string>): Effect.Effect<EmbeddingBatch, EmbeddingFailed> =>
      Effect.suspend(() => {
        // as the real adapter, which sends no request for nothing
        if (texts.length === 0) return Effect.succeed({ vectors: [], model, inputTokens: 0 })
        calls.push([...texts])
        if (options.failWhen?.(texts)) {
          return Effect.fail(
            new EmbeddingFailed({ message: `${provider} embeddings (model ${model}) failed (as the test asked)` })
          )
        }
        return Effect.succeed({
          vectors: texts.map((text) => hashEmbedding(text, dimensions)),
          model,
          inputTokens: roughTokenCount(texts)
        })
      })
    return {
      embeddings: Embeddings.of({ enabled: true, provider, model, dimensions, embed }),
      recorder: HashEmbeddings.of({ calls })
    }
  }

  /** Embeddings and this recorder; a fresh record per build. */
  static layer(options: HashEmbeddingsOptions = {}): Layer.Layer<Embeddings | HashEmbeddings> {
    return Layer.effectContext(
      Effect.sync(() => {
        const { embeddings, recorder } = HashEmbeddings.make(options)
        return Context.make(Embeddings, embeddings).pipe(Context.add(HashEmbeddings, recorder))
      })
    )
  }
}

export const HashEmbeddingsLive = (options: HashEmbeddingsOptions = {}): Layer.Layer<Embeddings | HashEmbeddings> =>
  HashEmbeddings.layer(options)
