/**
 * An entity's story (`GET /v1/gb/entities/{id}`, `GET /v1/gb/entities?name=`, the MCP tool
 * `get_entity`): the entity, every fact that touches it over time (closed ones too unless
 * `include_expired` is false) and the entities one hop away. A name is matched as the pipeline
 * keys names (`nameKey`: case and spacing ignored); when entities of several types share it, the
 * one with the most facts is the story's, ties by lowest id. The whole story is read, every fact
 * and every link: it is as long as the entity's history.
 */
import { Clock, Effect, Option } from "effect"
import { InvalidRequest, NotFound } from "../domain/Errors.js"
import { toIso } from "../domain/time.js"
import { nameKey } from "../kernel/normalize.js"
import type { EntityFactView } from "../services/SearchRepo.js"
import { findDataset, type ReadDeps } from "./deps.js"
import { entityChoiceProblem, type EntityStoryRequest } from "./requests.js"
import type { EntityRef, EntityStory, StoryFact } from "./responses.js"
import { entityOut, factOut } from "./views.js"

export type { EntityRef, EntityStory, StoryFact } from "./responses.js"

export type EntityStoryError = InvalidRequest | NotFound

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

/**
 * The story of the request's entity. NotFound (404) when the user has no such dataset, or the
 * dataset no such entity (another user's entity is missing like any other); InvalidRequest (400)
 * when the request, built without its schema, names no entity or two.
 */
export const runEntityStory = (
  deps: ReadDeps,
  request: EntityStoryRequest
): Effect.Effect<EntityStory, EntityStoryError> =>
  Effect.gen(function*() {
    const problem = entityChoiceProblem(request)
    if (problem !== undefined) return yield* new InvalidRequest({ message: problem })
    const dataset = yield* findDataset(deps, request)
    const { id, name } = request
    const found = yield* deps.search.entity(dataset.id, id !== undefined ? { id } : { nameKey: nameKey(name!) })
    if (Option.isNone(found)) {
      return yield* new NotFound({
        message: id !== undefined ? `entity ${id} not found` : `no entity named ${JSON.stringify(name)}`
      })
    }
    const entity = found.value
    // not ended by now, as the other reads judge it by default (a fact that starts later is kept)
    const openAt = request.include_expired ? null : toIso(yield* Clock.currentTimeMillis)
    const facts = yield* deps.search.entityFacts(dataset.id, entity.id, openAt)
    return {
      entity: entityOut(entity),
      facts: facts.map(storyFactOut),
      neighbours: neighboursOf(entity.id, facts)
    }
  })
