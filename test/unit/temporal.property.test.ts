import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  exactRepeats,
  intervalsOverlap,
  type NewFact,
  planReconciliation,
  type ReconciliationInput,
  type StoredFact
} from "../../src/pipeline/temporal.js"

const NOW = "2025-06-01T00:00:00.000Z"
const DAY = 86_400_000
const BASE = Date.UTC(2024, 0, 1)
const ms = (time: string) => Date.parse(time)

// Few distinct days, so equal and touching times are common.
const day = fc.integer({ min: 0, max: 20 })
const iso = (d: number) => new Date(BASE + d * DAY).toISOString()

const times = fc.tuple(day, fc.option(fc.integer({ min: 0, max: 10 }), { nil: null })).map(([valid, length]) => ({
  valid_at: iso(valid),
  invalid_at: length === null ? null : iso(valid + length)
}))

const keys = fc.record({
  source_key: fc.constantFrom("alice", "bob"),
  target_key: fc.constantFrom("berlin", "paris", "rome"),
  relation: fc.constantFrom("lives_in", "works_in")
})

const storedFacts = fc
  .uniqueArray(fc.integer({ min: 1, max: 60 }), { maxLength: 8 })
  .chain((ids) => fc.tuple(...ids.map((id) => fc.tuple(keys, times).map(([k, t]): StoredFact => ({ id, ...k, ...t })))))

const newFactsOf = (count: number) =>
  fc.tuple(
    ...Array.from({ length: count }, (_, index) =>
      fc.tuple(keys, times).map(([k, t]): NewFact => ({ index, ...k, ...t })))
  )

/** A whole input: the model's answer refers to known new indexes and (mostly) known stored ids. */
const inputs: fc.Arbitrary<ReconciliationInput> = storedFacts.chain((stored) =>
  fc.integer({ min: 0, max: 6 }).chain((count) => {
    const ids = [...stored.map((f) => f.id), 999]
    const index = fc.integer({ min: 0, max: Math.max(0, count - 1) })
    return fc.record({
      newFacts: newFactsOf(count),
      duplicates: count === 0
        ? fc.constant([])
        : fc.array(fc.record({ new: index, existing: fc.constantFrom(...ids) }), { maxLength: 3 }),
      contradictions: count === 0
        ? fc.constant([])
        : fc.array(fc.record({ new: index, existing: fc.subarray(ids) }), { maxLength: 6 }),
      useExact: fc.boolean()
    }).map(({ newFacts, duplicates, contradictions, useExact }) => ({
      newFacts,
      stored,
      exact: useExact ? exactRepeats(newFacts, stored) : new Map<number, number>(),
      duplicates,
      contradictions,
      now: NOW
    }))
  })
)

/** The (N, E) pairs the model said contradict, for new facts that are not duplicates. */
const contradictingPairs = (input: ReconciliationInput) => {
  const duplicated = new Set([...input.exact.keys(), ...input.duplicates.map((d) => d.new)])
  const pairs: Array<{ readonly n: NewFact; readonly e: StoredFact }> = []
  for (const c of input.contradictions) {
    if (duplicated.has(c.new)) continue
    const n = input.newFacts.find((f) => f.index === c.new)!
    for (const id of c.existing) {
      const e = input.stored.find((f) => f.id === id)
      if (e !== undefined) pairs.push({ n, e })
    }
  }
  return pairs
}

