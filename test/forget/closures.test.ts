/**
 * The pure decisions of a forget (src/kernel/closures.ts): which recorded decisions still hold,
 * the state a fact returns to, and what a forgotten fact passes on.
 */
import { describe, expect, it } from "vitest"
import { closureHolds, type FactState, inheritedClosures, naturalEnd, stateOf } from "../../src/kernel/closures.js"
import type { StoredClosure } from "../../src/services/ForgetRepo.js"

const NOW = "2030-06-01T00:00:00.000Z"
const year = (y: number) => `${y}-01-01T00:00:00.000Z`

/** A `lives_in` fact of person 1 at place `target`, anchored to text `artifact`. */
const fact = (
  id: number,
  target: number,
  valid: number,
  artifact: number,
  invalid: number | null = null
): FactState => ({
  id,
  source_id: 1,
  target_id: target,
  relation: "lives_in",
  valid_at: year(valid),
  invalid_at: invalid === null ? null : year(invalid),
  expired_at: invalid === null ? null : NOW,
  artifact_id: artifact
})

let nextId = 1
const closure = (
  kind: StoredClosure["kind"],
  edge: number,
  by: number | null,
  at: number,
  artifact: number | null = null,
  prev: number | null = null
): StoredClosure => ({
  id: nextId++,
  edge_id: edge,
  by_edge_id: by,
  artifact_id: artifact,
  kind,
  invalid_at: year(at),
  expired_at: NOW,
  prev_invalid_at: prev === null ? null : year(prev),
  created_at: NOW
})

const lookup = (...facts: ReadonlyArray<FactState>) => (id: number) => facts.find((f) => f.id === id)

describe("closureHolds", () => {
  it("a decision made by a forgotten fact no longer holds", () => {
    expect(closureHolds(closure("close", 1, 2, 2021), new Set([2]), new Set())).toBe(false)
    expect(closureHolds(closure("close", 1, 2, 2021), new Set([3]), new Set())).toBe(true)
  })

  it("a repeat's end holds while the artifact that ended it remains; a hand closing always", () => {
    expect(closureHolds(closure("repeat_end", 1, null, 2021, 7), new Set(), new Set([7]))).toBe(false)
    expect(closureHolds(closure("repeat_end", 1, null, 2021, 7), new Set(), new Set([8]))).toBe(true)
    expect(closureHolds(closure("hand", 1, null, 2021), new Set([1]), new Set([7]))).toBe(true)
  })
})

describe("stateOf", () => {
  it("of two contradicting facts the older ends when the newer begins, whichever closed which", () => {
    const berlin = fact(1, 10, 2020, 1)
    const paris = fact(2, 11, 2022, 2)
    // recorded as Berlin closing Paris (a re-anchor moved the times since): Berlin ends now
    const c = closure("born_closed", 2, 1, 2020, 2)
    expect(stateOf(berlin, [c], null, lookup(berlin, paris))).toEqual({ invalid_at: year(2022), expired_at: NOW })
    expect(stateOf(paris, [c], null, lookup(berlin, paris))).toEqual({ invalid_at: null, expired_at: null })
  })

  it("on equal times the one stated first ends, by the texts they are anchored to now, not by id", () => {
    // fact 1 was re-anchored to text 5, later than fact 2's text 3
    const reanchored = fact(1, 10, 2020, 5)
    const other = fact(2, 11, 2020, 3)
    const c = closure("close", 1, 2, 2020, 3)
    const facts = lookup(reanchored, other)
    expect(stateOf(reanchored, [c], null, facts).expired_at).toBeNull()
    expect(stateOf(other, [c], null, facts)).toEqual({ invalid_at: year(2020), expired_at: NOW })
  })

  it("no decision holds between two facts of one text", () => {
    const a = fact(1, 10, 2020, 4)
    const b = fact(2, 11, 2022, 4)
    expect(stateOf(a, [closure("close", 1, 2, 2022, 4)], null, lookup(a, b))).toEqual({
      invalid_at: null,
      expired_at: null
    })
  })

  it("the earliest end wins; with none the fact keeps its natural end", () => {
    const a = fact(1, 10, 2020, 1)
    const b = fact(2, 11, 2024, 2)
    const byHand = closure("hand", 1, null, 2022)
    expect(stateOf(a, [closure("close", 1, 2, 2024, 2), byHand], null, lookup(a, b)).invalid_at).toBe(year(2022))
    expect(stateOf(a, [], year(2026), lookup(a, b))).toEqual({ invalid_at: year(2026), expired_at: null })
  })
})

describe("naturalEnd", () => {
  it("is the end the fact's first closing replaced, else its current one", () => {
    const a = fact(1, 10, 2020, 1, 2022)
    expect(naturalEnd(a, [closure("close", 1, 2, 2022, 2, 2030), closure("close", 1, 3, 2023, 3)])).toBe(year(2030))
    expect(naturalEnd(a, [])).toBe(year(2022))
  })
})

describe("inheritedClosures", () => {
  it("a chain: Berlin closed by Paris closed by London; forgetting Paris closes Berlin at London", () => {
    const berlin = fact(1, 10, 2020, 1, 2022)
    const london = fact(3, 12, 2024, 3)
    const closures = [closure("close", 1, 2, 2022, 2), closure("close", 2, 3, 2024, 3)]
    const out = inheritedClosures(new Set([2]), closures, lookup(berlin, london), NOW)
    expect(out.map((c) => [c.edge_id, c.by_edge_id, c.kind, c.invalid_at])).toEqual([[1, 3, "inherited", year(2024)]])
  })

  it("compares the facts as they were before their own closings (their natural ends)", () => {
    // Osaka was closed by the forgotten Berlin, which Lisbon closed; Lisbon was closed later, at
    // its own start, by another text: it was open when it would have met Osaka
    const osaka = fact(1, 10, 2020, 1, 2020)
    const lisbon = fact(3, 12, 2020, 3, 2020)
    const closures = [
      closure("close", 1, 2, 2020, 2),
      closure("close", 2, 3, 2020, 3),
      closure("close", 3, 4, 2020, 4)
    ]
    const out = inheritedClosures(new Set([2]), closures, lookup(osaka, lisbon), NOW)
    expect(out.map((c) => [c.edge_id, c.by_edge_id])).toEqual([[1, 3]])
  })

  it("passes nothing on between repeats, facts of one text, or facts already related", () => {
    const a = fact(1, 10, 2020, 1, 2022)
    const forgotten = new Set([2])
    const passed = (other: FactState, ...more: ReadonlyArray<StoredClosure>) =>
      inheritedClosures(
        forgotten,
        [closure("close", 1, 2, 2022, 2), closure("close", 2, other.id, 2024, other.artifact_id), ...more],
        lookup(a, other),
        NOW
      ).map((c) => [c.edge_id, c.by_edge_id])
    expect(passed(fact(3, 13, 2024, 3))).toEqual([[1, 3]])
    expect(passed(fact(3, 10, 2024, 3))).toEqual([]) // a repeat of it
    expect(passed(fact(3, 13, 2024, 1))).toEqual([]) // stated by its own text
    expect(passed(fact(3, 13, 2024, 3), closure("close", 3, 1, 2024, 3))).toEqual([]) // already decided
    expect(passed(fact(3, 13, 2019, 3, 2020))).toEqual([]) // ended before it began
  })
})
