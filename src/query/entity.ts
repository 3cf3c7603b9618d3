/**
 * An entity's story (`GET /v1/gb/entities/{id}`, `GET /v1/gb/entities?name=`, the MCP tool
 * `get_entity`): the entity with its summary and aliases, every fact that touches it over time
 * (closed ones too unless `include_expired` is false) and the entities one hop away. A name is
 * found by whole words of the entity's name and aliases, case and accents folded (names.ts); a
 * name that means more than one entity answers the candidates. The whole story is read, every
 * fact and every link: it is as long as the entity's history.
 */
import { Clock, Effect, Option } from "effect"
import { InvalidRequest, NotFound } from "../domain/Errors.js"
import type { DatasetRow } from "../domain/Rows.js"
import { toIso } from "../domain/time.js"
import { nameWords } from "../kernel/nameWords.js"
import { nameKey } from "../kernel/normalize.js"
import type { EntityFactView, NamedEntity } from "../services/SearchRepo.js"
import { findDataset, type ReadDeps } from "./deps.js"
import { rankNamed, resolveName, SUMMARY_STATEMENTS, summaryOf } from "./names.js"
import { entityChoiceProblem, type EntityStoryRequest } from "./requests.js"
import type { EntityCandidates, EntityLookup, EntityRef, EntityStory, StoryFact } from "./responses.js"
import { entityOut, factOut } from "./views.js"

export type { EntityCandidates, EntityLookup, EntityRef, EntityStory, StoryFact } from "./responses.js"

export type EntityStoryError = InvalidRequest | NotFound

/** How many entities holding a name's words a lookup ranks (the most facts first). */
export const NAME_MATCHES = 50
/** How many candidates an ambiguous name answers. */
export const CANDIDATES_SHOWN = 10

/** A fact as search shows it, each endpoint's type next to its name and id (the fact view's too). */
export const storyFactOut = (f: EntityFactView): StoryFact => {
  const { id, source, source_id, target, target_id, ...rest } = factOut(f, null)
  return { id, source, source_id, source_type: f.source_type, target, target_id, target_type: f.target_type, ...rest }
}

const byName = (a: EntityRef, b: EntityRef) => {
  const [ka, kb] = [nameKey(a.name), nameKey(b.name)]
  if (ka !== kb) return ka < kb ? -1 : 1
  if (a.name !== b.name) return a.name < b.name ? -1 : 1
  return a.id - b.id
}

/** The other end of each fact, once each (a fact from the entity to itself has none), by name. */
const neighboursOf = (entityId: number, facts: ReadonlyArray<EntityFactView>): Array<EntityRef> => {
  const seen = new Map<number, EntityRef>()
  for (const f of facts) {
    const other = f.source_id === entityId
      ? { id: f.target_id, name: f.target_name, type: f.target_type }
      : { id: f.source_id, name: f.source_name, type: f.source_type }
    if (other.id !== entityId && !seen.has(other.id)) seen.set(other.id, other)
  }
  return [...seen.values()].sort(byName)
}

/** The entity a name means, the candidates when it means several, or none. */
const lookUp = (deps: ReadDeps, dataset: DatasetRow, name: string) =>
  Effect.gen(function*() {
    const found = yield* deps.search.entitiesNamed(dataset.id, nameWords(name), NAME_MATCHES)
    const ranked = rankNamed(name, found)
    const resolution = resolveName(ranked)
    if (resolution._tag === "None") return yield* new NotFound({ message: `no entity named ${JSON.stringify(name)}` })
    if (resolution._tag === "One") return resolution.entity
    return {
      name,
      matches: ranked.length,
      candidates: resolution.candidates.slice(0, CANDIDATES_SHOWN).map(({ entity, match }) => ({
        id: entity.id,
        name: entity.name,
        type: entity.type,
        aliases: entity.aliases,
        description: entity.description,
        facts: entity.facts,
        match
      }))
    } satisfies EntityCandidates
  })

const isCandidates = (found: NamedEntity | EntityCandidates): found is EntityCandidates => "candidates" in found

/** The story of one entity of the dataset, by id. */
const storyOf = (
  deps: ReadDeps,
  dataset: DatasetRow,
  id: number,
  includeExpired: boolean
) =>
  Effect.gen(function*() {
    const found = yield* deps.search.entity(dataset.id, { id })
    if (Option.isNone(found)) return yield* new NotFound({ message: `entity ${id} not found` })
    const entity = found.value
    const now = toIso(yield* Clock.currentTimeMillis)
    // not ended by now, as the other reads judge it by default (a fact that starts later is kept)
    const openAt = includeExpired ? null : now
    const [facts, statements, named] = yield* Effect.all([
      deps.search.entityFacts(dataset.id, entity.id, openAt),
      deps.search.entityStatements([entity.id], { asOf: now, knownAt: null }, SUMMARY_STATEMENTS),
      Effect.map(deps.search.entityAliases([entity.id]), (aliases) => aliases.get(entity.id) ?? [])
    ], { concurrency: "unbounded" })
    const summary = summaryOf(statements)
    return {
      entity: {
        ...entityOut(entity),
        ...(summary === "" ? {} : { summary }),
        ...(named.length === 0 ? {} : { aliases: named })
      },
      facts: facts.map(storyFactOut),
      neighbours: neighboursOf(entity.id, facts)
    } satisfies EntityStory
  })

/**
 * The story of the request's entity, or the candidates of an ambiguous name. NotFound (404)
 * when the user has no such dataset, or the dataset no such entity (another user's entity is
 * missing like any other); InvalidRequest (400) when the request, built without its schema,
 * names no entity or two.
 */
export const runEntityStory = (
  deps: ReadDeps,
  request: EntityStoryRequest
): Effect.Effect<EntityLookup, EntityStoryError> =>
  Effect.gen(function*() {
    const problem = entityChoiceProblem(request)
    if (problem !== undefined) return yield* new InvalidRequest({ message: problem })
    const dataset = yield* findDataset(deps, request)
    if (request.id !== undefined) return yield* storyOf(deps, dataset, request.id, request.include_expired)
    const found = yield* lookUp(deps, dataset, request.name!)
    if (isCandidates(found)) return found
    return yield* storyOf(deps, dataset, found.id, request.include_expired)
  })

/** The story of the entity of this id (`GET /v1/gb/entities/{id}`): never candidates. */
export const runEntityStoryById = (
  deps: ReadDeps,
  request: Omit<EntityStoryRequest, "name"> & { readonly id: number }
): Effect.Effect<EntityStory, EntityStoryError> =>
  Effect.flatMap(
    findDataset(deps, request),
    (dataset) => storyOf(deps, dataset, request.id, request.include_expired)
  )
