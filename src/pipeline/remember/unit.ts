/**
 * One unit of remembered text, on one code path for every kind: a short text, a chunk of a
 * document, a web search result, a series observation. Its model work (`unitWork`) needs
 * nothing stored, so units can do it concurrently; its reconciliation and store (`storeUnit`)
 * must run in order within a dataset.
 */
import { Clock, Effect } from "effect"
import { type RememberError, VectorWriteFailed } from "../../domain/Errors.js"
import type { ArtifactKind } from "../../domain/Stages.js"
import { toIso } from "../../domain/time.js"
import type { Chunk } from "../chunking.js"
import { withStepLabels } from "../RunRecorder.js"
import type { SeriesWrite, StoredSeries } from "../series/store.js"
import { drainOutbox } from "../vectors.js"
import { embedAhead, embedBeside, NO_VECTORS, type Vectors, withAhead } from "./ahead.js"
import { loadCandidates } from "./candidates.js"
import { likelyStoreTexts } from "./embed.js"
import { extractGraph, type Extraction } from "./extract.js"
import { needsModel, resolveEdges } from "./reconcile.js"
import type { RunContext } from "./RunContext.js"
import { store, type Stored } from "./store.js"
import { summarizeChunk, type Summary } from "./summarize.js"

export interface Unit {
  readonly text: string
  readonly kind: ArtifactKind
  /** set for a chunk of a document: it is summarized, and embedded into the chunk index */
  readonly chunk: Chunk | null
  readonly parentId: number | null
  /** the first chunk of a document also writes the document itself */
  readonly createParent?:
    | { readonly kind: ArtifactKind; readonly text: string; readonly metadata?: Record<string, unknown> | null }
    | undefined
  /** a web_search artifact's queries */
  readonly query?: string | null | undefined
  readonly metadata?: Record<string, unknown> | null | undefined
}

export interface UnitWork {
  readonly extraction: Extraction
  readonly summary: Summary | null
  /** vectors embedded ahead of the ordered steps (empty without embeddings) */
  readonly ahead: Vectors
}

export interface StoredUnit extends Stored {
  readonly work: UnitWork
  /** what store_series wrote in this unit's transaction (only the text's last unit has any) */
  readonly series: ReadonlyArray<StoredSeries>
}

const nowIso = Effect.map(Clock.currentTimeMillis, toIso)

/** A chunk's stages and calls carry its index for observers (the trajectory). */
const labelled = <A, E, R>(effect: Effect.Effect<A, E, R>, _ctx: RunContext, unit: Unit): Effect.Effect<A, E, R> =>
  unit.chunk === null ? effect : withStepLabels({ chunk: unit.chunk.index })(effect)

/**
 * The model work of a unit: it stores nothing, so units can do it concurrently. A chunk's
 * extraction and summary are independent calls and run together; then, with embeddings on,
 * the texts the ordered steps will embed are embedded ahead (see ahead.ts).
 */
export const unitWork = Effect.fn("remember.unit_work")(
  function*(ctx: RunContext, unit: Unit): Effect.fn.Return<UnitWork, RememberError> {
    // a text of one unit has no summary to wait for: no fibers to run one call
    const [extraction, summary] = unit.chunk === null
      ? [yield* extractGraph(ctx, unit.text), null]
      : yield* Effect.all([extractGraph(ctx, unit.text), summarizeChunk(ctx, unit.text)], { concurrency: 2 })
    const ahead = ctx.deps.embeddings.enabled
      ? yield* embedAhead(ctx, extraction.graph, unit.chunk === null ? [] : [unit.text, summary?.text])
      : NO_VECTORS
    return { extraction, summary, ahead }
  },
  labelled
)

/** After commit the vectors reach the store; a failure is a 502 with the rows already stored. */
const writeVectors = Effect.fnUntraced(function*(ctx: RunContext, stored: Stored) {
  const artifactId = (stored.parent ?? stored.artifact).id
  yield* drainOutbox(ctx.deps, stored.outboxIds).pipe(
    Effect.mapError((e) =>
      new VectorWriteFailed({
        message:
          `the text was stored (artifact ${artifactId}) but writing its vectors failed; they will be retried: ${e.message}`,
        dataset_id: stored.dataset.id,
        artifact_id: artifactId
      })
    )
  )
})

/**
 * Reconciles and stores a unit, then writes its vectors: in order, one unit at a time per
 * dataset, in the dataset `ctx` knows. With `series`, store_series runs in its transaction.
 * While resolve_edges asks the model, the texts the store will most likely embed that were not
 * embedded ahead (a repeat's stored wording, a stored entity's description) are embedded beside
 * it, so the store rarely waits for an embeddings round trip of its own.
 */
export const storeUnit = Effect.fn("remember.store_unit")(
  function*(
    ctx: RunContext,
    unit: Unit,
    work: UnitWork,
    series?: SeriesWrite
  ): Effect.fn.Return<StoredUnit, RememberError> {
    const cache = withAhead(work.ahead, ctx.cache)
    const candidates = yield* loadCandidates(ctx, work.extraction.graph, cache)
    const now = yield* nowIso
    const resolve = resolveEdges(ctx, candidates, now)
    const resolution = ctx.deps.embeddings.enabled && needsModel(candidates)
      ? yield* Effect.zipLeft(
        resolve,
        embedBeside(ctx, cache, likelyStoreTexts(work.extraction.graph.entities, candidates)),
        { concurrent: true }
      )
      : yield* resolve
    const stored = yield* store(ctx, { unit, work, candidates, plan: resolution.plan, now, cache }, series)
    yield* writeVectors(ctx, stored)
    // the vectors embedded ahead are not kept: a long document would hold every one of them
    return { ...stored, work: { ...work, ahead: NO_VECTORS } }
  },
  labelled
)
