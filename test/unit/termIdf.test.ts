/**
 * The IDF SQLite's full-text match scores a term with (layers/sql/FullText.ts): FTS5's, with a
 * floor for words in a large share of a dataset's rows. (The factor on bm25 that once turned
 * one into the other is gone: the IDF is written into the score directly.)
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { fts5Idf, idfsOf, termIdf } from "../../layers/sql/FullText.js"

/**
 * The IDF a search scores each term with over FTS5's (the factor bm25 was once scaled by);
 * undefined when every factor is 1
 */
const idfFactors = (rows: number, counts: ReadonlyArray<number>): ReadonlyArray<number> | undefined => {
  const total = Math.max(rows, ...counts)
  const factors = idfsOf(rows, counts).map((idf, i) => idf / fts5Idf(total, counts[i]!))
  return factors.every((f) => f === 1) ? undefined : factors
}

describe("termIdf", () => {
  it("is FTS5's IDF for a word in fewer than about 38% of the rows, and no factor is needed", () => {
    expect(termIdf(1000, 10)).toBe(fts5Idf(1000, 10))
    expect(termIdf(1000, 370)).toBe(fts5Idf(1000, 370))
    expect(idfFactors(1000, [10, 200, 370])).toBeUndefined()
  })

  it("keeps a word in most rows counting: Alice in four of Alice's seven facts", () => {
    // FTS5 gives "alice" (4 of 7) nothing, "live" (3 of 7) 0.25
    expect(fts5Idf(7, 4)).toBe(1e-6)
    expect(termIdf(7, 4)).toBeGreaterThan(0.1)
    expect(termIdf(7, 4)).toBeLessThan(termIdf(7, 3))
    expect(idfFactors(7, [4, 3])![0]).toBeGreaterThan(1e4)
    // beside a rare word, only the common one's factor differs from 1
    const factors = idfFactors(20, [12, 3])!
    expect(factors[0]).toBeGreaterThan(1e4)
    expect(factors[1]).toBe(1)
  })

  it("a word in nearly every row stays at FTS5's nothing (no statement per term for it)", () => {
    expect(termIdf(100_000, 99_000)).toBe(1e-6)
    expect(idfFactors(100_000, [99_000, 10])).toBeUndefined()
  })

  it("property: never below FTS5's, positive, and never rising as the word gets commoner", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (rows, share) => {
        const n = Math.floor(share * rows)
        const idf = termIdf(rows, n)
        expect(idf).toBeGreaterThanOrEqual(fts5Idf(rows, n))
        expect(idf).toBeGreaterThan(0)
        if (n + 1 <= rows) expect(termIdf(rows, n + 1)).toBeLessThanOrEqual(idf)
      })
    )
  })

  it("a count above the row count (a lagging record) is read as the row count", () => {
    expect(idfFactors(3, [5, 1])).toEqual(idfFactors(5, [5, 1]))
  })
})
