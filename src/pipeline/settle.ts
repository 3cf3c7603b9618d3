/**
 * Deciding again by the times as they are now. A decision between two contradicting facts
 * records that they contradict; which of them ends is a function of their starts (stateOf). When
 * a repeat gives a stored fact a known or earlier start, the decisions it took part in are
 * decided again, so the intervals do not depend on the order the texts arrived in. The same rule
 * a forget applies (docs/FORGET.md).
 */
import { Effect } from "effect"
import { settleStates } from "../kernel/closures.js"
import type { ForgetRepo } from "../services/ForgetRepo.js"

/** Re-derives the state of the restarted facts and of every fact a decision pairs them with; the ids that changed. */
export const settleRestarted = (repo: ForgetRepo["Type"], restarted: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    if (restarted.length === 0) return [] as ReadonlyArray<number>
    const around = yield* repo.closuresTouching(restarted)
    const partners = new Set(restarted)
    for (const c of around) {
      partners.add(c.edge_id)
      if (c.by_edge_id !== null) partners.add(c.by_edge_id)
    }
    const closures = yield* repo.closuresTouching([...partners])
    const ids = new Set(partners)
    for (const c of closures) {
      ids.add(c.edge_id)
      if (c.by_edge_id !== null) ids.add(c.by_edge_id)
    }
    const facts = new Map((yield* repo.facts([...ids], [])).map((f) => [f.id, f] as const))
    const changed = settleStates(restarted, closures, (id) => facts.get(id))
    for (const state of changed) yield* repo.updateFact(state.id, { ...facts.get(state.id)!, ...state, reembed: false })
    return changed.map((s) => s.id) as ReadonlyArray<number>
  })
