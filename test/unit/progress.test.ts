import { describe, expect, it } from "vitest"
import { progressBar } from "../../src/cli/progress.js"

describe("progressBar", () => {
  it("fills in proportion and pads the count", () => {
    expect(progressBar(0, 20, 10)).toBe("[..........]  0/20 chunks")
    expect(progressBar(10, 20, 10)).toBe("[#####.....] 10/20 chunks")
    expect(progressBar(20, 20, 10)).toBe("[##########] 20/20 chunks")
  })
  it("never overflows", () => {
    expect(progressBar(25, 20, 10)).toBe("[##########] 25/20 chunks")
    expect(progressBar(0, 0, 4)).toBe("[....] 0/0 chunks")
  })
})
