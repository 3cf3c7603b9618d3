import type { FileSystem } from "@effect/platform"
import { Context, Effect, Layer, Option, type Redacted } from "effect"
import { ConfigInvalid, invalidValue } from "./config/ConfigInvalid.js"
import { DEFAULT_DB_PATH, defaultLocation } from "./config/dataFolder.js"
import {
  keys,
  knownKeys,
  type LlmProvider,
  type LogFormat,
  type LogLevelName,
  type VectorStoreKind
} from "./config/keys.js"
import {
  checkKnownKeys,
  type ConfigFlags,
  fileSource,
  isTable,
  type KeyDef,
  readConfigFile,
  resolveKey,
  resolveSecret,
  type Sources
} from "./config/sources.js"
import {
  type AuthToken,
  parseAuthTokens,
  parsePrices,
  parseTimeseriesProviders,
  type TimeseriesProviderConfig
} from "./config/tables.js"
import type { StructuredOutput } from "./domain/Stages.js"
import { DEFAULT_PRICES, mergePrices, type PriceTable } from "./kernel/cost.js"
import { REMEMBER_DEFAULTS } from "./pipeline/Settings.js"

/** The CLI flags that override the file and the environment (defined beside the sources they feed). */
export type { ConfigFlags } from "./config/sources.js"

export { ConfigInvalid } from "./config/ConfigInvalid.js"
export type { LlmProvider, LogFormat, LogLevelName, VectorStoreKind } from "./config/keys.js"
export type { AuthToken, TimeseriesProviderConfig } from "./config/tables.js"

/**
 * The server's configuration, read once at startup from gligabao.toml, then the
 * environment, then CLI flags (later ones win); see docs/CONFIGURATION.md. Field names
 * mirror the TOML keys in camelCase. Secrets are `Redacted`: log `describeConfig(config)`,
 * never the config itself.
 */

export interface LlmConfig {
  readonly provider: LlmProvider
  readonly defaultModel: string
  readonly baseUrl: Option.Option<string>
  /** llm.api_key, else the provider's own key (anthropic_api_key or openai_api_key) */
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly timeoutMs: number
  readonly maxRetries: number
  /** llm.structured_output: the forced structured-output mode; none = automatic */
  readonly structuredOutput: Option.Option<StructuredOutput>
}

export interface PineconeConfig {
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  /** always with a scheme (https:// is added to a bare host) */
  readonly indexHost: Option.Option<string>
  readonly namespacePrefix: string
}

export interface GeoConfig {
  readonly enabled: boolean
  readonly baseUrl: string
  readonly userAgent: string
  readonly requestsPerSecond: number
}

export interface AppConfig {
  /** the file that was read; none when the default file does not exist */
  readonly configFile: Option.Option<string>
  readonly anthropicApiKey: Option.Option<Redacted.Redacted<string>>
  readonly openaiApiKey: Option.Option<Redacted.Redacted<string>>
  readonly llm: LlmConfig
  readonly embeddingModel: string
  readonly embeddingDimensions: number
  readonly embeddingBaseUrl: Option.Option<string>
  /** `chromem` in the file is normalized to `sqlite` */
  readonly vectorStore: VectorStoreKind
  readonly pinecone: PineconeConfig
  readonly chunkSize: number
  readonly chunkOverlapPercent: number
  /** chunks of one document extracted and summarized at once */
  readonly chunkConcurrency: number
  readonly geo: GeoConfig
  readonly jevUrl: string
  readonly jevApiKey: Option.Option<Redacted.Redacted<string>>
  /** DEFAULT_PRICES merged with the file's [prices] */
  readonly prices: PriceTable
  readonly timeseries: { readonly providers: ReadonlyArray<TimeseriesProviderConfig> }
  readonly remember: {
    readonly concurrency: number
    /** times a run is started before a crash or a transient failure fails it for good (docs/INGESTION.md) */
    readonly maxAttempts: number
    /** the wait before a run that failed on a transient cause runs again, doubled each time */
    readonly retryDelayMs: number
    /** runs of one dataset whose extraction runs ahead of their in-order store (docs/INGESTION.md) */
    readonly lookahead: number
    /** how long an Idempotency-Key names its run (at least 24 hours) */
    readonly idempotencyTtlHours: number
    readonly maxCandidates: number
    /** similar-entity candidates: cosine similarity at least this, at most topK per endpoint */
    readonly similarityThreshold: number
    readonly similarityTopK: number
    /** similar-fact candidates: cosine similarity a stored fact needs to a new fact's description */
    readonly factSimilarityThreshold: number
  }
  readonly server: {
    readonly host: string
    readonly port: number
    /** with authentication off, the Host names served besides the loopback ones */
    readonly allowedHosts: ReadonlyArray<string>
    /** the browser origins accepted besides the server's own */
    readonly allowedOrigins: ReadonlyArray<string>
    /** the browser origins that get CORS headers */
    readonly corsOrigins: ReadonlyArray<string>
  }
  /** the user MCP tools act for when authentication is off; none: a `user_id` argument (docs/MCP.md) */
  readonly mcp: {
    readonly userId: Option.Option<string>
    /** how long MCP's remember waits for its run before it answers the run id to poll */
    readonly rememberWaitMs: number
  }
  /** PostgreSQL when `url` is set, else SQLite at `path` */
  readonly database: {
    readonly url: Option.Option<Redacted.Redacted<string>>
    readonly path: string
    /** SQLite's PRAGMA mmap_size in bytes (0: off) */
    readonly mmapSize: number
  }
  readonly imageDir: string
  /**
   * Files of the old default location (`build/`) found when no source sets database.path: in use
   * when nothing of the data folder exists yet, else left beside it (src/config/dataFolder.ts)
   */
  readonly oldDataFiles: ReadonlyArray<string>
  /** no tokens: authentication is off */
  readonly auth: { readonly tokens: ReadonlyArray<AuthToken> }
  readonly logLevel: LogLevelName
  readonly logFormat: LogFormat
  /** traces and metrics over OTLP/HTTP when `otlpEndpoint` is set (docs/DEPLOY.md) */
  readonly telemetry: {
    /** the collector's base URL; `/v1/traces` and `/v1/metrics` are appended */
    readonly otlpEndpoint: Option.Option<string>
    readonly serviceName: string
    readonly exportIntervalMs: number
  }
}