describe("planReconciliation properties", () => {
  it("never closes an edge before it became valid", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const plan = planReconciliation(input)
        for (const close of plan.closes) {
          const e = input.stored.find((f) => f.id === close.id)!
          expect(ms(close.invalid_at)).toBeGreaterThanOrEqual(ms(e.valid_at))
        }
        for (const fact of plan.facts) {
          if (fact.action !== "insert" || fact.invalid_at === null) continue
          expect(ms(fact.invalid_at)).toBeGreaterThanOrEqual(ms(input.newFacts[fact.index]!.valid_at))
        }
      })
    )
  })

  it("never changes a valid_at: the plan carries none", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const plan = planReconciliation(input)
        for (const close of plan.closes) expect(Object.keys(close).sort()).toEqual(["expired_at", "id", "invalid_at"])
        for (const fact of plan.facts) {
          expect(Object.keys(fact).sort()).toEqual(
            fact.action === "insert" ? ["action", "expired_at", "index", "invalid_at"] : ["action", "edge_id", "index"]
          )
        }
      })
    )
  })

  it("never lets two contradicting facts with non-overlapping intervals close each other", () => {
    const disjoint = fc
      .tuple(day, fc.integer({ min: 1, max: 10 }), fc.integer({ min: 0, max: 10 }), fc.boolean(), fc.boolean())
      .map(([start, length, gap, newIsLater, open]) => {
        // the earlier fact ends `gap` days before (or exactly when) the later one starts
        const earlier = { valid_at: iso(start), invalid_at: iso(start + length) }
        const later = { valid_at: iso(start + length + gap), invalid_at: open ? null : iso(start + length + gap + 3) }
        return newIsLater ? { n: later, e: earlier } : { n: earlier, e: later }
      })
    fc.assert(
      fc.property(disjoint, ({ n, e }) => {
        const stored: StoredFact = { id: 1, source_key: "alice", target_key: "berlin", relation: "lives_in", ...e }
        const fresh: NewFact = { index: 0, source_key: "alice", target_key: "paris", relation: "lives_in", ...n }
        const plan = planReconciliation({
          newFacts: [fresh],
          stored: [stored],
          exact: new Map(),
          duplicates: [],
          contradictions: [{ new: 0, existing: [1] }],
          now: NOW
        })
        expect(plan).toEqual({
          facts: [{ index: 0, action: "insert", invalid_at: n.invalid_at, expired_at: null }],
          decisions: [],
          closes: [],
          invalidated: []
        })
      })
    )
  })

  it("closes exactly the stored edges that an overlapping, not older, contradicting fact supersedes, at the earliest such time", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const expected = new Map<number, number>()
        const storedById = new Map(input.stored.map((e) => [e.id, e] as const))
        const duplicateOf = (index: number) =>
          input.exact.get(index) ?? input.duplicates.find((d) => d.new === index)?.existing
        for (const { n, e } of contradictingPairs(input)) {
          if (duplicateOf(n.index) !== undefined) continue
          if (!intervalsOverlap(n, e) || ms(e.valid_at) > ms(n.valid_at)) continue
          expected.set(e.id, Math.min(expected.get(e.id) ?? Infinity, ms(n.valid_at)))
        }
        // a repeat that says the fact ended ends the open stored edge at that time
        for (const n of input.newFacts) {
          const e = storedById.get(duplicateOf(n.index) ?? -1)
          if (e === undefined || e.invalid_at !== null || n.invalid_at === null) continue
          if (ms(n.invalid_at) <= ms(e.valid_at)) continue
          expected.set(e.id, Math.min(expected.get(e.id) ?? Infinity, ms(n.invalid_at)))
        }
        const plan = planReconciliation(input)
        expect(new Map(plan.closes.map((c) => [c.id, ms(c.invalid_at)]))).toEqual(expected)
        for (const close of plan.closes) expect(close.expired_at).toBe(NOW)
      })
    )
  })

  it("inserts a new fact closed exactly when a newer overlapping stored fact contradicts it", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const plan = planReconciliation(input)
        const pairs = contradictingPairs(input)
        for (const fact of plan.facts) {
          if (fact.action !== "insert") continue
          const n = input.newFacts[fact.index]!
          const newer = pairs.filter((p) => p.n === n && intervalsOverlap(n, p.e) && ms(n.valid_at) < ms(p.e.valid_at))
          if (newer.length === 0) {
            expect(fact).toEqual({ index: n.index, action: "insert", invalid_at: n.invalid_at, expired_at: null })
          } else {
            expect(fact.expired_at).toBe(NOW)
            expect(ms(fact.invalid_at!)).toBe(Math.min(...newer.map((p) => ms(p.e.valid_at))))
          }
        }
      })
    )
  })

  it("lists every closed id once, in both closes and invalidated", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const plan = planReconciliation(input)
        expect(plan.invalidated).toEqual(plan.closes.map((c) => c.id))
        expect(new Set(plan.invalidated).size).toBe(plan.invalidated.length)
      })
    )
  })

  it("plans one entry per new fact, in order, and never inserts a duplicate", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const plan = planReconciliation(input)
        expect(plan.facts.map((f) => f.index)).toEqual(input.newFacts.map((f) => f.index))
        for (const fact of plan.facts) {
          const exact = input.exact.get(fact.index)
          const modelDuplicate = input.duplicates.find((d) => d.new === fact.index)?.existing
          if (exact !== undefined) expect(fact).toEqual({ index: fact.index, action: "duplicate", edge_id: exact })
          else if (modelDuplicate !== undefined) {
            expect(fact).toEqual({ index: fact.index, action: "duplicate", edge_id: modelDuplicate })
          } else expect(fact.action).toBe("insert")
        }
      })
    )
  })

  it("yields only duplicates and no closes when the same facts are remembered again", () => {
    const again = storedFacts.chain((stored) =>
      fc.record({
        stored: fc.constant(stored),
        // every new fact repeats a stored one: same keys and same times
        newFacts: fc.array(fc.constantFrom(...(stored.length > 0 ? stored : [undefined])), { maxLength: 6 })
          .map((picks) => picks.flatMap((s, index) => (s === undefined ? [] : [{ ...s, index }]))),
        contradictions: fc.array(fc.record({ new: fc.nat(5), existing: fc.subarray(stored.map((s) => s.id)) }))
      })
    )
    fc.assert(
      fc.property(again, ({ stored, newFacts, contradictions }) => {
        const exact = exactRepeats(newFacts, stored)
        const plan = planReconciliation({ newFacts, stored, exact, duplicates: [], contradictions, now: NOW })
        expect(plan.closes).toEqual([])
        expect(plan.invalidated).toEqual([])
        for (const fact of plan.facts) {
          expect(fact.action).toBe("duplicate")
          const n = newFacts[fact.index]!
          // the newest stored fact with the same keys and times (stored is newest first)
          const same = stored.find((s) =>
            s.source_key === n.source_key && s.target_key === n.target_key && s.relation === n.relation &&
            s.valid_at === n.valid_at && s.invalid_at === n.invalid_at
          )!
          expect(fact).toEqual({ index: n.index, action: "duplicate", edge_id: same.id })
        }
      })
    )
  })

  it("is deterministic", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const first = planReconciliation(input)
        expect(planReconciliation(structuredClone(input))).toEqual(first)
        expect(planReconciliation(input)).toEqual(first)
      })
    )
  })
})
