import { describe, expect, it } from "vitest"
import {
  costUsd,
  DEFAULT_PRICES,
  mergePrices,
  priceFor,
  type PriceTable,
  type TokenUsage
} from "../../src/kernel/cost.js"

const usage = (partial: Partial<TokenUsage>): TokenUsage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  webSearchRequests: 0,
  ...partial
})

describe("DEFAULT_PRICES", () => {
  it("prices the default model as the Haiku tier, with web search", () => {
    expect(DEFAULT_PRICES["claude-haiku-5-5"]).toEqual({
      input: 1,
      output: 5,
      cache_read: 0.1,
      cache_write: 1.25,
      per_1k_searches: 10
    })
  })

  it("has the built-in models at their per-million prices", () => {
    const pick = (model: string) => {
      const p = DEFAULT_PRICES[model]!
      return [p.input, p.output, p.cache_read, p.cache_write]
    }
    expect(pick("claude-haiku-4-5")).toEqual([1, 5, 0.1, 1.25])
    expect(pick("claude-sonnet-4-5")).toEqual([3, 15, 0.3, 3.75])
    expect(pick("claude-sonnet-4")).toEqual([3, 15, 0.3, 3.75])
    expect(pick("claude-opus-4-5")).toEqual([5, 25, 0.5, 6.25])
    expect(pick("claude-opus-4-1")).toEqual([15, 75, 1.5, 18.75])
    expect(pick("claude-opus-4")).toEqual([15, 75, 1.5, 18.75])
    expect(pick("claude-3-5-haiku")).toEqual([0.8, 4, 0.08, 1])
    expect(DEFAULT_PRICES["text-embedding-3-small"]!.input).toBe(0.02)
    expect(DEFAULT_PRICES["text-embedding-3-large"]!.input).toBe(0.13)
  })
})

describe("priceFor", () => {
  it("finds an exact name", () => {
    expect(priceFor("claude-sonnet-4", DEFAULT_PRICES)).toBe(DEFAULT_PRICES["claude-sonnet-4"])
  })

  it("finds a dated snapshot by the longest matching prefix", () => {
    expect(priceFor("claude-haiku-4-5-20251001", DEFAULT_PRICES)).toBe(DEFAULT_PRICES["claude-haiku-4-5"])
    expect(priceFor("claude-sonnet-4-5-20250929", DEFAULT_PRICES)).toBe(DEFAULT_PRICES["claude-sonnet-4-5"])
    expect(priceFor("claude-sonnet-4-20250514", DEFAULT_PRICES)).toBe(DEFAULT_PRICES["claude-sonnet-4"])
    expect(priceFor("claude-opus-4-1-20250805", DEFAULT_PRICES)).toBe(DEFAULT_PRICES["claude-opus-4-1"])
    expect(priceFor("claude-3-5-haiku-20241022", DEFAULT_PRICES)).toBe(DEFAULT_PRICES["claude-3-5-haiku"])
  })

  it("needs a `-` after the prefix, and knows nothing else", () => {
    expect(priceFor("claude-sonnet-45", DEFAULT_PRICES)).toBeUndefined()
    expect(priceFor("gpt-4o", DEFAULT_PRICES)).toBeUndefined()
    expect(priceFor("", DEFAULT_PRICES)).toBeUndefined()
    expect(priceFor("toString", DEFAULT_PRICES)).toBeUndefined()
  })
})

describe("costUsd", () => {
  it("prices input and output tokens per million", () => {
    expect(costUsd("claude-sonnet-4-5", usage({ inputTokens: 1_000_000, outputTokens: 200_000 }), DEFAULT_PRICES))
      .toBeCloseTo(3 + 3, 10)
  })

  it("prices cache reads and writes at their own rates", () => {
    const cost = costUsd(
      "claude-haiku-4-5-20251001",
      usage({ cacheReadTokens: 1_000_000, cacheWriteTokens: 1_000_000 }),
      DEFAULT_PRICES
    )
    expect(cost).toBeCloseTo(0.1 + 1.25, 10)
  })

  it("prices cache tokens at the input rate when the table has no cache price", () => {
    const table: PriceTable = { m: { input: 2, output: 8 } }
    expect(costUsd("m", usage({ cacheReadTokens: 500_000, cacheWriteTokens: 500_000 }), table)).toBeCloseTo(2, 10)
  })

  it("prices web search per 1,000 searches", () => {
    expect(costUsd("claude-haiku-5-5", usage({ webSearchRequests: 3 }), DEFAULT_PRICES)).toBeCloseTo(0.03, 10)
    expect(costUsd("m", usage({ webSearchRequests: 3 }), { m: { input: 1, output: 1 } })).toBe(0)
  })

  it("adds everything up", () => {
    const cost = costUsd(
      "claude-haiku-5-5",
      usage({
        inputTokens: 1500,
        outputTokens: 120,
        cacheReadTokens: 1000,
        cacheWriteTokens: 2000,
        webSearchRequests: 1
      }),
      DEFAULT_PRICES
    )
    expect(cost).toBeCloseTo((1500 * 1 + 120 * 5 + 1000 * 0.1 + 2000 * 1.25) / 1e6 + 0.01, 12)
  })

  it("is 0 for an unknown model", () => {
    expect(costUsd("llama3.1:8b", usage({ inputTokens: 1_000_000, outputTokens: 1_000_000 }), DEFAULT_PRICES)).toBe(0)
  })

  it("prices embeddings by input tokens", () => {
    expect(costUsd("text-embedding-3-small", usage({ inputTokens: 2_000_000 }), DEFAULT_PRICES)).toBeCloseTo(0.04, 10)
  })
})

describe("mergePrices", () => {
  it("overrides a built-in model field by field and keeps the rest", () => {
    const merged = mergePrices(DEFAULT_PRICES, { "claude-haiku-5-5": { input: 2 } })
    expect(merged["claude-haiku-5-5"]).toEqual({
      input: 2,
      output: 5,
      cache_read: 0.1,
      cache_write: 1.25,
      per_1k_searches: 10
    })
    expect(merged["claude-sonnet-4"]).toEqual(DEFAULT_PRICES["claude-sonnet-4"])
  })

  it("adds new models, with 0 for a missing input or output price", () => {
    const merged = mergePrices(DEFAULT_PRICES, { "llama3.1": { input: 0.1, output: 0.2 }, "gpt-x": { output: 4 } })
    expect(merged["llama3.1"]).toEqual({ input: 0.1, output: 0.2 })
    expect(merged["gpt-x"]).toEqual({ input: 0, output: 4 })
    expect(costUsd("llama3.1", usage({ inputTokens: 1_000_000 }), merged)).toBeCloseTo(0.1, 10)
  })

  it("does not modify the defaults", () => {
    const before = structuredClone(DEFAULT_PRICES)
    mergePrices(DEFAULT_PRICES, { "claude-haiku-5-5": { input: 9 }, other: { input: 1, output: 1 } })
    expect(DEFAULT_PRICES).toEqual(before)
  })

  it("makes an override win over a shorter built-in prefix", () => {
    const merged = mergePrices(DEFAULT_PRICES, { "claude-sonnet-4-5-20250929": { input: 1, output: 1 } })
    expect(priceFor("claude-sonnet-4-5-20250929", merged)).toEqual({ input: 1, output: 1 })
  })
})
