/**
 * The plan of a forget (docs/FORGET.md), computed in memory from the neighbourhood the forget
 * can reach: which facts go, which take another anchor, start or end, which decisions pass on,
 * which repeats merge, which entities go or take other words, and which vectors go. Pure: the
 * loader (forgetRows.ts) reads what `planForget` asks for (`NeedsMore`) and asks again, and
 * one transaction applies the plan, so the fixpoint below never waits on the database.
 */
import {
  closureHolds,
  earlierFirst,
  type FactState,
  hasStatements,
  inheritedClosures,
  naturalEnd,
  statedStart,
  stateOf,
  tripleKey
} from "../kernel/closures.js"
import { decodeAttributes, encodeAttributes, foldAttributes } from "../kernel/datasetSchema.js"
import { nameKey } from "../kernel/normalize.js"
import { earliestKnownStart, endOf, intervalsOverlap } from "../kernel/temporal.js"
import {
  chunkVectorId,
  edgeVectorId,
  entityVectorId,
  indexName,
  summaryVectorId,
  vectorDelete
} from "../pipeline/vectors.js"
import type { FactUpdate, ForgetEntity, ForgetFact, StoredClosure } from "../services/ForgetRepo.js"
import type { EdgeClosure } from "../services/GraphRepo.js"
import type { OutboxItem } from "../services/VectorOutbox.js"

/**
 * What a forget removes: artifacts (with everything derived from them), facts and entities
 * named by hand (a fact or entity removed by hand goes whatever supports it).
 */
export interface ForgetTarget {
  readonly artifacts: ReadonlyArray<{ readonly id: number; readonly kind: string }>
  readonly facts: ReadonlyArray<number>
  readonly entities: ReadonlyArray<number>
}

/** What the loader has read so far, as stored when the forget began (nothing is written before the plan). */
export interface Neighbourhood {
  readonly datasetId: number
  /** the facts linked to or anchored in the forgotten artifacts, then the facts named */
  readonly touched: ReadonlyArray<number>
  /** the entities the forgotten artifacts link */
  readonly linkedEntities: ReadonlyArray<number>
  /** the sessions of the forgotten artifacts */
  readonly sessions: ReadonlyArray<string>
  /** null: asked for and not stored */
  readonly facts: ReadonlyMap<number, ForgetFact | null>
  readonly closures: ReadonlyMap<number, StoredClosure>
  /** the facts every decision of which (either side) is in `closures` */
  readonly closuresOf: ReadonlySet<number>
  /** every fact of the dataset with the triple (tripleKey) */
  readonly triples: ReadonlyMap<string, ReadonlyArray<number>>
  readonly entities: ReadonlyMap<number, ForgetEntity | null>
}

/** What the planner must read before it can go on. */
export interface Wants {
  readonly facts: ReadonlyArray<number>
  readonly closuresOf: ReadonlyArray<number>
  readonly triples: ReadonlyArray<{ readonly source_id: number; readonly target_id: number; readonly relation: string }>
  readonly entities: ReadonlyArray<number>
}

/** The writes of a forget, in the order the transaction makes them, and its answer. */
export interface Planned {
  readonly _tag: "Planned"
  /** repeats merged: the links and decisions of `from` go to `into`, in this order */
  readonly merges: ReadonlyArray<{ readonly from: number; readonly into: number }>
  /** the decisions the forgotten facts pass on, as they stand after the merges */
  readonly closures: ReadonlyArray<EdgeClosure>
  /** the facts that stay with another anchor, words, start or end */
  readonly factUpdates: ReadonlyArray<FactUpdate & { readonly id: number }>
  readonly sessionLinks: {
    readonly sessions: ReadonlyArray<string>
    readonly entityIds: ReadonlyArray<number>
    readonly factIds: ReadonlyArray<number>
  }
  readonly deletedFacts: ReadonlyArray<number>
  readonly artifacts: ReadonlyArray<number>
  /** the entities named by hand, and those nothing supports any more */
  readonly deletedEntities: { readonly named: ReadonlyArray<number>; readonly orphans: ReadonlyArray<number> }
  readonly entityUpdates: ReadonlyArray<{ readonly id: number; readonly name: string; readonly description: string }>
  /** the entities that stay whose attributes the remaining statements give otherwise (JSON text; null: none) */
  readonly attributeUpdates: ReadonlyArray<{ readonly id: number; readonly attributes: string | null }>
  /** the entities that stay but lost statements: the words they are found by are read anew (an alias may go) */
  readonly renamedEntities: ReadonlyArray<number>
  /** pending outbox upserts to drop, by index (they would write back what is forgotten) */
  readonly discards: ReadonlyArray<{ readonly index: string; readonly vectorIds: ReadonlyArray<string> }>
  readonly vectorDeletes: ReadonlyArray<OutboxItem>
  readonly reopened: ReadonlyArray<number>
  readonly reanchored: ReadonlyArray<number>
}

