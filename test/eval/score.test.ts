/**
 * The eval scorer on hand-made graphs whose precision and recall are known: the fuzzy name and
 * relation rules, one-to-one matching (a fact stored twice counts once), live/closed state and
 * dates, sessions, and the micro-average over cases.
 */
import { describe, expect, it } from "vitest"
import {
  aggregateScores,
  type Expected,
  type GraphSnapshot,
  nameMatches,
  normalizeName,
  relationMatches,
  scoreCase
} from "../../src/eval/score.js"

const CLOSED_AT = "2025-01-15T00:00:00.000Z"

const edge = (
  id: number,
  source: string,
  relation: string,
  target: string,
  more: Partial<GraphSnapshot["edges"][number]> = {}
): GraphSnapshot["edges"][number] => ({
  id,
  source,
  relation,
  target,
  valid_at: "2024-03-01T00:00:00.000Z",
  invalid_at: null,
  expired_at: null,
  ...more
})

const entity = (id: number, name: string, type = "other", session_ids?: ReadonlyArray<string>) => ({
  id,
  name,
  type,
  ...(session_ids === undefined ? {} : { session_ids })
})

const EXPECTED: Expected = {
  entities: [{ name: "Alice Smith", aliases: ["Ally"] }, { name: "Berlin" }, { name: "Paris" }, { name: "Acme Corp" }],
  live: [
    { source: "Alice Smith", relation: ["lives in", "resides in"], target: "Paris", valid_at: "2025-01" },
    { source: "Alice Smith", relation: "works at", target: "Acme Corp" }
  ],
  closed: [{ source: "Alice Smith", relation: "lives in", target: "Berlin", invalid_at: "2025-01-15" }]
}

describe("fuzzy matching", () => {
  it("normalizes names: case, accents, punctuation, a leading 'the'", () => {
    expect(normalizeName("  The Éclair-Café!  ")).toBe("eclair cafe")
    expect(normalizeName("ACME   Corp.")).toBe("acme corp")
  })

  it("matches a name when all the words of one are words of the other", () => {
    expect(nameMatches(["Alice"], "Alice Smith")).toBe(true)
    expect(nameMatches(["Alice Smith"], "alice")).toBe(true)
    expect(nameMatches(["Alice Smith"], "Alice Jones")).toBe(false)
    expect(nameMatches(["Bob"], "Alice")).toBe(false)
    expect(nameMatches(["Robert Miller", "Bob Miller"], "Bob Miller")).toBe(true)
  })

  it("matches relations by their content words, stemmed", () => {
    expect(relationMatches(["lives in"], "lived_in")).toBe(true)
    expect(relationMatches(["lives in"], "living_in")).toBe(true)
    expect(relationMatches(["lives in"], "moved_to")).toBe(false)
    expect(relationMatches(["is CEO of"], "ceo")).toBe(true)
    expect(relationMatches(["works at"], "works_for")).toBe(true)
    expect(relationMatches(["married to"], "marries")).toBe(true)
    expect(relationMatches(["knows"], "works_at")).toBe(false)
    expect(relationMatches(["lives in", "moved to"], "moved_to")).toBe(true)
  })
})

