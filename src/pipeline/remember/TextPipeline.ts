/**
 * The remember pipeline for a text (seed: How it works; contracts section 4), as one program:
 * `rememberText` below reads top to bottom, one named stage per step, each passing the next
 * what it made. A text is remembered as units on one code path: a short text is one unit, a
 * long one (a document) is chunked and each chunk is a unit (unit.ts). Units' model work runs
 * up to chunk_concurrency units ahead of the in-order reconciliation and store, so the result
 * is the one a sequential run gives and later chunks see the facts of earlier ones. A failure
 * in chunk k fails the call with k's error; chunks before k stay stored and none after k is.
 *
 * The program has two phases (`prepareText`, `applyText`): what reads and writes no dataset
 * runs before the run holds its dataset's lock, so the manager can run it for the next runs of
 * a dataset while an earlier one is stored (remember.lookahead); the rest runs in order.
 */
import { Clock, Effect, Option, type Scope } from "effect"
import { EMPTY_SCHEMA, storedSchemaOf } from "../../domain/DatasetSchema.js"
import { InternalFailure, type InvalidRequest, type RememberError, ServiceUnavailable } from "../../domain/Errors.js"
import { transcriptOf } from "../../domain/Messages.js"
import type { RememberRequest } from "../../domain/Remember.js"
import type { RememberOutcome } from "../../domain/Responses.js"
import type { ArtifactRow, EdgeWithNames } from "../../domain/Rows.js"
import { toIso } from "../../domain/time.js"
import { beforeCommit } from "../../services/Database.js"
import type { RunObserver } from "../../services/RunObserver.js"
import { chunkText as splitIntoChunks, needsChunking } from "../chunking.js"
import { enrichmentRefusal, enrichText } from "../enrich/index.js"
import { makeRunRecorder } from "../RunRecorder.js"
import { precheckSeries, requestSeries, seriesAfterText, timeseriesRefusal } from "../series/index.js"
import type { StoredSeries } from "../series/store.js"
import { drainOutbox } from "../vectors.js"
import { vectorCache } from "./embed.js"
import { doneLookahead, type Lookahead, lookahead } from "./lookahead.js"
import { documentOutcome, unitOutcome } from "./response.js"
import { inDataset, type RememberServices, type RunContext } from "./RunContext.js"
import { type StoredUnit, storeUnit, type Unit, type UnitWork, unitWork } from "./unit.js"

/** The classifier sees at most the first 32 KiB of the text (spec: Classify complexity). */
const CLASSIFIER_INPUT_BYTES = 32 * 1024

const nowIso = Effect.map(Clock.currentTimeMillis, toIso)

const firstBytes = (text: string, bytes: number): string => {
  const buf = Buffer.from(text, "utf8")
  return buf.length <= bytes ? text : buf.subarray(0, bytes).toString("utf8").replace(/\uFFFD$/, "")
}

/**
 * A text as units: one, or its chunks in order. A run that goes on after chunks an earlier
 * attempt stored has only the chunks after them, and the document they were stored under.
 */
interface TextUnits {
  readonly chunked: boolean
  readonly units: ReadonlyArray<Unit>
  /** the chunks before `units`, stored by an earlier attempt */
  readonly skipped: number
  readonly document: ArtifactRow | null
}

/** The text once stored: its units as stored, the series written with it, the context after. */
interface RememberedText {
  readonly ctx: RunContext
  readonly chunked: boolean
  readonly units: ReadonlyArray<StoredUnit>
  readonly series: ReadonlyArray<StoredSeries>
}

/**
 * What this server cannot serve for a text: no LLM (which the manager refuses before it queues
 * the request; a run taken over from a process configured otherwise meets it here), web_search
 * or timeseries.fetch without their providers.
 */
const textRefusal = (
  deps: RememberServices,
  request: RememberRequest
): ServiceUnavailable | InvalidRequest | undefined => {
  if (deps.llm.unavailable !== undefined) return new ServiceUnavailable({ message: deps.llm.unavailable })
  const refusal = enrichmentRefusal(deps, request)
  if (refusal !== undefined) return new ServiceUnavailable({ message: refusal })
  return timeseriesRefusal(deps, request)
}

/** What the server cannot serve is refused before any work, with nothing done. */
const checkRequest = Effect.fnUntraced(function*(deps: RememberServices, request: RememberRequest) {
  const refusal = textRefusal(deps, request)
  if (refusal !== undefined) return yield* refusal
})