export class AppConfigTag extends Context.Tag("gligabao/AppConfig")<AppConfigTag, AppConfig>() {}

/** Kept equal to package.json's version (a test checks it). */
export const GLIGABAO_VERSION = "0.2.0"

export const DEFAULT_CONFIG_PATH = "gligabao.toml"

/** `data/gligabao.db` -> `data/gligabao.images`: images sit next to the database they belong to. */
export const imageDirFor = (databasePath: string): string =>
  `${databasePath.replace(/(?<=[^/\\])\.[^./\\]*$/, "")}.images`

export const defaultConfig: AppConfig = {
  configFile: Option.none(),
  anthropicApiKey: Option.none(),
  openaiApiKey: Option.none(),
  llm: {
    provider: "anthropic",
    defaultModel: "claude-haiku-5-5",
    baseUrl: Option.none(),
    apiKey: Option.none(),
    timeoutMs: 120_000,
    maxRetries: 3,
    structuredOutput: Option.none()
  },
  embeddingModel: "text-embedding-3-small",
  embeddingDimensions: 1536,
  embeddingBaseUrl: Option.none(),
  vectorStore: "sqlite",
  pinecone: { apiKey: Option.none(), indexHost: Option.none(), namespacePrefix: "" },
  // the pipeline's knobs default to the pipeline's own defaults (src/pipeline/Settings.ts)
  chunkSize: REMEMBER_DEFAULTS.chunkSize,
  chunkOverlapPercent: REMEMBER_DEFAULTS.chunkOverlapPercent,
  chunkConcurrency: REMEMBER_DEFAULTS.chunkConcurrency,
  geo: {
    enabled: false,
    baseUrl: "https://nominatim.openstreetmap.org",
    // Nominatim's policy wants a User-Agent that identifies the operator; this one does not
    userAgent: `gligabao/${GLIGABAO_VERSION} (+https://example.invalid/contact)`,
    requestsPerSecond: 1
  },
  jevUrl: "https://api.typesafe.ai",
  jevApiKey: Option.none(),
  prices: REMEMBER_DEFAULTS.prices,
  timeseries: { providers: [] },
  remember: {
    concurrency: 16,
    maxAttempts: 3,
    retryDelayMs: 1000,
    lookahead: 4,
    idempotencyTtlHours: 24,
    maxCandidates: REMEMBER_DEFAULTS.maxCandidates,
    similarityThreshold: REMEMBER_DEFAULTS.similarityThreshold,
    similarityTopK: REMEMBER_DEFAULTS.similarityTopK,
    factSimilarityThreshold: REMEMBER_DEFAULTS.factSimilarityThreshold
  },
  server: { host: "127.0.0.1", port: 8080, allowedHosts: [], allowedOrigins: [], corsOrigins: [] },
  mcp: { userId: Option.none(), rememberWaitMs: 15_000 },
  database: { url: Option.none(), path: DEFAULT_DB_PATH, mmapSize: 0 },
  imageDir: imageDirFor(DEFAULT_DB_PATH),
  oldDataFiles: [],
  auth: { tokens: [] },
  logLevel: "info",
  logFormat: "pretty",
  telemetry: { otlpEndpoint: Option.none(), serviceName: "gligabao", exportIntervalMs: 5000 }
}

