// Legacy copy of the read path as of 534360b (issue 38, item 7): test/query/readEquivalence.test.ts
// runs it beside the new one. Deleted once the comparison has passed.
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
 * Then the block (contextBlock.ts) keeps what fits, facts first.
 */
import { Effect } from "effect"
import type { NotFound } from "../../../src/domain/Errors.js"
import { renderContext } from "../../../src/query/contextBlock.js"
import { type ContextRequest, DEFAULT_HOPS } from "../../../src/query/requests.js"
import type { ContextResponse } from "../../../src/query/responses.js"
import { filtersOf, findDataset, type ReadDeps } from "./deps.js"
import { retrieve } from "./retrieve.js"
import type { ReadFilters, UnlinkedFactView } from "./SearchRepo.js"
import { entityOut, type FactOut, factOut, type LinkedEntityOut, NO_LINKS, type Scored } from "./views.js"

export type { ContextResponse } from "../../../src/query/responses.js"

/** With a query: how many of search's facts and entities are offered to the block. */
export const CONTEXT_CANDIDATES = 50
/** Without a query: how many of the most recently stored facts are ranked. */
export const RECENT_WINDOW = 100

/**
 * The block's candidates. They come without their links (empty lists): only the facts and
 * entities the block keeps have theirs read, with `filters`.
 */
interface Ranked {
  readonly facts: ReadonlyArray<FactOut>
  readonly entities: ReadonlyArray<LinkedEntityOut>
  readonly filters: ReadFilters
}

const unscored = <A extends Scored>({ found_by: _, score: __, ...rest }: A): Omit<A, keyof Scored> => rest

/** Search's ranking, without its scores (the block's order is the rank). */
const relevant = (deps: ReadDeps, request: ContextRequest, query: string): Effect.Effect<Ranked, NotFound> =>
  Effect.map(
    retrieve(deps, {
      user_id: request.user_id,
      dataset: request.dataset,
      query,
      ...(request.as_of === undefined ? {} : { as_of: request.as_of }),
      ...(request.session_id === undefined ? {} : { session_id: request.session_id }),
      include_expired: false,
      limit: CONTEXT_CANDIDATES,
      hops: DEFAULT_HOPS
    }, { links: false, passages: false }),
    (found) => ({
      facts: found.facts.map(unscored),
      entities: found.entities.map(unscored),
      filters: found.filters
    })
  )

/** The endpoints of a fact, once each. */
const endpoints = (f: UnlinkedFactView): ReadonlyArray<number> =>
  f.source_id === f.target_id ? [f.source_id] : [f.source_id, f.target_id]

/** The window's facts by connectedness, then newest; its endpoints by degree, then first appearance. */
export const rankRecent = <F extends UnlinkedFactView>(window: ReadonlyArray<F>): {
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

const recentAndConnected = (deps: ReadDeps, request: ContextRequest): Effect.Effect<Ranked, NotFound> =>
  Effect.gen(function*() {
    const dataset = yield* findDataset(deps, request)
    const filters = yield* filtersOf({
      ...(request.as_of === undefined ? {} : { as_of: request.as_of }),
      ...(request.session_id === undefined ? {} : { session_id: request.session_id }),
      include_expired: false
    })
    const window = yield* deps.search.recentFacts(dataset.id, filters, RECENT_WINDOW)
    const ranked = rankRecent(window)
    const rows = new Map(
      (yield* deps.search.unlinkedEntities(dataset.id, ranked.entityIds, filters)).map((e) => [e.id, e])
    )
    return {
      facts: ranked.facts.map((f) => factOut({ ...f, ...NO_LINKS }, null)),
      entities: ranked.entityIds.flatMap((id) => {
        const row = rows.get(id)
        return row === undefined ? [] : [entityOut({ ...row, ...NO_LINKS })]
      }),
      filters
    }
  })

/** The context block of a request. NotFound (404) when the user has no such dataset. */
export const runContext = (deps: ReadDeps, request: ContextRequest): Effect.Effect<ContextResponse, NotFound> =>
  Effect.gen(function*() {
    const ranked = yield* (request.query === undefined
      ? recentAndConnected(deps, request)
      : relevant(deps, request, request.query))
    const block = renderContext(ranked.facts, ranked.entities, request.max_tokens)
    // the block's lines do not show links, so only the kept facts' and entities' are read
    const [factLinks, entityLinks] = yield* Effect.all([
      deps.search.links("fact", block.facts.map((f) => f.id), ranked.filters),
      deps.search.links("entity", block.entities.map((e) => e.id), ranked.filters)
    ], { concurrency: "unbounded" })
    return {
      ...block,
      facts: block.facts.map((f) => ({ ...f, ...factLinks.get(f.id)! })),
      entities: block.entities.map((e) => ({ ...e, ...entityLinks.get(e.id)! }))
    }
  })