export interface NeedsMore {
  readonly _tag: "NeedsMore"
  readonly wants: Wants
}

export type ForgetPlan = NeedsMore | Planned

/** How many rounds of reopen-then-merge a forget may take before it stops (each removes a fact). */
const MAX_ROUNDS = 64

/** Decisions the plan adds are numbered above every stored one: they were made after them. */
const FIRST_NEW_CLOSURE = 2 ** 52

const needs = (wants: Partial<Wants>): NeedsMore => ({
  _tag: "NeedsMore",
  wants: { facts: [], closuresOf: [], triples: [], entities: [], ...wants }
})

const endsOf = (cs: ReadonlyArray<EdgeClosure>) =>
  cs.flatMap((c) => [c.edge_id, ...(c.by_edge_id === null ? [] : [c.by_edge_id])])

/** The plan, or what must be read first. Asked again with more, it goes the same way further. */
export const planForget = (n: Neighbourhood, target: ForgetTarget, now: string): ForgetPlan => {
  const D = target.artifacts.map((a) => a.id)
  const forgottenArtifacts = new Set(D)
  const named = new Set(target.facts)
  // what of these facts, and of the decisions touching those, is not read yet (read together, in one pass)
  const lacking = (factIds: ReadonlyArray<number>, closuresOf: ReadonlyArray<number> = []) => {
    const wants = {
      facts: [...new Set(factIds)].filter((id) => !n.facts.has(id)),
      closuresOf: [...new Set(closuresOf)].filter((id) => !n.closuresOf.has(id))
    }
    return wants.facts.length + wants.closuresOf.length > 0 ? needs(wants) : undefined
  }

  // the working state: the facts as the plan leaves them, the decisions with the plan's changes
  const facts = new Map<number, ForgetFact>()
  for (const [id, fact] of n.facts) if (fact !== null) facts.set(id, fact)
  const closures = new Map(n.closures)
  const added: Array<number> = []
  const touching = (ids: ReadonlyArray<number>) => {
    const wanted = new Set(ids)
    return [...closures.values()]
      .filter((c) => wanted.has(c.edge_id) || (c.by_edge_id !== null && wanted.has(c.by_edge_id)))
      .sort((a, b) => a.id - b.id)
  }

  let lacks = lacking(n.touched)
  if (lacks !== undefined) return lacks
  const touched = n.touched
  const gone = new Set<number>()
  const written = new Set<number>()
  const reembed = new Set<number>()
  const reanchored: Array<number> = []
  // the words and end a fact keeps once its anchor is forgotten: its oldest remaining supporter's;
  // its start: the earliest its remaining supporters stated (as a remember of them alone gives)
  const natural = new Map<number, string | null>()
  for (const id of touched) {
    const fact = facts.get(id)
    if (fact === undefined) continue
    const anchor = fact.supporters[0]
    if (anchor === undefined || named.has(id)) {
      gone.add(id)
      continue
    }
    const anchorGone = fact.artifact_id === null || forgottenArtifacts.has(fact.artifact_id)
    const start = statedStart(fact)
    if (!anchorGone && start === fact.valid_at) continue
    const description = anchorGone ? anchor.description ?? fact.description : fact.description
    facts.set(id, {
      ...fact,
      artifact_id: anchorGone ? anchor.artifact_id : fact.artifact_id,
      description,
      valid_at: start
    })
    written.add(id)
    if (description !== fact.description && fact.embedded) reembed.add(id)
    if (anchorGone) {
      natural.set(id, anchor.description === null ? fact.invalid_at : anchor.invalid_at)
      reanchored.push(id)
    }
  }

  const merges: Array<{ readonly from: number; readonly into: number }> = []
  const wasLive = new Map<number, boolean>()
  let pending = new Set<number>(touched.filter((id) => !gone.has(id)))
  let newlyGone = new Set(gone)
  for (let round = 0; round < MAX_ROUNDS && (pending.size > 0 || newlyGone.size > 0); round++) {
    // the decisions the forgotten facts took part in, and what they pass on
    lacks = lacking([], [...newlyGone, ...pending])
    if (lacks !== undefined) return lacks
    const around = touching([...newlyGone, ...pending])
    // the contradicted facts' own decisions too, for the ends they had before them
    const besideOf = endsOf(around).filter((id) => !newlyGone.has(id))
    lacks = lacking(endsOf(around), besideOf)
    if (lacks !== undefined) return lacks
    const factOf = (id: number): FactState | undefined => (gone.has(id) ? undefined : facts.get(id))
    const aroundIds = new Set(around.map((c) => c.id))
    const beside = touching(besideOf).filter((c) => !aroundIds.has(c.id))
    const inherited = inheritedClosures(newlyGone, [...around, ...beside], factOf, now)
    for (const c of inherited) {
      const id = FIRST_NEW_CLOSURE + added.length
      added.push(id)
      closures.set(id, { ...c, id })
    }
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
    lacks = lacking([...affected], [...affected])
    if (lacks !== undefined) return lacks
    const deciding = touching([...affected])
    lacks = lacking(endsOf(deciding))
    if (lacks !== undefined) return lacks
    // facts whose end moved later: a repeat stored anew because this one had ended may now be the same stay
    const extended: Array<ForgetFact> = []
    for (const id of affected) {
      const fact = facts.get(id)
      if (fact === undefined) continue
      const mine = deciding.filter((c) => c.edge_id === id || c.by_edge_id === id)
      if (mine.length === 0 && !natural.has(id)) continue // stored before decisions were kept
      const holding = mine.filter((c) => closureHolds(c, gone, forgottenArtifacts))
      const own = mine.filter((c) => c.edge_id === id)
      const ownEnd = natural.has(id) && !hasStatements(fact) ? natural.get(id)! : naturalEnd(fact, own)
      const state = stateOf(fact, holding, ownEnd, factOf)
      if (!wasLive.has(id)) wasLive.set(id, fact.expired_at === null)
      if (state.invalid_at === fact.invalid_at && state.expired_at === fact.expired_at) continue
      const updated = { ...fact, ...state }
      facts.set(id, updated)
      written.add(id)
      if (endOf(state.invalid_at) > endOf(fact.invalid_at)) extended.push(updated)
    }
    // a fact without a start is matched by the end its statements give (exactRepeats), which
    // forgetting a statement may move later while its cut end stays
    for (const id of affected) {
      const fact = facts.get(id)
      if (fact !== undefined && fact.valid_at === null && !extended.includes(fact)) extended.push(fact)
    }

    // a fact whose end moved later beside a repeat of it that it now overlaps: one fact, as if
    // the later had merged into the earlier (a remember matches repeats by overlap too)
    const candidates = extended.filter((f) => !gone.has(f.id))
    const unread = candidates.filter((f) => !n.triples.has(tripleKey(f)))
    if (unread.length > 0) return needs({ triples: unread })
    const twinIds = [...candidates.map((f) => f.id), ...candidates.flatMap((f) => n.triples.get(tripleKey(f))!)]
    // a merge moves every decision of the fact it drops, so all of them must be known
    lacks = lacking(twinIds, twinIds)
    if (lacks !== undefined) return lacks
    for (const fact of extended) {
      if (gone.has(fact.id)) continue
      const twins = n.triples.get(tripleKey(fact))!.filter((id) => id !== fact.id && !gone.has(id))
      for (const twin of twins) {
        const other = facts.get(twin)
        const current = facts.get(fact.id)!
        if (other === undefined || !intervalsOverlap(matchedTimes(current), matchedTimes(other))) continue
        const [keep, drop] = earlierFirst(current, other)
        // the decisions made against the repeat would have been made against the fact it repeats
        merges.push({ from: drop.id, into: keep.id })
        repoint(closures, drop.id, keep.id)
        gone.add(drop.id)
        pending.add(keep.id)
        // one fact with the statements of both: the earliest known start, the earliest stated end
        facts.set(keep.id, {
          ...keep,
          valid_at: earliestKnownStart(keep.valid_at, drop.valid_at),
          supporters: [...keep.supporters, ...drop.supporters].sort((a, b) => a.artifact_id - b.artifact_id)
        })
        written.add(keep.id)
      }
    }
  }
  const reopened = [...facts.keys()].filter((id) =>
    !gone.has(id) && wasLive.get(id) === false && facts.get(id)!.expired_at === null
  )

  const goneFacts = [...gone].flatMap((id) => facts.get(id) ?? [])
  const reached = [...touched, ...gone].flatMap((id) => facts.get(id) ?? [])
  const entities = planEntities(n, target, reached, goneFacts)
  if (entities._tag === "NeedsMore") return entities
  const { attributeUpdates, candidates, entityUpdates, forced, orphans } = entities
  const stillReanchored = reanchored.filter((id) => !gone.has(id))
  const datasetId = n.datasetId
  const deleted = [...forced, ...orphans]
  const vectorDeletes: Array<OutboxItem> = [
    ...goneFacts.filter((f) => f.embedded).map((f) => vectorDelete(datasetId, "edges", edgeVectorId(f.id))),
    ...stillReanchored.filter((id) => facts.get(id)!.embedded).map((id) =>
      vectorDelete(datasetId, "edges", edgeVectorId(id))
    ),
    ...target.artifacts.flatMap((a) =>
      a.kind === "chunk"
        ? [vectorDelete(datasetId, "chunks", chunkVectorId(a.id))]
        : a.kind === "chunk_summary"
        ? [vectorDelete(datasetId, "summaries", summaryVectorId(a.id))]
        : []
    ),
    ...deleted.filter((e) => e.embedded).map((e) => vectorDelete(datasetId, "entities", entityVectorId(e.id))),
    ...entityUpdates.filter((u) => u.embedded).map((u) => vectorDelete(datasetId, "entities", entityVectorId(u.id)))
  ]
  return {
    _tag: "Planned",
    merges,
    closures: added.flatMap((id) => {
      const c = closures.get(id)
      if (c === undefined) return []
      const { id: _, ...closure } = c
      return [closure]
    }),
    factUpdates: [...written].filter((id) => !gone.has(id)).map((id) => {
      const f = facts.get(id)!
      const { artifact_id, description, expired_at, invalid_at, valid_at } = f
      return { id, artifact_id, description, valid_at, invalid_at, expired_at, reembed: reembed.has(id) }
    }),
    sessionLinks: { sessions: n.sessions, entityIds: candidates, factIds: touched.filter((id) => !gone.has(id)) },
    deletedFacts: [...gone],
    artifacts: D,
    deletedEntities: { named: forced.map((e) => e.id), orphans: orphans.map((e) => e.id) },
    entityUpdates: entityUpdates.map(({ description, id, name }) => ({ id, name, description })),
    attributeUpdates,
    renamedEntities: D.length === 0 ? [] : candidates.filter((id) => !deleted.some((e) => e.id === id)),
    discards: [
      { index: indexName(datasetId, "edges"), vectorIds: goneFacts.map((f) => edgeVectorId(f.id)) },
      { index: indexName(datasetId, "chunks"), vectorIds: D.map(chunkVectorId) },
      { index: indexName(datasetId, "summaries"), vectorIds: D.map(summaryVectorId) },
      { index: indexName(datasetId, "entities"), vectorIds: deleted.map((e) => entityVectorId(e.id)) }
    ].filter((d) => d.vectorIds.length > 0),
    vectorDeletes,
    reopened: reopened.sort((a, b) => a - b),
    reanchored: stillReanchored.sort((a, b) => a - b)
  }
}