export interface LoadOptions {
  /** the file read when neither --config nor GLIGABAO_CONFIG names one (default `gligabao.toml`) */
  readonly defaultPath?: string
  /** where the default database location is looked for (default: the process's working directory) */
  readonly workingDirectory?: string
}

/**
 * Reads the configuration: the file, then `env` (the CLI passes process.env; src/ never
 * reads it), then `flags`. Fails with ConfigInvalid naming the key and where its value came from.
 */
export const loadConfig = (
  flags: ConfigFlags,
  env: Readonly<Record<string, string | undefined>>,
  options: LoadOptions = {}
): Effect.Effect<AppConfig, ConfigInvalid, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const file = yield* readConfigFile(flags, env, options.defaultPath ?? DEFAULT_CONFIG_PATH)
    if (file !== undefined) {
      yield* checkKnownKeys(file, knownKeys)
      const geo = file.doc["geo"]
      if (geo !== undefined && typeof geo !== "boolean" && !isTable(geo)) {
        return yield* Effect.fail(invalidValue("geo", geo, fileSource(file), "true, false or a [geo] table"))
      }
    }
    // a CLI boolean flag reads false when absent: only an explicit --geo may override
    const sources: Sources = { file, env, flags: flags.geo === true ? flags : { ...flags, geo: undefined } }
    const d = defaultConfig
    const get = <A>(def: KeyDef<A>, fallback: A) =>
      resolveKey(sources, def).pipe(Effect.map(Option.getOrElse(() => fallback)))
    const optional = <A>(def: KeyDef<A>) => resolveKey(sources, def)
    const secret = (def: KeyDef<string>) => resolveSecret(sources, def)

    const anthropicApiKey = yield* secret(keys.anthropicApiKey)
    const openaiApiKey = yield* secret(keys.openaiApiKey)
    const provider = yield* get(keys.llmProvider, d.llm.provider)
    const llmApiKey = yield* secret(keys.llmApiKey)
    const llm: LlmConfig = {
      provider,
      defaultModel: yield* get(keys.llmDefaultModel, d.llm.defaultModel),
      baseUrl: yield* optional(keys.llmBaseUrl(provider)),
      apiKey: Option.orElse(llmApiKey, () => (provider === "anthropic" ? anthropicApiKey : openaiApiKey)),
      timeoutMs: yield* get(keys.llmTimeoutMs, d.llm.timeoutMs),
      maxRetries: yield* get(keys.llmMaxRetries, d.llm.maxRetries),
      structuredOutput: yield* optional(keys.llmStructuredOutput)
    }

    const databaseUrl = yield* secret(keys.databaseUrl)
    // with the graph in PostgreSQL, the vectors go in the same database unless told otherwise
    const vectorStore = yield* get(keys.vectorStore, Option.isSome(databaseUrl) ? "postgres" : d.vectorStore)
    if (vectorStore === "postgres" && Option.isNone(databaseUrl)) {
      return yield* Effect.fail(
        new ConfigInvalid({
          message:
            `invalid config: vector_store is "postgres" but database.url (or DATABASE_URL) is not set: the vectors go in the graph's PostgreSQL database`,
          key: "database.url",
          source: "vector_store"
        })
      )
    }
    const pinecone: PineconeConfig = {
      apiKey: yield* secret(keys.pineconeApiKey),
      indexHost: yield* optional(keys.pineconeIndexHost),
      namespacePrefix: yield* get(keys.pineconeNamespacePrefix, d.pinecone.namespacePrefix)
    }
    if (vectorStore === "pinecone") yield* requirePinecone(pinecone)

    // no source names the database: the data folder, or the old default location while only it exists
    const location = yield* Option.match(yield* optional(keys.databasePath), {
      onSome: (path) => Effect.succeed({ path, oldFiles: [] }),
      onNone: () => defaultLocation(options.workingDirectory)
    })
    const databasePath = location.path
    const config: AppConfig = {
      configFile: Option.fromNullable(file?.path),
      anthropicApiKey,
      openaiApiKey,
      llm,
      embeddingModel: yield* get(keys.embeddingModel, d.embeddingModel),
      embeddingDimensions: yield* get(keys.embeddingDimensions, d.embeddingDimensions),
      embeddingBaseUrl: yield* optional(keys.embeddingBaseUrl),
      vectorStore,
      pinecone,
      chunkSize: yield* get(keys.chunkSize, d.chunkSize),
      chunkOverlapPercent: yield* get(keys.chunkOverlapPercent, d.chunkOverlapPercent),
      chunkConcurrency: yield* get(keys.chunkConcurrency, d.chunkConcurrency),
      geo: {
        enabled: yield* get(keys.geoEnabled, d.geo.enabled),
        baseUrl: yield* get(keys.geoBaseUrl, d.geo.baseUrl),
        userAgent: yield* get(keys.geoUserAgent, d.geo.userAgent),
        requestsPerSecond: yield* get(keys.geoRequestsPerSecond, d.geo.requestsPerSecond)
      },
      jevUrl: yield* get(keys.jevUrl, d.jevUrl),
      jevApiKey: yield* secret(keys.jevApiKey),
      prices: mergePrices(DEFAULT_PRICES, yield* parsePrices(sources)),
      timeseries: { providers: yield* parseTimeseriesProviders(sources) },
      remember: {
        concurrency: yield* get(keys.rememberConcurrency, d.remember.concurrency),
        maxAttempts: yield* get(keys.rememberMaxAttempts, d.remember.maxAttempts),
        retryDelayMs: yield* get(keys.rememberRetryDelayMs, d.remember.retryDelayMs),
        lookahead: yield* get(keys.rememberLookahead, d.remember.lookahead),
        idempotencyTtlHours: yield* get(keys.rememberIdempotencyTtlHours, d.remember.idempotencyTtlHours),
        maxCandidates: yield* get(keys.rememberMaxCandidates, d.remember.maxCandidates),
        similarityThreshold: yield* get(keys.rememberSimilarityThreshold, d.remember.similarityThreshold),
        similarityTopK: yield* get(keys.rememberSimilarityTopK, d.remember.similarityTopK),
        factSimilarityThreshold: yield* get(
          keys.rememberFactSimilarityThreshold,
          d.remember.factSimilarityThreshold
        )
      },
      server: {
        host: yield* get(keys.serverHost, d.server.host),
        port: yield* get(keys.serverPort, d.server.port),
        allowedHosts: yield* get(keys.serverAllowedHosts, d.server.allowedHosts),
        allowedOrigins: yield* get(keys.serverAllowedOrigins, d.server.allowedOrigins),
        corsOrigins: yield* get(keys.serverCorsOrigins, d.server.corsOrigins)
      },
      mcp: {
        userId: yield* optional(keys.mcpUserId),
        rememberWaitMs: yield* get(keys.mcpRememberWaitMs, d.mcp.rememberWaitMs)
      },
      database: {
        url: databaseUrl,
        path: databasePath,
        mmapSize: yield* get(keys.databaseMmapSize, d.database.mmapSize)
      },
      imageDir: yield* get(keys.imageDir, imageDirFor(databasePath)),
      oldDataFiles: location.oldFiles,
      auth: { tokens: yield* parseAuthTokens(sources) },
      logLevel: yield* get(keys.logLevel, d.logLevel),
      logFormat: yield* get(keys.logFormat, d.logFormat),
      telemetry: {
        otlpEndpoint: yield* optional(keys.telemetryOtlpEndpoint),
        serviceName: yield* get(keys.telemetryServiceName, d.telemetry.serviceName),
        exportIntervalMs: yield* get(keys.telemetryExportIntervalMs, d.telemetry.exportIntervalMs)
      }
    }
    return config
  })

