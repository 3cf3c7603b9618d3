/**
 * The remember pipeline for a text (seed: How it works). A text is remembered as units:
 * today a unit is the whole text; chunking makes each chunk a unit on the same code path.
 * Each unit: extract_graph -> load_candidates -> resolve_edges -> store (one transaction).
 */
import { Clock, Effect, Option } from "effect"
import { type RememberError, ServiceUnavailable, VectorWriteFailed } from "../../domain/Errors.js"
import type { RememberRequest } from "../../domain/Remember.js"
import type { RememberOutcome } from "../../domain/Responses.js"
import { toIso } from "../../domain/time.js"
import type { CallContext, EmbedContext } from "../ModelCalls.js"
import { drainOutbox } from "../vectors.js"
import { makeRunRecorder, type RunRecorder } from "../RunRecorder.js"
import type { RememberDeps } from "./Deps.js"
import { type PreparedVectors, prepareVectors, type VectorCache } from "./embed.js"
import { extractGraph } from "./extract.js"
import { loadCandidates, needsModel, resolveEdges } from "./reconcile.js"
import { edgeOut, entityOut } from "./response.js"
import { findSimilarEntities } from "./similar.js"
import { storeText } from "./store.js"

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
  if (request.image !== undefined) return "remembering images is not available on this server yet"
  if (request.timeseries !== undefined) return "timeseries is not available on this server yet"
  if (request.web_search) return "web_search is not available on this server yet"
  return undefined
}

export const rememberText = (deps: RememberDeps, runId: number, request: RememberRequest): Effect.Effect<RememberOutcome, RememberError> =>
  Effect.gen(function*() {
    const refusal = unsupported(request)
    if (refusal !== undefined) return yield* new ServiceUnavailable({ message: refusal })
    const text = request.text!
    const recorder = makeRunRecorder(deps.runLog, runId)
    const referenceTime = request.reference_time ?? (yield* nowIso)
    const existing = yield* deps.datasets.find(request.user_id, request.dataset)
    const datasetId = Option.match(existing, { onNone: () => null, onSome: (d) => d.id })
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

    // Vectors a failed write left behind are retried first; a failure here is not this call's.
    yield* retryPendingVectors(deps)

    yield* classifyComplexity(deps, recorder, text)

    const extraction = yield* recorder.stage(
      "extract_graph",
      extractGraph(callContext("extract_graph"), { text, referenceTime, models: request.models, reasoning: request.reasoning }),
      (x) => ({ entities: x.graph.entities.length, edges: x.graph.edges.length, model: x.response.model })
    )

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
    const resolveInput = { candidates, referenceTime, now, models: request.models, reasoning: request.reasoning }
    const resolution = needsModel(candidates)
      ? yield* recorder.stage(
        "resolve_edges",
        resolveEdges(callContext("resolve_edges"), resolveInput),
        (r) => ({ closes: r.plan.closes.length, ignored: r.ignored.length })
      )
      : yield* resolveEdges(null, resolveInput)

    const stored = yield* recorder.stage(
      "store",
      Effect.flatMap(
        // embedded before the transaction opens: a failure stores nothing, and no call runs inside it
        deps.embeddings.enabled
          ? Effect.map(
            prepareVectors(embedContext("store"), cache, {
              entities: extraction.graph.entities,
              candidates,
              plan: resolution.plan
            }),
            (v) => v as PreparedVectors | null
          )
          : Effect.succeed(null),
        (vectors) =>
          storeText(deps, {
        userId: request.user_id,
        datasetName: request.dataset,
        kind: request.kind,
        text,
        parentId: null,
        sessionId: request.session_id ?? null,
        metadata: null,
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

    // After commit: the vectors reach the store; a failure is a 502 with the rows already stored.
    yield* drainOutbox(deps, stored.outboxIds).pipe(
      Effect.mapError((e) =>
        new VectorWriteFailed({
          message: `the text was stored (artifact ${stored.artifact.id}) but writing its vectors failed; they will be retried: ${e.message}`,
          dataset_id: stored.dataset.id,
          artifact_id: stored.artifact.id
        })
      )
    )

    const response = {
      artifact_id: stored.artifact.id,
      kind: stored.artifact.kind,
      valid_at: stored.artifact.valid_at,
      created_at: stored.artifact.created_at,
      ...(stored.artifact.session_id === null ? {} : { session_id: stored.artifact.session_id }),
      entities: stored.entities.map(entityOut),
      edges: stored.edges.map(edgeOut),
      invalidated_edges: stored.invalidated,
      ...(deps.embeddings.enabled
        ? { embedded_entities: stored.embeddedEntities, embedded_edges: stored.embeddedEdges }
        : {})
    }
    return { response, dataset_id: stored.dataset.id, artifact_id: stored.artifact.id }
  }).pipe(Effect.withSpan("remember.text", { attributes: { runId } }))
