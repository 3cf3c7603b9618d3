/**
 * The remember pipeline for a text (seed: How it works; contracts section 4). A text is
 * remembered as units on one code path: a short text is one unit, a long one (a document) is
 * chunked and each chunk is a unit. Per unit: extract_graph (and summarize_chunk for a chunk)
 * -> load_candidates -> resolve_edges -> store (one transaction, vectors to the outbox) ->
 * vectors written. Beyond the seed, the units' model work (extraction and summary together,
 * then the embeddings they predict) runs concurrently, up to chunk_concurrency units ahead
 * of the store, while reconciliation and storing run strictly in document order: the result is the one a sequential run gives, and later chunks see the
 * facts of earlier ones. A failure in chunk k fails the call with k's error; chunks before k
 * stay stored and none after k is.
 */
import { Clock, Effect, Option } from "effect"
import { type RememberError, ServiceUnavailable } from "../../domain/Errors.js"
import type { RememberRequest } from "../../domain/Remember.js"
import type { RememberOutcome } from "../../domain/Responses.js"
import type { EdgeWithNames } from "../../domain/Rows.js"
import { toIso } from "../../domain/time.js"
import type { RunObserver } from "../../services/RunObserver.js"
import { chunkText, needsChunking } from "../chunking.js"
import { enrichmentRefusal, enrichText } from "../enrich/index.js"
import { makeRunRecorder, type RunRecorder } from "../RunRecorder.js"
import { seriesAfterText, storeSeriesStep, timeseriesRefusal } from "../series/index.js"
import { drainOutbox } from "../vectors.js"
import type { RememberDeps } from "./Deps.js"
import { vectorCache } from "./embed.js"
import { lookahead } from "./lookahead.js"
import { edgeOut, entityOut } from "./response.js"
import type { Stored } from "./store.js"
import { type RunScope, type StoredUnit, storeUnit, type Unit, unitWork } from "./unit.js"

/** The classifier sees at most the first 32 KiB of the text (spec: Classify complexity). */
const CLASSIFIER_INPUT_BYTES = 32 * 1024

const nowIso = Effect.map(Clock.currentTimeMillis, toIso)

const firstBytes = (text: string, bytes: number): string => {
  const buf = Buffer.from(text, "utf8")
  return buf.length <= bytes ? text : buf.subarray(0, bytes).toString("utf8").replace(/\uFFFD$/, "")
}

