/**
 * Corrections by hand (docs/FORGET.md): delete a fact or an entity (through the forget, so what
 * they closed is reopened), close a live fact or undo that, merge entities. Each under the
 * dataset's lock, in one transaction, scoped by user and dataset: another user's row is a 404.
 */
import { Effect } from "effect"
import { Conflict, InvalidRequest, NotFound } from "../domain/Errors.js"
import { closureHolds, naturalEnd, stateOf } from "../kernel/closures.js"
import { decodeAttributes, encodeAttributes, foldAttributes } from "../kernel/datasetSchema.js"
import { instant } from "../kernel/temporal.js"
import { edgeOut } from "../pipeline/remember/response.js"
import { ForgetRepo } from "../services/ForgetRepo.js"
import { GraphRepo } from "../services/GraphRepo.js"
import { afterForget, type ForgetScope, inDataset as inDatasetTransaction } from "./envelope.js"
import { reembedChanged } from "./forgetArtifact.js"
import { forgetRows, type Outcome } from "./forgetRows.js"
import type {
  FactResponse,
  ForgetArtifactResponse,
  InvalidateFactRequest,
  MergeEntitiesRequest,
  MergeEntitiesResponse,
  ReopenFactRequest
} from "./schemas.js"

const NO_SET: ReadonlySet<number> = new Set()

/** `effect` with the dataset, in the forget's envelope; after it, the outbox's backlog and the vectors of what changed. */
const inDataset = <A, E, R>(
  scope: ForgetScope,
  what: string,
  effect: (datasetId: number, now: string) => Effect.Effect<A, E, R>
) =>
  Effect.tap(
    inDatasetTransaction(scope, what, (dataset, now) => effect(dataset.id, now)),
    () => afterForget({ vectors: "pending", reembed: reembedChanged(scope) })
  )

const answer = (outcome: Outcome): ForgetArtifactResponse => ({
  deleted: { artifacts: outcome.artifacts, entities: outcome.entities, facts: outcome.facts, vectors: outcome.vectors },
  reopened_facts: outcome.reopened,
  reanchored_facts: outcome.reanchored
})

/** `DELETE /v1/gb/facts/{id}`: the fact goes, whatever supports it; what it closed reopens. */
export const deleteFact = (scope: ForgetScope, id: number) =>
  inDataset(scope, `fact ${id}`, (datasetId, now) =>
    Effect.gen(function*() {
      const forget = yield* ForgetRepo
      if ((yield* forget.factsIn(datasetId, [id])).length === 0) {
        return yield* new NotFound({ message: `fact ${id} not found` })
      }
      return answer(yield* forgetRows(datasetId, { artifacts: [], facts: [id], entities: [] }, now))
    }))

/** `DELETE /v1/gb/entities/{id}`: the entity and every fact that touches it. */
export const deleteEntity = (scope: ForgetScope, id: number) =>
  inDataset(scope, `entity ${id}`, (datasetId, now) =>
    Effect.gen(function*() {
      const forget = yield* ForgetRepo
      if ((yield* forget.entitiesIn(datasetId, [id])).length === 0) {
        return yield* new NotFound({ message: `entity ${id} not found` })
      }
      const facts = yield* forget.factsTouching([id])
      return answer(yield* forgetRows(datasetId, { artifacts: [], facts, entities: [id] }, now))
    }))

const factOf = (datasetId: number, id: number) =>
  Effect.gen(function*() {
    const forget = yield* ForgetRepo
    if ((yield* forget.factsIn(datasetId, [id])).length === 0) {
      return yield* new NotFound({ message: `fact ${id} not found` })
    }
    return (yield* forget.facts([id], []))[0]!
  })

const factResponse = (id: number) =>
  Effect.map(
    Effect.flatMap(GraphRepo, (graph) => graph.getEdges([id])),
    (rows): FactResponse => ({ fact: edgeOut(rows[0]!) })
  )

/**
 * `POST /v1/gb/facts/{id}/invalidate`: a live fact closed by hand at `invalid_at` (default now),
 * recorded as a decision with no artifact, so `reopen` undoes it.
 */
export const invalidateFact = (id: number, request: InvalidateFactRequest) =>
  inDataset(request, `fact ${id}`, (datasetId, now) =>
    Effect.gen(function*() {
      const forget = yield* ForgetRepo
      const graph = yield* GraphRepo
      const fact = yield* factOf(datasetId, id)
      if (fact.expired_at !== null) return yield* new Conflict({ message: `fact ${id} is not live` })
      const at = request.invalid_at ?? now
      if (fact.valid_at !== null && instant(at) <= instant(fact.valid_at)) {
        return yield* new InvalidRequest({ message: `invalid_at must be after the fact's valid_at (${fact.valid_at})` })
      }
      yield* graph.recordClosures([{
        edge_id: id,
        by_edge_id: null,
        artifact_id: null,
        kind: "hand",
        invalid_at: at,
        expired_at: now,
        prev_invalid_at: fact.invalid_at,
        created_at: now
      }])
      yield* forget.updateFact(id, { ...fact, invalid_at: at, expired_at: now, reembed: false })
      return yield* factResponse(id)
    }))

