import { Context, Layer } from "effect"
import { DEFAULT_PRICES, type PriceTable } from "../kernel/cost.js"

/** The knobs of the remember pipeline; the server derives them from its configuration. */
export interface RememberSettingsShape {
  /** USD per million tokens, per model name (the built-in table merged with [prices]) */
  readonly prices: PriceTable
  /** candidate facts compared per remember (the spec's 50 is the default) */
  readonly maxCandidates: number
  /** similar-entity candidates: cosine similarity at least this, at most topK per endpoint */
  readonly similarityThreshold: number
  readonly similarityTopK: number
  /** similar-fact candidates: cosine similarity a stored fact needs to a new fact's description */
  readonly factSimilarityThreshold: number
  readonly chunkSize: number
  readonly chunkOverlapPercent: number
  /** chunks extracted and summarized at once; reconciliation stays in order */
  readonly chunkConcurrency: number
  /**
   * whether `web_search` can run: it needs Anthropic's server-side web search tool, so the
   * server sets it only for the Anthropic LLM with a key; otherwise a request with it is a 503
   */
  readonly webSearch: boolean
}

/**
 * The one place these defaults are written: the configuration's defaults for the same keys
 * (src/Config.ts) are read from here, and gligabao.toml and docs/CONFIGURATION.md state them.
 */
export const REMEMBER_DEFAULTS: RememberSettingsShape = {
  prices: DEFAULT_PRICES,
  maxCandidates: 50,
  similarityThreshold: 0.75,
  similarityTopK: 3,
  factSimilarityThreshold: 0.6,
  chunkSize: 1024,
  chunkOverlapPercent: 20,
  chunkConcurrency: 4,
  webSearch: false
}

export class RememberSettings
  extends Context.Tag("gligabao/RememberSettings")<RememberSettings, RememberSettingsShape>()
{
  static readonly defaults: RememberSettingsShape = REMEMBER_DEFAULTS
  static readonly layer = (overrides: Partial<RememberSettingsShape> = {}) =>
    Layer.succeed(RememberSettings, { ...RememberSettings.defaults, ...overrides })
}
