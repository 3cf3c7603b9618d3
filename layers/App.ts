/**
 * AppLive: picks the adapters from the configuration and composes the app: storage, the model
 * services, the remember machinery and the programs the doors call (Reads, Forgets, Corrections,
 * Images). The HTTP server is added by the CLI; embedders use `Gligabao.layer`
 * (layers/Gligabao.ts), which is `appLayerFor` with their ports.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import {
  type AdminDatabase,
  AdminDatabases,
  databaseName,
  duplicateName,
  repositoriesReadDeps
} from "../src/admin/AdminDatabases.js"
import { Authentication } from "../src/auth/Authentication.js"
import { tokenTable } from "../src/auth/tokens.js"
import { type AppConfig, AppConfigTag } from "../src/Config.js"
import { CorrectionsLive, ForgetsLive } from "../src/forget/Forgets.js"
import { RequestPolicyTag } from "../src/http/requestGuard.js"
import { ImagesLive } from "../src/images/Images.js"
import { McpSettings } from "../src/mcp/settings.js"
import { RememberManagerLive } from "../src/pipeline/RememberManager.js"
import { RememberPipelineLive } from "../src/pipeline/RememberPipelineLive.js"
import { RunSchedulerLive } from "../src/pipeline/RunScheduler.js"
import { RememberSettings } from "../src/pipeline/Settings.js"
import { makeReads, Reads, ReadsLive } from "../src/query/Reads.js"
import { AdminRepo } from "../src/services/AdminRepo.js"
import type { ComplexityClassifier } from "../src/services/ComplexityClassifier.js"
import { DatasetsRepo } from "../src/services/DatasetsRepo.js"
import type { Embeddings } from "../src/services/Embeddings.js"
import type { GeoResolver } from "../src/services/GeoResolver.js"
import type { ImageStore } from "../src/services/ImageStore.js"
import { InferencesRepo } from "../src/services/InferencesRepo.js"
import type { Llm } from "../src/services/Llm.js"
import { RunLogRepo } from "../src/services/RunLogRepo.js"
import { SearchRepo } from "../src/services/SearchRepo.js"
import type { TimeseriesProviders } from "../src/services/TimeseriesProviders.js"
import type { VectorStore } from "../src/services/VectorStore.js"
import { ServiceSpans } from "../src/telemetry/traced.js"
import { JevClassifierLive } from "./classifier/JevClassifier.js"
import { NoneClassifierLive } from "./classifier/NoneClassifier.js"
import { DisabledEmbeddingsLive, OpenAiEmbeddingsLive } from "./embeddings/index.js"
import { LocalImageStoreLive } from "./files/LocalImageStore.js"
import { NominatimResolverLive } from "./geo/NominatimResolver.js"
import { NoneGeoResolverLive } from "./geo/NoneGeoResolver.js"
import { AnthropicLlmLive, OpenAiLlmLive, UNCONFIGURED_LLM_MESSAGE, UnconfiguredLlmLive } from "./llm/index.js"
import { PgLive, SqliteLive } from "./sql/index.js"
import { timeseriesFor } from "./timeseries/index.js"
import { MemoryVectorStoreLive } from "./vectors/MemoryVectorStore.js"
import { PostgresVectorStoreLive } from "./vectors/PostgresVectorStore.js"
import { SqliteVecFileStoreLive, SqliteVecStoreLive } from "./vectors/SqliteVecStore.js"

/** The database the configuration names: PostgreSQL when database.url is set, else SQLite. */
export const storageFor = (config: AppConfig) =>
  Option.match(config.database.url, {
    onNone: () =>
      SqliteLive(config.database.path, {
        mmapBytes: config.database.mmapSize,
        // statement spans only where traces go somewhere (issue 39: a statement's span and scope
        // cost about what its SQL does)
        statementSpans: Option.isSome(config.telemetry.otlpEndpoint)
      }),
    onSome: (url) => PgLive(url)
  })

const UNCONFIGURED_OPENAI_MESSAGE =
  "no LLM is configured: set OPENAI_API_KEY (or llm.base_url for a local OpenAI-compatible server)"

