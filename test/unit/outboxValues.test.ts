/** The outbox's vector encoding: exact float64 round trip, and rows queued as JSON still read. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeValues, encodeValues } from "../../layers/sql/repositories/VectorOutbox.js"

describe("outbox vector values", () => {
  it("round-trips any vector exactly", () => {
    fc.assert(fc.property(fc.array(fc.double({ noNaN: true }), { maxLength: 64 }), (values) => {
      expect(decodeValues(encodeValues(values))).toEqual(values)
    }))
  })

  it("is about half the size of the JSON it replaced", () => {
    const vector = Array.from({ length: 1536 }, (_, i) => Math.fround(Math.sin(i) / 7))
    expect(encodeValues(vector).length).toBeLessThan(JSON.stringify(vector).length * 0.6)
  })

  it("reads a row queued as JSON by an earlier version", () => {
    expect(decodeValues("[0.5,-1,2.25]")).toEqual([0.5, -1, 2.25])
  })
})
