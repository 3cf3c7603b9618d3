/**
 * The remember machinery over a real database and the scripted LLM, for pipeline and HTTP
 * tests: `rememberLayer(storage, script)` provides the manager, the repositories, the
 * SqlClient, the ScriptedLlm recorder and an ImageStore (a temp directory).
 */
import { type Context, type Duration, Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NoneClassifierLive } from "../../layers/classifier/NoneClassifier.js"
import { LocalImageStoreLive } from "../../layers/files/LocalImageStore.js"
import { NoneGeoResolverLive } from "../../layers/geo/NoneGeoResolver.js"
import { UnconfiguredLlmLive } from "../../layers/llm/UnconfiguredLlm.js"
import { type LlmScript, ScriptedLlm, type ScriptedLlmOptions } from "../../layers/testing/ScriptedLlm.js"
import { TimeseriesProvidersLive } from "../../layers/timeseries/index.js"
import { MemoryVectorStoreLive } from "../../layers/vectors/MemoryVectorStore.js"
import { AdminDatabases, AppDatabaseLive } from "../../src/admin/AdminDatabases.js"
import { ServiceUnavailable } from "../../src/domain/Errors.js"
import { EmbeddingFailed, VectorWriteFailed } from "../../src/domain/Errors.js"
import type { RememberRequest } from "../../src/domain/Remember.js"
import { isImageBody, type RememberResult, type TextRememberBody } from "../../src/domain/Responses.js"
import { Corrections, CorrectionsLive, Forgets, ForgetsLive } from "../../src/forget/Forgets.js"
import { Images, ImagesLive } from "../../src/images/Images.js"
import { RememberManagerLive } from "../../src/pipeline/RememberManager.js"
import { RememberPipelineLive } from "../../src/pipeline/RememberPipelineLive.js"
import { RunSchedulerLive } from "../../src/pipeline/RunScheduler.js"
import { RememberSettings, type RememberSettingsShape } from "../../src/pipeline/Settings.js"
import { Reads, ReadsLive } from "../../src/query/Reads.js"
import type { ComplexityClassifier } from "../../src/services/ComplexityClassifier.js"
import { Database, DatabaseNotReady } from "../../src/services/Database.js"
import { Embeddings } from "../../src/services/Embeddings.js"
import type { GeoResolver } from "../../src/services/GeoResolver.js"
import type { ImageStore } from "../../src/services/ImageStore.js"
import { Llm, type LlmRequest } from "../../src/services/Llm.js"
import type { TimeseriesProviders } from "../../src/services/TimeseriesProviders.js"
import { VectorStore } from "../../src/services/VectorStore.js"
import type { StorageLayer } from "./databases.js"

/** No embeddings configured: nothing is embedded, the response has no embedded_* counts. */
export const NoEmbeddings = Layer.succeed(
  Embeddings,
  Embeddings.of({
    enabled: false,
    provider: "none",
    model: "none",
    dimensions: 0,
    embed: () => Effect.fail(new EmbeddingFailed({ message: "embeddings are not configured" }))
  })
)

/** The pipeline's optional adapters as a server without them has them: no geo stage, no timeseries providers. */
export const noGeoNoTimeseries = () => Layer.merge(NoneGeoResolverLive, TimeseriesProvidersLive([]))

/** The model services of an app with none configured: no embeddings, an LLM that is a 503, default settings. */
export const noModels = () => Layer.mergeAll(NoEmbeddings, UnconfiguredLlmLive("none"), RememberSettings.layer())

