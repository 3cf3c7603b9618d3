/**
 * Embedding ahead: a unit's ordered steps (the similarity lookup of load_candidates, then the
 * store) embed texts that are mostly known as soon as the unit is extracted: its endpoints and
 * entities as written, its facts' descriptions, a chunk's text and summary. Embedding them in
 * the unit's model work, which runs concurrently, takes the embeddings round trips off the
 * document-order path (BENCHMARKS.md, long document). A text the ordered steps need
 * and this did not guess (a stored entity's merged description, a repeat's stored wording) is
 * embedded there as before, so the vectors are the same either way.
 */
import { Effect } from "effect"
import type { NormalizedGraph } from "../../kernel/normalize.js"
import { entityText } from "../vectors.js"
import { embedTexts, type VectorCache } from "./embed.js"
import { embedContext, type RunContext } from "./RunContext.js"
import { endpointTexts } from "./similar.js"

export type Vectors = ReadonlyMap<string, ReadonlyArray<number>>

export const NO_VECTORS: Vectors = new Map()

/** The texts a unit will most likely embed, each once, in a stable order. */
export const expectedTexts = (
  graph: NormalizedGraph,
  extra: ReadonlyArray<string | undefined>
): ReadonlyArray<string> => [
  ...new Set(
    [
      ...endpointTexts(graph).values(),
      ...graph.entities.map(entityText),
      ...graph.edges.map((e) => e.description),
      ...extra
    ].filter((t): t is string => t !== undefined && t !== "")
  )
]

/**
 * Embeds the texts a unit will most likely embed (`graph`'s, and `extra`: a chunk's text and
 * summary) in one request, filed under store; those the run's cache already has are taken
 * from it, so a text is paid for once per run. A failure is logged and leaves nothing: the
 * ordered steps embed what they need themselves and fail there if they must.
 */
export const embedAhead = Effect.fnUntraced(
  function*(ctx: RunContext, graph: NormalizedGraph, extra: ReadonlyArray<string | undefined>) {
    const texts = expectedTexts(graph, extra)
    if (texts.length === 0) return NO_VECTORS
    const shared = ctx.cache
    const ahead = new Map<string, ReadonlyArray<number>>()
    const cache: VectorCache = {
      get: (text) => {
        const hit = shared.get(text)
        if (hit !== undefined) ahead.set(text, hit)
        return hit
      },
      set: (text, vector) => {
        ahead.set(text, vector)
        shared.set(text, vector)
      }
    }
    return yield* embedTexts(embedContext(ctx, "store"), cache, texts).pipe(
      Effect.as(ahead as Vectors),
      Effect.catchAll((e) =>
        Effect.as(
          Effect.logWarning("embedding ahead failed; the store embeds in order", { error: e.message }),
          NO_VECTORS
        )
      )
    )
  }
)

/**
 * Embeds into `cache` the texts of `texts` it lacks (one request, filed under store), for a
 * unit's store to find there: run beside resolve_edges (`likelyStoreTexts`), so the store's
 * embeddings round trip is not paid after it. A failure is logged and leaves nothing: the store
 * embeds what it needs itself and fails there if it must.
 */
export const embedBeside = Effect.fnUntraced(
  function*(ctx: RunContext, cache: VectorCache, texts: ReadonlyArray<string>) {
    yield* embedTexts(embedContext(ctx, "store"), cache, texts).pipe(
      Effect.asVoid,
      Effect.catchAll((e) =>
        Effect.logWarning("embedding beside resolve_edges failed; the store embeds in order", { error: e.message })
      )
    )
  }
)

/** The run's cache as a unit sees it: its own vectors embedded ahead first. */
export const withAhead = (ahead: Vectors, shared: VectorCache): VectorCache => ({
  get: (text) => ahead.get(text) ?? shared.get(text),
  set: shared.set
})