/**
 * The run's context: its recorder, reference time, and the dataset if it exists already, with
 * its schema, read once here (a schema set later applies to later runs: docs/SCHEMA.md).
 */
const openRun = Effect.fn("remember.open_run")(
  function*(deps: RememberServices, runId: number, request: RememberRequest, observer: RunObserver | undefined) {
    const recorder = makeRunRecorder(deps.runLog, runId, observer, { dataset: request.dataset })
    const existing = yield* deps.datasets.findWithSchema(request.user_id, request.dataset)
    return {
      deps,
      runId,
      request,
      referenceTime: request.reference_time ?? (yield* nowIso),
      recorder,
      cache: vectorCache(),
      // a new dataset is created by the first unit's transaction; the stores after it see it
      datasetId: Option.match(existing, { onNone: () => null, onSome: (d) => d.id }),
      // read before the dataset's lock: the store reads it again under the lock
      dataset: null,
      schema: Option.match(existing, { onNone: () => EMPTY_SCHEMA, onSome: (d) => storedSchemaOf(d.schema) })
    } satisfies RunContext
  }
)

/** Drains what earlier failed writes left in the outbox; logged, never fails this call. */
export const retryPendingVectors = Effect.fn("remember.retry_pending_vectors")(function*(deps: RememberServices) {
  yield* drainOutbox(deps).pipe(
    Effect.tap((n) => (n > 0 ? Effect.logInfo("wrote vectors left in the outbox", { vectors: n }) : Effect.void)),
    Effect.catchAll((e) => Effect.logWarning("vectors in the outbox still cannot be written", { error: e.message }))
  )
})

/** classify_complexity: advisory; a failure is logged and recorded, never fails the call. */
const classifyComplexity = Effect.fn("remember.classify_complexity")(function*(ctx: RunContext, text: string) {
  const { classifier } = ctx.deps
  if (!classifier.enabled) return
  yield* ctx.recorder.stage(
    "classify_complexity",
    classifier.classify(firstBytes(text, CLASSIFIER_INPUT_BYTES)),
    (result) => Option.match(result, { onNone: () => null, onSome: (r) => ({ ...r }) })
  ).pipe(
    Effect.tap((result) =>
      Option.match(result, {
        onNone: () => Effect.void,
        onSome: (r) =>
          Effect.logInfo("jev: remember text complexity", {
            complexity: r.complexity,
            confidence: r.confidence,
            latency_ms: r.latency_ms
          })
      })
    ),
    Effect.catchAll((e) => Effect.logWarning("classify_complexity failed; continuing", { error: e.message }))
  )
})

/** chunk_text: a text longer than chunk_size is cut into chunks (recorded); a shorter one is one unit. */
const chunkText = Effect.fn("remember.chunk_text")(function*(ctx: RunContext, text: string) {
  const { recorder, request, deps: { settings } } = ctx
  if (!needsChunking(text, settings.chunkSize)) {
    return {
      chunked: false,
      units: [{ text, kind: request.kind, chunk: null, parentId: null, metadata: conversationMetadata(request) }],
      skipped: 0,
      document: null
    } satisfies TextUnits
  }
  const options = { chunkSize: settings.chunkSize, overlapPercent: settings.chunkOverlapPercent }
  const chunks = yield* recorder.stage(
    "chunk_text",
    Effect.sync(() => splitIntoChunks(text, options)),
    (chunks) => ({ chunks: chunks.length, chunk_size: settings.chunkSize }),
    (chunks) => ({
      arguments: { chunk_size: settings.chunkSize, overlap_percent: settings.chunkOverlapPercent },
      observation: chunks.map(({ text: _, ...place }) => place)
    })
  )
  const resumed = yield* resumePoint(ctx, chunks.length)
  const skipped = resumed?.skipped ?? 0
  yield* recorder.progress(skipped, chunks.length)
  const units = chunks.slice(skipped).map((chunk): Unit => ({
    text: chunk.text,
    kind: "chunk",
    chunk,
    parentId: null,
    // a chunk carries its document's metadata too: a fact's supporting text is the chunk
    metadata: withCallerMetadata(request, {
      index: chunk.index,
      tokens: chunk.tokens,
      overlap_tokens: chunk.overlap_tokens,
      start_offset: chunk.start_offset,
      end_offset: chunk.end_offset
    })
  }))
  return { chunked: true, units, skipped, document: resumed?.document ?? null } satisfies TextUnits
})