export interface RememberLayerOptions {
  readonly concurrency?: number
  /** remember.lookahead: runs of one dataset whose extraction runs ahead (default 4) */
  readonly lookahead?: number
  /** remember.max_attempts and the wait before a transient failure's retry (the manager's defaults) */
  readonly maxAttempts?: number
  readonly retryDelay?: Duration.DurationInput
  /** default: none configured */
  readonly embeddings?: Layer.Layer<Embeddings, never, never>
  /** default: an in-memory store */
  readonly vectors?: Layer.Layer<VectorStore, never, never>
  readonly settings?: Partial<RememberSettingsShape>
  readonly llm?: ScriptedLlmOptions
  /** instead of the scripted model (which is still provided, for its recorder), e.g. `UnconfiguredLlmLive("none")` */
  readonly llmLayer?: Layer.Layer<Llm>
  /** delays each model call (e.g. to make concurrent calls finish out of order) */
  readonly llmDelayMs?: (request: LlmRequest) => number
  /** default: local files in a temp directory removed with the layer */
  readonly images?: Layer.Layer<ImageStore, never, never>
  /** default: none configured (classify_complexity does not run) */
  readonly classifier?: Layer.Layer<ComplexityClassifier, never, never>
  /** default: none (no geo stage); e.g. `FakeGeo.layer({...})`, whose FakeGeo recorder is then provided too */
  readonly geo?: Layer.Layer<GeoResolver, never, never>
  /** default: none (timeseries.fetch is a 503); e.g. `TimeseriesProvidersLive([...])` */
  readonly timeseries?: Layer.Layer<TimeseriesProviders, never, never>
}

/** Image files in a fresh temp directory, removed when the layer is released. */
export const tempImageStore = (): Layer.Layer<ImageStore> =>
  Layer.unwrapScoped(
    Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "gligabao-images-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    ).pipe(Effect.map(LocalImageStoreLive))
  )

/** The scripted LLM, each answer after `delayMs(request)`. */
const delayedLlm = (script: LlmScript, options: RememberLayerOptions) => {
  const scripted = ScriptedLlm.layer(script, options.llm)
  const delay = options.llmDelayMs
  if (delay === undefined) return scripted
  return Layer.effect(
    Llm,
    Effect.map(
      Llm,
      (llm) => Llm.of({ ...llm, complete: (r) => Effect.zipRight(Effect.sleep(delay(r)), llm.complete(r)) })
    )
  ).pipe(Layer.provideMerge(scripted))
}

export const rememberLayer = (storage: StorageLayer, script: LlmScript, options: RememberLayerOptions = {}) =>
  // the admin UI shows the app's own database, as Gligabao.layer has it
  AppDatabaseLive.pipe(Layer.provideMerge(rememberServices(storage, script, options)))

const rememberServices = (storage: StorageLayer, script: LlmScript, options: RememberLayerOptions) =>
  // the programs over everything below (their model services included), as the app composes them
  Layer.mergeAll(ReadsLive, ForgetsLive, CorrectionsLive, ImagesLive).pipe(Layer.provideMerge(
    RememberManagerLive({
      concurrency: options.concurrency ?? 4,
      instanceId: "test-instance",
      lookahead: options.lookahead,
      ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
      ...(options.retryDelay === undefined ? {} : { retryDelay: options.retryDelay })
    }).pipe(
      Layer.provideMerge(RememberPipelineLive),
      Layer.provideMerge(RunSchedulerLive),
      Layer.provideMerge(
        Layer.mergeAll(
          options.llmLayer === undefined
            ? delayedLlm(script, options)
            : Layer.provideMerge(options.llmLayer, ScriptedLlm.layer(script, options.llm)),
          options.classifier ?? NoneClassifierLive,
          options.geo ?? NoneGeoResolverLive,
          options.timeseries ?? TimeseriesProvidersLive([]),
          RememberSettings.layer(options.settings),
          options.embeddings ?? NoEmbeddings,
          options.vectors ?? MemoryVectorStoreLive(),
          options.images ?? tempImageStore()
        )
      ),
      Layer.provideMerge(storage)
    )
  ))

/**
 * The storage of an app composed without any: a database and a vector store that are not ready
 * ("not configured on this server") and no database in the admin UI. With `withoutStorage`
 * (the programs' 503s), the partial app the 503 tests serve.
 */
export const unavailableStorage = () => {
  const message = "not configured on this server"
  const boom = () => Effect.die(new Error(`storage is ${message}`))
  return Layer.mergeAll(
    Layer.mock(Database, {
      dialect: "sqlite",
      withLock: () => () => boom(),
      compact: boom(),
      health: Effect.fail(new DatabaseNotReady({ check: "database", message }))
    }),
    Layer.mock(VectorStore, {
      name: "none",
      compact: boom(),
      health: Effect.fail(new VectorWriteFailed({ message }))
    }),
    Layer.succeed(AdminDatabases, []),
    // no model configured either: /readyz reports it
    UnconfiguredLlmLive("none")
  )
}

