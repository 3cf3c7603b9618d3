/** The PostgreSQL type parsers: ids and counts as numbers, real[] (embeddings) split fast. */
import { describe, expect, it } from "vitest"
import { typeParsers } from "../../layers/sql/Pg.js"

const FLOAT4_ARRAY = 1021
const INT8 = 20

describe("PostgreSQL type parsers", () => {
  const float4s = typeParsers.getTypeParser(FLOAT4_ARRAY, "text")

  it("reads a real[] of numbers, in any notation PostgreSQL prints", () => {
    expect(float4s("{1,2.5,-3e-05,1.5E+10,0}")).toEqual([1, 2.5, -3e-5, 1.5e10, 0])
    expect(float4s("{}")).toEqual([])
  })

  it("leaves NULLs, NaN and nested arrays to node-postgres' own parser", () => {
    expect(float4s("{NULL,1}")).toEqual([null, 1])
    expect(float4s("{NaN,Infinity}")).toEqual([NaN, Infinity])
    expect(float4s("{{1,2},{3,4}}")).toEqual([[1, 2], [3, 4]])
  })

  it("reads int8 as a number", () => {
    expect(typeParsers.getTypeParser(INT8, "text")("42")).toBe(42)
  })
})