/**
 * The chunks an earlier attempt of this run stored (the queue keeps the count, written in each
 * chunk's store transaction) and their document: the run goes on after them. Chunking is
 * deterministic, so the same text gives the same chunks again.
 */
const resumePoint = Effect.fnUntraced(function*(ctx: RunContext, chunks: number) {
  const point = yield* ctx.deps.runLog.storedChunks(ctx.runId)
  if (Option.isNone(point)) return undefined
  const { documentId, storedChunks } = point.value
  const document = yield* ctx.deps.graph.getArtifact(documentId)
  if (Option.isNone(document) || storedChunks >= chunks) {
    return yield* new InternalFailure({
      message: `remember run ${ctx.runId} cannot go on after chunk ${storedChunks}: its document is gone`
    })
  }
  yield* Effect.logInfo("going on after the chunks an earlier attempt stored", { chunks: storedChunks, documentId })
  return { skipped: storedChunks, document: document.value }
})

/**
 * The remembered artifact's metadata: the caller's (`metadata`, src/domain/Metadata.ts), and a
 * conversation's messages' structure (who, when, and where in the transcript).
 */
const conversationMetadata = (request: RememberRequest): Record<string, unknown> | null =>
  withCallerMetadata(
    request,
    request.messages === undefined ? null : { messages: transcriptOf(request.messages, request.user_id).places }
  )

/** `own` (gligabao's keys) with the caller's metadata beside it; null when neither has any. */
const withCallerMetadata = (
  request: RememberRequest,
  own: Record<string, unknown> | null
): Record<string, unknown> | null => request.metadata === undefined ? own : { ...request.metadata, ...own }

/** Where a unit goes: a chunk under the document, which the first chunk's store writes. */
const placed = (request: RememberRequest, text: TextUnits, unit: Unit, stored: ReadonlyArray<StoredUnit>): Unit => {
  if (!text.chunked) return unit
  const parent = text.document ?? stored[0]?.parent ?? null
  if (parent === null) {
    return {
      ...unit,
      createParent: { kind: request.kind, text: request.text!, metadata: conversationMetadata(request) }
    }
  }
  return { ...unit, parentId: parent.id }
}

/**
 * The units through their stages. Their model work runs ahead of their in-order store by at
 * most chunk_concurrency units (lookahead.ts; 1 is the seed's one chunk after another), each
 * unit's with the context as the stores before its release left it; `startUnits` starts it
 * (in `prepareText`, before the run holds its dataset's lock). store_series runs in the last
 * unit's store transaction; a chunked text's required anchors are checked before its first
 * chunk is stored.
 */
const startUnits = (ctx: RunContext, text: TextUnits): Effect.Effect<UnitsWork, RememberError, Scope.Scope> =>
  text.units.length === 1
    // one unit, whose work prepareText awaits at once: done here, with no fiber to run ahead in
    ? Effect.map(unitWork(ctx, text.units[0]!), (done) => doneLookahead(done))
    : lookahead(
      text.units,
      ctx.deps.settings.chunkConcurrency,
      (unit, _, released: RunContext) => unitWork(released, unit),
      ctx
    )

type UnitsWork = Lookahead<UnitWork, RememberError, RunContext>

const storeText = Effect.fn("remember.store_text")(
  function*(ctx: RunContext, text: TextUnits, work: UnitsWork): Effect.fn.Return<RememberedText, RememberError> {
    const { units, chunked } = text
    const series = requestSeries(ctx.request)
    if (chunked) yield* precheckSeries(ctx, series, work, units.length)
    const stored: Array<StoredUnit> = []
    let current = ctx
    const total = text.skipped + units.length
    for (const [i, unit] of units.entries()) {
      const done = yield* work.result(i)
      const last = i === units.length - 1
      const withSeries = last && series.length > 0
        ? { series, chunked, earlier: stored.slice() }
        : undefined
      const storing = storeUnit(current, placed(ctx.request, text, unit, stored), done, withSeries)
      // the run's request leaves the queue with its last chunk: until then a crash goes on after
      // the last chunk stored (each store records it), so the commit hooks wait for the last one
      const unitStored = yield* (last ? storing : Effect.locally(storing, beforeCommit, []))
      stored.push(unitStored)
      current = inDataset(current, unitStored.dataset)
      yield* work.consumed(i, current)
      if (chunked) yield* ctx.recorder.progress(text.skipped + i + 1, total)
    }
    return { ctx: current, chunked, units: stored, series: stored.at(-1)?.series ?? [] }
  }
)

