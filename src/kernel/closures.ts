/**
 * The pure decisions of a forget (docs/FORGET.md): which recorded closures still hold, the
 * state a fact returns to, and the closures a forgotten fact passes on.
 */
import type { ForgetFact, StoredClosure } from "../services/ForgetRepo.js"
import type { EdgeClosure } from "../services/GraphRepo.js"
import { earliestKnownStart, endOf, instant, intervalsOverlap, startOf } from "./temporal.js"

export interface FactState {
  readonly id: number
  readonly source_id: number
  readonly target_id: number
  readonly relation: string
  readonly valid_at: string | null
  readonly invalid_at: string | null
  readonly expired_at: string | null
  /** the artifact it is anchored to (facts of one text were never compared with each other) */
  readonly artifact_id: number | null
  /** what its supporting artifacts stated of it (a null description: a link from before statements were kept) */
  readonly supporters?: ReadonlyArray<{ readonly description: string | null; readonly invalid_at: string | null }>
}

/** Whether any supporter's statement of the fact is known. */
export const hasStatements = (fact: FactState): boolean => (fact.supporters ?? []).some((s) => s.description !== null)

/** A closure holds while the fact that caused it remains and the artifact of a repeat's end remains. */
export const closureHolds = (
  closure: EdgeClosure,
  forgottenFacts: ReadonlySet<number>,
  forgottenArtifacts: ReadonlySet<number>
): boolean => {
  if (closure.by_edge_id !== null && forgottenFacts.has(closure.by_edge_id)) return false
  if (closure.kind === "repeat_end") return closure.artifact_id !== null && !forgottenArtifacts.has(closure.artifact_id)
  return true
}

const PAIR_KINDS: ReadonlySet<EdgeClosure["kind"]> = new Set(["close", "born_closed", "inherited", "contradicts"])

/** Whether `a` was stated before `b`: by the texts they are anchored to now (a re-anchor moves a fact later), then by id. */
const statedBefore = (a: FactState, b: FactState): boolean => {
  const anchorA = a.artifact_id ?? Number.MAX_SAFE_INTEGER
  const anchorB = b.artifact_id ?? Number.MAX_SAFE_INTEGER
  return anchorA !== anchorB ? anchorA < anchorB : a.id < b.id
}

/** Of two contradicting facts, whether `a` is the one that ends: the older, or on equal times the one stated first (rule 4). */
const endsFirst = (a: FactState, b: FactState): boolean =>
  startOf(a.valid_at) < startOf(b.valid_at) ||
  (startOf(a.valid_at) === startOf(b.valid_at) && statedBefore(a, b))

/**
 * The state of a fact from the decisions that still hold. A decision between two facts (close,
 * born_closed, inherited) records that they contradict; which of them it ends is decided again
 * by their times now (a re-anchor may have moved a `valid_at`): the older ends when the newer
 * begins; none holds between two facts anchored to one text. A repeat's end and a closing by hand end the fact at their recorded time. The
 * earliest end wins; with none the fact is open, with the end its own statement gave (`natural`).
 */
export const stateOf = (
  fact: FactState,
  holding: ReadonlyArray<EdgeClosure>,
  natural: string | null,
  factOf: (id: number) => FactState | undefined
): { readonly invalid_at: string | null; readonly expired_at: string | null } => {
  let best: { readonly at: string; readonly expired_at: string } | undefined
  const consider = (at: string, expired_at: string) => {
    if (best === undefined || endOf(at) < endOf(best.at)) best = { at, expired_at }
  }
  for (const c of holding) {
    if (PAIR_KINDS.has(c.kind) && c.by_edge_id !== null) {
      const other = factOf(c.edge_id === fact.id ? c.by_edge_id : c.edge_id)
      if (other === undefined || other.id === fact.id) continue
      // two facts of one text (as anchored now) were never compared with each other
      if (other.artifact_id !== null && other.artifact_id === fact.artifact_id) continue
      // a fact without a start has no time to end the other at
      if (other.valid_at !== null && endsFirst(fact, other)) consider(other.valid_at, c.expired_at)
    } else if (c.edge_id === fact.id && c.invalid_at !== null) {
      consider(c.invalid_at, c.expired_at)
    }
  }
  // a decision never ends a fact later than its own statement did (a start moved by a repeat can
  // put the other fact's start after that end)
  return best === undefined || endOf(natural) <= endOf(best.at)
    ? { invalid_at: natural, expired_at: null }
    : { invalid_at: best.at, expired_at: best.expired_at }
}

/**
 * The states a start made known or earlier changes: the restarted facts and every fact a
 * decision pairs them with, decided again by the times now (stateOf). `closures` holds every
 * decision touching those facts; facts without any keep their state.
 */
export const settleStates = (
  restarted: ReadonlyArray<number>,
  closures: ReadonlyArray<StoredClosure>,
  factOf: (id: number) => FactState | undefined
): Array<{ readonly id: number; readonly invalid_at: string | null; readonly expired_at: string | null }> => {
  const moved = new Set(restarted)
  const affected = new Set(restarted)
  for (const c of closures) {
    if (c.by_edge_id === null) continue
    if (moved.has(c.edge_id) || moved.has(c.by_edge_id)) {
      affected.add(c.edge_id)
      affected.add(c.by_edge_id)
    }
  }
  const changed: Array<
    { readonly id: number; readonly invalid_at: string | null; readonly expired_at: string | null }
  > = []
  for (const id of affected) {
    const fact = factOf(id)
    if (fact === undefined) continue
    const mine = closures.filter((c) => c.edge_id === id || c.by_edge_id === id)
    if (mine.length === 0) continue
    const state = stateOf(fact, mine, naturalEnd(fact, mine.filter((c) => c.edge_id === id)), factOf)
    if (state.invalid_at !== fact.invalid_at || state.expired_at !== fact.expired_at) changed.push({ id, ...state })
  }
  return changed
}

