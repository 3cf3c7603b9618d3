/**
 * Stage load_candidates: which stored entities the text's names are, and which stored facts
 * the new facts may repeat or contradict (spec: Candidate facts; contracts section 2).
 */
import { Effect } from "effect"
import type { ExclusiveSide } from "../../domain/DatasetSchema.js"
import type { EdgeWithNames, EntityRow } from "../../domain/Rows.js"
import { exclusiveRelations } from "../../kernel/datasetSchema.js"
import { fuseRanksOf } from "../../kernel/fusion.js"
import {
  entityKey,
  type NormalizedEdge,
  type NormalizedEntity,
  type NormalizedGraph,
  resolveEndpoint
} from "../../kernel/normalize.js"
import type { EdgeEnd, EdgeState, EdgeTriple } from "../../services/GraphRepo.js"
import type { VectorCache } from "./embed.js"
import { embedContext, type RunContext } from "./RunContext.js"
import { findSimilarEntities, NO_SIMILAR, type SimilarEntities } from "./similar.js"

/** Where an edge endpoint lands: a stored row (by id), or an entity this call writes. */
export type Endpoint =
  | { readonly kind: "stored"; readonly id: number; readonly name: string }
  | { readonly kind: "written"; readonly entity: NormalizedEntity }

export interface ResolvedFact {
  readonly edge: NormalizedEdge
  readonly source: Endpoint
  readonly target: Endpoint
}

/** The candidate lists, in the order `found_by` names them. */
export const CANDIDATE_SOURCES = ["name", "similar", "similar_fact"] as const
export type CandidateSource = (typeof CANDIDATE_SOURCES)[number]

/**
 * How a candidate fact was found: the sources joined by "+" in CANDIDATE_SOURCES order
 * (`name`, `similar`, `name+similar`, `similar_fact`, `name+similar_fact`, ...): `name` by
 * an endpoint's name, `similar` by a similar stored entity, `similar_fact` by its meaning.
 */
export type FoundBy = string

/** Whether `foundBy` names `source`. */
export const foundVia = (foundBy: FoundBy | undefined, source: CandidateSource): boolean =>
  foundBy !== undefined && foundBy.split("+").includes(source)

export interface Candidates {
  readonly storedEntities: ReadonlyArray<EntityRow>
  /**
   * newest first: the `max_candidates` most relevant live facts (reciprocal rank fusion over
   * the lists: touching the endpoints by name, newest first; touching a similar entity, newest
   * first; close in meaning to a new fact, closest first), the `max_candidates` newest closed
   * facts touching the endpoints by name, plus every fact a new fact repeats exactly (same
   * stored source, target and relation), live or closed, whatever its age
   */
  readonly facts: ReadonlyArray<EdgeWithNames>
  /** how each candidate fact was found, by edge id */
  readonly foundBy: ReadonlyMap<number, FoundBy>
  /** the end their statements gave, for the candidates a new fact may repeat (same stored triple) */
  readonly statedEnds: ReadonlyMap<number, string | null>
  /** the new facts (by index in `resolved`) whose description found some candidate by meaning */
  readonly foundByMeaning: ReadonlySet<number>
  /** the similarity lookup's error, when it failed (the names alone were used) */
  readonly similarityError: string | null
  /** the text's edges with their endpoints resolved (seed: Normalization and deduplication) */
  readonly resolved: ReadonlyArray<ResolvedFact>
  /** entities created for endpoints no entity names (type `other`) */
  readonly endpointEntities: ReadonlyArray<NormalizedEntity>
  /** the dataset schema's exclusive relations (docs/SCHEMA.md): reconciled in code, not by the model */
  readonly exclusive?: ReadonlyMap<string, ExclusiveSide> | undefined
}

const unique = <A>(xs: Iterable<A>): Array<A> => [...new Set(xs)]

/**
 * Resolves every endpoint: an entity of this text (the stored row with its name and type if
 * there is one, else the entity this call writes), else a stored entity of any type with
 * that name, else a new entity of type `other`.
 */
