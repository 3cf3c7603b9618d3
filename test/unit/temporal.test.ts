import { describe, expect, it } from "vitest"
import {
  exactRepeats,
  intervalsOverlap,
  type NewFact,
  normalizeTimestamp,
  parseTimestamp,
  planReconciliation,
  type ReconciliationInput,
  type StoredFact
} from "../../src/kernel/temporal.js"

const NOW = "2025-02-01T12:00:00.000Z"
const t = (date: string) => `${date}T00:00:00.000Z`

const stored = (id: number, valid: string, invalid: string | null = null, target = "berlin"): StoredFact => ({
  id,
  source_key: "alice",
  target_key: target,
  relation: "lives_in",
  valid_at: t(valid),
  invalid_at: invalid === null ? null : t(invalid),
  expired_at: null
})

const fresh = (index: number, valid: string, invalid: string | null = null, target = "paris"): NewFact => ({
  index,
  source_key: "alice",
  target_key: target,
  relation: "lives_in",
  valid_at: t(valid),
  invalid_at: invalid === null ? null : t(invalid)
})

const plan = (input: Partial<ReconciliationInput> & Pick<ReconciliationInput, "newFacts" | "stored">) =>
  planReconciliation({ exact: new Map(), duplicates: [], contradictions: [], now: NOW, ...input })

describe("timestamps", () => {
  it("normalizes RFC 3339 to UTC with milliseconds", () => {
    expect(normalizeTimestamp("2024-03-01T00:00:00Z")).toBe("2024-03-01T00:00:00.000Z")
    expect(normalizeTimestamp("2024-03-01T01:30:00+01:30")).toBe("2024-03-01T00:00:00.000Z")
    expect(normalizeTimestamp("2024-03-01t10:00:00.123456z")).toBe("2024-03-01T10:00:00.123Z")
    expect(normalizeTimestamp("2024-02-29T23:00:00-02:00")).toBe("2024-03-01T01:00:00.000Z")
  })

  it("reads coarse dates as the start of the period in UTC", () => {
    expect(normalizeTimestamp("2024-03-01")).toBe("2024-03-01T00:00:00.000Z")
    expect(normalizeTimestamp("2024-03")).toBe("2024-03-01T00:00:00.000Z")
    expect(normalizeTimestamp("2024")).toBe("2024-01-01T00:00:00.000Z")
    expect(normalizeTimestamp("0050-06-01")).toBe("0050-06-01T00:00:00.000Z")
  })

  it("rejects what is not a date", () => {
    for (
      const text of [
        "",
        "yesterday",
        "March 5, 2024",
        "2023-02-29",
        "2024-13-01",
        "2024-01-01T24:00:00Z",
        "2024-01-01T10:00:00+25:00",
        "20240301"
      ]
    ) {
      expect(parseTimestamp(text), text).toBeUndefined()
    }
  })
})

describe("intervalsOverlap", () => {
  const f = (valid: string, invalid: string | null) => ({
    valid_at: t(valid),
    invalid_at: invalid === null ? null : t(invalid)
  })

  it("is true for open intervals and for intersecting ones", () => {
    expect(intervalsOverlap(f("2024-01-01", null), f("2020-01-01", null))).toBe(true)
    expect(intervalsOverlap(f("2024-01-01", "2024-06-01"), f("2024-05-01", null))).toBe(true)
  })

  it("is false when one ends at or before the other starts", () => {
    expect(intervalsOverlap(f("2020-01-01", "2024-01-01"), f("2024-01-01", null))).toBe(false)
    expect(intervalsOverlap(f("2024-01-01", null), f("2020-01-01", "2023-01-01"))).toBe(false)
  })

  it("compares instants, not strings", () => {
    // ends 2024-01-01T00:30+01:00 = 2023-12-31T23:30Z; lexically it would sort after 2023-12-31T23:45Z
    const ending = { valid_at: "2023-01-01T00:00:00Z", invalid_at: "2024-01-01T00:30:00+01:00" }
    expect(intervalsOverlap(ending, { valid_at: "2023-12-31T23:45:00.000Z", invalid_at: null })).toBe(false)
    expect(intervalsOverlap(ending, { valid_at: "2023-12-31T23:15:00.000Z", invalid_at: null })).toBe(true)
  })
})

describe("exactRepeats", () => {
  it("maps a new fact to the newest stored fact with the same endpoints and relation", () => {
    const candidates = [
      stored(9, "2024-01-01", null, "paris"),
      stored(3, "2020-01-01", null, "paris"),
      stored(5, "2021-01-01")
    ]
    const repeats = exactRepeats([fresh(0, "2025-01-01"), fresh(1, "2025-01-01", null, "rome")], candidates)
    expect([...repeats]).toEqual([[0, 9]])
  })

  it("prefers the stored fact that states the same times, so a text remembered again changes nothing", () => {
    const open = stored(1, "2024-01-05")
    const ended = stored(2, "2024-01-13", "2024-01-22")
    expect(exactRepeats([fresh(0, "2024-01-13", "2024-01-22", "berlin")], [open, ended])).toEqual(new Map([[0, 2]]))
    expect(exactRepeats([fresh(0, "2024-02-01", null, "berlin")], [open, ended])).toEqual(new Map([[0, 1]]))
  })

  it("needs the same direction and relation", () => {
    const reversed: StoredFact = { ...stored(1, "2024-01-01", null, "paris"), source_key: "paris", target_key: "alice" }
    const other: StoredFact = { ...stored(2, "2024-01-01", null, "paris"), relation: "visited" }
    expect(exactRepeats([fresh(0, "2025-01-01")], [reversed, other]).size).toBe(0)
  })
})