/**
 * A fact's own end: the earliest end its statements gave (null: none said it ended); for a fact
 * without statements (stored before migration 0009), the value its earliest closure replaced,
 * else its current one.
 */
export const naturalEnd = (fact: FactState, closures: ReadonlyArray<StoredClosure>): string | null => {
  if (hasStatements(fact)) {
    return (fact.supporters ?? []).filter((s) => s.description !== null).map((s) => s.invalid_at).reduce(
      (a, b) => (endOf(b) < endOf(a) ? b : a),
      null as string | null
    )
  }
  const first = closures.filter((c) => c.edge_id === fact.id).sort((a, b) => a.id - b.id)[0]
  return first === undefined ? fact.invalid_at : first.prev_invalid_at
}

const sameTriple = (a: FactState, b: FactState) =>
  a.source_id === b.source_id && a.target_id === b.target_id && a.relation === b.relation

/**
 * What a forgotten fact passes on: the facts it contradicted (it closed them, they closed it, or
 * they were stored closed because of it) are taken to contradict each other, as they would
 * have been compared had it never been stored. Within that group, the rules of the temporal
 * contract by time: of two overlapping facts the older ends when the newer begins. Pairs with
 * the same triple are repeats, not contradictions (left to the repeat merge); two facts of one
 * text were never compared; a pair one of whose closures already relates them is left as it is.
 * `closures` holds every decision of the forgotten facts and of the facts they contradicted.
 */
export const inheritedClosures = (
  forgotten: ReadonlySet<number>,
  closures: ReadonlyArray<StoredClosure>,
  factOf: (id: number) => FactState | undefined,
  now: string
): ReadonlyArray<EdgeClosure> => {
  const related = new Set(
    closures.flatMap((c) =>
      c.by_edge_id === null ? [] : [`${c.edge_id}:${c.by_edge_id}`, `${c.by_edge_id}:${c.edge_id}`]
    )
  )
  const out: Array<EdgeClosure> = []
  const seen = new Set<string>()
  for (const gone of forgotten) {
    const group = new Set<number>()
    for (const c of closures) {
      if (c.kind === "repeat_end" || c.kind === "hand") continue
      if (c.by_edge_id === gone && !forgotten.has(c.edge_id)) group.add(c.edge_id)
      if (c.edge_id === gone && c.by_edge_id !== null && !forgotten.has(c.by_edge_id)) group.add(c.by_edge_id)
    }
    const members = [...group].flatMap((id) => {
      const fact = factOf(id)
      return fact === undefined ? [] : [fact]
    })
    for (const older of members) {
      for (const newer of members) {
        if (older.id === newer.id || sameTriple(older, newer)) continue
        if (older.artifact_id !== null && older.artifact_id === newer.artifact_id) continue
        if (newer.valid_at === null || !endsFirst(older, newer)) continue
        const key = `${older.id}:${newer.id}`
        if (related.has(key) || seen.has(key)) continue
        const natural = naturalEnd(older, closures)
        // as they were when they would have been compared: each with its own end, before any closing
        const newerNatural = { valid_at: newer.valid_at, invalid_at: naturalEnd(newer, closures) }
        if (!intervalsOverlap({ valid_at: older.valid_at, invalid_at: natural }, newerNatural)) continue
        seen.add(key)
        out.push({
          edge_id: older.id,
          by_edge_id: newer.id,
          artifact_id: null,
          kind: "inherited",
          invalid_at: newer.valid_at,
          expired_at: now,
          prev_invalid_at: natural,
          created_at: now
        })
      }
    }
  }
  return out
}

/**
 * The earliest start a fact's remaining supporters stated (earliestKnownStart); its own when none
 * of them stated one (links stored before migration 0009 have no statement: a null description).
 */
export const statedStart = (fact: ForgetFact): string | null => {
  const stated = fact.supporters.filter((s) => s.description !== null)
  if (stated.length === 0) return fact.valid_at
  const start = stated.map((s) => s.valid_at).reduce(earliestKnownStart)
  // the same instant keeps the stored spelling, so an unchanged fact is not rewritten
  return start !== null && fact.valid_at !== null && instant(start) === instant(fact.valid_at) ? fact.valid_at : start
}

const anchorOrder = (f: FactState) => f.artifact_id ?? Number.MAX_SAFE_INTEGER

/** Of two repeats, the one stated first stays (the later would have merged into it). */
export const earlierFirst = <F extends FactState>(a: F, b: F): readonly [F, F] => {
  if (anchorOrder(a) !== anchorOrder(b)) return anchorOrder(a) < anchorOrder(b) ? [a, b] : [b, a]
  return startOf(a.valid_at) <= startOf(b.valid_at) ? [a, b] : [b, a]
}

/** Facts with one key repeat each other (the same source, relation and target). */
export const tripleKey = (t: { readonly source_id: number; readonly target_id: number; readonly relation: string }) =>
  `${t.source_id}:${t.target_id}:${t.relation}`