export const resolveEndpoints = (
  graph: NormalizedGraph,
  storedEntities: ReadonlyArray<EntityRow>
): { readonly resolved: ReadonlyArray<ResolvedFact>; readonly endpointEntities: ReadonlyArray<NormalizedEntity> } => {
  const storedByKey = new Map(storedEntities.map((e) => [entityKey(e.name_key, e.type), e] as const))
  const endpointEntities = new Map<string, NormalizedEntity>()
  const endpoint = (key: string, name: string): Endpoint => {
    const r = resolveEndpoint(key, graph.entities, storedEntities, name)
    switch (r.from) {
      case "stored":
        return { kind: "stored", id: r.entity.id, name: r.entity.name }
      case "text": {
        const stored = storedByKey.get(entityKey(r.entity.name_key, r.entity.type))
        return stored === undefined
          ? { kind: "written", entity: r.entity }
          : { kind: "stored", id: stored.id, name: stored.name }
      }
      case "new": {
        const k = entityKey(r.entity.name_key, r.entity.type)
        const entity = endpointEntities.get(k) ?? r.entity
        endpointEntities.set(k, entity)
        return { kind: "written", entity }
      }
    }
  }
  const resolved = graph.edges.map((edge) => ({
    edge,
    source: endpoint(edge.source_key, edge.source),
    target: endpoint(edge.target_key, edge.target)
  }))
  return { resolved, endpointEntities: [...endpointEntities.values()] }
}

/** The identity of an endpoint for exact-repeat detection: a stored id, or the key it will get. */
export const identity = (e: Endpoint): string =>
  e.kind === "stored" ? `id:${e.id}` : `new:${entityKey(e.entity.name_key, e.entity.type)}`

