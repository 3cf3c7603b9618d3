/**
 * Retrieval, shared by search, query and context: the candidates of each source (full text,
 * vectors: candidates.ts; the graph around the best matches: graph.ts), fused by reciprocal
 * rank per list (facts, entities, chunks), then the rows of the best. See docs/READ.md.
 *
 * Every candidate passes the request's filters in SQL before it is ranked. Storage is asked
 * intent-level questions (SearchRepo); how each is answered is the adapter's.
 */
import { Effect, Option } from "effect"
import type { DatasetRow } from "../domain/Rows.js"
import { type Fused, fuseRanks } from "../kernel/fusion.js"
import { lookupConcurrency, type ReadFilters } from "../services/SearchRepo.js"
import { type Candidates, candidatesOf } from "./candidates.js"
import { datasetOf, filtersOf, type ReadDeps } from "./deps.js"
import { GRAPH_SEEDS, graphCandidates } from "./graph.js"
import { rankPassages } from "./passages.js"
import type { SearchRequest } from "./requests.js"
import { queryTerms } from "./terms.js"
import {
  type ChunkOut,
  type EntityItem,
  entityItem,
  type FactItem,
  factItem,
  type FactOut,
  linked,
  type LinkedEntityOut,
  type Scored
} from "./views.js"

export { MIN_SIMILARITY } from "./candidates.js"
export { GRAPH_SEEDS } from "./graph.js"

/** Candidates per source and list: enough for fusion to matter, bounded whatever the limit. */
export const candidatesFor = (limit: number) => Math.min(300, Math.max(30, limit * 3))

/** A request's best facts and entities, fused, each list at most `limit` long; no rows read yet. */
export interface Ranking {
  readonly dataset: DatasetRow
  readonly filters: ReadFilters
  readonly facts: ReadonlyArray<Fused>
  readonly entities: ReadonlyArray<Fused>
  readonly candidates: Candidates
  readonly k: number
}

/**
 * The ranking of a request. Without `passages`, neither the chunk nor the summary index is
 * searched. The caller joins `candidates.recorded` before it answers.
 */
export const rank = (
  deps: ReadDeps,
  dataset: DatasetRow,
  request: SearchRequest,
  passages: boolean
): Effect.Effect<Ranking> =>
  Effect.gen(function*() {
    const filters = yield* filtersOf(request)
    const k = candidatesFor(request.limit)
    const found = yield* candidatesOf(
      deps,
      dataset,
      { text: request.query, terms: queryTerms(request.query) },
      filters,
      k,
      passages
    )
    const { fulltext, vector } = found
    const seeds = fuseRanks([
      { source: "fulltext", ids: fulltext.entities },
      { source: "vector", ids: vector.entities }
    ]).slice(0, GRAPH_SEEDS).map((m) => m.id)
    const graph = yield* graphCandidates(deps, dataset.id, filters, seeds, request.hops, k)
    const passingNeighbours = yield* deps.search.passing("entity", dataset.id, graph.neighbours, filters)
    return {
      dataset,
      filters,
      facts: fuseRanks([
        { source: "fulltext", ids: fulltext.facts },
        { source: "vector", ids: vector.facts },
        { source: "graph", ids: graph.facts }
      ]).slice(0, request.limit),
      entities: fuseRanks([
        { source: "fulltext", ids: fulltext.entities },
        { source: "vector", ids: vector.entities },
        { source: "graph", ids: graph.neighbours.filter((id) => passingNeighbours.has(id)) }
      ]).slice(0, request.limit),
      candidates: found,
      k
    }
  })

/** The ranked items whose rows were read, in rank order (a row gone meanwhile drops out). */
export const inRank = <F extends { readonly id: number }, R extends { readonly id: number }, A>(
  ranked: ReadonlyArray<F>,
  rows: ReadonlyArray<R>,
  out: (row: R, ranked: F) => A
): ReadonlyArray<A> => {
  const byId = new Map(rows.map((r) => [r.id, r]))
  return ranked.flatMap((f) => {
    const row = byId.get(f.id)
    return row === undefined ? [] : [out(row, f)]
  })
}

/** The ranking's facts and entities as shown, without their links (context reads the kept ones' after its cut). */
export const rankedItems = (deps: ReadDeps, ranking: Ranking): Effect.Effect<{
  readonly facts: ReadonlyArray<FactItem>
  readonly entities: ReadonlyArray<EntityItem>
}> => {
  const { dataset, filters } = ranking
  return Effect.map(
    Effect.all([
      deps.search.facts(dataset.id, ranking.facts.map((f) => f.id), filters),
      deps.search.entities(dataset.id, ranking.entities.map((e) => e.id), filters)
    ], { concurrency: lookupConcurrency(deps.search) }),
    ([facts, entities]) => ({
      facts: inRank(ranking.facts, facts, (row) => factItem(row, filters.knownAt)),
      entities: inRank(ranking.entities, entities, entityItem)
    })
  )
}

export interface Retrieved {
  /** null: the user has stored nothing in the dataset yet (every list is empty) */
  readonly dataset: DatasetRow | null
  readonly filters: ReadFilters
  readonly facts: ReadonlyArray<FactOut & Scored>
  readonly entities: ReadonlyArray<LinkedEntityOut & Scored>
  readonly chunks: ReadonlyArray<ChunkOut & Scored>
  /** a source that could not run (e.g. the embeddings provider failed); the others still did */
  readonly warnings: ReadonlyArray<string>
}

const scored = <A>(item: A, fused: Fused): A & Scored => ({ ...item, score: fused.score, found_by: fused.found_by })

/** Search: the three ranked lists for a request, each at most `limit` long, with their links. */
export const retrieve = (deps: ReadDeps, request: SearchRequest): Effect.Effect<Retrieved> =>
  Effect.gen(function*() {
    const found = yield* datasetOf(deps, request)
    if (Option.isNone(found)) {
      // nothing stored yet: nothing to find, and no query to embed
      return { dataset: null, filters: yield* filtersOf(request), facts: [], entities: [], chunks: [], warnings: [] }
    }
    const ranking = yield* rank(deps, found.value, request, true)
    const { candidates, dataset, filters } = ranking
    const { search } = deps
    const factIds = ranking.facts.map((f) => f.id)
    const entityIds = ranking.entities.map((e) => e.id)
    // independent lookups side by side: on PostgreSQL each is a round trip
    const [factRows, factLinks, entityRows, entityLinks, summaries] = yield* Effect.all([
      search.facts(dataset.id, factIds, filters),
      search.links("fact", factIds, filters),
      search.entities(dataset.id, entityIds, filters),
      search.links("entity", entityIds, filters),
      search.artifacts(dataset.id, candidates.vector.summaries, {
        ...filters,
        sessionId: null,
        kind: null,
        conditions: null
      })
    ], { concurrency: lookupConcurrency(search) }).pipe(Effect.withSpan("Retrieval.rows"))
    const facts = inRank(
      ranking.facts,
      factRows,
      (row, f) => scored(linked(factItem(row, filters.knownAt), factLinks.get(row.id)!), f)
    )
    const entities = inRank(
      ranking.entities,
      entityRows,
      (row, e) => scored(linked(entityItem(row), entityLinks.get(row.id)!), e)
    )
    const chunks = yield* rankPassages(
      deps,
      dataset.id,
      filters,
      candidates.vector,
      summaries,
      facts,
      ranking.k,
      request.limit
    )
    yield* candidates.recorded
    return { dataset, filters, facts, entities, chunks, warnings: candidates.warnings }
  })
