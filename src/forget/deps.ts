/** What the forget programs use, gathered from the context (a handler's layer, the CLI, the library). */
import { Effect, Option } from "effect"
import { DEFAULT_PRICES } from "../pipeline/cost.js"
import type { ReembedDeps } from "../pipeline/reembed.js"
import { RememberSettings } from "../pipeline/Settings.js"
import { Database } from "../services/Database.js"
import { DatasetsRepo } from "../services/DatasetsRepo.js"
import { Embeddings } from "../services/Embeddings.js"
import { ForgetRepo } from "../services/ForgetRepo.js"
import { GraphRepo } from "../services/GraphRepo.js"
import { InferencesRepo } from "../services/InferencesRepo.js"
import { VectorOutbox } from "../services/VectorOutbox.js"
import { VectorStore } from "../services/VectorStore.js"

export interface ForgetDeps extends ReembedDeps {
  readonly forget: ForgetRepo["Type"]
}

/** The user and dataset a forget or correction is scoped to (another user's row is a 404). */
export interface ForgetScope {
  readonly user_id: string
  readonly dataset: string
}

/** The dependencies when storage, embeddings and a vector store are all present (else None: a 503). */
export const forgetDepsOption: Effect.Effect<Option.Option<ForgetDeps>> = Effect.gen(function*() {
  const all = Option.all({
    database: yield* Effect.serviceOption(Database),
    datasets: yield* Effect.serviceOption(DatasetsRepo),
    graph: yield* Effect.serviceOption(GraphRepo),
    inferences: yield* Effect.serviceOption(InferencesRepo),
    embeddings: yield* Effect.serviceOption(Embeddings),
    vectors: yield* Effect.serviceOption(VectorStore),
    outbox: yield* Effect.serviceOption(VectorOutbox),
    forget: yield* Effect.serviceOption(ForgetRepo)
  })
  const settings = yield* Effect.serviceOption(RememberSettings)
  const prices = Option.match(settings, { onNone: () => DEFAULT_PRICES, onSome: (s) => s.prices })
  return Option.map(all, (deps): ForgetDeps => ({ ...deps, prices }))
})

/** The dependencies from the context, for the library and the CLI (the settings' prices when present). */
export const forgetDeps: Effect.Effect<
  ForgetDeps,
  never,
  Database | DatasetsRepo | GraphRepo | InferencesRepo | Embeddings | VectorStore | VectorOutbox | ForgetRepo
> = Effect.gen(function*() {
  const settings = yield* Effect.serviceOption(RememberSettings)
  return {
    database: yield* Database,
    datasets: yield* DatasetsRepo,
    graph: yield* GraphRepo,
    inferences: yield* InferencesRepo,
    embeddings: yield* Embeddings,
    vectors: yield* VectorStore,
    outbox: yield* VectorOutbox,
    forget: yield* ForgetRepo,
    prices: Option.match(settings, { onNone: () => DEFAULT_PRICES, onSome: (s) => s.prices })
  }
})
