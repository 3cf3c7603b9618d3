import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  earliestKnownStart,
  endOf,
  exactRepeats,
  type FactTimes,
  intervalsOverlap,
  type NewFact,
  planReconciliation,
  type ReconciliationInput,
  startOf,
  type StoredFact
} from "../../src/kernel/temporal.js"
import { replay, type Statement } from "../support/temporalWorld.js"

const NOW = "2025-06-01T00:00:00.000Z"
const EARLIER = "2025-05-01T00:00:00.000Z"
const DAY = 86_400_000
const BASE = Date.UTC(2024, 0, 1)
const ms = (time: string) => Date.parse(time)

// Few distinct days, so equal and touching times are common.
const day = fc.integer({ min: 0, max: 20 })
const iso = (d: number) => new Date(BASE + d * DAY).toISOString()

/** A start and maybe an end, or an end without a start (the start unknown). */
const times: fc.Arbitrary<FactTimes> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(day, fc.option(fc.integer({ min: 0, max: 10 }), { nil: null })).map(([valid, length]) => ({
      valid_at: iso(valid),
      invalid_at: length === null ? null : iso(valid + length)
    }))
  },
  { weight: 1, arbitrary: day.map((end) => ({ valid_at: null, invalid_at: iso(end) })) }
)

const keys = fc.record({
  source_key: fc.constantFrom("alice", "bob"),
  target_key: fc.constantFrom("berlin", "paris", "rome"),
  relation: fc.constantFrom("lives_in", "works_in")
})

const storedFacts = fc
  .uniqueArray(fc.integer({ min: 1, max: 60 }), { maxLength: 8 })
  .chain((ids) =>
    fc.tuple(
      ...ids.map((id) =>
        fc.tuple(keys, times, fc.boolean()).map(([k, t, closed]): StoredFact => ({
          id,
          ...k,
          ...t,
          expired_at: closed && t.invalid_at !== null ? EARLIER : null
        }))
      )
    )
  )

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

/** Which stored edge each new fact duplicates, as the plan must decide it. */
const duplicateOf = (input: ReconciliationInput, n: NewFact): number | undefined => {
  const exact = input.exact.get(n.index)
  if (exact !== undefined) return exact
  const model = input.duplicates.find((d) => d.new === n.index)?.existing
  if (model === undefined) return undefined
  const e = input.stored.find((f) => f.id === model)
  const same = e !== undefined && e.valid_at === n.valid_at && e.invalid_at === n.invalid_at
  return e === undefined || same || intervalsOverlap(e, n) ? model : undefined
}

