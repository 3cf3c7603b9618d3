/**
 * A forget's rows, plan-then-apply (docs/FORGET.md): the loader reads the neighbourhood the
 * forget can reach (facts, decisions, repeats, entities) as `planForget` asks for it, the pure
 * planner computes the whole fixpoint in memory, and `applyForgetPlan` makes its writes. All of
 * it runs in the caller's transaction, under the dataset's lock; no model or network call.
 */
import { Effect } from "effect"
import { tripleKey } from "../kernel/closures.js"
import { recordVectors } from "../pipeline/vectors.js"
import { type ForgetFact, ForgetRepo } from "../services/ForgetRepo.js"
import { GraphRepo } from "../services/GraphRepo.js"
import { VectorOutbox } from "../services/VectorOutbox.js"
import { VectorStore } from "../services/VectorStore.js"
import { type ForgetTarget, type Neighbourhood, planForget, type Planned, type Wants } from "./plan.js"

export type { ForgetTarget } from "./plan.js"

/** What a forget removed and changed, and the outbox rows to write after the commit. */
export interface Outcome {
  readonly artifacts: number
  readonly entities: number
  readonly facts: number
  readonly vectors: number
  readonly reopened: ReadonlyArray<number>
  readonly reanchored: ReadonlyArray<number>
  readonly outboxIds: ReadonlyArray<number>
}

/** The first reads: the facts of the forgotten artifacts and those named, the entities and sessions of the artifacts. */
const loadStart = (repo: ForgetRepo["Type"], datasetId: number, target: ForgetTarget) =>
  Effect.gen(function*() {
    const forgotten = target.artifacts.map((a) => a.id)
    return {
      datasetId,
      touched: [...new Set([...(yield* repo.factsOfArtifacts(forgotten)), ...target.facts])],
      linkedEntities: yield* repo.entitiesLinkedTo(forgotten),
      sessions: yield* repo.sessionsOf(forgotten),
      facts: new Map(),
      closures: new Map(),
      closuresOf: new Set(),
      triples: new Map(),
      entities: new Map()
    } satisfies Neighbourhood
  })

/** The neighbourhood with what the planner asked for (a fact or entity asked for and not stored: null). */
const loadMore = (repo: ForgetRepo["Type"], n: Neighbourhood, wants: Wants, forgotten: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const facts = new Map<number, ForgetFact | null>(n.facts)
    for (const id of wants.facts) facts.set(id, null)
    for (const fact of wants.facts.length === 0 ? [] : yield* repo.facts(wants.facts, forgotten)) {
      facts.set(fact.id, fact)
    }
    const closures = new Map(n.closures)
    for (const c of wants.closuresOf.length === 0 ? [] : yield* repo.closuresTouching(wants.closuresOf)) {
      closures.set(c.id, c)
    }
    const triples = new Map(n.triples)
    for (const t of wants.triples) {
      triples.set(tripleKey(t), (yield* repo.withTriples(n.datasetId, [t])).map((row) => row.id))
    }
    const entities = new Map(n.entities)
    for (const id of wants.entities) entities.set(id, null)
    for (const e of wants.entities.length === 0 ? [] : yield* repo.entities(wants.entities, forgotten)) {
      entities.set(e.id, e)
    }
    return {
      ...n,
      facts,
      closures,
      closuresOf: new Set([...n.closuresOf, ...wants.closuresOf]),
      triples,
      entities
    } satisfies Neighbourhood
  })

const nothingWanted = (w: Wants) => w.facts.length + w.closuresOf.length + w.triples.length + w.entities.length === 0

/** Reads until the planner has what it needs, then its plan. */
export const loadAndPlan = (repo: ForgetRepo["Type"], datasetId: number, target: ForgetTarget, now: string) =>
  Effect.gen(function*() {
    const forgotten = target.artifacts.map((a) => a.id)
    let n: Neighbourhood = yield* loadStart(repo, datasetId, target)
    let plan = planForget(n, target, now)
    while (plan._tag === "NeedsMore") {
      // every answer marks what was asked as read, so each pass grows the neighbourhood
      if (nothingWanted(plan.wants)) return yield* Effect.dieMessage("forget: the planner asked for nothing")
      n = yield* loadMore(repo, n, plan.wants, forgotten)
      plan = planForget(n, target, now)
    }
    return plan
  })

/** The plan's writes, in the caller's transaction; the outbox rows of its vector deletes. */
export const applyForgetPlan = (datasetId: number, plan: Planned, now: string) =>
  Effect.gen(function*() {
    const repo = yield* ForgetRepo
    // links first: the deletes below cascade, and the decisions move before the passed-on ones are added
    for (const merge of plan.merges) {
      yield* repo.moveFactLinks(merge.from, merge.into)
      yield* repo.repointClosures(merge.from, merge.into)
    }
    if (plan.closures.length > 0) yield* (yield* GraphRepo).recordClosures(plan.closures)
    for (const { id, ...values } of plan.factUpdates) yield* repo.updateFact(id, values)
    const { entityIds, factIds, sessions } = plan.sessionLinks
    yield* repo.removeSessionLinks(sessions, entityIds, factIds, plan.artifacts)
    for (const discard of plan.discards) yield* repo.discardPendingVectors(discard.index, discard.vectorIds)
    yield* repo.scrubRuns(plan.artifacts)
    yield* repo.deleteFacts(plan.deletedFacts)
    yield* repo.deleteArtifacts(datasetId, plan.artifacts)
    const { named, orphans } = plan.deletedEntities
    if (named.length > 0) yield* repo.deleteEntities(named)
    // the store's own check that nothing links an orphan any more: a plan never cascades a fact away
    const deleted = orphans.length === 0 ? [] : yield* repo.deleteOrphanEntities(orphans)
    if (deleted.length !== orphans.length) {
      return yield* Effect.dieMessage(`forget: ${orphans.length - deleted.length} planned orphans are still linked`)
    }
    for (const { id, ...words } of plan.entityUpdates) yield* repo.updateEntity(id, words)
    if (plan.attributeUpdates.length > 0) yield* (yield* GraphRepo).setEntityAttributes(plan.attributeUpdates)
    yield* repo.rebuildNames(plan.renamedEntities)
    // a transactional store's deletes fail only with its database: a defect, as any SQL error here
    const vectors = { outbox: yield* VectorOutbox, vectors: yield* VectorStore }
    return yield* Effect.orDie(recordVectors(vectors, plan.vectorDeletes, now))
  })

/** The forget's reads, plan and writes, inside the caller's transaction (the caller holds the dataset's lock). */
export const forgetRows = (datasetId: number, target: ForgetTarget, now: string) =>
  Effect.gen(function*() {
    const plan = yield* loadAndPlan(yield* ForgetRepo, datasetId, target, now)
    const outboxIds = yield* applyForgetPlan(datasetId, plan, now)
    return {
      artifacts: plan.artifacts.length,
      entities: plan.deletedEntities.named.length + plan.deletedEntities.orphans.length,
      facts: plan.deletedFacts.length,
      vectors: plan.vectorDeletes.length,
      reopened: plan.reopened,
      reanchored: plan.reanchored,
      outboxIds
    } satisfies Outcome
  })
