import { describe, expect, it } from "vitest"
import { vectorCache } from "../../src/pipeline/remember/embed.js"

describe("vectorCache", () => {
  it("keeps at most its capacity, dropping the oldest first; a set refreshes an entry", () => {
    const cache = vectorCache(2)
    cache.set("a", [1])
    cache.set("b", [2])
    cache.set("a", [1.5]) // a is now the newest
    cache.set("c", [3])
    expect(cache.get("b")).toBeUndefined()
    expect(cache.get("a")).toEqual([1.5])
    expect(cache.get("c")).toEqual([3])
  })
})