describe("planReconciliation properties", () => {
  it("moves a stored end only earlier, never before the fact's start", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const plan = planReconciliation(input)
        const starts = new Map(plan.restarts.map((r) => [r.id, r.valid_at] as const))
        for (const close of plan.closes) {
          const e = input.stored.find((f) => f.id === close.id)!
          // an end moves only earlier, or stays where a newer fact put it when a repeat states it
          if (ms(close.invalid_at) === endOf(e.invalid_at)) {
            expect([close.expired_at, e.expired_at !== null]).toEqual([null, true])
          } else expect(ms(close.invalid_at)).toBeLessThan(endOf(e.invalid_at))
          expect(ms(close.invalid_at)).toBeGreaterThanOrEqual(startOf(starts.get(e.id) ?? e.valid_at))
          // an end a repeat stated leaves the fact live; one a newer fact imposed expires it, and a fact
          // already closed keeps when gligabao first learned it ended
          const stated = plan.decisions.some((d) =>
            d.kind === "repeat_end" && d.stored_id === e.id && d.invalid_at === close.invalid_at
          )
          expect(close.expired_at).toBe(stated ? null : e.expired_at ?? NOW)
        }
        for (const fact of plan.facts) {
          if (fact.action !== "insert") continue
          const n = input.newFacts[fact.index]!
          expect(endOf(fact.invalid_at)).toBeLessThanOrEqual(endOf(n.invalid_at))
          if (fact.invalid_at !== null) expect(ms(fact.invalid_at)).toBeGreaterThanOrEqual(startOf(n.valid_at))
          expect(fact.expired_at).toBe(fact.invalid_at === n.invalid_at ? null : NOW)
        }
      })
    )
  })

  it("changes a start only for a repeat: the earliest known start of the stored fact and its repeats", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const plan = planReconciliation(input)
        const expected = new Map<number, string | null>()
        for (const n of input.newFacts) {
          const id = duplicateOf(input, n)
          const e = input.stored.find((f) => f.id === id)
          if (e === undefined) continue
          expected.set(e.id, earliestKnownStart(expected.get(e.id) ?? e.valid_at, n.valid_at))
        }
        const moved = [...expected].filter(([id, start]) => {
          const e = input.stored.find((f) => f.id === id)!
          return start !== null && (e.valid_at === null || ms(start) !== ms(e.valid_at))
        })
        expect(new Map(plan.restarts.map((r) => [r.id, r.valid_at]))).toEqual(new Map(moved))
      })
    )
  })

  it("never lets two contradicting facts with non-overlapping intervals close each other", () => {
    const disjoint = fc
      .tuple(
        day,
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 0, max: 10 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean()
      )
      .map(([start, length, gap, newIsLater, open, unknownStart]) => {
        // the earlier fact ends `gap` days before (or exactly when) the later one starts
        const earlier = { valid_at: unknownStart ? null : iso(start), invalid_at: iso(start + length) }
        const later = { valid_at: iso(start + length + gap), invalid_at: open ? null : iso(start + length + gap + 3) }
        return newIsLater ? { n: later, e: earlier } : { n: earlier, e: later }
      })
    fc.assert(
      fc.property(disjoint, fc.boolean(), ({ n, e }, closed) => {
        const stored: StoredFact = {
          id: 1,
          source_key: "alice",
          target_key: "berlin",
          relation: "lives_in",
          ...e,
          expired_at: closed && e.invalid_at !== null ? EARLIER : null
        }
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
          decisions: [{ kind: "contradicts", stored_id: 1, new_index: 0 }],
          closes: [],
          invalidated: [],
          restarts: []
        })
      })
    )
  })

  it("lists every closed id once, and only the live ones as invalidated", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const plan = planReconciliation(input)
        const live = new Set(input.stored.filter((f) => f.expired_at === null).map((f) => f.id))
        expect(plan.invalidated).toEqual(plan.closes.map((c) => c.id).filter((id) => live.has(id)))
        expect(new Set(plan.closes.map((c) => c.id)).size).toBe(plan.closes.length)
      })
    )
  })

  it("plans one entry per new fact, in order, and never inserts a duplicate", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const plan = planReconciliation(input)
        expect(plan.facts.map((f) => f.index)).toEqual(input.newFacts.map((f) => f.index))
        for (const fact of plan.facts) {
          const dup = duplicateOf(input, input.newFacts[fact.index]!)
          if (dup !== undefined) expect(fact).toEqual({ index: fact.index, action: "duplicate", edge_id: dup })
          else expect(fact.action).toBe("insert")
        }
      })
    )
  })

  it("yields only duplicates, no closes and no restarts when the same facts are remembered again", () => {
    const again = storedFacts.chain((stored) =>
      fc.record({
        stored: fc.constant(stored),
        // every new fact repeats a stored one: same keys and same times
        newFacts: fc.array(fc.constantFrom(...(stored.length > 0 ? stored : [undefined])), { maxLength: 6 })
          .map((picks) =>
            picks.flatMap((s, index) => (s === undefined ? [] : [{ ...s, index, expired_at: undefined }]))
          ),
        contradictions: fc.array(fc.record({ new: fc.nat(5), existing: fc.subarray(stored.map((s) => s.id)) }))
      })
    )
    fc.assert(
      fc.property(again, ({ stored, newFacts, contradictions }) => {
        const exact = exactRepeats(newFacts, stored)
        const plan = planReconciliation({ newFacts, stored, exact, duplicates: [], contradictions, now: NOW })
        expect(plan.closes).toEqual([])
        expect(plan.restarts).toEqual([])
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

/**
 * A timeline of exclusive facts (one person's homes, one at a time) with distinct starts, each
 * fact told by one or two texts: its start, its start and end, its end only (the start unknown),
 * or "moved from A to B" (A's end and B's start in one text). Ends are consistent: a home ends
 * at or before the next one begins.
 */
const timeline: fc.Arbitrary<ReadonlyArray<ReadonlyArray<Statement>>> = fc
  .uniqueArray(fc.integer({ min: 0, max: 40 }), { minLength: 2, maxLength: 4 })
  .map((starts) => [...starts].sort((a, b) => a - b))
  .chain((starts) =>
    fc.tuple(
      ...starts.map((start, i) => {
        const next = starts[i + 1]
        const end = next === undefined
          ? fc.option(fc.integer({ min: start + 1, max: start + 20 }), { nil: null })
          : fc.integer({ min: start + 1, max: next })
        return fc.tuple(
          end,
          fc.constantFrom("start", "both", "end", "start+end", "moved")
        ).map(([e, how]) => ({ i, start, end: e, how, next }))
      })
    )
  )
  .map((facts) => {
    const texts: Array<Array<Statement>> = []
    const home = (i: number) => `home${i}`
    for (const f of facts) {
      const startOnly = { target: home(f.i), valid_at: iso(f.start), invalid_at: null }
      const endOnly = f.end === null ? undefined : { target: home(f.i), valid_at: null, invalid_at: iso(f.end) }
      const both = { target: home(f.i), valid_at: iso(f.start), invalid_at: f.end === null ? null : iso(f.end) }
      if (f.how === "start" || endOnly === undefined) texts.push([startOnly])
      else if (f.how === "both") texts.push([both])
      else if (f.how === "end") texts.push([endOnly])
      else if (f.how === "start+end") texts.push([startOnly], [endOnly])
      else if (f.next !== undefined && f.end === f.next) {
        // "moved from home i to home i+1": the end of one, the start of the next, in one text
        texts.push([endOnly, { target: home(f.i + 1), valid_at: iso(f.next), invalid_at: null }])
      } else texts.push([startOnly], [endOnly])
    }
    return texts
  })

describe("the order texts arrive in", () => {
  it("does not change the intervals of exclusive facts the model judges consistently", () => {
    fc.assert(
      fc.property(
        timeline.chain((texts) =>
          fc.tuple(fc.constant(texts), fc.shuffledSubarray([...texts.keys()], { minLength: texts.length }))
        ),
        ([texts, order]) => {
          const inOrder = replay(texts)
          const shuffled = replay(order.map((k) => texts[k]!))
          expect(shuffled).toEqual(inOrder)
        }
      ),
      { numRuns: 500 }
    )
  })

  it("gives the intervals of the timeline: each home until the next begins or its own end", () => {
    const t = (d: string) => `${d}T00:00:00.000Z`
    // Hana: Madrid since June 2024, moved to Lisbon in July 2025; Rome since March 2023 told last
    const hana: Array<Array<Statement>> = [
      [{ target: "madrid", valid_at: t("2024-06-01"), invalid_at: null }],
      [{ target: "lisbon", valid_at: t("2025-07-01"), invalid_at: null }],
      [{ target: "rome", valid_at: t("2023-03-01"), invalid_at: null }]
    ]
    expect(replay(hana)).toEqual([
      `lisbon ${t("2025-07-01")} open`,
      `madrid ${t("2024-06-01")} ${t("2025-07-01")}`,
      `rome ${t("2023-03-01")} ${t("2024-06-01")}`
    ])
    // Ivan: lives in Oslo (2020), moved to Bergen in April 2022, then "lived in Oslo until March 2022"
    const ivan: Array<Array<Statement>> = [
      [{ target: "oslo", valid_at: t("2020-01-01"), invalid_at: null }],
      [{ target: "bergen", valid_at: t("2022-04-01"), invalid_at: null }],
      [{ target: "oslo", valid_at: null, invalid_at: t("2022-03-01") }]
    ]
    expect(replay(ivan)).toEqual([`bergen ${t("2022-04-01")} open`, `oslo ${t("2020-01-01")} ${t("2022-03-01")}`])
    // Alice: "moved from Berlin to Paris in January 2025" with nothing stored: Berlin's start is unknown
    const alice: Array<Array<Statement>> = [[
      { target: "berlin", valid_at: null, invalid_at: t("2025-01-01") },
      { target: "paris", valid_at: t("2025-01-01"), invalid_at: null }
    ]]
    expect(replay(alice)).toEqual([`berlin unknown ${t("2025-01-01")}`, `paris ${t("2025-01-01")} open`])
  })
})
