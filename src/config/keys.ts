import { STRUCTURED_OUTPUTS } from "../domain/Stages.js"
import type { KeyDef, KnownKeys, TomlTable } from "./sources.js"
import { isTable } from "./sources.js"
import * as V from "./values.js"

/**
 * Every scalar key of gligabao.toml with its environment variables and flag. Our own keys
 * read `GLIGABAO_<PATH>`; keys that other tools already name (ANTHROPIC_API_KEY,
 * DATABASE_URL, PORT, ...) read those names too. docs/CONFIGURATION.md lists the same table.
 */

export const LLM_PROVIDERS = ["anthropic", "openai"] as const
export type LlmProvider = (typeof LLM_PROVIDERS)[number]

export const VECTOR_STORES = ["sqlite", "postgres", "pinecone", "memory"] as const
export type VectorStoreKind = (typeof VECTOR_STORES)[number]

export const LOG_LEVELS = ["debug", "info", "warning", "error"] as const
export type LogLevelName = (typeof LOG_LEVELS)[number]

export const LOG_FORMATS = ["pretty", "json"] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

const secret = (key: string, env: ReadonlyArray<string>): KeyDef<string> => ({
  key,
  env,
  spec: V.secretString,
  secret: true,
  emptyIsUnset: true
})

const optionalUrl = (key: string, env: ReadonlyArray<string>): KeyDef<string> => ({
  key,
  env,
  spec: V.httpUrl,
  emptyIsUnset: true
})