/** classify_complexity: advisory; a failure is logged and recorded, never fails the call. */
const classifyComplexity = (deps: RememberDeps, recorder: RunRecorder, text: string) =>
  deps.classifier.enabled
    ? recorder.stage(
      "classify_complexity",
      deps.classifier.classify(firstBytes(text, CLASSIFIER_INPUT_BYTES)),
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
    : Effect.void

/** Drains what earlier failed writes left in the outbox; logged, never fails this call. */
export const retryPendingVectors = (deps: RememberDeps) =>
  drainOutbox(deps).pipe(
    Effect.tap((n) => (n > 0 ? Effect.logInfo("wrote vectors left in the outbox", { vectors: n }) : Effect.void)),
    Effect.catchAll((e) => Effect.logWarning("vectors in the outbox still cannot be written", { error: e.message })),
    Effect.asVoid
  )

/** Features that later stages implement; refusing them beats silently ignoring them. */
const unsupported = (deps: RememberDeps, request: RememberRequest): string | undefined => {
  return enrichmentRefusal(deps, request)
}

export const rememberText = (
  deps: RememberDeps,
  runId: number,
  request: RememberRequest,
  observer?: RunObserver
): Effect.Effect<RememberOutcome, RememberError> =>
  Effect.gen(function*() {
    const refusal = unsupported(deps, request)
    if (refusal !== undefined) return yield* new ServiceUnavailable({ message: refusal })
    const seriesRefusal = timeseriesRefusal(deps, request)
    if (seriesRefusal !== undefined) return yield* seriesRefusal
    const text = request.text!
    const recorder = makeRunRecorder(deps.runLog, runId, observer)
    const existing = yield* deps.datasets.find(request.user_id, request.dataset)
    const scope: RunScope = {
      deps,
      runId,
      request,
      referenceTime: request.reference_time ?? (yield* nowIso),
      recorder,
      cache: vectorCache(),
      // the dataset is created by the first unit's transaction; later units see it
      datasetId: Option.match(existing, { onNone: () => null, onSome: (d) => d.id })
    }

    // Vectors a failed write left behind are retried first; a failure here is not this call's.
    yield* retryPendingVectors(deps)

    yield* classifyComplexity(deps, recorder, text)

    const chunked = needsChunking(text, deps.settings.chunkSize)
    const units: ReadonlyArray<Unit> = chunked
      ? (yield* recorder.stage(
        "chunk_text",
        Effect.sync(() =>
          chunkText(text, { chunkSize: deps.settings.chunkSize, overlapPercent: deps.settings.chunkOverlapPercent })
        ),
        (chunks) => ({ chunks: chunks.length, chunk_size: deps.settings.chunkSize }),
        (chunks) => ({
          arguments: { chunk_size: deps.settings.chunkSize, overlap_percent: deps.settings.chunkOverlapPercent },
          observation: chunks.map(({ text: _, ...place }) => place)
        })
      )).map((chunk): Unit => ({
        text: chunk.text,
        kind: "chunk",
        chunk,
        parentId: null,
        metadata: {
          index: chunk.index,
          tokens: chunk.tokens,
          overlap_tokens: chunk.overlap_tokens,
          start_offset: chunk.start_offset,
          end_offset: chunk.end_offset
        }
      }))
      : [{ text, kind: request.kind, chunk: null, parentId: null }]
    if (chunked) yield* recorder.progress(0, units.length)

    // The units' model work runs ahead of their in-order store by at most chunk_concurrency
    // units (lookahead.ts); 1 is the seed's one chunk after another.
    const work = yield* lookahead(units, deps.settings.chunkConcurrency, (unit) => unitWork(scope, unit))

    const stored: Array<StoredUnit> = []
    // store_series runs in the last unit's store transaction (a chunked text: anchored to the parent)
    const seriesStep = storeSeriesStep(scope, chunked, () => stored)
    yield* seriesStep.precheck(work, units.length)
    for (const [i, unit] of units.entries()) {
      const done = yield* work.result(i)
      // the first chunk also writes the document; the others hang off it
      const parent = stored[0]?.parent ?? null
      const placed: Unit = !chunked
        ? unit
        : parent === null
        ? { ...unit, createParent: { kind: request.kind, text } }
        : { ...unit, parentId: parent.id }
      stored.push(yield* storeUnit(scope, seriesStep.attach(placed, i === units.length - 1), done))
      yield* work.consumed(i)
      if (chunked) yield* recorder.progress(i + 1, units.length)
    }
    // after the text is stored: resolve_geo, web_search (they never fail the call)
    const enrichments = yield* enrichText(
      scope,
      stored.map((u) => ({ artifactId: u.artifact.id, entities: u.entities, edges: u.edges }))
    )
    // then fetch_series, observe_series (they never fail the call either)
    const seriesFields = yield* seriesAfterText(scope, stored, seriesStep.stored())
    const withEnrichments = (outcome: RememberOutcome): RememberOutcome => ({
      ...outcome,
      response: { ...outcome.response, ...enrichments, ...seriesFields }
    })
    // a later chunk, a web search result or a series observation can close an edge the text stored: report every edge as it ends up
    const finalEdges = chunked || request.web_search || request.timeseries?.observations === true
      ? new Map(
        (yield* deps.graph.getEdges(stored.flatMap((u) => u.edges.map((e) => e.id)))).map((e) => [e.id, e] as const)
      )
      : new Map<number, EdgeWithNames>()
    const final = (e: EdgeWithNames) => finalEdges.get(e.id) ?? e
    if (!chunked) return withEnrichments(unitOutcome(stored[0]!, final))
    return withEnrichments(documentOutcome(stored, final))

    function embedded(units: ReadonlyArray<Stored>) {
      if (!deps.embeddings.enabled) return {}
      return {
        embedded_entities: units.reduce((n, u) => n + u.embeddedEntities, 0),
        embedded_edges: units.reduce((n, u) => n + u.embeddedEdges, 0)
      }
    }

    function unitOutcome(unit: Stored, final: (e: EdgeWithNames) => EdgeWithNames): RememberOutcome {
      const response = {
        artifact_id: unit.artifact.id,
        kind: unit.artifact.kind,
        valid_at: unit.artifact.valid_at,
        created_at: unit.artifact.created_at,
        ...(unit.artifact.session_id === null ? {} : { session_id: unit.artifact.session_id }),
        entities: unit.entities.map(entityOut),
        edges: unit.edges.map((e) => edgeOut(final(e))),
        invalidated_edges: unit.invalidated,
        ...embedded([unit])
      }
      return { response, dataset_id: unit.dataset.id, artifact_id: unit.artifact.id }
    }

    function documentOutcome(
      units: ReadonlyArray<StoredUnit>,
      final: (e: EdgeWithNames) => EdgeWithNames
    ): RememberOutcome {
      const parent = units[0]!.parent!
      const byId = <A extends { readonly id: number }>(
        rows: ReadonlyArray<A>
      ) => [...new Map(rows.map((r) => [r.id, r])).values()]
      const chunks = units.map((u) => {
        const meta = u.artifact.metadata ?? {}
        const work = u.work.summary
        return {
          artifact_id: u.artifact.id,
          index: meta.index,
          tokens: meta.tokens,
          overlap_tokens: meta.overlap_tokens,
          start_offset: meta.start_offset,
          end_offset: meta.end_offset,
          entities: u.entities.map(entityOut),
          edges: u.edges.map((e) => edgeOut(final(e))),
          summary: u.summary === null || work === null
            ? null
            : {
              artifact_id: u.summary.id,
              text: u.summary.text,
              model: work.response.model,
              reasoning: work.response.reasoning,
              inference_id: work.response.inferenceId
            }
        }
      })
      const response = {
        artifact_id: parent.id,
        kind: parent.kind,
        valid_at: parent.valid_at,
        created_at: parent.created_at,
        ...(parent.session_id === null ? {} : { session_id: parent.session_id }),
        entities: byId(units.flatMap((u) => u.entities)).map(entityOut),
        edges: byId(units.flatMap((u) => u.edges)).map((e) => edgeOut(final(e))),
        invalidated_edges: [...new Set(units.flatMap((u) => u.invalidated))],
        chunks,
        ...embedded(units),
        ...(deps.embeddings.enabled
          ? {
            embedded_chunks: units.reduce((n, u) => n + u.embeddedChunks, 0),
            embedded_summaries: units.reduce((n, u) => n + u.embeddedSummaries, 0)
          }
          : {})
      }
      return { response, dataset_id: units[0]!.dataset.id, artifact_id: parent.id }
    }
  }).pipe(Effect.scoped, Effect.withSpan("remember.text", { attributes: { runId } }))
