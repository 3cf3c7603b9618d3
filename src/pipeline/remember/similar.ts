/**
 * The similarity half of load_candidates (seed: Candidate facts, lookup 2), with embeddings:
 * - each endpoint of the new facts is embedded as an entity would be and searched in the
 *   dataset's entity index; stored entities close enough (other than the same name, which the
 *   name lookup has) bring their live facts (`similar`);
 * - each new fact's description is searched in the dataset's edge index; stored facts close
 *   enough in meaning are candidates themselves (`similar_fact`), whatever their endpoints are
 *   called (a paraphrase between aliases that share no name).
 * Both embed in one request, and the texts are those the store embeds anyway (the endpoints
 * and descriptions are embedded ahead, ahead.ts), so the lookup costs no embeddings request of
 * its own. It runs in load_candidates, before the store's transaction. An aid only: a failure
 * is logged and the names alone are used.
 */
import { Effect } from "effect"
import type { NormalizedGraph } from "../../kernel/normalize.js"
import { queryEach, type VectorStore } from "../../services/VectorStore.js"
import type { EmbedContext } from "../ModelCalls.js"
import { entityText, indexName } from "../vectors.js"
import { embedTexts, type VectorCache } from "./embed.js"

/**
 * Stored facts asked for per new fact's description, best first; those above the threshold
 * that are still live are kept (the vector store keeps a closed fact's vector, so a few
 * more than one needs are asked for). The candidate cap bounds the whole list afterwards.
 */
export const FACT_MATCHES_PER_FACT = 10

export interface SimilarFact {
  readonly id: number
  /** the best cosine similarity over the new facts' descriptions */
  readonly score: number
  /** the new facts (by index in the extraction) whose description found it */
  readonly facts: ReadonlyArray<number>
}

export interface SimilarEntities {
  /** stored entity ids found by similarity */
  readonly ids: ReadonlyArray<number>
  /** stored fact ids found by their meaning, closest first (not yet checked for being live) */
  readonly facts: ReadonlyArray<SimilarFact>
  /** why the lookup was skipped or failed, for the run log */
  readonly error: string | null
}

export const NO_SIMILAR: SimilarEntities = { ids: [], facts: [], error: null }

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

/** Each description once, with the new facts (by index) it describes; empty ones left out. */
const descriptionTexts = (graph: NormalizedGraph): Map<string, Array<number>> => {
  const texts = new Map<string, Array<number>>()
  graph.edges.forEach((edge, index) => {
    if (edge.description === "") return
    const list = texts.get(edge.description) ?? []
    list.push(index)
    texts.set(edge.description, list)
  })
  return texts
}

const idOf = (metadata: Record<string, string | number | boolean>, vectorId: string, key: string, prefix: RegExp) =>
  Number(metadata[key] ?? vectorId.replace(prefix, ""))

export const findSimilarEntities = (
  deps: {
    readonly vectors: VectorStore["Type"]
    readonly topK: number
    readonly threshold: number
    /** cosine similarity a stored fact needs to a new fact's description; undefined: facts are not searched */
    readonly factThreshold?: number | undefined
  },
  ctx: EmbedContext,
  cache: VectorCache,
  datasetId: number,
  graph: NormalizedGraph
): Effect.Effect<SimilarEntities> => {
  const endpoints = endpointTexts(graph)
  if (endpoints.size === 0) return Effect.succeed(NO_SIMILAR)
  const keys = [...endpoints.keys()]
  const descriptions = deps.factThreshold === undefined ? new Map<string, Array<number>>() : descriptionTexts(graph)
  const described = [...descriptions.keys()]
  return Effect.gen(function*() {
    // one request at most, and usually none: the store embeds the same texts
    const vectors = yield* embedTexts(ctx, cache, [...keys.map((k) => endpoints.get(k)!), ...described])
    const entityIndex = indexName(datasetId, "entities")
    const edgeIndex = indexName(datasetId, "edges")
    // every lookup in one call: the store may answer them in one round trip
    const answers = yield* queryEach(deps.vectors, [
      ...keys.map((_, i) => ({ index: entityIndex, vector: vectors[i]!, k: deps.topK + 1, minScore: deps.threshold })),
      ...described.map((_, i) => ({
        index: edgeIndex,
        vector: vectors[keys.length + i]!,
        k: FACT_MATCHES_PER_FACT,
        minScore: deps.factThreshold ?? 1
      }))
    ], 4)
    const found = new Set<number>()
    keys.forEach((key, i) => {
      let kept = 0
      for (const m of answers[i]!) {
        // the same name is the name lookup's; it must not take one of the topK places
        if (m.metadata.name_key === key) continue
        if (kept >= deps.topK) break
        const id = idOf(m.metadata, m.id, "entity_id", /^entity-/)
        if (Number.isSafeInteger(id)) found.add(id)
        kept++
      }
    })
    const facts = new Map<number, { score: number; facts: Set<number> }>()
    described.forEach((text, i) => {
      for (const m of answers[keys.length + i]!) {
        const id = idOf(m.metadata, m.id, "edge_id", /^edge-/)
        if (!Number.isSafeInteger(id)) continue
        const entry = facts.get(id) ?? { score: m.score, facts: new Set<number>() }
        entry.score = Math.max(entry.score, m.score)
        for (const index of descriptions.get(text)!) entry.facts.add(index)
        facts.set(id, entry)
      }
    })
    const ranked = [...facts.entries()]
      .sort(([idA, a], [idB, b]) => b.score - a.score || idB - idA)
      .map(([id, e]): SimilarFact => ({ id, score: e.score, facts: [...e.facts].sort((x, y) => x - y) }))
    return { ids: [...found], facts: ranked, error: null } as SimilarEntities
  }).pipe(
    Effect.catchAll((e) =>
      Effect.as(
        Effect.logWarning("load_candidates: similarity lookup failed; using names only", { error: e.message }),
        { ids: [], facts: [], error: e.message }
      )
    )
  )
}
