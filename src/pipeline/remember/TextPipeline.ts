/**
 * The remember pipeline for a text (seed: How it works; contracts section 4). A text is
 * remembered as units on one code path: a short text is one unit, a long one (a document) is
 * chunked and each chunk is a unit. Per unit: extract_graph (and summarize_chunk for a chunk)
 * -> load_candidates -> resolve_edges -> store (one transaction, vectors to the outbox) ->
 * vectors written. Beyond the seed, the units' model work (extraction, summary) runs
 * concurrently, bounded by chunk_concurrency, while reconciliation and storing run strictly
 * in document order: the result is the one a sequential run gives, and later chunks see the
 * facts of earlier ones. A failure in chunk k fails the call with k's error; chunks before k
 * stay stored and none after k is.
 */
import { Clock, Deferred, Effect, Exit, Option } from "effect"
import { LlmFailed, type LlmUnavailable, type RememberError, ServiceUnavailable, VectorWriteFailed } from "../../domain/Errors.js"
import type { EdgeWithNames } from "../../domain/Rows.js"
import type { ArtifactKind } from "../../domain/Stages.js"
import { type Chunk, chunkText, needsChunking } from "../chunking.js"
import { callLlm, type RecordedResponse } from "../ModelCalls.js"
import { buildSummarizeChunkPrompt, parseSummary, SUMMARIZE_CHUNK_MAX_TOKENS } from "../prompts/summarizeChunk.js"
import type { RememberRequest } from "../../domain/Remember.js"
import type { RememberOutcome } from "../../domain/Responses.js"
import { toIso } from "../../domain/time.js"
import type { CallContext, EmbedContext } from "../ModelCalls.js"
import { drainOutbox } from "../vectors.js"
import { makeRunRecorder, type RunRecorder } from "../RunRecorder.js"
import type { RememberDeps } from "./Deps.js"
import { type PreparedVectors, prepareVectors, type VectorCache } from "./embed.js"
import { type Extraction, extractGraph } from "./extract.js"
import { loadCandidates, needsModel, resolveEdges } from "./reconcile.js"
import { edgeOut, entityOut } from "./response.js"
import { findSimilarEntities } from "./similar.js"
import { type Stored, storeText } from "./store.js"

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
const unsupported = (request: RememberRequest): string | undefined => {
  if (request.timeseries !== undefined) return "timeseries is not available on this server yet"
  if (request.web_search) return "web_search is not available on this server yet"
  return undefined
}

/** One unit of a text: the whole text, or one chunk of a document. */
interface Unit {
  readonly text: string
  readonly chunk: Chunk | null
}

interface UnitWork {
  readonly extraction: Extraction
  readonly summary: { readonly text: string; readonly response: RecordedResponse } | null
}

const summarizeChunk = (ctx: CallContext, request: RememberRequest, referenceTime: string, text: string) =>
  Effect.gen(function*() {
    const prompt = buildSummarizeChunkPrompt({ referenceTime, text })
    const response = yield* callLlm(ctx, {
      stage: "summarize_chunk",
      model: request.models.summarize_chunk,
      reasoning: request.reasoning.summarize_chunk ?? "none",
      system: prompt.system,
      messages: [{ role: "user", content: prompt.user }],
      maxTokens: SUMMARIZE_CHUNK_MAX_TOKENS
    })
    const parsed = parseSummary(response.text)
    if (parsed._tag === "Left") {
      return yield* new LlmFailed({ message: `summarize_chunk: unusable answer from the model: ${parsed.left}`, stage: "summarize_chunk" })
    }
    return { text: parsed.right, response }
  })