/** `POST /v1/gb/facts/{id}/reopen`: the closings by hand are undone; a remaining decision may still close it. */
export const reopenFact = (id: number, request: ReopenFactRequest) =>
  inDataset(request, `fact ${id}`, (datasetId) =>
    Effect.gen(function*() {
      const forget = yield* ForgetRepo
      const fact = yield* factOf(datasetId, id)
      const closures = (yield* forget.closuresTouching([id])).filter((c) => c.edge_id === id)
      const byHand = closures.filter((c) => c.kind === "hand")
      if (byHand.length === 0) return yield* new Conflict({ message: `fact ${id} was not closed by hand` })
      yield* forget.deleteClosures(byHand.map((c) => c.id))
      const all = (yield* forget.closuresTouching([id])).filter((c) => c.kind !== "hand")
      const holding = all.filter((c) => closureHolds(c, NO_SET, NO_SET))
      const others = yield* forget.facts(
        holding.flatMap((c) => [c.edge_id, ...(c.by_edge_id === null ? [] : [c.by_edge_id])]),
        []
      )
      const byId = new Map(others.map((f) => [f.id, f] as const))
      const state = stateOf(fact, holding, naturalEnd(fact, closures), (other) => byId.get(other))
      yield* forget.updateFact(id, { ...fact, ...state, reembed: false })
      return yield* factResponse(id)
    }))

/**
 * `POST /v1/gb/entities/merge`: the facts, links and sessions of `from` move to `into`; facts
 * that become exact repeats merge into the earliest, their provenance united; `from` and its
 * vectors are deleted and `into` is embedded again. Not undoable.
 */
export const mergeEntities = (request: MergeEntitiesRequest) =>
  inDataset(request, `entity ${request.into}`, (datasetId, now) =>
    Effect.gen(function*() {
      const forget = yield* ForgetRepo
      const from = request.from
      if (new Set(from).size !== from.length) return yield* new InvalidRequest({ message: "from has a repeated id" })
      if (from.includes(request.into)) return yield* new InvalidRequest({ message: "from must not contain into" })
      const found = new Set(yield* forget.entitiesIn(datasetId, [request.into, ...from]))
      const missing = [request.into, ...from].find((id) => !found.has(id))
      if (missing !== undefined) return yield* new NotFound({ message: `entity ${missing} not found` })
      // the statements that named the merged entities keep their spelling ("Bob J."): aliases of
      // `into`, which keeps its name now and after any later forget (plan.ts planEntities)
      const moved = yield* forget.moveEntities(from, request.into)
      // exact repeats now: the earliest stays, the others merge into it
      const facts = (yield* forget.facts(moved, [])).filter((f) => f.expired_at === null)
      const merged: Array<number> = []
      const seen = new Set<number>()
      for (const fact of facts) {
        if (seen.has(fact.id)) continue
        const twins = (yield* forget.withTriples(datasetId, [fact])).flatMap((t) => (t.live ? [t.id] : []))
          .sort((a, b) => a - b)
        for (const id of twins) seen.add(id)
        const [keep, ...drops] = twins
        for (const drop of drops) {
          // both facts' decisions were made: what the repeat closed (or what closed it) stays so, for the one kept
          yield* forget.moveFactLinks(drop, keep!)
          yield* forget.repointClosures(drop, keep!)
          merged.push(drop)
        }
      }
      yield* forgetRows(datasetId, { artifacts: [], facts: merged, entities: from }, now)
      // the attributes of every statement `into` now has, each key's latest value (docs/SCHEMA.md)
      const kept = (yield* forget.entities([request.into], []))[0]!
      const attributes = encodeAttributes(foldAttributes(kept.statements.map((s) => decodeAttributes(s.attributes))))
      if (attributes !== (kept.attributes ?? null)) {
        yield* (yield* GraphRepo).setEntityAttributes([{ id: request.into, attributes }])
      }
      const into = (yield* forget.entityRows([request.into]))[0]!
      return {
        into: { id: into.id, name: into.name, type: into.type, description: into.description },
        merged: [...from],
        moved_facts: moved.length,
        merged_facts: merged
      } satisfies MergeEntitiesResponse
    }))