/**
 * The entities a forget reached (those the artifacts linked, the ends of its facts, those named):
 * which go (named, or nothing remaining states or touches them) and which take other words (the
 * first spelling and the latest description that remain, as a remember of those texts alone) or
 * other attributes (each key's latest value the remaining statements give: src/kernel/datasetSchema.ts).
 */
const planEntities = (
  n: Neighbourhood,
  target: ForgetTarget,
  reached: ReadonlyArray<ForgetFact>,
  goneFacts: ReadonlyArray<ForgetFact>
) => {
  const candidates = [
    ...new Set([...n.linkedEntities, ...reached.flatMap((f) => [f.source_id, f.target_id]), ...target.entities])
  ]
  const unread = candidates.filter((id) => !n.entities.has(id))
  if (unread.length > 0) return needs({ entities: unread })
  const entityOf = (id: number) => n.entities.get(id) ?? []
  const named = new Set(target.entities)
  const forced = target.entities.flatMap(entityOf)
  // a fact from an entity to itself is two ends, as `fact_ends` counts it
  const goneEnds = new Map<number, number>()
  for (const f of goneFacts) {
    for (const id of [f.source_id, f.target_id]) goneEnds.set(id, (goneEnds.get(id) ?? 0) + 1)
  }
  const orphans = candidates.flatMap(entityOf).filter((e) =>
    !named.has(e.id) && e.statements.length === 0 && e.fact_ends <= (goneEnds.get(e.id) ?? 0)
  )
  const deleted = new Set([...forced, ...orphans].map((e) => e.id))
  const entityUpdates = candidates.flatMap(entityOf).flatMap((e) => {
    const spelled = e.statements.filter((s) => s.name !== null)
    if (deleted.has(e.id) || spelled.length === 0) return []
    // an alias (a spelling under another key, which a merge brought) never becomes the name
    const name = spelled.find((s) => nameKey(s.name!) === nameKey(e.name))?.name ?? e.name
    const description = [...spelled].reverse().find((s) => (s.description ?? "") !== "")?.description ?? ""
    return name === e.name && description === e.description
      ? []
      : [{ id: e.id, name, description, embedded: e.embedded }]
  })
  // an attribute only forgotten texts stated goes (attributes are not embedded: no vector changes)
  const attributeUpdates = candidates.flatMap(entityOf).flatMap((e) => {
    if (deleted.has(e.id)) return []
    const attributes = encodeAttributes(foldAttributes(e.statements.map((s) => decodeAttributes(s.attributes))))
    return attributes === (e.attributes ?? null) ? [] : [{ id: e.id, attributes }]
  })
  return { _tag: "Entities", candidates, forced, orphans, entityUpdates, attributeUpdates } as const
}

/**
 * The interval a repeat is matched against, as a remember matches it (temporal.ts statedTimes):
 * a fact without a start by the earliest end its statements give, since its cut came only from
 * its unbounded start.
 */
const matchedTimes = (fact: ForgetFact) =>
  fact.valid_at === null && hasStatements(fact)
    ? { valid_at: null, invalid_at: naturalEnd(fact, []) }
    : fact

/** A merge's decisions: those of `from` become `into`'s, and a fact does not close itself. */
const repoint = (closures: Map<number, StoredClosure>, from: number, into: number) => {
  for (const [id, c] of closures) {
    if (c.edge_id !== from && c.by_edge_id !== from) continue
    const moved = {
      ...c,
      edge_id: c.edge_id === from ? into : c.edge_id,
      by_edge_id: c.by_edge_id === from ? into : c.by_edge_id
    }
    if (moved.edge_id === into && moved.by_edge_id === into) closures.delete(id)
    else closures.set(id, moved)
  }
}
