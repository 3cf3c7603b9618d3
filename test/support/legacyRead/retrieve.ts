// Legacy copy of the read path as of 534360b (issue 38, item 7): test/query/readEquivalence.test.ts
// runs it beside the new one. Deleted once the comparison has passed.
/**
 * Retrieval, shared by search and query: candidates from full text (entity names and
 * descriptions, fact descriptions), vector similarity (the dataset's entity, edge, chunk and
 * summary indexes, when embeddings are configured) and the graph neighbourhood of the matched
 * entities, fused by reciprocal rank per list (facts, entities, chunks). See docs/READ.md.
 *
 * Every candidate passes the request's filters in SQL before it is ranked: the vector store
 * knows nothing of validity, sessions or kinds, so its hits are checked against the rows.
 */
import { Deferred, Effect } from "effect"
import type { NotFound } from "../../../src/domain/Errors.js"
import type { ArtifactRow, DatasetRow } from "../../../src/domain/Rows.js"
import { embedForRead } from "../../../src/pipeline/ModelCalls.js"
import { indexName, type VectorKind } from "../../../src/pipeline/vectors.js"
import { type Fused, fuseRanks, type RankedList } from "../../../src/query/fusion.js"
import type { SearchRequest } from "../../../src/query/requests.js"
import { queryTerms } from "../../../src/query/terms.js"
import { filtersOf, findDataset, type ReadDeps } from "./deps.js"
import type { ReadFilters } from "./SearchRepo.js"
import {
  artifactOut,
  type ChunkOut,
  entityOut,
  type FactOut,
  factOut,
  type LinkedEntityOut,
  NO_LINKS,
  type Scored
} from "./views.js"

/** The indexes a search asks: the ranked rows', then the passages'. */
const RANKED_KINDS: ReadonlyArray<VectorKind> = ["entities", "edges"]
const ALL_KINDS: ReadonlyArray<VectorKind> = [...RANKED_KINDS, "chunks", "summaries"]

/** Vector hits below this cosine similarity are noise, not candidates. */
export const MIN_SIMILARITY = 0.2
/** The best-fused entities whose neighbourhoods are walked, per hop. */
export const GRAPH_SEEDS = 5

/** Candidates per source and list: enough for fusion to matter, bounded whatever the limit. */
export const candidatesFor = (limit: number) => Math.min(300, Math.max(30, limit * 3))

export interface Retrieved {
  readonly dataset: DatasetRow
  readonly filters: ReadFilters
  readonly facts: ReadonlyArray<FactOut & Scored>
  readonly entities: ReadonlyArray<LinkedEntityOut & Scored>
  readonly chunks: ReadonlyArray<ChunkOut & Scored>
  /** a source that could not run (e.g. the embeddings provider failed); the others still did */
  readonly warnings: ReadonlyArray<string>
}

interface VectorHits {
  readonly entities: ReadonlyArray<number>
  readonly edges: ReadonlyArray<number>
  readonly chunks: ReadonlyArray<number>
  readonly summaries: ReadonlyArray<number>
  readonly warning: string | null
}

const noHits: VectorHits = { entities: [], edges: [], chunks: [], summaries: [], warning: null }

/** `entity-12` -> 12 (spec/contracts.md section 10 names the vectors) */
const idOf = (vectorId: string): number | undefined => {
  const id = Number(vectorId.slice(vectorId.lastIndexOf("-") + 1))
  return Number.isSafeInteger(id) && id > 0 ? id : undefined
}

/** `recorded` waits for the query's gb_inferences row (embedForRead), which a read joins before it answers. */
type Recorded = { readonly recorded: Effect.Effect<void> }

/**
 * The query embedded once (a gb_inferences row of type `query`, stage `embed`), then the four
 * indexes of the dataset. A failure is a warning: the other sources still answer.
 */