export const rememberText = (deps: RememberDeps, runId: number, request: RememberRequest): Effect.Effect<RememberOutcome, RememberError> =>
  Effect.gen(function*() {
    const refusal = unsupported(request)
    if (refusal !== undefined) return yield* new ServiceUnavailable({ message: refusal })
    const text = request.text!
    const recorder = makeRunRecorder(deps.runLog, runId)
    const referenceTime = request.reference_time ?? (yield* nowIso)
    const existing = yield* deps.datasets.find(request.user_id, request.dataset)
    // the dataset is created by the first unit's transaction; later units see it
    let datasetId = Option.match(existing, { onNone: () => null, onSome: (d) => d.id })
    const callContext = (runStage: string): CallContext => ({
      llm: deps.llm,
      inferences: deps.inferences,
      prices: deps.settings.prices,
      type: "remember",
      runId,
      datasetId,
      recorder,
      runStage
    })
    const embedContext = (runStage: string): EmbedContext => ({
      embeddings: deps.embeddings,
      inferences: deps.inferences,
      prices: deps.settings.prices,
      type: "remember",
      runId,
      datasetId,
      recorder,
      runStage
    })
    const cache: VectorCache = new Map()
    const choice = { models: request.models, reasoning: request.reasoning }

    // Vectors a failed write left behind are retried first; a failure here is not this call's.
    yield* retryPendingVectors(deps)

    yield* classifyComplexity(deps, recorder, text)

    const chunked = needsChunking(text, deps.settings.chunkSize)
    const units: ReadonlyArray<Unit> = chunked
      ? (yield* recorder.stage(
        "chunk_text",
        Effect.sync(() => chunkText(text, { chunkSize: deps.settings.chunkSize, overlapPercent: deps.settings.chunkOverlapPercent })),
        (chunks) => ({ chunks: chunks.length, chunk_size: deps.settings.chunkSize })
      )).map((chunk) => ({ text: chunk.text, chunk }))
      : [{ text, chunk: null }]
    if (chunked) yield* recorder.progress(0, units.length)

    // The model work of every unit, started at once (bounded); its results are taken in order.
    const work = yield* Effect.forEach(units, () => Deferred.make<UnitWork, LlmFailed | LlmUnavailable | RememberError>())
    const unitWork = (unit: Unit) =>
      Effect.gen(function*() {
        const extraction = yield* recorder.stage(
          "extract_graph",
          extractGraph(callContext("extract_graph"), { text: unit.text, referenceTime, ...choice }),
          (x) => ({ entities: x.graph.entities.length, edges: x.graph.edges.length, model: x.response.model })
        )
        const summary = unit.chunk === null ? null : yield* recorder.stage(
          "summarize_chunk",
          summarizeChunk(callContext("summarize_chunk"), request, referenceTime, unit.text),
          (x) => ({ model: x.response.model })
        )
        return { extraction, summary }
      })
    yield* Effect.forEach(
      units,
      (unit, i) => unitWork(unit).pipe(Effect.exit, Effect.flatMap((exit) => Deferred.done(work[i]!, exit))),
      { concurrency: deps.settings.chunkConcurrency, discard: true }
    ).pipe(Effect.forkScoped)

    let parentId: number | null = null
    const stored: Array<Stored> = []
    for (const [i, unit] of units.entries()) {
      const { extraction, summary } = yield* Deferred.await(work[i]!)
      stored.push(yield* storeUnit(unit, extraction, summary, parentId))
      if (chunked) {
        parentId = stored[0]!.parent!.id
        yield* recorder.progress(i + 1, units.length)
      }
    }
    if (!chunked) return unitOutcome(stored[0]!)
    // a later chunk can close an edge an earlier one stored: report every edge as it ends up
    const finalEdges = new Map(
      (yield* deps.graph.getEdges(stored.flatMap((u) => u.edges.map((e) => e.id)))).map((e) => [e.id, e] as const)
    )
    return documentOutcome(stored, (e) => finalEdges.get(e.id) ?? e)

    function storeUnit(unit: Unit, extraction: Extraction, summary: UnitWork["summary"], parent: number | null) {
      return Effect.gen(function*() {
        const candidates = yield* recorder.stage(
          "load_candidates",
          loadCandidates({
            graph: deps.graph,
            maxCandidates: deps.settings.maxCandidates,
            similar: deps.embeddings.enabled
              ? (id, g) =>
                findSimilarEntities(
                  { vectors: deps.vectors, topK: deps.settings.similarityTopK, threshold: deps.settings.similarityThreshold },
                  embedContext("load_candidates"),
                  cache,
                  id,
                  g
                )
              : undefined
          }, datasetId, extraction.graph),
          (c) => ({
            candidates: c.facts.length,
            stored_entities: c.storedEntities.length,
            found_by: Object.fromEntries(c.foundBy),
            ...(c.similarityError === null ? {} : { similarity_error: c.similarityError })
          })
        )

        // resolve_edges runs (and is logged) only when the model must be asked.
        const now = yield* nowIso
        const resolveInput = { candidates, referenceTime, now, ...choice }
        const resolution = needsModel(candidates)
          ? yield* recorder.stage(
            "resolve_edges",
            resolveEdges(callContext("resolve_edges"), resolveInput),
            (r) => ({ closes: r.plan.closes.length, ignored: r.ignored.length })
          )
          : yield* resolveEdges(null, resolveInput)

        const isChunk = unit.chunk !== null
        const result = yield* recorder.stage(
          "store",
          Effect.flatMap(
            // embedded before the transaction opens: a failure stores nothing, and no call runs inside it
            deps.embeddings.enabled
              ? Effect.map(
                prepareVectors(embedContext("store"), cache, {
                  entities: extraction.graph.entities,
                  candidates,
                  plan: resolution.plan,
                  chunkText: isChunk ? unit.text : undefined,
                  summaryText: summary?.text
                }),
                (v) => v as PreparedVectors | null
              )
              : Effect.succeed(null),
            (vectors) =>
              storeText(deps, {
                userId: request.user_id,
                datasetName: request.dataset,
                kind: isChunk ? "chunk" : request.kind as ArtifactKind,
                text: unit.text,
                parentId: parent,
                createParent: isChunk && parent === null ? { kind: request.kind, text } : undefined,
                summary: summary === null ? undefined : { text: summary.text, inferenceId: summary.response.inferenceId },
                sessionId: request.session_id ?? null,
                metadata: unit.chunk === null ? null : {
                  index: unit.chunk.index,
                  tokens: unit.chunk.tokens,
                  overlap_tokens: unit.chunk.overlap_tokens,
                  start_offset: unit.chunk.start_offset,
                  end_offset: unit.chunk.end_offset
                },
                referenceTime,
                now,
                modelId: extraction.response.modelId,
                entities: extraction.graph.entities,
                candidates,
                plan: resolution.plan,
                vectors
              })
          ),
          (s) => ({ artifact_id: s.artifact.id, inserted_edges: s.inserted, duplicate_edges: s.duplicates, closed_edges: s.invalidated.length })
        )
        datasetId = result.dataset.id

        // After commit: the vectors reach the store; a failure is a 502 with the rows already stored.
        yield* drainOutbox(deps, result.outboxIds).pipe(
          Effect.mapError((e) =>
            new VectorWriteFailed({
              message: `the text was stored (artifact ${(result.parent ?? result.artifact).id}) but writing its vectors failed; they will be retried: ${e.message}`,
              dataset_id: result.dataset.id,
              artifact_id: (result.parent ?? result.artifact).id
            })
          )
        )
        return { ...result, summaryWork: summary }
      })
    }

    function embedded(units: ReadonlyArray<Stored>) {
      if (!deps.embeddings.enabled) return {}
      return {
        embedded_entities: units.reduce((n, u) => n + u.embeddedEntities, 0),
        embedded_edges: units.reduce((n, u) => n + u.embeddedEdges, 0)
      }
    }

    function unitOutcome(unit: Stored): RememberOutcome {
      const response = {
        artifact_id: unit.artifact.id,
        kind: unit.artifact.kind,
        valid_at: unit.artifact.valid_at,
        created_at: unit.artifact.created_at,
        ...(unit.artifact.session_id === null ? {} : { session_id: unit.artifact.session_id }),
        entities: unit.entities.map(entityOut),
        edges: unit.edges.map(edgeOut),
        invalidated_edges: unit.invalidated,
        ...embedded([unit])
      }
      return { response, dataset_id: unit.dataset.id, artifact_id: unit.artifact.id }
    }

    function documentOutcome(units: ReadonlyArray<Stored>, final: (e: EdgeWithNames) => EdgeWithNames): RememberOutcome {
      const parent = units[0]!.parent!
      const byId = <A extends { readonly id: number }>(rows: ReadonlyArray<A>) => [...new Map(rows.map((r) => [r.id, r])).values()]
      const chunks = units.map((u) => {
        const meta = u.artifact.metadata ?? {}
        const work = (u as Stored & { summaryWork: UnitWork["summary"] }).summaryWork
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
