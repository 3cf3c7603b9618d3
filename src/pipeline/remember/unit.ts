/**
 * One unit of remembered text, on one code path for every kind: a short text, a chunk of a
 * document, and (later stages) a web search result or a series observation. The model work
 * (`unitWork`: extract_graph, and summarize_chunk for a chunk) needs nothing stored; the
 * reconciliation and store (`storeUnit`: load_candidates -> resolve_edges -> store ->
 * vectors written) must run in order within a dataset.
 */
import { Clock, Effect } from "effect"
import { type AnchorNotFound, LlmFailed, type RememberError, VectorWriteFailed } from "../../domain/Errors.js"
import type { RememberRequest } from "../../domain/Remember.js"
import type { ArtifactKind } from "../../domain/Stages.js"
import { toIso } from "../../domain/time.js"
import type { Chunk } from "../chunking.js"
import { type CallContext, callLlm, type EmbedContext, type RecordedResponse } from "../ModelCalls.js"
import { buildSummarizeChunkPrompt, parseSummary, SUMMARIZE_CHUNK_MAX_TOKENS } from "../prompts/summarizeChunk.js"
import { type RunRecorder, withStepLabels } from "../RunRecorder.js"
import { drainOutbox } from "../vectors.js"
import { embedAhead, expectedTexts, NO_VECTORS, type Vectors, withAhead } from "./ahead.js"
import type { RememberDeps } from "./Deps.js"
import { type PreparedVectors, prepareVectors, type VectorCache } from "./embed.js"
import { extractGraph, type Extraction } from "./extract.js"
import { type Candidates, loadCandidates, needsModel, resolveEdges } from "./reconcile.js"
import { findSimilarEntities } from "./similar.js"
import { type Stored, storeText } from "./store.js"

/** What one remember call shares across its units. */
export interface RunScope {
  readonly deps: RememberDeps
  readonly runId: number
  readonly request: RememberRequest
  readonly referenceTime: string
  readonly recorder: RunRecorder
  /** text -> vector, so a text is embedded once per call */
  readonly cache: VectorCache
  /** the dataset, once it exists (the first store creates a new one) */
  datasetId: number | null
}

export const callContext = (scope: RunScope, runStage: string): CallContext => ({
  llm: scope.deps.llm,
  inferences: scope.deps.inferences,
  prices: scope.deps.settings.prices,
  type: "remember",
  runId: scope.runId,
  datasetId: scope.datasetId,
  recorder: scope.recorder,
  runStage
})

export const embedContext = (scope: RunScope, runStage: string): EmbedContext => ({
  embeddings: scope.deps.embeddings,
  inferences: scope.deps.inferences,
  prices: scope.deps.settings.prices,
  type: "remember",
  runId: scope.runId,
  datasetId: scope.datasetId,
  recorder: scope.recorder,
  runStage
})

export interface Unit {
  readonly text: string
  readonly kind: ArtifactKind
  /** set for a chunk of a document: it is summarized, and embedded into the chunk index */
  readonly chunk: Chunk | null
  readonly parentId: number | null
  /** the first chunk of a document also writes the document itself */
  readonly createParent?: { readonly kind: ArtifactKind; readonly text: string } | undefined
  /** a web_search artifact's queries */
  readonly query?: string | null | undefined
  readonly metadata?: Record<string, unknown> | null | undefined
  /**
   * store_series: runs last inside this unit's store transaction (its failure stores nothing);
   * the stage is recorded around store, so it has store's times
   */
  readonly series?: {
    readonly store: (stored: Stored) => Effect.Effect<void, AnchorNotFound>
    readonly detail: () => Record<string, unknown>
  } | undefined
}

export interface UnitWork {
  readonly extraction: Extraction
  readonly summary: { readonly text: string; readonly response: RecordedResponse } | null
  /** vectors embedded ahead of the ordered steps (empty without embeddings) */
  readonly ahead: Vectors
}

export interface StoredUnit extends Stored {
  readonly work: UnitWork
}

const nowIso = Effect.map(Clock.currentTimeMillis, toIso)