/**
 * A later chunk, a web search result or a series observation can close an edge the text
 * stored: the response reports every edge as it ends up.
 */
const finalEdges = Effect.fn("remember.final_edges")(function*(text: RememberedText) {
  const { request, deps } = text.ctx
  if (!text.chunked && !request.web_search && request.timeseries?.observations !== true) {
    return (e: EdgeWithNames) => e
  }
  const rows = yield* deps.graph.getEdges(text.units.flatMap((u) => u.edges.map((e) => e.id)))
  const byId = new Map(rows.map((e) => [e.id, e] as const))
  return (e: EdgeWithNames) => byId.get(e.id) ?? e
})

/** A text whose model work is under way: what `applyText` needs. */
export interface PreparedText {
  readonly apply: Effect.Effect<RememberOutcome, RememberError>
}

/**
 * The text's work that reads and writes no dataset, done before the run holds its dataset's
 * lock (while earlier runs of the dataset are stored): classify_complexity, chunk_text, and
 * the units' model work (extract_graph, summarize_chunk, the embeddings ahead) started in
 * `scope`, which must stay open until `apply` has ended. It waits for the first unit's work,
 * so a short text is wholly extracted here and an unusable answer fails the run now, with
 * nothing stored. Its model calls are recorded in the run like any other; they carry the
 * dataset id as it was when the run started (null for a dataset an earlier run creates).
 */
export const prepareText = Effect.fn("remember.text.prepare")(
  function*(
    deps: RememberServices,
    runId: number,
    request: RememberRequest,
    observer?: RunObserver
  ): Effect.fn.Return<PreparedText, RememberError, Scope.Scope> {
    yield* Effect.annotateCurrentSpan("runId", runId)
    yield* checkRequest(deps, request)
    const ctx = yield* openRun(deps, runId, request, observer)
    yield* classifyComplexity(ctx, request.text!)
    const units = yield* chunkText(ctx, request.text!)
    const work = yield* startUnits(ctx, units)
    if (units.units.length > 0) yield* work.result(0)
    return { apply: applyText(ctx, units, work) }
  }
)

/**
 * The rest, in order under the dataset's lock: the dataset as the runs before this one left
 * it, then each unit's similarity lookup, candidates, resolve_edges and store, then the
 * enrichments over the stored text.
 */
const applyText = Effect.fn("remember.text.apply")(
  function*(prepared: RunContext, units: TextUnits, work: UnitsWork): Effect.fn.Return<RememberOutcome, RememberError> {
    const { deps, request } = prepared
    yield* Effect.annotateCurrentSpan("runId", prepared.runId)
    // vectors a failed write left behind are retried first; a failure here is not this call's
    yield* retryPendingVectors(deps)
    // an earlier run of the dataset may have created it since this run started
    const existing = yield* deps.datasets.find(request.user_id, request.dataset)
    const ctx: RunContext = Option.isSome(existing) ? inDataset(prepared, existing.value) : prepared
    const text = yield* storeText(ctx, units, work)
    // then, over the stored text, resolve_geo and web_search, then fetch_series and observe_series:
    // none of them fails the call
    const parts = text.units.map((u) => ({ artifactId: u.artifact.id, entities: u.entities, edges: u.edges }))
    const enrichments = yield* enrichText(text.ctx, parts)
    const seriesFields = yield* seriesAfterText(text.ctx, text.units, text.series)
    const final = yield* finalEdges(text)
    const outcome = text.chunked
      ? documentOutcome(deps.embeddings.enabled, text.units, final, units.document, units.skipped)
      : unitOutcome(deps.embeddings.enabled, text.units[0]!, final)
    return { ...outcome, response: { ...outcome.response, ...enrichments, ...seriesFields } }
  }
)

/** The whole text, `prepareText` then its `apply` (the caller holds the dataset's lock). */
export const rememberText = (
  deps: RememberServices,
  runId: number,
  request: RememberRequest,
  observer?: RunObserver
): Effect.Effect<RememberOutcome, RememberError> =>
  Effect.scoped(Effect.flatMap(prepareText(deps, runId, request, observer), (prepared) => prepared.apply))
