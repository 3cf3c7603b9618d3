/**
 * Forget an artifact, exactly (docs/FORGET.md): the artifact and everything derived from it go;
 * a fact no remaining artifact supports goes, one still supported takes the words of its oldest
 * remaining supporter; what the forgotten facts closed is reopened, unless a remaining decision
 * still closes it (the earliest wins); entities nothing supports go; vector deletes go through
 * the outbox. Under the dataset's lock, in one transaction; vectors are written after it.
 */
import { Clock, Effect, Option } from "effect"
import { NotFound } from "../domain/Errors.js"
import { toIso } from "../domain/time.js"
import { reembed, type ReembedDeps } from "../pipeline/reembed.js"
import { earliestKnownStart, endOf, instant, intervalsOverlap, startOf } from "../pipeline/temporal.js"
import {
  chunkVectorId,
  drainOutbox,
  edgeVectorId,
  entityVectorId,
  indexName,
  recordVectors,
  summaryVectorId,
  vectorDelete
} from "../pipeline/vectors.js"
import { datasetLockKey } from "../services/Database.js"
import type { ForgetFact, ForgetRepo, StoredClosure } from "../services/ForgetRepo.js"
import type { OutboxItem } from "../services/VectorOutbox.js"
import { closureHolds, type FactState, hasStatements, inheritedClosures, naturalEnd, stateOf } from "./closures.js"
import type { ForgetArtifactResponse } from "./schemas.js"

export interface ForgetDeps extends ReembedDeps {
  readonly forget: ForgetRepo["Type"]
}

export interface ForgetScope {
  readonly user_id: string
  readonly dataset: string
}

/** How many rounds of reopen-then-merge a forget may take before it stops (each removes a fact). */
const MAX_ROUNDS = 64

interface Outcome {
  readonly artifacts: number
  readonly entities: number
  readonly facts: number
  readonly vectors: number
  readonly reopened: ReadonlyArray<number>
  readonly reanchored: ReadonlyArray<number>
  readonly outboxIds: ReadonlyArray<number>
}

/**
 * What a forget removes: artifacts (with everything derived from them), facts and entities
 * named by hand (a fact or entity removed by hand goes whatever supports it).
 */
export interface ForgetTarget {
  readonly artifacts: ReadonlyArray<{ readonly id: number; readonly kind: string }>
  readonly facts: ReadonlyArray<number>
  readonly entities: ReadonlyArray<number>
}