/** Why the configuration leaves the server without an LLM, or undefined when it has one. */
export const missingLlm = (config: AppConfig): string | undefined => {
  const { llm } = config
  if (llm.provider === "anthropic") return Option.isNone(llm.apiKey) ? UNCONFIGURED_LLM_MESSAGE : undefined
  return Option.isNone(llm.apiKey) && Option.isNone(llm.baseUrl) ? UNCONFIGURED_OPENAI_MESSAGE : undefined
}

/** The LLM adapter the configuration names; without a key every remember is refused (503). */
export const llmFor = (config: AppConfig) => {
  const { llm } = config
  const common = {
    defaultModel: llm.defaultModel,
    timeoutMs: llm.timeoutMs,
    maxRetries: llm.maxRetries,
    baseUrl: Option.getOrUndefined(llm.baseUrl),
    structuredOutput: Option.getOrUndefined(llm.structuredOutput)
  }
  if (llm.provider === "anthropic") {
    return Option.match(llm.apiKey, {
      onNone: () => UnconfiguredLlmLive(llm.defaultModel),
      onSome: (apiKey) => AnthropicLlmLive({ ...common, apiKey })
    })
  }
  // Local OpenAI-compatible servers (Ollama, vLLM, llama.cpp) need no key, but the SDK wants one.
  const key = Option.orElse(
    llm.apiKey,
    () => Option.isSome(llm.baseUrl) ? Option.some(Redacted.make("unused")) : Option.none()
  )
  return Option.match(key, {
    onNone: () => UnconfiguredLlmLive(llm.defaultModel, UNCONFIGURED_OPENAI_MESSAGE),
    onSome: (apiKey) => OpenAiLlmLive({ ...common, apiKey })
  })
}

/**
 * Embeddings when an OpenAI key (or an OpenAI-compatible base URL, e.g. a local server) is
 * configured; without, nothing is embedded and the server says so at startup.
 */
/** The embeddings key, or a stand-in when a base URL (a local server) is configured without one. */
const embeddingsKey = (config: AppConfig) =>
  Option.orElse(
    config.openaiApiKey,
    () => Option.isSome(config.embeddingBaseUrl) ? Option.some(Redacted.make("unused")) : Option.none()
  )

export const embeddingsFor = (config: AppConfig) => {
  const key = embeddingsKey(config)
  return Option.match(key, {
    onNone: () => DisabledEmbeddingsLive({ model: config.embeddingModel, dimensions: config.embeddingDimensions }),
    onSome: (apiKey) =>
      OpenAiEmbeddingsLive({
        apiKey,
        baseUrl: Option.getOrUndefined(config.embeddingBaseUrl),
        model: config.embeddingModel,
        dimensions: config.embeddingDimensions,
        timeoutMs: config.llm.timeoutMs,
        maxRetries: config.llm.maxRetries
      })
  })
}

/** The file sqlite-vec uses next to a PostgreSQL deployment: `data/gligabao.vectors.db` by default. */
export const vectorFileFor = (config: AppConfig) =>
  `${config.database.path.replace(/(?<=[^/\\])\.[^./\\]*$/, "")}.vectors.db`

/**
 * The vector store: sqlite-vec in the SQLite database itself (the default on SQLite), or in a
 * file of its own when the graph is in PostgreSQL, either way searched on a reader connection in
 * a worker thread (layers/vectors/VecReader.ts); the graph's PostgreSQL database (the default on
 * PostgreSQL: pgvector HNSW when the extension can be created, else portable binary codes);
 * Pinecone; or memory (tests). Needs the storage's SqlClient.
 */
