/**
 * The whole memory in one layer, for applications that embed gligabao: the server's defaults
 * (SQLite with sqlite-vec, nothing embedded unless configured, images in a local directory),
 * any of which an option or a port's layer replaces.
 */
import { Layer, Option, Redacted } from "effect"
import { AppDatabaseLive } from "../src/admin/AdminDatabases.js"
import { Authentication } from "../src/auth/Authentication.js"
import { type AppConfig, defaultConfig, imageDirFor } from "../src/Config.js"
import type { StructuredOutput } from "../src/domain/Stages.js"
import { McpSettings } from "../src/mcp/settings.js"
import {
  cancelQueuedRuns,
  cancelRun,
  correctMemory,
  datasetSchemaOf,
  datasetsOf,
  deleteDatasetMemory,
  exportMemory,
  forgetArtifactMemory,
  forgetUserMemory,
  hardDeleteDatasetMemory,
  queryMemory,
  remember,
  rememberBatch,
  searchMemory,
  sessionsOf,
  setDatasetSchema
} from "../src/operations.js"
import { appLayerFor, type PortLayers } from "./App.js"

type Secret = string | Redacted.Redacted<string>

export interface GligabaoOptions {
  /** SQLite at `path` (default `gligabao.db`; `:memory:` for a throwaway one), or PostgreSQL at `url` */
  readonly database?: { readonly path: string } | { readonly url: Secret } | undefined
  readonly llm?: {
    readonly provider?: "anthropic" | "openai" | undefined
    /** without a key (and without a base URL for a local OpenAI-compatible server) remember fails with LlmUnavailable */
    readonly apiKey?: Secret | undefined
    readonly baseUrl?: string | undefined
    readonly defaultModel?: string | undefined
    readonly timeoutMs?: number | undefined
    readonly maxRetries?: number | undefined
    /** llm.structured_output: force json_schema, json_object or none; absent: automatic */
    readonly structuredOutput?: StructuredOutput | undefined
  } | undefined
  /** OpenAI-compatible embeddings; without a key or a base URL nothing is embedded */
  readonly embeddings?: {
    readonly apiKey?: Secret | undefined
    readonly baseUrl?: string | undefined
    readonly model?: string | undefined
    readonly dimensions?: number | undefined
  } | undefined
  readonly vectors?: {
    readonly store: "sqlite" | "memory"
  } | {
    readonly store: "pinecone"
    readonly apiKey: Secret
    readonly indexHost: string
    readonly namespacePrefix?: string | undefined
  } | undefined
  /** where image files go; default next to the SQLite file */
  readonly images?: { readonly directory: string } | undefined
  readonly remember?: Partial<AppConfig["remember"]> | undefined
  /** a port's own layer instead of the configured adapter */
  readonly layers?: PortLayers | undefined
}

const secret = (value: Secret | undefined): Option.Option<Redacted.Redacted<string>> =>
  value === undefined ? Option.none() : Option.some(typeof value === "string" ? Redacted.make(value) : value)

const DEFAULT_PATH = "gligabao.db"

/** The configuration these options mean, on top of the server's defaults. */
export const configFor = (options: GligabaoOptions = {}): AppConfig => {
  const d = defaultConfig
  const database = options.database === undefined || "path" in options.database
    ? { ...d.database, path: options.database?.path ?? DEFAULT_PATH, url: Option.none() }
    : { ...d.database, url: secret(options.database.url) }
  const llm = options.llm ?? {}
  const embeddings = options.embeddings ?? {}
  const vectors = options.vectors ?? { store: "sqlite" as const }
  return {
    ...d,
    llm: {
      provider: llm.provider ?? d.llm.provider,
      defaultModel: llm.defaultModel ?? d.llm.defaultModel,
      baseUrl: Option.fromNullable(llm.baseUrl),
      apiKey: secret(llm.apiKey),
      timeoutMs: llm.timeoutMs ?? d.llm.timeoutMs,
      maxRetries: llm.maxRetries ?? d.llm.maxRetries,
      structuredOutput: Option.fromNullable(llm.structuredOutput)
    },
    anthropicApiKey: llm.provider === "openai" ? Option.none() : secret(llm.apiKey),
    openaiApiKey: secret(embeddings.apiKey),
    embeddingBaseUrl: Option.fromNullable(embeddings.baseUrl),
    embeddingModel: embeddings.model ?? d.embeddingModel,
    embeddingDimensions: embeddings.dimensions ?? d.embeddingDimensions,
    vectorStore: vectors.store,
    pinecone: vectors.store === "pinecone"
      ? {
        apiKey: secret(vectors.apiKey),
        indexHost: Option.some(vectors.indexHost),
        namespacePrefix: vectors.namespacePrefix ?? ""
      }
      : d.pinecone,
    remember: { ...d.remember, ...options.remember },
    database,
    imageDir: options.images?.directory ?? imageDirFor(database.path)
  }
}

export const Gligabao = {
  /**
   * The remember manager, the read side's services (search, query, export, datasets, sessions),
   * the forget side's and the storage, composed as `gligabao serve` composes them.
   */
  layer: (options: GligabaoOptions = {}) =>
    // the HTTP doors' settings at their defaults, for GligabaoRoutes and HttpAppLive: no tokens,
    // no configured MCP user, the app's own database in the admin UI
    Layer.mergeAll(Authentication.off, McpSettings.default, AppDatabaseLive).pipe(
      Layer.provideMerge(appLayerFor(configFor(options), options.layers))
    ),
  configFor,
  /** the operations, taking requests as the HTTP API takes them (src/operations.ts) */
  remember,
  rememberBatch,
  /** docs/INGESTION.md, Cancelling */
  cancelRun,
  cancelQueuedRuns,
  search: searchMemory,
  query: queryMemory,
  exportGraph: exportMemory,
  datasets: datasetsOf,
  sessions: sessionsOf,
  deleteDataset: deleteDatasetMemory,
  /** docs/SCHEMA.md */
  datasetSchema: datasetSchemaOf,
  setDatasetSchema,
  /** docs/FORGET.md */
  hardDeleteDataset: hardDeleteDatasetMemory,
  forgetUser: forgetUserMemory,
  forgetArtifact: forgetArtifactMemory,
  /** close, reopen, delete_fact, delete_entity or merge, as MCP's `correct` tool (docs/FORGET.md) */
  correct: correctMemory
} as const
