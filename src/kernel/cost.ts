/**
 * The cost of a model call (spec/contracts.md section 7): tokens x the price of the model,
 * from the `[prices]` table of gligabao.toml over a built-in table; unknown model -> 0.
 */

/** USD per million tokens; web search in USD per 1,000 searches. */
export interface ModelPrice {
  readonly input: number
  readonly output: number
  /** defaults to `input` when absent */
  readonly cache_read?: number
  /** defaults to `input` when absent */
  readonly cache_write?: number
  /** defaults to 0 when absent */
  readonly per_1k_searches?: number
}

export type PriceTable = Readonly<Record<string, ModelPrice>>

export interface TokenUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWriteTokens: number
  readonly webSearchRequests: number
}

// Anthropic bills its server-side web search at USD 10 per 1,000 searches on every model.
const haiku45 = { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25, per_1k_searches: 10 }
const sonnet4 = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75, per_1k_searches: 10 }
const opus45 = { input: 5, output: 25, cache_read: 0.5, cache_write: 6.25, per_1k_searches: 10 }
const opus4 = { input: 15, output: 75, cache_read: 1.5, cache_write: 18.75, per_1k_searches: 10 }

/** The built-in prices (USD per million tokens), for the default and common models. */
export const DEFAULT_PRICES: PriceTable = {
  // The configured default model. No published price was at hand: priced as the Haiku tier
  // (an assumption; override it in [prices] of gligabao.toml).
  "claude-haiku-5-5": haiku45,
  "claude-haiku-4-5": haiku45,
  "claude-sonnet-4-5": sonnet4,
  "claude-sonnet-4": sonnet4,
  "claude-opus-4-5": opus45,
  "claude-opus-4-1": opus4,
  "claude-opus-4": opus4,
  "claude-3-5-haiku": { input: 0.8, output: 4, cache_read: 0.08, cache_write: 1, per_1k_searches: 10 },
  "text-embedding-3-small": { input: 0.02, output: 0 },
  "text-embedding-3-large": { input: 0.13, output: 0 }
}

/**
 * The price of `model`: the exact name, else the longest table key that the name starts
 * with followed by `-` (a dated snapshot such as `claude-haiku-4-5-20251001` has the price
 * of `claude-haiku-4-5`, not of a shorter `claude-haiku-4`), else undefined.
 */
export const priceFor = (model: string, table: PriceTable): ModelPrice | undefined => {
  if (Object.hasOwn(table, model)) return table[model]
  let best: string | undefined
  for (const key of Object.keys(table)) {
    if (model.startsWith(`${key}-`) && (best === undefined || key.length > best.length)) best = key
  }
  return best === undefined ? undefined : table[best]
}

/** USD for one call; 0 for a model the table does not know. */
export const costUsd = (model: string, usage: TokenUsage, table: PriceTable): number => {
  const price = priceFor(model, table)
  if (price === undefined) return 0
  const perMillion = usage.inputTokens * price.input +
    usage.outputTokens * price.output +
    usage.cacheReadTokens * (price.cache_read ?? price.input) +
    usage.cacheWriteTokens * (price.cache_write ?? price.input)
  return perMillion / 1_000_000 + (usage.webSearchRequests * (price.per_1k_searches ?? 0)) / 1000
}

/**
 * The built-in table overridden by the configured one, field by field: `[prices.X] input = 2`
 * changes only X's input price. A model only in the overrides gets 0 for a missing
 * input or output price.
 */
export const mergePrices = (
  defaults: PriceTable,
  overrides: Readonly<Record<string, Partial<ModelPrice>>>
): PriceTable => {
  const merged: Record<string, ModelPrice> = { ...defaults }
  for (const [model, override] of Object.entries(overrides)) {
    merged[model] = { ...(merged[model] ?? { input: 0, output: 0 }), ...override }
  }
  return merged
}
