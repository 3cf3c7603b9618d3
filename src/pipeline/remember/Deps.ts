import { Effect } from "effect"
import { ComplexityClassifier } from "../../services/ComplexityClassifier.js"
import { Database } from "../../services/Database.js"
import { Embeddings } from "../../services/Embeddings.js"
import { DatasetsRepo } from "../../services/DatasetsRepo.js"
import { GraphRepo } from "../../services/GraphRepo.js"
import { InferencesRepo } from "../../services/InferencesRepo.js"
import { Llm } from "../../services/Llm.js"
import { RunLogRepo } from "../../services/RunLogRepo.js"
import { VectorOutbox } from "../../services/VectorOutbox.js"
import { VectorStore } from "../../services/VectorStore.js"
import { RememberSettings } from "../Settings.js"

/** The services a remember run uses, resolved once when the pipeline layer is built. */
export const RememberDeps = Effect.all({
  llm: Llm,
  classifier: ComplexityClassifier,
  database: Database,
  datasets: DatasetsRepo,
  graph: GraphRepo,
  inferences: InferencesRepo,
  runLog: RunLogRepo,
  embeddings: Embeddings,
  vectors: VectorStore,
  outbox: VectorOutbox,
  settings: RememberSettings
})

export type RememberDeps = Effect.Effect.Success<typeof RememberDeps>