export const vectorStoreFor = (config: AppConfig) => {
  switch (config.vectorStore) {
    case "memory":
      return MemoryVectorStoreLive({ dimensions: config.embeddingDimensions })
    case "pinecone":
      // loaded only when used: the Pinecone SDK adds to every server's resident memory
      return Layer.unwrapEffect(
        Effect.map(
          Effect.promise(() => import("./vectors/PineconeStore.js")),
          ({ PineconeStoreLive }) =>
            PineconeStoreLive({
              apiKey: Option.getOrThrow(config.pinecone.apiKey),
              indexHost: Option.getOrThrow(config.pinecone.indexHost),
              namespacePrefix: config.pinecone.namespacePrefix
            })
        )
      )
    case "postgres":
      return PostgresVectorStoreLive(config.embeddingDimensions)
    case "sqlite": {
      // without embeddings nothing is searched by vector, so no reader thread (it costs memory)
      const searched = Option.isSome(embeddingsKey(config))
      return Option.isSome(config.database.url)
        ? SqliteVecFileStoreLive(vectorFileFor(config), config.embeddingDimensions, { reader: searched })
        : SqliteVecStoreLive(
          config.embeddingDimensions,
          searched ? { filename: config.database.path, mmapBytes: config.database.mmapSize } : undefined
        )
    }
  }
}

/** Jev when its key is set; otherwise classify_complexity does not run. */
export const classifierFor = (config: AppConfig) =>
  Option.match(config.jevApiKey, {
    onNone: () => NoneClassifierLive,
    onSome: (apiKey) => JevClassifierLive({ url: config.jevUrl, apiKey })
  })

const nominatimFor = (config: AppConfig) =>
  NominatimResolverLive({
    baseUrl: config.geo.baseUrl,
    userAgent: config.geo.userAgent,
    requestsPerSecond: config.geo.requestsPerSecond
  })

/** Nominatim when geo is on (`geo = true`, `--geo`); otherwise no resolver (`appLayerFor` then provides the "none" one). */
export const geoFor = (config: AppConfig) => config.geo.enabled ? nominatimFor(config) : Layer.empty

/** The resolver the pipeline uses: Nominatim when geo is on, else the "none" one (no resolve_geo stage). */
const geoResolverFor = (config: AppConfig): Layer.Layer<GeoResolver> =>
  config.geo.enabled ? nominatimFor(config) : NoneGeoResolverLive

/** Web search is Anthropic's server-side tool: only the Anthropic LLM with a key has it. */
export const webSearchAvailable = (config: AppConfig): boolean =>
  config.llm.provider === "anthropic" && Option.isSome(config.llm.apiKey)

export const settingsFor = (config: AppConfig) =>
  RememberSettings.layer({
    webSearch: webSearchAvailable(config),
    prices: config.prices,
    maxCandidates: config.remember.maxCandidates,
    similarityThreshold: config.remember.similarityThreshold,
    similarityTopK: config.remember.similarityTopK,
    factSimilarityThreshold: config.remember.factSimilarityThreshold,
    chunkSize: config.chunkSize,
    chunkOverlapPercent: config.chunkOverlapPercent,
    chunkConcurrency: config.chunkConcurrency
  })

/** Ports an embedder (or a test) can provide instead of the ones the configuration picks. */
export interface PortLayers {
  readonly llm?: Layer.Layer<Llm> | undefined
  readonly embeddings?: Layer.Layer<Embeddings> | undefined
  readonly vectorStore?: Layer.Layer<VectorStore> | undefined
  readonly imageStore?: Layer.Layer<ImageStore> | undefined
  readonly classifier?: Layer.Layer<ComplexityClassifier> | undefined
  readonly geo?: Layer.Layer<GeoResolver> | undefined
  readonly timeseries?: Layer.Layer<TimeseriesProviders> | undefined
}