const requirePinecone = (pinecone: PineconeConfig): Effect.Effect<void, ConfigInvalid> => {
  const missing = Option.isNone(pinecone.apiKey)
    ? "pinecone.api_key (or PINECONE_API_KEY)"
    : Option.isNone(pinecone.indexHost)
    ? "pinecone.index_host (or PINECONE_INDEX_HOST)"
    : undefined
  return missing === undefined
    ? Effect.void
    : Effect.fail(
      new ConfigInvalid({
        message: `invalid config: vector_store is "pinecone" but ${missing} is not set`,
        key: missing.split(" ")[0]!,
        source: "vector_store"
      })
    )
}

/** The configuration as a Layer, read once when the layer is built. */
export const layerAppConfig = (
  flags: ConfigFlags,
  env: Readonly<Record<string, string | undefined>>,
  options: LoadOptions = {}
): Layer.Layer<AppConfigTag, ConfigInvalid, FileSystem.FileSystem> =>
  Layer.effect(AppConfigTag, loadConfig(flags, env, options))

/** A URL with any user and password in it masked: base URLs may embed credentials. */
const safeUrl = (url: string): string => {
  if (!URL.canParse(url)) return url
  const parsed = new URL(url)
  if (parsed.username === "" && parsed.password === "") return url
  parsed.username = "redacted"
  parsed.password = ""
  return parsed.toString()
}