const vectorHits = (
  deps: ReadDeps,
  dataset: DatasetRow,
  query: string,
  k: number,
  kinds: ReadonlyArray<VectorKind>,
  sent: Deferred.Deferred<void>
): Effect.Effect<VectorHits & Recorded> => {
  const { embeddings, vectors } = deps
  if (embeddings === null || vectors === null) {
    return Effect.as(Deferred.succeed(sent, undefined), { ...noHits, recorded: Effect.void })
  }
  return Effect.gen(function*() {
    const { recorded, result } = yield* embedForRead({
      embeddings,
      inferences: deps.inferences,
      prices: deps.prices,
      type: "query",
      datasetId: dataset.id
    }, [query])
    const hits = yield* Effect.gen(function*() {
      const batch = yield* result
      const vector = batch.vectors[0]
      if (vector === undefined) return noHits
      // the last search to start lets the full-text queries go: they wait to be resumed until
      // that search has sent its query (a store's query sends before it first waits)
      let started = 0
      const search = (kind: VectorKind) =>
        Effect.zipRight(
          Effect.suspend(() => (++started === kinds.length ? Deferred.succeed(sent, undefined) : Effect.void)),
          Effect.map(
            vectors.query(indexName(dataset.id, kind), vector, k, MIN_SIMILARITY),
            (matches) => [kind, matches.flatMap((m) => idOf(m.id) ?? [])] as const
          )
        )
      const found = new Map(yield* Effect.all(kinds.map(search), { concurrency: "unbounded" }))
      const of = (kind: VectorKind) => found.get(kind) ?? []
      return {
        entities: of("entities"),
        edges: of("edges"),
        chunks: of("chunks"),
        summaries: of("summaries"),
        warning: null
      }
    }).pipe(
      Effect.catchAll((e) =>
        Effect.as(Effect.logWarning("search: the vector source failed; using the others", { error: e.message }), {
          ...noHits,
          warning: `vector search failed: ${e.message}`
        })
      )
    )
    return { ...hits, recorded }
  }).pipe(
    // whatever happened (no vector, a failed embedding), the full-text queries go on
    Effect.ensuring(Deferred.succeed(sent, undefined))
  )
}

interface GraphFacts {
  /** facts around the seeds, best first */
  readonly facts: ReadonlyArray<number>
  /** the entities at the other end of those facts, in the same order */
  readonly neighbours: ReadonlyArray<number>
}

/**
 * The facts around the seed entities, `hops` deep. Within a hop a fact touching several seeds
 * comes first (it connects things the query named), then the seeds' facts are interleaved
 * (each seed's newest, then each seed's second newest, ...) so every matched entity is heard.
 */
const graphFacts = (
  deps: ReadDeps,
  datasetId: number,
  filters: ReadFilters,
  seeds: ReadonlyArray<number>,
  hops: number,
  perSeed: number
): Effect.Effect<GraphFacts> =>
  Effect.gen(function*() {
    const facts: Array<number> = []
    const neighbours: Array<number> = []
    const seenFacts = new Set<number>()
    const seenEntities = new Set<number>(seeds)
    let frontier = seeds
    for (let hop = 0; hop < hops && frontier.length > 0; hop++) {
      const around = yield* Effect.forEach(frontier, (seed) =>
        deps.search.factsAround(datasetId, seed, filters, perSeed), {
        concurrency: "unbounded"
      })
      const frontierSet = new Set(frontier)
      const order = new Map<number, { touches: number; position: number; endpoints: ReadonlyArray<number> }>()
      around.forEach((list, seedIndex) =>
        list.forEach((fact, i) => {
          const position = i * frontier.length + seedIndex
          const seen = order.get(fact.id)
          if (seen !== undefined) {
            return
          }
          const touches = (frontierSet.has(fact.source_id) ? 1 : 0) +
            (fact.target_id !== fact.source_id && frontierSet.has(fact.target_id) ? 1 : 0)
          order.set(fact.id, { touches, position, endpoints: [fact.source_id, fact.target_id] })
        })
      )
      const ranked = [...order.entries()]
        .filter(([id]) =>
          !seenFacts.has(id)
        )
        .sort(([, a], [, b]) => b.touches - a.touches || a.position - b.position)
      const next: Array<number> = []
      for (const [id, { endpoints }] of ranked) {
        seenFacts.add(id)
        facts.push(id)
        for (const entity of endpoints) {
          if (seenEntities.has(entity)) continue
          seenEntities.add(entity)
          neighbours.push(entity)
          next.push(entity)
        }
      }
      frontier = next.slice(0, GRAPH_SEEDS)
    }
    return { facts, neighbours }
  })

