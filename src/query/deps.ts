/**
 * What the read programs use, gathered once (by a handler's layer, the CLI, or `readDeps`).
 * The model services are optional: an app composed without embeddings or a vector store still
 * searches (full text and graph), and one without an LLM still searches (query is then a 503).
 */
import { Clock, Effect, Option } from "effect"
import { NotFound } from "../domain/Errors.js"
import { conditionsOf } from "../domain/Filters.js"
import type { DatasetRow } from "../domain/Rows.js"
import { toIso } from "../domain/time.js"
import type { PriceTable } from "../kernel/cost.js"
import { RememberSettings } from "../pipeline/Settings.js"
import { DatasetsRepo } from "../services/DatasetsRepo.js"
import { Embeddings } from "../services/Embeddings.js"
import { InferencesRepo } from "../services/InferencesRepo.js"
import { Llm } from "../services/Llm.js"
import type { ReadFilters } from "../services/SearchRepo.js"
import { SearchRepo } from "../services/SearchRepo.js"
import { VectorStore } from "../services/VectorStore.js"
import type { ReadOptions, ReadScope } from "./requests.js"

export interface ReadDeps {
  readonly datasets: DatasetsRepo["Type"]
  readonly search: SearchRepo["Type"]
  readonly inferences: InferencesRepo["Type"]
  /** null: no embeddings service, or one that is not enabled (no vector source) */
  readonly embeddings: Embeddings["Type"] | null
  readonly vectors: VectorStore["Type"] | null
  readonly llm: Llm["Type"] | null
  /** for the cost of query's model calls (the server's [prices]) */
  readonly prices: PriceTable
}

/**
 * The dependencies from the context. Every composition provides the model services; one without
 * embeddings provides a disabled `Embeddings` (no vector source), one without an LLM key an `Llm`
 * that fails with LlmUnavailable.
 */
export const readDeps: Effect.Effect<
  ReadDeps,
  never,
  DatasetsRepo | SearchRepo | InferencesRepo | Embeddings | VectorStore | Llm | RememberSettings
> = Effect.gen(function*() {
  const embeddings = yield* Embeddings
  return {
    datasets: yield* DatasetsRepo,
    search: yield* SearchRepo,
    inferences: yield* InferencesRepo,
    embeddings: embeddings.enabled ? embeddings : null,
    vectors: yield* VectorStore,
    llm: yield* Llm,
    prices: (yield* RememberSettings).prices
  }
})

/**
 * The user's live dataset of that name, if there is one. Every read starts here: it scopes the
 * read to the user. A read of a dataset nothing was stored in yet answers empty (search, query,
 * context, sessions, the export); only a read of a named row answers 404 (`findDataset`).
 */
export const datasetOf = (deps: ReadDeps, scope: ReadScope): Effect.Effect<Option.Option<DatasetRow>> =>
  deps.search.dataset(scope.user_id, scope.dataset)

/** The user's live dataset of that name, or NotFound (404): for reads of a named row and for deletes. */
export const findDataset = (deps: ReadDeps, scope: ReadScope): Effect.Effect<DatasetRow, NotFound> =>
  Effect.flatMap(datasetOf(deps, scope), (found) =>
    Option.match(found, {
      onNone: () => Effect.fail(new NotFound({ message: `no dataset ${JSON.stringify(scope.dataset)} for this user` })),
      onSome: Effect.succeed
    }))

/** The repository filters of a request read at `now` (canonical): as_of defaults to it. */
export const filtersAt = (options: ReadOptions, now: string): ReadFilters => ({
  asOf: options.as_of ?? now,
  knownAt: options.known_at ?? null,
  includeExpired: options.include_expired,
  sessionId: options.session_id ?? null,
  kind: options.kind ?? null,
  conditions: conditionsOf(options.filters)
})

/** The repository filters of a request; as_of defaults to now. */
export const filtersOf = (options: ReadOptions): Effect.Effect<ReadFilters> =>
  Effect.map(Clock.currentTimeMillis, (now) => filtersAt(options, toIso(now)))