describe("scoreCase", () => {
  it("a perfect graph scores 1 everywhere", () => {
    const s = scoreCase(EXPECTED, {
      entities: [entity(1, "Alice Smith", "person"), entity(2, "Berlin"), entity(3, "Paris"), entity(4, "Acme Corp")],
      edges: [
        edge(1, "Alice Smith", "lives_in", "Berlin", { invalid_at: CLOSED_AT, expired_at: "2025-01-20T00:00:00.000Z" }),
        edge(2, "Alice Smith", "lives_in", "Paris", { valid_at: CLOSED_AT }),
        edge(3, "Alice Smith", "works_at", "Acme Corp")
      ]
    })
    expect(s.entities).toMatchObject({ precision: 1, recall: 1, f1: 1, missing: [], unexpected: [] })
    expect(s.facts).toMatchObject({ precision: 1, recall: 1, missing: [], unexpected: [] })
    expect(s.invalidation).toMatchObject({ checked: 3, correct: 3, accuracy: 1 })
    expect(s.dates).toMatchObject({ checked: 1, correct: 1 })
  })

  it("counts what is missing, extra and stored twice", () => {
    const s = scoreCase(EXPECTED, {
      // Acme is missing, Bob is extra; "Ally" is Alice by her alias
      entities: [entity(1, "Ally", "person"), entity(2, "Berlin"), entity(3, "Paris"), entity(4, "Bob")],
      edges: [
        edge(1, "Ally", "lives_in", "Berlin", { invalid_at: CLOSED_AT, expired_at: CLOSED_AT }),
        edge(2, "Alice", "resides_in", "Paris", { valid_at: CLOSED_AT }),
        // the same fact again (a paraphrase that was not merged) and an unexpected fact
        edge(3, "Alice Smith", "lives_in", "Paris", { valid_at: CLOSED_AT }),
        edge(4, "Alice Smith", "knows", "Bob")
      ]
    })
    expect(s.entities).toMatchObject({ expected: 4, actual: 4, matched: 3, precision: 0.75, recall: 0.75 })
    expect(s.entities.missing).toEqual(["Acme Corp"])
    expect(s.entities.unexpected).toEqual(["Bob (other)"])
    expect(s.facts).toMatchObject({ expected: 3, actual: 4, matched: 2, precision: 0.5 })
    expect(s.facts.recall).toBeCloseTo(2 / 3, 12)
    expect(s.facts.f1).toBeCloseTo((2 * 0.5 * (2 / 3)) / (0.5 + 2 / 3), 12)
    expect(s.facts.missing).toEqual(["Alice Smith -works at-> Acme Corp"])
    expect(s.facts.unexpected).toEqual(["Alice Smith -lives_in-> Paris", "Alice Smith -knows-> Bob"])
  })

  it("checks the state: a fact that should be closed but is live, or closed at another time, is wrong", () => {
    const base = [entity(1, "Alice Smith"), entity(2, "Berlin"), entity(3, "Paris"), entity(4, "Acme Corp")]
    const live = scoreCase(EXPECTED, {
      entities: base,
      edges: [
        edge(1, "Alice Smith", "lives_in", "Berlin"),
        edge(2, "Alice Smith", "lives_in", "Paris", { valid_at: CLOSED_AT })
      ]
    })
    expect(live.facts.matched).toBe(2)
    expect(live.invalidation).toMatchObject({ checked: 2, correct: 1, accuracy: 0.5 })
    expect(live.invalidation.wrong[0]).toMatch(/Berlin: expected closed, stored live/)
    const lateClose = scoreCase(EXPECTED, {
      entities: base,
      edges: [
        edge(1, "Alice Smith", "lives_in", "Berlin", { invalid_at: "2025-03-01T00:00:00.000Z", expired_at: CLOSED_AT })
      ]
    })
    expect(lateClose.invalidation).toMatchObject({ checked: 1, correct: 0 })
    expect(lateClose.invalidation.wrong[0]).toMatch(/expected closed at 2025-01-15, stored 2025-03-01/)
  })

  it("prefers the stored copy in the expected state, and checks valid_at by prefix", () => {
    const s = scoreCase(EXPECTED, {
      entities: [],
      edges: [
        edge(1, "Alice Smith", "lives_in", "Berlin"),
        edge(2, "Alice Smith", "lives_in", "Berlin", { invalid_at: CLOSED_AT, expired_at: CLOSED_AT }),
        edge(3, "Alice Smith", "lives_in", "Paris", { valid_at: "2024-12-31T00:00:00.000Z" })
      ]
    })
    expect(s.invalidation).toMatchObject({ checked: 2, correct: 2 })
    expect(s.facts.unexpected).toEqual(["Alice Smith -lives_in-> Berlin"])
    expect(s.dates).toMatchObject({ checked: 1, correct: 0 })
    expect(s.entities).toMatchObject({ actual: 0, precision: 1, recall: 0, f1: 0 })
  })

  it("matches a symmetric fact in either direction, and only that one", () => {
    const expected: Expected = {
      entities: [],
      live: [{ source: "Alice", relation: "knows", target: "Bob", symmetric: true }, {
        source: "Alice",
        relation: "manages",
        target: "Carol"
      }],
      closed: []
    }
    const s = scoreCase(expected, {
      entities: [],
      edges: [edge(1, "Bob", "knows", "Alice"), edge(2, "Carol", "manages", "Alice")]
    })
    expect(s.facts).toMatchObject({ matched: 1, missing: ["Alice -manages-> Carol"] })
  })

  it("checks sessions exactly, on entities and facts", () => {
    const expected: Expected = {
      entities: [{ name: "Lena", sessions: ["a", "b"] }, { name: "Club", sessions: ["a"] }],
      live: [{ source: "Lena", relation: "plays in", target: "Club", sessions: ["a", "b"] }],
      closed: []
    }
    const s = scoreCase(expected, {
      entities: [entity(1, "Lena", "person", ["b", "a"]), entity(2, "Club", "organization", ["a", "b"])],
      edges: [edge(1, "Lena", "plays_in", "Club", { session_ids: ["a"] })]
    })
    expect(s.sessions).toMatchObject({ checked: 3, correct: 1 })
    expect(s.sessions.wrong).toEqual([
      "Lena -plays in-> Club: sessions [a], expected [a,b]",
      "Club: sessions [a,b], expected [a]"
    ])
  })

  it("an empty expectation and an empty graph score 1", () => {
    const s = scoreCase({ entities: [], live: [], closed: [] }, { entities: [], edges: [] })
    expect([s.entities.precision, s.entities.recall, s.facts.f1, s.invalidation.accuracy]).toEqual([1, 1, 1, 1])
  })
})

describe("aggregateScores", () => {
  it("micro-averages: counts summed over cases, then divided", () => {
    const one = scoreCase(EXPECTED, {
      entities: [entity(1, "Alice Smith"), entity(2, "Berlin")],
      edges: [edge(1, "Alice Smith", "works_at", "Acme Corp")]
    })
    const two = scoreCase({
      entities: [{ name: "Bob" }],
      live: [{ source: "Bob", relation: "knows", target: "Eve" }],
      closed: []
    }, {
      entities: [entity(1, "Bob"), entity(2, "Eve"), entity(3, "Mallory")],
      edges: [edge(1, "Bob", "knows", "Eve"), edge(2, "Bob", "knows", "Mallory")]
    })
    const total = aggregateScores([one, two])
    // entities: matched 2 + 1 of expected 4 + 1, stored 2 + 3
    expect(total.entities).toMatchObject({ expected: 5, actual: 5, matched: 3, precision: 0.6, recall: 0.6 })
    // facts: matched 1 + 1 of expected 3 + 1, stored 1 + 2
    expect(total.facts).toMatchObject({ expected: 4, actual: 3, matched: 2, recall: 0.5 })
    expect(total.facts.precision).toBeCloseTo(2 / 3, 12)
    expect(total.invalidation).toMatchObject({ checked: 2, correct: 2 })
  })
})