export interface CandidateSources {
  readonly graph: {
    readonly findEntitiesByNameKeys: (d: number, k: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<EntityRow>>
    readonly loadCandidateEdgesByNameKeys: (
      d: number,
      k: ReadonlyArray<string>,
      limit: number,
      state?: EdgeState
    ) => Effect.Effect<ReadonlyArray<EdgeWithNames>>
    readonly loadCandidateEdgesByEntityIds: (
      d: number,
      ids: ReadonlyArray<number>,
      limit: number
    ) => Effect.Effect<ReadonlyArray<EdgeWithNames>>
    readonly loadEdgesByTriples: (
      d: number,
      triples: ReadonlyArray<EdgeTriple>
    ) => Effect.Effect<ReadonlyArray<EdgeWithNames>>
    readonly getEdges: (ids: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<EdgeWithNames>>
    readonly loadEdgesByEnds: (
      d: number,
      ends: ReadonlyArray<EdgeEnd>,
      limit: number
    ) => Effect.Effect<ReadonlyArray<EdgeWithNames>>
    readonly statedEnds: (
      ids: ReadonlyArray<number>
    ) => Effect.Effect<ReadonlyArray<{ readonly edge_id: number; readonly stated_end: string | null }>>
  }
  readonly maxCandidates: number
  /**
   * the similarity lookup (only with embeddings): stored entity ids similar to the endpoints,
   * and stored fact ids close in meaning to the new facts' descriptions
   */
  readonly similar?: ((datasetId: number, graph: NormalizedGraph) => Effect.Effect<SimilarEntities>) | undefined
  /** the exclusive relations of the dataset's schema (none without one) */
  readonly exclusive?: ReadonlyMap<string, ExclusiveSide> | undefined
}

const newestFirst = (a: EdgeWithNames, b: EdgeWithNames) =>
  a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : b.id - a.id

export const findCandidates = (
  deps: CandidateSources,
  datasetId: number | null,
  graph: NormalizedGraph
): Effect.Effect<Candidates> =>
  Effect.gen(function*() {
    const endpointKeys = unique(graph.edges.flatMap((e) => [e.source_key, e.target_key]))
    const allKeys = unique([...graph.entities.map((e) => e.name_key), ...endpointKeys])
    // A dataset that does not exist yet has no entities and no candidates.
    const exclusive = deps.exclusive === undefined || deps.exclusive.size === 0 ? {} : { exclusive: deps.exclusive }
    if (datasetId === null) {
      return {
        storedEntities: [],
        facts: [],
        foundBy: new Map(),
        statedEnds: new Map(),
        foundByMeaning: new Set(),
        similarityError: null,
        ...resolveEndpoints(graph, []),
        ...exclusive
      }
    }
    const storedEntities = allKeys.length === 0 ? [] : yield* deps.graph.findEntitiesByNameKeys(datasetId, allKeys)
    const byName = endpointKeys.length === 0
      ? []
      : yield* deps.graph.loadCandidateEdgesByNameKeys(datasetId, endpointKeys, deps.maxCandidates)
    const similar = deps.similar === undefined || endpointKeys.length === 0
      ? NO_SIMILAR
      : yield* deps.similar(datasetId, graph)
    const bySimilarity = similar.ids.length === 0
      ? []
      : yield* deps.graph.loadCandidateEdgesByEntityIds(datasetId, similar.ids, deps.maxCandidates)
    // found by meaning: live ones only (a closed fact keeps its vector), closest first, by primary key
    const closest = similar.facts.slice(0, deps.maxCandidates)
    const byMeaning = closest.length === 0
      ? []
      : (yield* deps.graph.getEdges(closest.map((f) => f.id))).filter((f) =>
        f.expired_at === null && f.dataset_id === datasetId
      )
    // merged by edge id; the cap keeps the most relevant by fused rank (an alias match or an
    // old fact close in meaning keeps its place under a stream of newer facts)
    const facts = new Map<number, EdgeWithNames>()
    for (const f of [...byName, ...bySimilarity, ...byMeaning]) facts.set(f.id, f)
    const fused = fuseRanksOf(CANDIDATE_SOURCES, [
      { source: "name", ids: byName.map((f) => f.id) },
      { source: "similar", ids: bySimilarity.map((f) => f.id) },
      { source: "similar_fact", ids: byMeaning.map((f) => f.id) }
    ]).slice(0, deps.maxCandidates)
    const foundBy = new Map(fused.map((f) => [f.id, f.found_by] as const))
    const capped = fused.map((f) => facts.get(f.id)!)
    const foundByMeaning = new Set(
      closest.filter((f) => foundVia(foundBy.get(f.id), "similar_fact")).flatMap((f) => f.facts)
    )
    // Exact repeats are looked up by their stored endpoints, past the cap: an old fact repeated
    // under a stream of newer ones about the same people must merge, not be stored twice.
    const endpoints = resolveEndpoints(graph, storedEntities)
    const repeats = yield* loadRepeats(deps, datasetId, endpoints.resolved)
    // an exclusive relation compares a new fact with the facts of its end and relation, past the cap
    const sameEnd = yield* loadSameEnd(deps, datasetId, endpoints.resolved)
    // The whole timeline, not only what holds now (contracts section 3): an older state told
    // late is cut to the gap it fits, and an end learned late applies to a fact already closed.
    const closed = endpointKeys.length === 0
      ? []
      : yield* deps.graph.loadCandidateEdgesByNameKeys(datasetId, endpointKeys, deps.maxCandidates, "closed")
    const merged = new Map(capped.map((f) => [f.id, f] as const))
    for (const f of [...closed, ...repeats, ...sameEnd]) merged.set(f.id, f)
    const all = [...merged.values()].sort(newestFirst)
    const kept = new Map(all.map((f) => [f.id, foundBy.get(f.id) ?? "name"] as const))
    // repeats are matched against what was said of a fact, not its end as decisions cut it
    const repeatable = new Set(repeats.map((f) => f.id))
    const statedEnds = repeatable.size === 0
      ? new Map<number, string | null>()
      : new Map((yield* deps.graph.statedEnds([...repeatable])).map((r) => [r.edge_id, r.stated_end] as const))
    return {
      storedEntities,
      facts: all,
      foundBy: kept,
      statedEnds,
      foundByMeaning,
      similarityError: similar.error,
      ...endpoints,
      ...exclusive
    }
  })

/**
 * The facts, live or closed, with the stored end and the relation of a new fact of an exclusive
 * relation: its source's for per_source, its target's for per_target (docs/SCHEMA.md).
 */
const loadSameEnd = (
  deps: CandidateSources,
  datasetId: number,
  resolved: ReadonlyArray<ResolvedFact>
): Effect.Effect<ReadonlyArray<EdgeWithNames>> => {
  const ends: Array<EdgeEnd> = []
  for (const r of resolved) {
    const side = deps.exclusive?.get(r.edge.relation)
    const end = side === "per_source" ? r.source : side === "per_target" ? r.target : undefined
    if (end?.kind !== "stored") continue
    ends.push({ side: side === "per_source" ? "source" : "target", entity_id: end.id, relation: r.edge.relation })
  }
  return ends.length === 0 ? Effect.succeed([]) : deps.graph.loadEdgesByEnds(datasetId, ends, deps.maxCandidates)
}

/** The facts, live or closed, with the (stored source, stored target, relation) of some new fact. */
const loadRepeats = (
  deps: CandidateSources,
  datasetId: number,
  resolved: ReadonlyArray<ResolvedFact>
): Effect.Effect<ReadonlyArray<EdgeWithNames>> => {
  const triples = new Map<string, EdgeTriple>()
  for (const r of resolved) {
    if (r.source.kind !== "stored" || r.target.kind !== "stored") continue
    const triple = { source_id: r.source.id, target_id: r.target.id, relation: r.edge.relation }
    triples.set(JSON.stringify(triple), triple)
  }
  return triples.size === 0 ? Effect.succeed([]) : deps.graph.loadEdgesByTriples(datasetId, [...triples.values()])
}

/** load_candidates for observers: the names looked up, and every candidate with how it was found. */
const candidatesTrace = (c: Candidates) => ({
  arguments: {
    names: [...new Set(c.resolved.flatMap((r) => [r.edge.source, r.edge.target]))]
  },
  observation: {
    candidates: c.facts.map((f) => ({
      id: f.id,
      source: f.source_name,
      relation: f.relation,
      target: f.target_name,
      description: f.description,
      valid_at: f.valid_at,
      invalid_at: f.invalid_at,
      found_by: c.foundBy.get(f.id) ?? "name"
    })),
    stored_entities: c.storedEntities.map((e) => ({ id: e.id, name: e.name, type: e.type })),
    ...(c.similarityError === null ? {} : { similarity_error: c.similarityError })
  }
})

/**
 * Stage load_candidates for a unit's extraction, in the dataset as the run knows it; with
 * embeddings, the similarity lookup embeds through `cache` (the unit's vectors embedded ahead).
 */
export const loadCandidates = Effect.fn("remember.load_candidates")(
  function*(ctx: RunContext, graph: NormalizedGraph, cache: VectorCache) {
    const { deps } = ctx
    const sources: CandidateSources = {
      graph: deps.graph,
      maxCandidates: deps.settings.maxCandidates,
      exclusive: exclusiveRelations(ctx.schema),
      similar: deps.embeddings.enabled
        ? (datasetId, g) =>
          findSimilarEntities(
            {
              vectors: deps.vectors,
              topK: deps.settings.similarityTopK,
              threshold: deps.settings.similarityThreshold,
              factThreshold: deps.settings.factSimilarityThreshold
            },
            embedContext(ctx, "load_candidates"),
            cache,
            datasetId,
            g
          )
        : undefined
    }
    return yield* ctx.recorder.stage(
      "load_candidates",
      findCandidates(sources, ctx.datasetId, graph),
      (c) => ({
        candidates: c.facts.length,
        stored_entities: c.storedEntities.length,
        found_by: Object.fromEntries(c.foundBy),
        ...(c.similarityError === null ? {} : { similarity_error: c.similarityError })
      }),
      candidatesTrace
    )
  }
)
