/**
 * The graph source of retrieval: the facts around the best-matched entities, `hops` deep, and
 * the entities at their other ends. See docs/READ.md, Retrieval.
 */
import { Effect } from "effect"
import { lookupConcurrency, type ReadFilters } from "../services/SearchRepo.js"
import type { ReadDeps } from "./deps.js"

/** The best-fused entities whose neighbourhoods are walked, per hop. */
export const GRAPH_SEEDS = 5

export interface GraphCandidates {
  /** facts around the seeds, best first */
  readonly facts: ReadonlyArray<number>
  /** the entities at the other end of those facts, in the same order */
  readonly neighbours: ReadonlyArray<number>
}

interface Around {
  readonly id: number
  readonly source_id: number
  readonly target_id: number
}

/**
 * One hop's facts, best first: a fact touching several of the frontier's entities comes first
 * (it connects things the query named), then the seeds' facts interleaved (each seed's newest,
 * then each seed's second newest, ...) so every matched entity is heard. `around[i]` are the
 * facts of `frontier[i]`, newest first.
 */
export const rankHop = (
  frontier: ReadonlyArray<number>,
  around: ReadonlyArray<ReadonlyArray<Around>>
): ReadonlyArray<Around> => {
  const frontierSet = new Set(frontier)
  const order = new Map<number, { fact: Around; touches: number; position: number }>()
  around.forEach((list, seedIndex) =>
    list.forEach((fact, i) => {
      if (order.has(fact.id)) return
      const touches = (frontierSet.has(fact.source_id) ? 1 : 0) +
        (fact.target_id !== fact.source_id && frontierSet.has(fact.target_id) ? 1 : 0)
      order.set(fact.id, { fact, touches, position: i * frontier.length + seedIndex })
    })
  )
  return [...order.values()].sort((a, b) => b.touches - a.touches || a.position - b.position).map((o) => o.fact)
}

/** The facts around `seeds` (SearchRepo.factsAround, at most `perSeed` each), `hops` deep. */
export const graphCandidates = (
  deps: ReadDeps,
  datasetId: number,
  filters: ReadFilters,
  seeds: ReadonlyArray<number>,
  hops: number,
  perSeed: number
): Effect.Effect<GraphCandidates> =>
  Effect.gen(function*() {
    const facts: Array<number> = []
    const neighbours: Array<number> = []
    const seenFacts = new Set<number>()
    const seenEntities = new Set<number>(seeds)
    let frontier = seeds
    for (let hop = 0; hop < hops && frontier.length > 0; hop++) {
      const around = yield* Effect.forEach(
        frontier,
        (seed) => deps.search.factsAround(datasetId, seed, filters, perSeed),
        { concurrency: lookupConcurrency(deps.search) }
      )
      const next: Array<number> = []
      for (const fact of rankHop(frontier, around)) {
        if (seenFacts.has(fact.id)) continue
        seenFacts.add(fact.id)
        facts.push(fact.id)
        for (const entity of [fact.source_id, fact.target_id]) {
          if (seenEntities.has(entity)) continue
          seenEntities.add(entity)
          neighbours.push(entity)
          next.push(entity)
        }
      }
      frontier = next.slice(0, GRAPH_SEEDS)
    }
    return { facts, neighbours }
  }).pipe(Effect.withSpan("Retrieval.graph"))