/** An extract_graph answer. */
export const graph = (
  entities: ReadonlyArray<{ name: string; type?: string; description?: string }>,
  edges: ReadonlyArray<{
    source: string
    target: string
    relation: string
    description?: string
    valid_at?: string | null
    invalid_at?: string | null
  }>
) => ScriptedLlm.json({ entities, edges })

/** A resolve_edges answer. */
export const resolution = (
  duplicates: ReadonlyArray<{ new: number; existing: number }>,
  contradictions: ReadonlyArray<{ new: number; existing: ReadonlyArray<number> }>
) => ScriptedLlm.json({ duplicates, contradictions })

/** A text request to remember, as the pipeline tests send it: Alice's dataset "main", a fixed reference time. */
export const textRequest = (text: string, extra: Partial<RememberRequest> = {}): RememberRequest => ({
  user_id: "alice",
  dataset: "main",
  text,
  kind: "knowledge",
  reference_time: "2025-02-01T00:00:00.000Z",
  models: {},
  reasoning: {},
  web_search: false,
  ...extra
})

/** The response of a text's run, narrowed from the text-or-image union (an image's fails the test). */
export const textBody = ({ response }: RememberResult): TextRememberBody => {
  if (isImageBody(response)) throw new Error(`not a text response: ${JSON.stringify(response)}`)
  return response
}

/**
 * A list of the text response whose items the schema leaves open (`geo`, `web_searches`,
 * `series`, `series_fetches`, `series_observations`: records of unknowns), read as the pipeline
 * builds its items (`GeoItem`, `WebSearchItem`, `SeriesItem`, `FetchItem`, `ObservationItem`).
 * A list the response does not have fails the test.
 */
export const itemsOf = <A>(items: ReadonlyArray<Readonly<Record<string, unknown>>> | undefined): ReadonlyArray<A> => {
  if (items === undefined) throw new Error("the response has no such list")
  return items as unknown as ReadonlyArray<A>
}

/** Each method of `tag` failing with ServiceUnavailable (503) saying its message, as a server without storage answers. */
const unavailable = <I, S extends object>(
  tag: Context.Tag<I, S>,
  messages: { readonly [K in keyof S]-?: string }
): Layer.Layer<I> =>
  Layer.succeed(
    tag,
    Object.fromEntries(
      Object.entries(messages).map(([method, message]) => [
        method,
        () => Effect.fail(new ServiceUnavailable({ message: message as string }))
      ])
    ) as unknown as S
  )

const READS = "the read endpoints need storage, which is not configured on this server"

/** The reads of an app composed without storage. */
export const unavailableReads = (): Layer.Layer<Reads> =>
  unavailable(Reads, {
    search: READS,
    query: READS,
    context: READS,
    exportGraph: READS,
    entityStory: READS,
    entityStoryById: READS,
    factView: READS,
    datasets: READS,
    sessions: READS,
    deleteDataset: READS,
    datasetSchema: READS,
    setDatasetSchema: READS
  })

const FORGET = "forget needs storage, which is not configured on this server"

/** The forgets of an app composed without storage (a hard delete is the read group's "erasing"). */
export const unavailableForgets = (): Layer.Layer<Forgets> =>
  unavailable(Forgets, {
    forgetArtifact: FORGET,
    forgetImage: FORGET,
    forgetUser: FORGET,
    hardDeleteDataset: "erasing needs storage, which is not configured"
  })

const CORRECTIONS = "corrections need storage, which is not configured on this server"

/** The corrections of an app composed without storage. */
export const unavailableCorrections = (): Layer.Layer<Corrections> =>
  unavailable(Corrections, {
    deleteFact: CORRECTIONS,
    deleteEntity: CORRECTIONS,
    invalidateFact: CORRECTIONS,
    reopenFact: CORRECTIONS,
    mergeEntities: CORRECTIONS
  })

/** The images of an app composed without image storage. */
export const unavailableImages = (): Layer.Layer<Images> =>
  unavailable(Images, { image: "image storage is not configured on this server" })

/** The programs of an app composed without storage: reads, forgets, corrections and images, each a 503. */
export const withoutStorage = () =>
  Layer.mergeAll(unavailableReads(), unavailableForgets(), unavailableCorrections(), unavailableImages())
