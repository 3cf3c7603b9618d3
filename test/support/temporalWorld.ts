/**
 * A memory of one person's exclusive facts (homes: one at a time), in plain data, written the
 * way the store stage writes the database: the plan's inserts, closes and restarts, every
 * decision kept, and the decisions of a restarted fact decided again (settleStates). The model
 * is consistent: a new fact contradicts every stored fact of another place, and a stored fact
 * of its own place is settled in code (a repeat, or another period). For the order property.
 */
import { type FactState, settleStates } from "../../src/kernel/closures.js"
import { exactRepeats, type NewFact, planReconciliation, type StoredFact } from "../../src/kernel/temporal.js"
import type { StoredClosure } from "../../src/services/ForgetRepo.js"

/** One fact as a text states it. */
export interface Statement {
  readonly target: string
  readonly valid_at: string | null
  readonly invalid_at: string | null
}

interface Fact extends FactState {
  readonly target: string
  readonly statements: Array<Statement>
  readonly supporters: Array<{ readonly description: string; readonly invalid_at: string | null }>
}

const NOW = "2026-01-01T00:00:00.000Z"

/** Who says which stored facts each new fact contradicts: the model, or code (an exclusive relation). */
export type Contradicting = (
  newFacts: ReadonlyArray<NewFact>,
  stored: ReadonlyArray<StoredFact>
) => ReadonlyArray<{ readonly new: number; readonly existing: ReadonlyArray<number> }>

/** The consistent model: a new fact contradicts every stored fact of another place. */
const consistentModel: Contradicting = (newFacts, stored) =>
  newFacts.map((f) => ({
    new: f.index,
    existing: stored.filter((s) => s.target_key !== f.target_key).map((s) => s.id)
  }))

/** The texts remembered in this order; each fact as `target start end`, sorted. */
export const replay = (
  texts: ReadonlyArray<ReadonlyArray<Statement>>,
  contradicting: Contradicting = consistentModel
): Array<string> => {
  const facts = new Map<number, Fact>()
  const closures: Array<StoredClosure> = []
  let nextId = 1
  texts.forEach((text, n) => {
    const artifact = n + 1
    const newFacts: Array<NewFact> = text.map((s, index) => ({
      index,
      source_key: "alice",
      target_key: s.target,
      relation: "lives_in",
      valid_at: s.valid_at,
      invalid_at: s.invalid_at
    }))
    const stored: Array<StoredFact> = [...facts.values()].reverse().map((f) => ({
      id: f.id,
      source_key: "alice",
      target_key: f.target,
      relation: "lives_in",
      valid_at: f.valid_at,
      invalid_at: f.invalid_at,
      expired_at: f.expired_at,
      stated_invalid_at: f.statements.map((s) => s.invalid_at).reduce((a, b) =>
        a === null ? b : b === null ? a : Date.parse(b) < Date.parse(a) ? b : a
      )
    }))
    const exact = exactRepeats(newFacts, stored)
    const contradictions = contradicting(newFacts.filter((f) => !exact.has(f.index)), stored)
    const plan = planReconciliation({ newFacts, stored, exact, duplicates: [], contradictions, now: NOW })
    const idOf = new Map<number, number>()
    for (const p of plan.facts) {
      const s = text[p.index]!
      if (p.action === "duplicate") {
        idOf.set(p.index, p.edge_id)
        facts.get(p.edge_id)!.statements.push(s)
        facts.get(p.edge_id)!.supporters.push({ description: s.target, invalid_at: s.invalid_at })
        continue
      }
      const id = nextId++
      idOf.set(p.index, id)
      facts.set(id, {
        id,
        source_id: 1,
        target_id: 0,
        relation: "lives_in",
        target: s.target,
        valid_at: s.valid_at,
        invalid_at: p.invalid_at,
        expired_at: p.expired_at,
        artifact_id: artifact,
        statements: [s],
        supporters: [{ description: s.target, invalid_at: s.invalid_at }]
      })
    }
    const before = new Map(stored.map((s) => [s.id, s.invalid_at] as const))
    for (const c of plan.closes) {
      const f = facts.get(c.id)!
      facts.set(c.id, { ...f, invalid_at: c.invalid_at, expired_at: c.expired_at })
    }
    for (const r of plan.restarts) facts.set(r.id, { ...facts.get(r.id)!, valid_at: r.valid_at })
    for (const d of plan.decisions) {
      const born = d.kind === "born_closed"
      closures.push({
        id: closures.length + 1,
        edge_id: born ? idOf.get(d.new_index)! : d.stored_id,
        by_edge_id: born ? d.stored_id : d.kind === "repeat_end" ? null : idOf.get(d.new_index)!,
        artifact_id: artifact,
        kind: d.kind,
        invalid_at: d.kind === "contradicts" ? null : d.invalid_at,
        expired_at: NOW,
        prev_invalid_at: born ? text[d.new_index]!.invalid_at : before.get(d.stored_id) ?? null,
        created_at: NOW
      })
    }
    const settled = settleStates(plan.restarts.map((r) => r.id), closures, (id) => facts.get(id))
    for (const s of settled) facts.set(s.id, { ...facts.get(s.id)!, ...s })
  })
  return [...facts.values()]
    .map((f) => `${f.target} ${f.valid_at ?? "unknown"} ${f.invalid_at ?? "open"}`)
    .sort()
}