/** The forget's reads and writes, inside the transaction (the caller holds the dataset's lock). */
export const forgetRows = (deps: ForgetDeps, datasetId: number, target: ForgetTarget, now: string) =>
  Effect.gen(function*() {
    const repo = deps.forget
    const doomed = target.artifacts
    const D = doomed.map((a) => a.id)
    const forgottenArtifacts = new Set(D)
    const named = new Set(target.facts)
    const touched = [...new Set([...(yield* repo.factsOfArtifacts(D)), ...target.facts])]
    const facts = new Map<number, ForgetFact>()
    const load = (ids: ReadonlyArray<number>) =>
      Effect.map(repo.facts(ids.filter((id) => !facts.has(id)), D), (rows) => {
        for (const row of rows) facts.set(row.id, row)
      })
    yield* load(touched)

    const gone = new Set<number>()
    const reanchored: Array<number> = []
    const vectorDeletes: Array<OutboxItem> = []
    // the words and end a fact keeps once its anchor is forgotten: its oldest remaining supporter's;
    // its start: the earliest its remaining supporters stated (as a remember of them alone gives)
    const natural = new Map<number, string | null>()
    for (const id of touched) {
      const fact = facts.get(id)!
      const anchor = fact.supporters[0]
      if (anchor === undefined || named.has(id)) {
        gone.add(id)
        continue
      }
      const anchorGone = fact.artifact_id === null || forgottenArtifacts.has(fact.artifact_id)
      const start = statedStart(fact)
      if (!anchorGone && start === fact.valid_at) continue
      const description = anchorGone ? anchor.description ?? fact.description : fact.description
      const updated: ForgetFact = {
        ...fact,
        artifact_id: anchorGone ? anchor.artifact_id : fact.artifact_id,
        description,
        valid_at: start
      }
      facts.set(id, updated)
      if (anchorGone) {
        natural.set(id, anchor.description === null ? fact.invalid_at : anchor.invalid_at)
        reanchored.push(id)
      }
      yield* repo.updateFact(id, {
        artifact_id: updated.artifact_id,
        description,
        valid_at: updated.valid_at,
        invalid_at: fact.invalid_at,
        expired_at: fact.expired_at,
        reembed: description !== fact.description && fact.embedded
      })
    }

    const reopened = new Set<number>()
    const wasLive = new Map<number, boolean>()
    let pending = new Set<number>([...touched].filter((id) => !gone.has(id)))
    let newlyGone = new Set(gone)
    for (let round = 0; round < MAX_ROUNDS && (pending.size > 0 || newlyGone.size > 0); round++) {
      // the decisions the forgotten facts took part in, and what they pass on
      const around = yield* repo.closuresTouching([...newlyGone, ...pending])
      const ends = (cs: ReadonlyArray<StoredClosure>) =>
        cs.flatMap((c) => [c.edge_id, ...(c.by_edge_id === null ? [] : [c.by_edge_id])])
      yield* load(ends(around))
      const factOf = (id: number): FactState | undefined => (gone.has(id) ? undefined : facts.get(id))
      // the contradicted facts' own decisions too, for the ends they had before them
      const beside = yield* repo.closuresTouching(ends(around).filter((id) => !newlyGone.has(id)))
      const inherited = inheritedClosures(newlyGone, uniqueClosures([...around, ...beside]), factOf, now)
      if (inherited.length > 0) yield* deps.graph.recordClosures(inherited)
      const affected = new Set<number>(pending)
      for (const c of around) {
        // both sides of a decision: which of two contradicting facts ends depends on both times
        if (c.by_edge_id !== null && (newlyGone.has(c.by_edge_id) || pending.has(c.by_edge_id))) {
          affected.add(c.edge_id)
        }
        if (c.by_edge_id !== null && pending.has(c.edge_id)) affected.add(c.by_edge_id)
        if (c.kind === "repeat_end" && c.artifact_id !== null && forgottenArtifacts.has(c.artifact_id)) {
          affected.add(c.edge_id)
        }
      }
      for (const c of inherited) affected.add(c.edge_id)
      for (const id of gone) affected.delete(id)
      newlyGone = new Set()
      pending = new Set()

      // each affected fact's state from the closures that still hold
      const closures = yield* repo.closuresTouching([...affected])
      yield* load(closures.flatMap((c) => [c.edge_id, ...(c.by_edge_id === null ? [] : [c.by_edge_id])]))
      // facts whose end moved later: a repeat stored anew because this one had ended may now be the same stay
      const extended: Array<ForgetFact> = []
      for (const id of affected) {
        const fact = facts.get(id)!
        const mine = closures.filter((c) => c.edge_id === id || c.by_edge_id === id)
        if (mine.length === 0 && !natural.has(id)) continue // stored before decisions were kept
        const holding = mine.filter((c) => closureHolds(c, gone, forgottenArtifacts))
        const own = mine.filter((c) => c.edge_id === id)
        const ownEnd = natural.has(id) && !hasStatements(fact) ? natural.get(id)! : naturalEnd(fact, own)
        const state = stateOf(fact, holding, ownEnd, factOf)
        if (!wasLive.has(id)) wasLive.set(id, fact.expired_at === null)
        if (state.invalid_at === fact.invalid_at && state.expired_at === fact.expired_at) continue
        const updated = { ...fact, ...state }
        facts.set(id, updated)
        yield* repo.updateFact(id, { ...updated, reembed: false })
        if (endOf(state.invalid_at) > endOf(fact.invalid_at)) extended.push(updated)
      }

      // a fact whose end moved later beside a repeat of it that it now overlaps: one fact, as if
      // the later had merged into the earlier (a remember matches repeats by overlap too)
      for (const fact of extended) {
        if (gone.has(fact.id)) continue
        const twins = (yield* repo.withTriples(datasetId, [fact])).filter((t) => t.id !== fact.id && !gone.has(t.id))
        yield* load(twins.map((t) => t.id))
        for (const twin of twins) {
          const other = facts.get(twin.id)!
          if (!intervalsOverlap(facts.get(fact.id)!, other)) continue
          const [keep, drop] = earlierFirst(fact, other)
          // the decisions made against the repeat would have been made against the fact it repeats
          yield* repo.moveFactLinks(drop.id, keep.id)
          yield* repo.repointClosures(drop.id, keep.id)
          gone.add(drop.id)
          pending.add(keep.id)
        }
      }
    }
    for (const id of facts.keys()) {
      const live = facts.get(id)!.expired_at === null
      if (!gone.has(id) && wasLive.get(id) === false && live) reopened.add(id)
    }

    // what goes: pending vector writes of it first, then its rows
    const goneFacts = [...gone].map((id) => facts.get(id)!).filter((f) => f !== undefined)
    const entityCandidates = [...new Set([...(yield* repo.entitiesOf(D, [...touched, ...gone])), ...target.entities])]
    const sessions = yield* repo.sessionsOf(D)
    yield* repo.removeSessionLinks(sessions, entityCandidates, touched.filter((id) => !gone.has(id)), D)
    yield* repo.discardPendingVectors(indexName(datasetId, "edges"), goneFacts.map((f) => edgeVectorId(f.id)))
    for (const f of goneFacts) if (f.embedded) vectorDeletes.push(vectorDelete(datasetId, "edges", edgeVectorId(f.id)))
    for (const id of reanchored) {
      const fact = facts.get(id)!
      if (!gone.has(id) && fact.embedded) vectorDeletes.push(vectorDelete(datasetId, "edges", edgeVectorId(id)))
    }
    yield* repo.scrubRuns(D)
    yield* repo.deleteFacts([...gone])
    for (const a of doomed) {
      if (a.kind === "chunk") vectorDeletes.push(vectorDelete(datasetId, "chunks", chunkVectorId(a.id)))
      if (a.kind === "chunk_summary") vectorDeletes.push(vectorDelete(datasetId, "summaries", summaryVectorId(a.id)))
    }
    yield* repo.discardPendingVectors(indexName(datasetId, "chunks"), D.map(chunkVectorId))
    yield* repo.discardPendingVectors(indexName(datasetId, "summaries"), D.map(summaryVectorId))
    yield* repo.deleteArtifacts(datasetId, D)

    const forced = target.entities.length === 0 ? [] : yield* repo.deleteEntities(target.entities)
    const orphans = [
      ...forced,
      ...(yield* repo.deleteOrphanEntities(entityCandidates.filter((id) => !target.entities.includes(id))))
    ]
    yield* repo.discardPendingVectors(indexName(datasetId, "entities"), orphans.map((e) => entityVectorId(e.id)))
    for (const e of orphans) {
      if (e.embedded) vectorDeletes.push(vectorDelete(datasetId, "entities", entityVectorId(e.id)))
    }
    // an entity that stays takes the first spelling and the latest description that remain
    const orphanIds = new Set(orphans.map((e) => e.id))
    const staying = yield* repo.entityStatements(entityCandidates.filter((id) => !orphanIds.has(id)))
    for (const entity of staying) {
      const named = entity.statements.filter((s) => s.name !== null)
      if (named.length === 0) continue
      const name = named[0]!.name!
      const description = [...named].reverse().find((s) => (s.description ?? "") !== "")?.description ?? ""
      if (name === entity.name && description === entity.description) continue
      yield* repo.updateEntity(entity.entity_id, { name, description })
      if (entity.embedded) vectorDeletes.push(vectorDelete(datasetId, "entities", entityVectorId(entity.entity_id)))
    }
    // a transactional store's deletes fail only with its database: a defect, as any SQL error here
    const outboxIds = yield* Effect.orDie(recordVectors(deps, vectorDeletes, now))
    return {
      artifacts: D.length,
      entities: orphans.length,
      facts: gone.size,
      vectors: vectorDeletes.length,
      reopened: [...reopened].sort((a, b) => a - b),
      reanchored: reanchored.filter((id) => !gone.has(id)).sort((a, b) => a - b),
      outboxIds
    } satisfies Outcome
  })

