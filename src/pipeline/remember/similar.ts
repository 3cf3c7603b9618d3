/**
 * The similarity half of load_candidates (seed: Candidate facts, lookup 2): each endpoint of
 * the new facts is embedded as an entity would be and searched in the dataset's entity index;
 * stored entities close enough (other than the same name, which the name lookup has) bring
 * their live facts. An aid only: a failure is logged and the names alone are used.
 */
import { Effect } from "effect"
import type { VectorStore } from "../../services/VectorStore.js"
import type { EmbedContext } from "../ModelCalls.js"
import type { NormalizedGraph } from "../normalize.js"
import { entityText, indexName } from "../vectors.js"
import { embedTexts, type VectorCache } from "./embed.js"

export interface SimilarEntities {
  /** stored entity ids found by similarity */
  readonly ids: ReadonlyArray<number>
  /** why the lookup was skipped or failed, for the run log */
  readonly error: string | null
}

/** Each endpoint once (name key -> text), as the text describes it (type `other` when the extraction did not list it). */
export const endpointTexts = (graph: NormalizedGraph): Map<string, string> => {
  const endpoints = new Map<string, string>()
  for (const edge of graph.edges) {
    for (const [key, name] of [[edge.source_key, edge.source], [edge.target_key, edge.target]] as const) {
      if (endpoints.has(key)) continue
      const listed = graph.entities.find((e) => e.name_key === key)
      endpoints.set(key, entityText(listed ?? { name, type: "other", description: "" }))
    }
  }
  return endpoints
}

export const findSimilarEntities = (
  deps: { readonly vectors: VectorStore["Type"]; readonly topK: number; readonly threshold: number },
  ctx: EmbedContext,
  cache: VectorCache,
  datasetId: number,
  graph: NormalizedGraph
): Effect.Effect<SimilarEntities> => {
  const endpoints = endpointTexts(graph)
  if (endpoints.size === 0) return Effect.succeed({ ids: [], error: null })
  const keys = [...endpoints.keys()]
  return Effect.gen(function*() {
    const vectors = yield* embedTexts(ctx, cache, keys.map((k) => endpoints.get(k)!))
    const index = indexName(datasetId, "entities")
    const found = new Set<number>()
    yield* Effect.forEach(
      keys,
      (key, i) =>
        Effect.map(deps.vectors.query(index, vectors[i]!, deps.topK + 1, deps.threshold), (matches) => {
          let kept = 0
          for (const m of matches) {
            // the same name is the name lookup's; it must not take one of the topK places
            if (m.metadata.name_key === key) continue
            if (kept >= deps.topK) break
            const id = Number(m.metadata.entity_id ?? m.id.replace(/^entity-/, ""))
            if (Number.isSafeInteger(id)) found.add(id)
            kept++
          }
        }),
      { concurrency: 4, discard: true }
    )
    return { ids: [...found], error: null } as SimilarEntities
  }).pipe(
    Effect.catchAll((e) =>
      Effect.as(
        Effect.logWarning("load_candidates: similarity lookup failed; using names only", { error: e.message }),
        { ids: [], error: e.message }
      )
    )
  )
}