export const keys = {
  anthropicApiKey: secret("anthropic_api_key", ["ANTHROPIC_API_KEY"]),
  openaiApiKey: secret("openai_api_key", ["OPENAI_API_KEY"]),

  llmProvider: { key: "llm.provider", env: ["GLIGABAO_LLM_PROVIDER"], spec: V.literal(LLM_PROVIDERS) },
  llmDefaultModel: { key: "llm.default_model", env: ["GLIGABAO_LLM_DEFAULT_MODEL"], spec: V.modelName },
  /** the provider's own variable is read after ours: ANTHROPIC_BASE_URL or OPENAI_BASE_URL */
  llmBaseUrl: (provider: LlmProvider) =>
    optionalUrl("llm.base_url", [
      "GLIGABAO_LLM_BASE_URL",
      provider === "anthropic" ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL"
    ]),
  llmApiKey: secret("llm.api_key", ["GLIGABAO_LLM_API_KEY"]),
  llmTimeoutMs: { key: "llm.timeout_ms", env: ["GLIGABAO_LLM_TIMEOUT_MS"], spec: V.integer(1) },
  llmMaxRetries: { key: "llm.max_retries", env: ["GLIGABAO_LLM_MAX_RETRIES"], spec: V.integer(0, 20) },
  /** unset: automatic (json_schema, falling back to json_object, then none) */
  llmStructuredOutput: {
    key: "llm.structured_output",
    env: ["GLIGABAO_LLM_STRUCTURED_OUTPUT"],
    spec: V.literal(STRUCTURED_OUTPUTS),
    emptyIsUnset: true
  },

  embeddingModel: { key: "embedding_model", env: ["GLIGABAO_EMBEDDING_MODEL"], spec: V.modelName },
  embeddingDimensions: {
    key: "embedding_dimensions",
    env: ["GLIGABAO_EMBEDDING_DIMENSIONS"],
    spec: V.integer(1, 65536)
  },
  embeddingBaseUrl: optionalUrl("embedding_base_url", ["GLIGABAO_EMBEDDING_BASE_URL", "OPENAI_BASE_URL"]),

  vectorStore: {
    key: "vector_store",
    env: ["GLIGABAO_VECTOR_STORE"],
    // chromem is the seed's name for the embedded store; here that store is sqlite-vec
    spec: V.literal(VECTOR_STORES, { chromem: "sqlite" })
  },
  pineconeApiKey: secret("pinecone.api_key", ["PINECONE_API_KEY"]),
  pineconeIndexHost: {
    key: "pinecone.index_host",
    env: ["PINECONE_INDEX_HOST"],
    spec: V.hostUrl,
    emptyIsUnset: true
  },
  pineconeNamespacePrefix: {
    key: "pinecone.namespace_prefix",
    env: ["GLIGABAO_PINECONE_NAMESPACE_PREFIX"],
    spec: V.anyString
  },

  chunkSize: { key: "chunk_size", env: ["GLIGABAO_CHUNK_SIZE"], spec: V.integer(64) },
  chunkOverlapPercent: {
    key: "chunk_overlap_percent",
    env: ["GLIGABAO_CHUNK_OVERLAP_PERCENT"],
    spec: V.integer(0, 50)
  },

  geoEnabled: {
    key: "geo.enabled",
    env: ["GLIGABAO_GEO"],
    flag: "geo",
    spec: V.boolean,
    // `geo = true` is the short form of `[geo] enabled = true`
    lookup: (doc: TomlTable) => (isTable(doc["geo"]) ? doc["geo"]["enabled"] : doc["geo"])
  },
  geoBaseUrl: { key: "geo.base_url", env: ["GLIGABAO_GEO_BASE_URL"], spec: V.httpUrl },
  geoUserAgent: { key: "geo.user_agent", env: ["GLIGABAO_GEO_USER_AGENT"], spec: V.nonEmptyString },
  geoRequestsPerSecond: {
    key: "geo.requests_per_second",
    env: ["GLIGABAO_GEO_REQUESTS_PER_SECOND"],
    spec: V.positiveNumber
  },

  jevUrl: { key: "jev_url", env: ["JEV_URL"], spec: V.httpUrl },
  jevApiKey: secret("jev_api_key", ["JEV_API_KEY"]),

  chunkConcurrency: {
    key: "chunk_concurrency",
    env: ["GLIGABAO_CHUNK_CONCURRENCY"],
    spec: V.integer(1, 64)
  },
  rememberConcurrency: {
    key: "remember.concurrency",
    env: ["GLIGABAO_REMEMBER_CONCURRENCY"],
    spec: V.integer(1, 1024)
  },
  rememberMaxAttempts: {
    key: "remember.max_attempts",
    env: ["GLIGABAO_REMEMBER_MAX_ATTEMPTS"],
    spec: V.integer(1, 100)
  },
  rememberRetryDelayMs: {
    key: "remember.retry_delay_ms",
    env: ["GLIGABAO_REMEMBER_RETRY_DELAY_MS"],
    spec: V.integer(0, 600_000)
  },
  mcpUserId: {
    key: "mcp.user_id",
    env: ["GLIGABAO_MCP_USER_ID"],
    spec: V.nonEmptyString
  },
  mcpRememberWaitMs: {
    key: "mcp.remember_wait_ms",
    env: ["GLIGABAO_MCP_REMEMBER_WAIT_MS"],
    spec: V.integer(0, 600_000)
  },
  rememberLookahead: {
    key: "remember.lookahead",
    env: ["GLIGABAO_REMEMBER_LOOKAHEAD"],
    spec: V.integer(1, 64)
  },
  rememberIdempotencyTtlHours: {
    key: "remember.idempotency_ttl_hours",
    env: ["GLIGABAO_REMEMBER_IDEMPOTENCY_TTL_HOURS"],
    spec: V.integer(24, 24 * 365)
  },
  rememberMaxCandidates: {
    key: "remember.max_candidates",
    env: ["GLIGABAO_REMEMBER_MAX_CANDIDATES"],
    spec: V.integer(1, 10000)
  },
  rememberSimilarityThreshold: {
    key: "remember.similarity_threshold",
    env: ["GLIGABAO_REMEMBER_SIMILARITY_THRESHOLD"],
    spec: V.fraction
  },
  rememberSimilarityTopK: {
    key: "remember.similarity_top_k",
    env: ["GLIGABAO_REMEMBER_SIMILARITY_TOP_K"],
    spec: V.integer(1, 100)
  },
  rememberFactSimilarityThreshold: {
    key: "remember.fact_similarity_threshold",
    env: ["GLIGABAO_REMEMBER_FACT_SIMILARITY_THRESHOLD"],
    spec: V.fraction
  },

  serverHost: { key: "server.host", env: ["GLIGABAO_HOST"], flag: "host", spec: V.host },
  serverPort: { key: "server.port", env: ["GLIGABAO_PORT", "PORT"], flag: "port", spec: V.integer(0, 65535) },
  // beside a browser (docs/SECURITY.md): the names and origins a deployment behind a proxy serves
  serverAllowedHosts: { key: "server.allowed_hosts", env: ["GLIGABAO_ALLOWED_HOSTS"], spec: V.list(V.host) },
  serverAllowedOrigins: { key: "server.allowed_origins", env: ["GLIGABAO_ALLOWED_ORIGINS"], spec: V.list(V.origin) },
  serverCorsOrigins: { key: "server.cors_origins", env: ["GLIGABAO_CORS_ORIGINS"], spec: V.list(V.origin) },

  // a connection URL may carry a password, so it is a secret
  databaseUrl: {
    key: "database.url",
    env: ["DATABASE_URL"],
    flag: "databaseUrl",
    spec: V.postgresUrl,
    secret: true,
    emptyIsUnset: true
  },
  databasePath: { key: "database.path", env: ["GLIGABAO_DB"], flag: "db", spec: V.nonEmptyString },
  databaseMmapSize: {
    key: "database.mmap_size",
    env: ["GLIGABAO_DATABASE_MMAP_SIZE"],
    spec: V.integer(0, 2 ** 40)
  },
  imageDir: {
    key: "image_dir",
    env: ["GLIGABAO_IMAGE_DIR"],
    flag: "imageDir",
    spec: V.nonEmptyString,
    emptyIsUnset: true
  },

  // OTEL_* are the OpenTelemetry SDKs' own names, so an environment set up for them works here too
  telemetryOtlpEndpoint: optionalUrl("telemetry.otlp_endpoint", [
    "GLIGABAO_TELEMETRY_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT"
  ]),
  telemetryServiceName: {
    key: "telemetry.service_name",
    env: ["GLIGABAO_TELEMETRY_SERVICE_NAME", "OTEL_SERVICE_NAME"],
    spec: V.nonEmptyString
  },
  telemetryExportIntervalMs: {
    key: "telemetry.export_interval_ms",
    env: ["GLIGABAO_TELEMETRY_EXPORT_INTERVAL_MS"],
    spec: V.integer(100, 3_600_000)
  },

  logLevel: { key: "log_level", env: ["GLIGABAO_LOG_LEVEL"], spec: V.literal(LOG_LEVELS, { warn: "warning" }) },
  logFormat: { key: "log_format", env: ["GLIGABAO_LOG_FORMAT"], spec: V.literal(LOG_FORMATS) }
} satisfies Record<string, KeyDef<any> | ((provider: LlmProvider) => KeyDef<any>)>

/** Environment variable for `[auth] tokens`, as a JSON array of the same shape. */
export const AUTH_TOKENS_ENV = "GLIGABAO_AUTH_TOKENS"

export const knownKeys: KnownKeys = {
  tables: new Set([
    "llm",
    "pinecone",
    "geo",
    "timeseries",
    "remember",
    "server",
    "mcp",
    "database",
    "auth",
    "telemetry"
  ]),
  scalars: new Set([
    ...Object.values(keys).map((def) => (typeof def === "function" ? def("anthropic").key : def.key)),
    "geo"
  ]),
  structured: new Set(["prices", "timeseries.providers", "auth.tokens"])
}