const byId = <A extends { readonly id: number }>(rows: ReadonlyArray<A>) => new Map(rows.map((r) => [r.id, r] as const))

/** The ids of `ids` present in `rows`, in `ids` order. */
const present = (
  ids: ReadonlyArray<number>,
  rows: { readonly has: (id: number) => boolean }
) => ids.filter((id) => rows.has(id))

const scored = <A>(fused: Fused, view: A): A & Scored => ({ ...view, score: fused.score, found_by: fused.found_by })

/** What a caller of `retrieve` needs beyond the ranked facts and entities. */
export interface Wanted {
  /**
   * false: the facts and entities come without their links (empty lists), for a caller that
   * keeps only some of them and reads theirs (SearchRepo.links) afterwards
   */
  readonly links: boolean
  /** false: no passages (`chunks` is empty), so neither the chunk nor the summary index is searched */
  readonly passages: boolean
}

const EVERYTHING: Wanted = { links: true, passages: true }

/** Search: the three ranked lists for a request, each at most `limit` long, as far as `wanted`. */
export const retrieve = (
  deps: ReadDeps,
  request: SearchRequest,
  wanted: Wanted = EVERYTHING
): Effect.Effect<Retrieved, NotFound> =>
  Effect.gen(function*() {
    const dataset = yield* findDataset(deps, request)
    const filters = yield* filtersOf(request)
    const { search } = deps
    const ds = dataset.id
    const k = candidatesFor(request.limit)
    const terms = queryTerms(request.query)

    // The vector searches go first, the full-text queries once they are sent. On SQLite the
    // full-text queries hold the thread for as long as they run; the vector searches run on a
    // reader connection in a worker thread (a network service, with Pinecone), so sent first
    // they run beside the full-text queries instead of after them (BENCHMARKS.md, search).
    const sent = yield* Deferred.make<void>()
    const [hits, textEntities, textFacts] = yield* Effect.all([
      // facts lose more candidates to the filters (ended facts keep their vectors)
      vectorHits(deps, dataset, request.query, k, wanted.passages ? ALL_KINDS : RANKED_KINDS, sent),
      Effect.zipRight(Deferred.await(sent), search.matchEntities(ds, terms, filters, k)),
      Effect.zipRight(Deferred.await(sent), search.matchFacts(ds, terms, filters, k))
    ], { concurrency: "unbounded" })

    // vector hits count only if their rows pass the filters (checked by id); only the `limit`
    // candidates that survive fusion are read whole (names, links)
    const [passingFacts, passingEntities] = yield* Effect.all([
      search.passingFacts(ds, hits.edges, filters),
      search.passingEntities(ds, hits.entities, filters)
    ], { concurrency: "unbounded" })
    const vectorFacts = present(hits.edges, passingFacts)
    const vectorEntities = present(hits.entities, passingEntities)

    const matched = fuseRanks([
      { source: "fulltext", ids: textEntities.map((m) => m.id) },
      { source: "vector", ids: vectorEntities }
    ])
    const seeds = matched.slice(0, GRAPH_SEEDS).map((m) => m.id)
    const graph = yield* graphFacts(deps, ds, filters, seeds, request.hops, k)
    const graphEntities = present(graph.neighbours, yield* search.passingEntities(ds, graph.neighbours, filters))

    const fusedFacts = fuseRanks([
      { source: "fulltext", ids: textFacts.map((m) => m.id) },
      { source: "vector", ids: vectorFacts },
      { source: "graph", ids: graph.facts }
    ]).slice(0, request.limit)
    const fusedEntities = fuseRanks([
      { source: "fulltext", ids: textEntities.map((m) => m.id) },
      { source: "vector", ids: vectorEntities },
      { source: "graph", ids: graphEntities }
    ]).slice(0, request.limit)

    // independent lookups side by side: on PostgreSQL each is a round trip
    const factIds = fusedFacts.map((f) => f.id)
    const entityIds = fusedEntities.map((e) => e.id)
    const unlinked = <A>(rows: Effect.Effect<ReadonlyArray<A>>) =>
      Effect.map(rows, (list) => list.map((row) => ({ ...row, ...NO_LINKS })))
    const [factList, entityList, summaries] = yield* Effect.all([
      wanted.links ? search.facts(ds, factIds, filters) : unlinked(search.unlinkedFacts(ds, factIds, filters)),
      wanted.links
        ? search.entities(ds, entityIds, filters)
        : unlinked(search.unlinkedEntities(ds, entityIds, filters)),
      search.artifacts(ds, hits.summaries, { ...filters, sessionId: null, kind: null })
    ], { concurrency: "unbounded" })
    const factRows = byId(factList)
    const entityRows = byId(entityList)

    const facts = fusedFacts.flatMap((f) => {
      const row = factRows.get(f.id)
      return row === undefined ? [] : [scored(f, factOut(row, filters.knownAt))]
    })
    const entities = fusedEntities.flatMap((e) => {
      const row = entityRows.get(e.id)
      return row === undefined ? [] : [scored(e, entityOut(row))]
    })
    const chunks = wanted.passages ? yield* rankChunks(deps, ds, filters, hits, summaries, facts, k, request.limit) : []
    yield* hits.recorded
    return {
      dataset,
      filters,
      facts,
      entities,
      chunks,
      warnings: hits.warning === null ? [] : [hits.warning]
    }
  })