describe("planReconciliation", () => {
  it("inserts a fact with no duplicate or contradiction as it is", () => {
    expect(plan({ newFacts: [fresh(0, "2025-01-15", "2025-01-20")], stored: [] })).toEqual({
      facts: [{ index: 0, action: "insert", invalid_at: t("2025-01-20"), expired_at: null }],
      decisions: [],
      closes: [],
      invalidated: [],
      restarts: []
    })
  })

  it("closes an older stored fact at the new fact's valid_at (rule 2)", () => {
    const result = plan({
      newFacts: [fresh(0, "2025-01-15")],
      stored: [stored(12, "2024-03-01")],
      contradictions: [{ new: 0, existing: [12] }]
    })
    expect(result).toEqual({
      facts: [{ index: 0, action: "insert", invalid_at: null, expired_at: null }],
      decisions: [{ kind: "close", stored_id: 12, new_index: 0, invalid_at: t("2025-01-15") }],
      closes: [{ id: 12, invalid_at: t("2025-01-15"), expired_at: NOW }],
      invalidated: [12],
      restarts: []
    })
  })

  it("lets the newer information win on equal valid times (rule 4)", () => {
    const result = plan({
      newFacts: [fresh(0, "2024-03-01")],
      stored: [stored(12, "2024-03-01")],
      contradictions: [{ new: 0, existing: [12] }]
    })
    expect(result.closes).toEqual([{ id: 12, invalid_at: t("2024-03-01"), expired_at: NOW }])
  })

  it("inserts an older state already closed, leaving the stored fact live (rule 3)", () => {
    const result = plan({
      newFacts: [fresh(0, "2019-01-01")],
      stored: [stored(12, "2024-03-01"), stored(13, "2022-01-01", null, "rome")],
      contradictions: [{ new: 0, existing: [12, 13] }]
    })
    expect(result).toEqual({
      facts: [{ index: 0, action: "insert", invalid_at: t("2022-01-01"), expired_at: NOW }],
      // each stored fact that closes it is a decision: forgetting one leaves the other
      decisions: [
        { kind: "born_closed", new_index: 0, stored_id: 12, invalid_at: t("2024-03-01") },
        { kind: "born_closed", new_index: 0, stored_id: 13, invalid_at: t("2022-01-01") }
      ],
      closes: [],
      invalidated: [],
      restarts: []
    })
  })

  it("changes nothing when the intervals do not overlap (rule 1), and keeps that they contradict", () => {
    const result = plan({
      newFacts: [fresh(0, "2025-01-01"), fresh(1, "2010-01-01", "2012-01-01")],
      stored: [stored(12, "2020-01-01", "2024-01-01")],
      contradictions: [{ new: 0, existing: [12] }, { new: 1, existing: [12] }]
    })
    expect(result).toEqual({
      facts: [
        { index: 0, action: "insert", invalid_at: null, expired_at: null },
        { index: 1, action: "insert", invalid_at: t("2012-01-01"), expired_at: null }
      ],
      decisions: [
        { kind: "contradicts", stored_id: 12, new_index: 0 },
        { kind: "contradicts", stored_id: 12, new_index: 1 }
      ],
      closes: [],
      invalidated: [],
      restarts: []
    })
  })

  it("closes a stored fact once, at the earliest valid_at of the new facts that close it", () => {
    const result = plan({
      newFacts: [fresh(0, "2025-01-15"), fresh(1, "2024-06-01", null, "rome"), fresh(2, "2024-09-01", null, "oslo")],
      stored: [stored(12, "2024-03-01")],
      contradictions: [{ new: 0, existing: [12] }, { new: 1, existing: [12] }, { new: 2, existing: [12] }]
    })
    expect(result.closes).toEqual([{ id: 12, invalid_at: t("2024-06-01"), expired_at: NOW }])
    expect(result.invalidated).toEqual([12])
  })

  it("treats exact repeats and model duplicates as duplicates, never inserted", () => {
    const result = plan({
      newFacts: [fresh(0, "2025-01-01"), fresh(1, "2025-01-01", null, "rome")],
      stored: [stored(12, "2024-03-01", null, "paris"), stored(13, "2024-03-01", null, "roma")],
      exact: new Map([[0, 12]]),
      duplicates: [{ new: 1, existing: 13 }]
    })
    expect(result.facts).toEqual([
      { index: 0, action: "duplicate", edge_id: 12 },
      { index: 1, action: "duplicate", edge_id: 13 }
    ])
  })

  it("prefers an exact repeat over the model, and a duplicate over a contradiction", () => {
    const result = plan({
      newFacts: [fresh(0, "2025-01-01"), fresh(1, "2025-01-01", null, "rome")],
      stored: [
        stored(12, "2024-03-01", null, "paris"),
        stored(13, "2024-03-01", null, "roma"),
        stored(14, "2024-03-01")
      ],
      exact: new Map([[0, 12]]),
      duplicates: [{ new: 0, existing: 13 }, { new: 1, existing: 13 }],
      contradictions: [{ new: 0, existing: [14] }, { new: 1, existing: [14] }]
    })
    expect(result).toEqual({
      facts: [
        { index: 0, action: "duplicate", edge_id: 12 },
        { index: 1, action: "duplicate", edge_id: 13 }
      ],
      decisions: [],
      closes: [],
      invalidated: [],
      restarts: []
    })
  })

  it("ends an open stored fact when a repeat says it ended (beyond the seed)", () => {
    const input = { newFacts: [fresh(0, "2024-03-01", "2025-01-10", "berlin")], stored: [stored(7, "2024-03-01")] }
    const p = plan({ ...input, exact: exactRepeats(input.newFacts, input.stored) })
    expect(p.facts).toEqual([{ index: 0, action: "duplicate", edge_id: 7 }])
    expect(p.decisions).toEqual([{ kind: "repeat_end", stored_id: 7, new_index: 0, invalid_at: t("2025-01-10") }])
    // the end was stated, not imposed by a newer fact: the fact stays live, as one stored with its end
    expect(p.closes).toEqual([{ id: 7, invalid_at: t("2025-01-10"), expired_at: null }])
    expect(p.invalidated).toEqual([7])
  })

  it("makes an imposed end the fact's own when a repeat states that very end (the other order leaves it live)", () => {
    // Berlin was cut at 2024-03-01 by a newer Lisbon; a repeat now says it ended then too
    const cut = {
      ...stored(7, "2023-01-01", "2024-03-01"),
      expired_at: "2025-01-01T00:00:00.000Z",
      stated_invalid_at: null
    }
    const again = [fresh(0, "2023-01-01", "2024-03-01", "berlin")]
    const p = plan({ newFacts: again, stored: [cut], exact: exactRepeats(again, [cut]) })
    expect(p.closes).toEqual([{ id: 7, invalid_at: t("2024-03-01"), expired_at: null }])
    // it was closed already: not newly invalidated
    expect(p.invalidated).toEqual([])
    // a later end than the imposed one changes nothing
    const later = [fresh(0, "2023-01-01", "2024-06-01", "berlin")]
    expect(plan({ newFacts: later, stored: [cut], exact: exactRepeats(later, [cut]) }).closes).toEqual([])
    // nor does the same statement again (its statements said that end already)
    const said = { ...cut, stated_invalid_at: t("2024-03-01") }
    expect(plan({ newFacts: again, stored: [said], exact: exactRepeats(again, [said]) }).closes).toEqual([])
  })

  it("keeps a stored end date, and takes a period that ends before the stored fact began as a fact of its own", () => {
    const ended = [stored(7, "2024-03-01", "2024-06-01")]
    const again = [fresh(0, "2024-03-01", "2025-01-10", "berlin")]
    expect(plan({ newFacts: again, stored: ended, exact: new Map([[0, 7]]) }).closes).toEqual([])
    const early = [fresh(0, "2023-01-01", "2024-01-01", "berlin")]
    const storedLater = [stored(7, "2024-03-01")]
    expect(exactRepeats(early, storedLater)).toEqual(new Map())
    expect(plan({ newFacts: early, stored: storedLater }).facts).toEqual([
      { index: 0, action: "insert", invalid_at: t("2024-01-01"), expired_at: null }
    ])
  })

  it("ignores a contradiction with an edge that is not a candidate", () => {
    const result = plan({
      newFacts: [fresh(0, "2025-01-01")],
      stored: [],
      contradictions: [{ new: 0, existing: [77] }]
    })
    expect(result.closes).toEqual([])
    expect(result.facts).toEqual([{ index: 0, action: "insert", invalid_at: null, expired_at: null }])
  })

  it("can close older facts and be closed by a newer one at the same time", () => {
    const result = plan({
      newFacts: [fresh(0, "2022-01-01")],
      stored: [stored(12, "2020-01-01"), stored(13, "2024-01-01", null, "rome")],
      contradictions: [{ new: 0, existing: [12, 13] }]
    })
    expect(result).toEqual({
      facts: [{ index: 0, action: "insert", invalid_at: t("2024-01-01"), expired_at: NOW }],
      decisions: [
        { kind: "close", stored_id: 12, new_index: 0, invalid_at: t("2022-01-01") },
        { kind: "born_closed", new_index: 0, stored_id: 13, invalid_at: t("2024-01-01") }
      ],
      closes: [{ id: 12, invalid_at: t("2022-01-01"), expired_at: NOW }],
      invalidated: [12],
      restarts: []
    })
  })
})
