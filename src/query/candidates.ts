/**
 * The ranked candidates of a query per source, before fusion: full text (SearchRepo's matches)
 * and vectors (the query embedded once, then the dataset's indexes; each entity and fact hit
 * checked against its row with the request's filters, since the vector store knows nothing of
 * validity, sessions or kinds). A failed embedding or vector query is a warning: full text
 * still answers. The graph source needs the fused matches, so retrieve.ts walks it after.
 */
import { Deferred, Effect } from "effect"
import type { DatasetRow } from "../domain/Rows.js"
import { embedForRead } from "../pipeline/ModelCalls.js"
import { indexName, type VectorKind } from "../pipeline/vectors.js"
import { lookupConcurrency, type ReadFilters } from "../services/SearchRepo.js"
import { queryEach } from "../services/VectorStore.js"
import type { ReadDeps } from "./deps.js"

/** Vector hits below this cosine similarity are noise, not candidates. */
export const MIN_SIMILARITY = 0.2

/** The indexes a search asks: the ranked rows', then the passages'. */
const RANKED_KINDS: ReadonlyArray<VectorKind> = ["entities", "edges"]
const ALL_KINDS: ReadonlyArray<VectorKind> = [...RANKED_KINDS, "chunks", "summaries"]

/** Each source's ids, best first. */
export interface Candidates {
  readonly fulltext: { readonly entities: ReadonlyArray<number>; readonly facts: ReadonlyArray<number> }
  /** entities and facts that pass the filters; chunks and summaries as found (passages check theirs) */
  readonly vector: {
    readonly entities: ReadonlyArray<number>
    readonly facts: ReadonlyArray<number>
    readonly chunks: ReadonlyArray<number>
    readonly summaries: ReadonlyArray<number>
  }
  /** a source that could not run (e.g. the embeddings provider failed); the others still did */
  readonly warnings: ReadonlyArray<string>
  /** waits for the query's gb_inferences row (written beside the search), which a read joins before it answers */
  readonly recorded: Effect.Effect<void>
}

type VectorHits = Readonly<Record<VectorKind, ReadonlyArray<number>>> & {
  readonly warning: string | null
  readonly recorded: Effect.Effect<void>
}

const noHits: VectorHits = { entities: [], edges: [], chunks: [], summaries: [], warning: null, recorded: Effect.void }

/** `entity-12` -> 12 (spec/contracts.md section 10 names the vectors) */
const idOf = (vectorId: string): number | undefined => {
  const id = Number(vectorId.slice(vectorId.lastIndexOf("-") + 1))
  return Number.isSafeInteger(id) && id > 0 ? id : undefined
}

/**
 * The query embedded once (a gb_inferences row of type `query`, stage `embed`), then the
 * `kinds` indexes of the dataset. `started` is told just before the searches are sent (a store
 * sends before it first waits, so they are on their way when the told fiber runs), or once
 * there is nothing to send.
 */
const vectorHits = (
  deps: ReadDeps,
  dataset: DatasetRow,
  query: string,
  k: number,
  kinds: ReadonlyArray<VectorKind>,
  started: Deferred.Deferred<void>
): Effect.Effect<VectorHits> => {
  const { embeddings, vectors } = deps
  if (embeddings === null || vectors === null) return Effect.as(Deferred.succeed(started, undefined), noHits)
  return Effect.gen(function*() {
    const { recorded, result } = yield* embedForRead({
      embeddings,
      inferences: deps.inferences,
      prices: deps.prices,
      type: "query",
      datasetId: dataset.id
    }, [query])
    const hits = yield* Effect.gen(function*() {
      const vector = (yield* result).vectors[0]
      if (vector === undefined) return noHits
      // every index in one call (the store may answer them in one round trip), sent once told
      const answers = yield* Effect.zipRight(
        Deferred.succeed(started, undefined),
        queryEach(
          vectors,
          kinds.map((kind) => ({ index: indexName(dataset.id, kind), vector, k, minScore: MIN_SIMILARITY })),
          "unbounded"
        )
      )
      const found = new Map(kinds.map((kind, i) => [kind, answers[i]!.flatMap((m) => idOf(m.id) ?? [])] as const))
      const of = (kind: VectorKind) => found.get(kind) ?? []
      return {
        ...noHits,
        entities: of("entities"),
        edges: of("edges"),
        chunks: of("chunks"),
        summaries: of("summaries")
      }
    }).pipe(
      Effect.catchAll((e) =>
        Effect.as(Effect.logWarning("search: the vector source failed; using the others", { error: e.message }), {
          ...noHits,
          warning: `vector search failed: ${e.message}`
        })
      )
    )
    return { ...hits, recorded }
  }).pipe(Effect.ensuring(Deferred.succeed(started, undefined)))
}

/**
 * `fullText` once `vectors` has sent its searches, the two then running side by side. On SQLite
 * a full-text statement holds the thread for as long as it runs, while the vector searches run
 * on a reader connection in a worker thread (a network service, with Pinecone): sent first, they
 * run beside the full-text statements instead of after them (BENCHMARKS.md, search).
 */
const vectorsFirst = <V, T>(
  vectors: (started: Deferred.Deferred<void>) => Effect.Effect<V>,
  fullText: Effect.Effect<T>
): Effect.Effect<readonly [V, T]> =>
  Effect.flatMap(
    Deferred.make<void>(),
    (started) =>
      Effect.all([vectors(started), Effect.zipRight(Deferred.await(started), fullText)], {
        concurrency: "unbounded"
      })
  )

/** The full-text and vector candidates of `query`, at most `k` a source and list. */
export const candidatesOf = (
  deps: ReadDeps,
  dataset: DatasetRow,
  query: { readonly text: string; readonly terms: ReadonlyArray<string> },
  filters: ReadFilters,
  k: number,
  passages: boolean
): Effect.Effect<Candidates> =>
  Effect.gen(function*() {
    const { search } = deps
    const [hits, [textEntities, textFacts]] = yield* vectorsFirst(
      (started) => vectorHits(deps, dataset, query.text, k, passages ? ALL_KINDS : RANKED_KINDS, started),
      Effect.all([
        search.matchEntities(dataset.id, query.terms, filters, k),
        search.matchFacts(dataset.id, query.terms, filters, k)
      ], { concurrency: "unbounded" })
    )
    const [passingFacts, passingEntities] = yield* Effect.all([
      search.passing("fact", dataset.id, hits.edges, filters),
      search.passing("entity", dataset.id, hits.entities, filters)
    ], { concurrency: lookupConcurrency(search) })
    return {
      fulltext: { entities: textEntities.map((m) => m.id), facts: textFacts.map((m) => m.id) },
      vector: {
        entities: hits.entities.filter((id) => passingEntities.has(id)),
        facts: hits.edges.filter((id) => passingFacts.has(id)),
        chunks: hits.chunks,
        summaries: hits.summaries
      },
      warnings: hits.warning === null ? [] : [hits.warning],
      recorded: hits.recorded
    }
  }).pipe(Effect.withSpan("Retrieval.candidates"))
