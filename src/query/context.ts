/**
 * A context block (`POST /v1/gb/context`, the MCP tool `get_context`): the facts valid at
 * `as_of` and the entities they concern, as text for a prompt, cut to `max_tokens`. No LLM is
 * called (with a query and embeddings configured, the query is embedded once, as search does).
 *
 * - With a query: search's own ranking (`retrieve`: full text, vectors and the graph around
 *   the matched entities, fused by rank), its best CONTEXT_CANDIDATES facts and entities.
 * - Without: the RECENT_WINDOW most recently stored facts valid at `as_of` (one backward walk
 *   of the `(dataset_id, id)` index), ranked by how connected they are within that window: the
 *   number of window facts touching the fact's source plus those touching its target (its own
 *   endpoints' degrees; a fact from an entity to itself counts that entity once), most first,
 *   ties newest first (higher id). The entities are the endpoints of the window's facts, by their
 *   degree in the window, most first, ties in the order they first appear in the ranked facts
 *   (source before target).
 *
 * Each entity is described by what its texts said of it (names.ts summaryOf), as of the block's
 * times. Then the block (contextBlock.ts) keeps what fits, facts first.
 */
import { Effect, Option } from "effect"
import type { DatasetRow } from "../domain/Rows.js"
import type { ReadFact, ReadFilters } from "../services/SearchRepo.js"
import { renderContext } from "./contextBlock.js"
import { datasetOf, filtersOf, type ReadDeps } from "./deps.js"
import { summariesOf, SUMMARY_STATEMENTS } from "./names.js"
import { type ContextRequest, DEFAULT_HOPS } from "./requests.js"
import type { ContextResponse } from "./responses.js"
import { inRank, rank, rankedItems } from "./retrieve.js"
import { type EntityItem, entityItem, type FactItem, factItem, linked } from "./views.js"

export type { ContextResponse } from "./responses.js"

/** With a query: how many of search's facts and entities are offered to the block. */
export const CONTEXT_CANDIDATES = 50
/** Without a query: how many of the most recently stored facts are ranked. */
export const RECENT_WINDOW = 100

/**
 * The block's candidates, as shown but for their links: only the facts and entities the block
 * keeps have theirs read, with `filters`.
 */
interface Ranked {
  readonly facts: ReadonlyArray<FactItem>
  readonly entities: ReadonlyArray<EntityItem>
  readonly filters: ReadFilters
  /** joined before the answer: the query's gb_inferences row */
  readonly recorded: Effect.Effect<void>
}

/** Search's ranking (no passages), its order the block's. */
const relevant = (
  deps: ReadDeps,
  dataset: DatasetRow,
  request: ContextRequest,
  query: string
): Effect.Effect<Ranked> =>
  Effect.gen(function*() {
    const ranking = yield* rank(deps, dataset, {
      user_id: request.user_id,
      dataset: request.dataset,
      query,
      ...(request.as_of === undefined ? {} : { as_of: request.as_of }),
      ...(request.session_id === undefined ? {} : { session_id: request.session_id }),
      ...(request.filters === undefined ? {} : { filters: request.filters }),
      include_expired: false,
      limit: CONTEXT_CANDIDATES,
      hops: DEFAULT_HOPS
    }, false)
    const items = yield* rankedItems(deps, ranking)
    return { ...items, filters: ranking.filters, recorded: ranking.candidates.recorded }
  })

/** The endpoints of a fact, once each. */
const endpoints = (f: ReadFact): ReadonlyArray<number> =>
  f.source_id === f.target_id ? [f.source_id] : [f.source_id, f.target_id]

/** The window's facts by connectedness, then newest; its endpoints by degree, then first appearance. */
export const rankRecent = <F extends ReadFact>(window: ReadonlyArray<F>): {
  readonly facts: ReadonlyArray<F>
  readonly entityIds: ReadonlyArray<number>
} => {
  const degree = new Map<number, number>()
  for (const f of window) for (const id of endpoints(f)) degree.set(id, (degree.get(id) ?? 0) + 1)
  const connections = (f: F) => endpoints(f).reduce((n, id) => n + degree.get(id)!, 0)
  const facts = [...window].sort((a, b) => connections(b) - connections(a) || b.id - a.id)
  const firstSeen = new Map<number, number>()
  for (const f of facts) for (const id of endpoints(f)) if (!firstSeen.has(id)) firstSeen.set(id, firstSeen.size)
  const entityIds = [...firstSeen.keys()].sort((a, b) =>
    degree.get(b)! - degree.get(a)! || firstSeen.get(a)! - firstSeen.get(b)!
  )
  return { facts, entityIds }
}

/** The filters of a context request (never closed facts). */
const contextFilters = (request: ContextRequest) =>
  filtersOf({
    ...(request.as_of === undefined ? {} : { as_of: request.as_of }),
    ...(request.session_id === undefined ? {} : { session_id: request.session_id }),
    ...(request.filters === undefined ? {} : { filters: request.filters }),
    include_expired: false
  })

const recentAndConnected = (deps: ReadDeps, dataset: DatasetRow, request: ContextRequest): Effect.Effect<Ranked> =>
  Effect.gen(function*() {
    const filters = yield* contextFilters(request)
    const window = yield* deps.search.recentFacts(dataset.id, filters, RECENT_WINDOW)
    const ranked = rankRecent(window)
    const entities = yield* deps.search.entities(dataset.id, ranked.entityIds, filters)
    return {
      facts: ranked.facts.map((f) => factItem(f, null)),
      entities: inRank(ranked.entityIds.map((id) => ({ id })), entities, entityItem),
      filters,
      recorded: Effect.void
    }
  })

/** The context block of a request; an empty block when the user has stored nothing in the dataset yet. */
export const runContext = (deps: ReadDeps, request: ContextRequest): Effect.Effect<ContextResponse> =>
  Effect.gen(function*() {
    const found = yield* datasetOf(deps, request)
    const ranked: Ranked = Option.isNone(found)
      ? { facts: [], entities: [], filters: yield* contextFilters(request), recorded: Effect.void }
      : yield* (request.query === undefined
        ? recentAndConnected(deps, found.value, request)
        : relevant(deps, found.value, request, request.query))
    // each entity as all its texts described it (names.ts summaryOf), as of the block's times
    const statements = ranked.entities.length === 0 ? [] : yield* deps.search.entityStatements(
      ranked.entities.map((e) => e.id),
      { asOf: ranked.filters.asOf, knownAt: ranked.filters.knownAt },
      SUMMARY_STATEMENTS
    )
    const summaries = summariesOf(statements)
    const entities = ranked.entities.map((e) => {
      const summary = summaries.get(e.id) ?? ""
      return summary === "" ? e : { ...e, summary }
    })
    const block = renderContext(ranked.facts, entities, request.max_tokens)
    // the block's lines do not show links, so only the kept facts' and entities' are read
    const [factLinks, entityLinks] = yield* Effect.all([
      deps.search.links("fact", block.facts.map((f) => f.id), ranked.filters),
      deps.search.links("entity", block.entities.map((e) => e.id), ranked.filters)
    ], { concurrency: "unbounded" })
    yield* ranked.recorded
    return {
      ...block,
      facts: block.facts.map((f) => linked(f, factLinks.get(f.id)!)),
      entities: block.entities.map((e) => linked(e, entityLinks.get(e.id)!))
    }
  })