/**
 * Passages: chunks by their own vectors and by their summaries' (both "vector"), and the texts
 * the ranked facts were extracted from, best fact first ("graph": provenance links). A short
 * text that was not chunked is its own passage. `summaries` are the rows of the summary hits
 * (read beside the ranked facts).
 */
const rankChunks = (
  deps: ReadDeps,
  datasetId: number,
  filters: ReadFilters,
  hits: VectorHits,
  summaries: ReadonlyArray<ArtifactRow>,
  facts: ReadonlyArray<FactOut>,
  k: number,
  limit: number
): Effect.Effect<ReadonlyArray<ChunkOut & Scored>> =>
  Effect.gen(function*() {
    const { search } = deps
    const summaryParent = new Map(
      summaries.flatMap((s) => (s.parent_id === null ? [] : [[s.id, s.parent_id] as const]))
    )
    const bySummary = hits.summaries.flatMap((id) => summaryParent.get(id) ?? [])
    const provenance = [...new Set(facts.flatMap((f) => [...f.artifact_ids].reverse()))].slice(0, k)
    const rows = byId(yield* search.artifacts(datasetId, [...hits.chunks, ...bySummary, ...provenance], filters))
    const lists: Array<RankedList> = [
      { source: "vector", ids: present(hits.chunks, rows) },
      { source: "vector", ids: present(bySummary, rows) },
      { source: "graph", ids: present(provenance, rows) }
    ]
    const fused = fuseRanks(lists).slice(0, limit)
    const summaryOf = new Map<number, ArtifactRow>()
    for (const s of yield* search.summariesOf(datasetId, fused.map((f) => f.id))) {
      if (s.parent_id !== null && !summaryOf.has(s.parent_id)) summaryOf.set(s.parent_id, s)
    }
    return fused.flatMap((f) => {
      const row = rows.get(f.id)
      if (row === undefined) return []
      const summary = summaryOf.get(f.id)
      return [scored(f, { ...artifactOut(row), ...(summary === undefined ? {} : { summary: summary.text }) })]
    })
  })