/** A chunk's stages and calls carry its index for observers (the trajectory). */
const labelled = (unit: Unit) =>
  unit.chunk === null ? <A, E, R>(e: Effect.Effect<A, E, R>) => e : withStepLabels({ chunk: unit.chunk.index })

/** load_candidates for observers: the names looked up, and every candidate with how it was found. */
const candidatesTrace = (c: Candidates) => ({
  arguments: {
    names: [...new Set(c.resolved.flatMap((r) => [r.edge.source, r.edge.target]))]
  },
  observation: {
    candidates: c.facts.map((f) => ({
      id: f.id,
      source: f.source_name,
      relation: f.relation,
      target: f.target_name,
      description: f.description,
      valid_at: f.valid_at,
      invalid_at: f.invalid_at,
      found_by: c.foundBy.get(f.id) ?? "name"
    })),
    stored_entities: c.storedEntities.map((e) => ({ id: e.id, name: e.name, type: e.type })),
    ...(c.similarityError === null ? {} : { similarity_error: c.similarityError })
  }
})

/** store for observers: what was written, in its stored state. */
const storedTrace = (s: Stored) => ({
  observation: {
    artifact_id: s.artifact.id,
    ...(s.parent === null ? {} : { parent_artifact_id: s.parent.id }),
    ...(s.summary === null ? {} : { summary_artifact_id: s.summary.id }),
    entities: s.entities.map((e) => ({ id: e.id, name: e.name, type: e.type })),
    edges: s.edges.map((e) => ({
      id: e.id,
      source: e.source_name,
      relation: e.relation,
      target: e.target_name,
      valid_at: e.valid_at,
      invalid_at: e.invalid_at,
      expired_at: e.expired_at
    })),
    inserted_edges: s.inserted,
    duplicate_edges: s.duplicates,
    invalidated_edges: s.invalidated
  }
})

const summarizeChunk = (scope: RunScope, text: string) =>
  Effect.gen(function*() {
    const prompt = buildSummarizeChunkPrompt({ referenceTime: scope.referenceTime, text })
    const response = yield* callLlm(callContext(scope, "summarize_chunk"), {
      stage: "summarize_chunk",
      model: scope.request.models.summarize_chunk,
      reasoning: scope.request.reasoning.summarize_chunk ?? "none",
      system: prompt.system,
      messages: [{ role: "user", content: prompt.user }],
      maxTokens: SUMMARIZE_CHUNK_MAX_TOKENS
    })
    const parsed = parseSummary(response.text)
    if (parsed._tag === "Left") {
      return yield* new LlmFailed({
        message: `summarize_chunk: unusable answer from the model: ${parsed.left}`,
        stage: "summarize_chunk"
      })
    }
    return { text: parsed.right, response }
  })

/**
 * The model work of a unit: it stores nothing, so units can do it concurrently. A chunk's
 * extraction and summary are independent calls and run together; then, with embeddings on,
 * the texts the ordered steps will embed are embedded ahead (see ahead.ts).
 */
export const unitWork = (scope: RunScope, unit: Unit) =>
  Effect.gen(function*() {
    const { recorder, request } = scope
    const extract = recorder.stage(
      "extract_graph",
      extractGraph(callContext(scope, "extract_graph"), {
        text: unit.text,
        referenceTime: scope.referenceTime,
        models: request.models,
        reasoning: request.reasoning
      }),
      (x) => ({ entities: x.graph.entities.length, edges: x.graph.edges.length, model: x.response.model }),
      (x) => ({ observation: { entities: x.graph.entities, edges: x.graph.edges } })
    )
    const summarize = unit.chunk === null ? Effect.succeed(null) : recorder.stage(
      "summarize_chunk",
      summarizeChunk(scope, unit.text),
      (x) => ({ model: x.response.model }),
      (x) => ({ observation: { summary: x.text } })
    )
    const [extraction, summary] = yield* Effect.all([extract, summarize], { concurrency: 2 })
    const ahead = scope.deps.embeddings.enabled
      ? yield* embedAhead(
        embedContext(scope, "store"),
        scope.cache,
        expectedTexts(extraction.graph, unit.chunk === null ? [] : [unit.text, summary?.text])
      )
      : NO_VECTORS
    return { extraction, summary, ahead } satisfies UnitWork
  }).pipe(labelled(unit))