/**
 * The earliest start a fact's remaining supporters stated (earliestKnownStart); its own when none
 * of them stated one (links stored before migration 0009 have no statement: a null description).
 */
const statedStart = (fact: ForgetFact): string | null => {
  const stated = fact.supporters.filter((s) => s.description !== null)
  if (stated.length === 0) return fact.valid_at
  const start = stated.map((s) => s.valid_at).reduce(earliestKnownStart)
  // the same instant keeps the stored spelling, so an unchanged fact is not rewritten
  return start !== null && fact.valid_at !== null && instant(start) === instant(fact.valid_at) ? fact.valid_at : start
}

const uniqueClosures = (cs: ReadonlyArray<StoredClosure>) => [...new Map(cs.map((c) => [c.id, c])).values()]

const anchorOrder = (f: ForgetFact) => f.artifact_id ?? Number.MAX_SAFE_INTEGER

/** Of two repeats, the one stated first stays (the later would have merged into it). */
const earlierFirst = (a: ForgetFact, b: ForgetFact): readonly [ForgetFact, ForgetFact] => {
  if (anchorOrder(a) !== anchorOrder(b)) return anchorOrder(a) < anchorOrder(b) ? [a, b] : [b, a]
  return startOf(a.valid_at) <= startOf(b.valid_at) ? [a, b] : [b, a]
}