/** The remember machinery and the read side over the configured (or given) adapters. */
export const appLayerFor = (config: AppConfig, ports: PortLayers = {}) => {
  const instanceId = `${process.pid}-${crypto.randomUUID()}`
  // provideMerge: the read side (search, query) uses the same Llm, Embeddings, VectorStore, settings
  const pipeline = RememberPipelineLive.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        ports.llm ?? llmFor(config),
        ports.classifier ?? classifierFor(config),
        ports.geo ?? geoResolverFor(config),
        settingsFor(config),
        ports.embeddings ?? embeddingsFor(config),
        ports.vectorStore ?? vectorStoreFor(config),
        ports.timeseries ?? timeseriesFor(config)
      )
    )
  )
  const manager = RememberManagerLive({
    concurrency: config.remember.concurrency,
    instanceId,
    maxAttempts: config.remember.maxAttempts,
    retryDelay: config.remember.retryDelayMs,
    lookahead: config.remember.lookahead,
    idempotencyTtlHours: config.remember.idempotencyTtlHours
  }).pipe(
    Layer.provideMerge(pipeline),
    // one scheduler for the app: the manager's runs, and the doors that mark reads
    Layer.provideMerge(RunSchedulerLive)
  )
  // image files next to the database by default (config image_dir / serve --image-dir)
  const app = manager.pipe(
    Layer.provideMerge(storageFor(config)),
    Layer.provideMerge(ports.imageStore ?? LocalImageStoreLive(config.imageDir))
  )
  // the programs over everything else (their model services included): reads, forgets, corrections, images
  return Layer.mergeAll(ReadsLive, ForgetsLive, CorrectionsLive, ImagesLive).pipe(
    Layer.provideMerge(app),
    // services' method spans only where traces go somewhere, as statement spans (issue 39)
    Layer.provide(Layer.succeed(ServiceSpans, Option.isSome(config.telemetry.otlpEndpoint)))
  )
}

/** Everything the HTTP handlers need, built from the configuration. */
export const AppLive = Layer.unwrapEffect(Effect.map(AppConfigTag, (config) => appLayerFor(config)))

/**
 * The databases of the admin UI: the app's own (from its storage) first, then each extra SQLite
 * file opened read-mostly for its run log, usage and memory (migrated like any other, so an old
 * file shows too). Needs the app's RunLogRepo, AdminRepo and read repositories; names must be
 * unique.
 */
export const adminDatabasesFor = (config: AppConfig, extraSqlitePaths: ReadonlyArray<string>) =>
  Layer.scoped(
    AdminDatabases,
    Effect.gen(function*() {
      const primary: AdminDatabase = {
        name: Option.match(config.database.url, {
          onNone: () => databaseName({ path: config.database.path }),
          onSome: (url) => databaseName({ url: Redacted.value(url) })
        }),
        dialect: Option.isSome(config.database.url) ? "postgres" : "sqlite",
        primary: true,
        runLog: yield* RunLogRepo,
        inferences: yield* InferencesRepo,
        admin: yield* AdminRepo,
        reads: yield* Reads
      }
      const extras = yield* Effect.forEach(extraSqlitePaths, (path) =>
        Effect.map(Layer.build(SqliteLive(path)), (context): AdminDatabase => ({
          name: databaseName({ path }),
          dialect: "sqlite",
          primary: false,
          runLog: Context.get(context, RunLogRepo),
          inferences: Context.get(context, InferencesRepo),
          admin: Context.get(context, AdminRepo),
          // the file's own repositories: the app's vector store and models are the first database's
          reads: makeReads(repositoriesReadDeps({
            datasets: Context.get(context, DatasetsRepo),
            search: Context.get(context, SearchRepo),
            inferences: Context.get(context, InferencesRepo)
          }))
        })))
      const all = [primary, ...extras]
      const twice = duplicateName(all.map((d) =>
        d.name
      ))
      if (twice !== undefined) {
        return yield* Effect.fail(
          new Error(`two databases are named ${JSON.stringify(twice)} in the admin UI: give the files different names`)
        )
      }
      return all
    })
  )

/** What the HTTP app reads from the configuration: its tokens, its host and origin policy, MCP's settings. */
export const httpSettingsFor = (config: AppConfig) =>
  Layer.mergeAll(
    Layer.succeed(Authentication, tokenTable(config.auth.tokens)),
    Layer.succeed(RequestPolicyTag, {
      allowedHosts: config.server.allowedHosts,
      allowedOrigins: config.server.allowedOrigins,
      corsOrigins: config.server.corsOrigins
    }),
    Layer.succeed(McpSettings, { userId: config.mcp.userId, rememberWaitMs: config.mcp.rememberWaitMs })
  )