/** Reconciles and stores a unit, then writes its vectors: in order, one unit at a time per dataset. */
export const storeUnit = (scope: RunScope, unit: Unit, work: UnitWork): Effect.Effect<StoredUnit, RememberError> =>
  Effect.gen(function*() {
    const { deps, recorder, request } = scope
    const { extraction, summary } = work
    const cache = withAhead(work.ahead, scope.cache)
    const choice = { models: request.models, reasoning: request.reasoning }
    const referenceTime = scope.referenceTime
    const candidates = yield* recorder.stage(
      "load_candidates",
      loadCandidates(
        {
          graph: deps.graph,
          maxCandidates: deps.settings.maxCandidates,
          similar: deps.embeddings.enabled
            ? (id, g) =>
              findSimilarEntities(
                {
                  vectors: deps.vectors,
                  topK: deps.settings.similarityTopK,
                  threshold: deps.settings.similarityThreshold
                },
                embedContext(scope, "load_candidates"),
                cache,
                id,
                g
              )
            : undefined
        },
        scope.datasetId,
        extraction.graph
      ),
      (c) => ({
        candidates: c.facts.length,
        stored_entities: c.storedEntities.length,
        found_by: Object.fromEntries(c.foundBy),
        ...(c.similarityError === null ? {} : { similarity_error: c.similarityError })
      }),
      candidatesTrace
    )

    // resolve_edges runs (and is logged) only when the model must be asked.
    const now = yield* nowIso
    const resolveInput = { candidates, referenceTime, now, ...choice }
    const resolution = needsModel(candidates)
      ? yield* recorder.stage(
        "resolve_edges",
        resolveEdges(callContext(scope, "resolve_edges"), resolveInput),
        (r) => ({ closes: r.plan.closes.length, ignored: r.ignored.length }),
        (r) => ({ observation: { facts: r.plan.facts, closes: r.plan.closes, ignored: r.ignored } })
      )
      : yield* resolveEdges(null, resolveInput)

    const isChunk = unit.chunk !== null
    const storeStage = recorder.stage(
      "store",
      Effect.flatMap(
        // embedded before the transaction opens: a failure stores nothing, and no call runs inside it
        deps.embeddings.enabled
          ? Effect.map(
            prepareVectors(embedContext(scope, "store"), cache, {
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
            kind: unit.kind,
            text: unit.text,
            parentId: unit.parentId,
            createParent: unit.createParent,
            summary: summary === null ? undefined : { text: summary.text, inferenceId: summary.response.inferenceId },
            sessionId: request.session_id ?? null,
            query: unit.query ?? null,
            metadata: unit.metadata ?? null,
            referenceTime,
            now,
            modelId: extraction.response.modelId,
            entities: extraction.graph.entities,
            candidates,
            plan: resolution.plan,
            vectors,
            inTransaction: unit.series?.store
          })
      ),
      (s) => ({
        artifact_id: s.artifact.id,
        inserted_edges: s.inserted,
        duplicate_edges: s.duplicates,
        closed_edges: s.invalidated.length
      }),
      storedTrace
    )
    const series = unit.series
    const result = yield* (series === undefined ? storeStage : recorder.stage("store_series", storeStage, () =>
      series.detail()))
    scope.datasetId = result.dataset.id

    // After commit: the vectors reach the store; a failure is a 502 with the rows already stored.
    yield* drainOutbox(deps, result.outboxIds).pipe(
      Effect.mapError((e) =>
        new VectorWriteFailed({
          message: `the text was stored (artifact ${
            (result.parent ?? result.artifact).id
          }) but writing its vectors failed; they will be retried: ${e.message}`,
          dataset_id: result.dataset.id,
          artifact_id: (result.parent ?? result.artifact).id
        })
      )
    )
    // the vectors embedded ahead are not kept: a long document would hold every one of them
    return { ...result, work: { ...work, ahead: NO_VECTORS } }
  }).pipe(labelled(unit))