/**
 * What was deleted leaves the files too (docs/SECURITY.md): the full-text segments are merged and
 * the write-ahead logs truncated, after the commit and the vector deletes, outside any transaction.
 */
export const compactAfterForget = (deps: ForgetDeps) =>
  Effect.zipRight(
    deps.database.compact,
    deps.vectors.compact.pipe(
      Effect.catchAll((e) => Effect.logWarning("forget: compacting the vector store failed", { error: e.message }))
    )
  )

/**
 * `DELETE /v1/gb/artifacts/{id}`: the program the handler, the library and the CLI run. A
 * dataset or artifact of another user is a 404, as a missing one.
 */
export const forgetArtifact = (
  deps: ForgetDeps,
  scope: ForgetScope,
  artifactId: number
): Effect.Effect<ForgetArtifactResponse, NotFound> =>
  Effect.gen(function*() {
    const now = toIso(yield* Clock.currentTimeMillis)
    const { dataset, outcome } = yield* deps.database.withLock(datasetLockKey(scope))(
      deps.database.withTransaction(Effect.gen(function*() {
        const found = yield* deps.datasets.find(scope.user_id, scope.dataset)
        if (Option.isNone(found)) return yield* new NotFound({ message: `artifact ${artifactId} not found` })
        const doomed = yield* deps.forget.descendants(found.value.id, artifactId)
        if (doomed.length === 0) {
          return yield* new NotFound({ message: `artifact ${artifactId} not found in this dataset` })
        }
        const outcome = yield* forgetRows(deps, found.value.id, { artifacts: doomed, facts: [], entities: [] }, now)
        return { dataset: found.value, outcome }
      }))
    )
    // after the commit: the vector deletes, then the vectors of what changed words; a failure
    // leaves them in the outbox, written by the next remember or at startup
    const pending = yield* drainOutbox(deps, outcome.outboxIds).pipe(
      Effect.as(0),
      Effect.catchAll((e) =>
        Effect.logWarning("forget: vector deletes stay in the outbox", { error: e.message }).pipe(
          Effect.as(outcome.outboxIds.length)
        )
      )
    )
    if (deps.embeddings.enabled) {
      yield* reembed(deps, { userId: dataset.user_id, dataset: dataset.name }).pipe(
        Effect.catchAll((e) => Effect.logWarning("forget: re-embedding changed rows failed", { error: e.message }))
      )
    }
    yield* compactAfterForget(deps)
    return {
      deleted: {
        artifacts: outcome.artifacts,
        entities: outcome.entities,
        facts: outcome.facts,
        vectors: outcome.vectors
      },
      reopened_facts: outcome.reopened,
      reanchored_facts: outcome.reanchored,
      ...(pending > 0 ? { vectors_pending: pending } : {})
    }
  })