const urlOr = (url: Option.Option<string>, fallback: string): string =>
  Option.match(url, { onNone: () => fallback, onSome: safeUrl })

const setOrUnset = (value: Option.Option<unknown>): "set" | "unset" => (Option.isSome(value) ? "set" : "unset")

/**
 * A log-safe summary, keyed by the TOML names: secrets appear only as `set` or `unset`
 * (a database URL too, since it may hold a password), auth tokens only as counts.
 */
export const describeConfig = (config: AppConfig): Readonly<Record<string, string | number | boolean>> => {
  const admins = config.auth.tokens.filter((token) => token.admin).length
  return {
    config_file: Option.getOrElse(config.configFile, () => "none (defaults)"),
    anthropic_api_key: setOrUnset(config.anthropicApiKey),
    openai_api_key: setOrUnset(config.openaiApiKey),
    "llm.provider": config.llm.provider,
    "llm.default_model": config.llm.defaultModel,
    "llm.base_url": urlOr(config.llm.baseUrl, "default"),
    "llm.api_key": setOrUnset(config.llm.apiKey),
    "llm.timeout_ms": config.llm.timeoutMs,
    "llm.max_retries": config.llm.maxRetries,
    "llm.structured_output": Option.getOrElse(config.llm.structuredOutput, () => "automatic"),
    embedding_model: config.embeddingModel,
    embedding_dimensions: config.embeddingDimensions,
    embedding_base_url: urlOr(config.embeddingBaseUrl, "default"),
    vector_store: config.vectorStore,
    "pinecone.api_key": setOrUnset(config.pinecone.apiKey),
    "pinecone.index_host": urlOr(config.pinecone.indexHost, "unset"),
    "pinecone.namespace_prefix": config.pinecone.namespacePrefix,
    chunk_size: config.chunkSize,
    chunk_overlap_percent: config.chunkOverlapPercent,
    chunk_concurrency: config.chunkConcurrency,
    "geo.enabled": config.geo.enabled,
    "geo.base_url": safeUrl(config.geo.baseUrl),
    "geo.user_agent": config.geo.userAgent,
    "geo.requests_per_second": config.geo.requestsPerSecond,
    jev_url: safeUrl(config.jevUrl),
    jev_api_key: setOrUnset(config.jevApiKey),
    prices: `${Object.keys(config.prices).length} models`,
    "timeseries.providers": config.timeseries.providers.map((p) => p.name).join(", ") || "none",
    "remember.concurrency": config.remember.concurrency,
    "remember.max_attempts": config.remember.maxAttempts,
    "remember.retry_delay_ms": config.remember.retryDelayMs,
    "remember.lookahead": config.remember.lookahead,
    "remember.idempotency_ttl_hours": config.remember.idempotencyTtlHours,
    "remember.max_candidates": config.remember.maxCandidates,
    "remember.similarity_threshold": config.remember.similarityThreshold,
    "remember.similarity_top_k": config.remember.similarityTopK,
    "remember.fact_similarity_threshold": config.remember.factSimilarityThreshold,
    "server.host": config.server.host,
    "server.port": config.server.port,
    "server.allowed_hosts": config.server.allowedHosts.join(", "),
    "server.allowed_origins": config.server.allowedOrigins.join(", "),
    "server.cors_origins": config.server.corsOrigins.join(", "),
    "mcp.user_id": Option.getOrElse(config.mcp.userId, () => "unset"),
    database: Option.isSome(config.database.url) ? "postgresql (database.url set)" : `sqlite ${config.database.path}`,
    image_dir: config.imageDir,
    "auth.tokens": config.auth.tokens.length === 0 ? "off" : `${config.auth.tokens.length} tokens (${admins} admin)`,
    log_level: config.logLevel,
    log_format: config.logFormat,
    "telemetry.otlp_endpoint": urlOr(config.telemetry.otlpEndpoint, "unset (no export)"),
    "telemetry.service_name": config.telemetry.serviceName,
    "telemetry.export_interval_ms": config.telemetry.exportIntervalMs
  }
}
