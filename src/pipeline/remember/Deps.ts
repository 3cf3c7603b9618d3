import { Effect, Option } from "effect"
import { ComplexityClassifier } from "../../services/ComplexityClassifier.js"
import { Database } from "../../services/Database.js"
import { DatasetsRepo } from "../../services/DatasetsRepo.js"
import { Embeddings } from "../../services/Embeddings.js"
import { ForgetRepo } from "../../services/ForgetRepo.js"
import { GeoRepo } from "../../services/GeoRepo.js"
import { GeoResolver } from "../../services/GeoResolver.js"
import { GraphRepo } from "../../services/GraphRepo.js"
import { InferencesRepo } from "../../services/InferencesRepo.js"
import { Llm } from "../../services/Llm.js"
import { RunLogRepo } from "../../services/RunLogRepo.js"
import { SeriesRepo } from "../../services/SeriesRepo.js"
import { TimeseriesProviders } from "../../services/TimeseriesProviders.js"
import { VectorOutbox } from "../../services/VectorOutbox.js"
import { VectorStore } from "../../services/VectorStore.js"
import { RememberSettings } from "../Settings.js"

const NO_GEO_RESOLVER: GeoResolver["Type"] = GeoResolver.of({
  enabled: false,
  provider: "none",
  resolve: () => Effect.succeed(Option.none())
})

/** The services a remember run uses, resolved once when the pipeline layer is built. */
export const RememberDeps = Effect.all({
  llm: Llm,
  classifier: ComplexityClassifier,
  database: Database,
  datasets: DatasetsRepo,
  graph: GraphRepo,
  // a repeat that moves a fact's start decides its closings again, as a forget does
  forget: ForgetRepo,
  inferences: InferencesRepo,
  runLog: RunLogRepo,
  embeddings: Embeddings,
  vectors: VectorStore,
  outbox: VectorOutbox,
  settings: RememberSettings,
  // optional: a server without a geo resolver simply has no geo stage
  geo: Effect.map(Effect.serviceOption(GeoResolver), Option.getOrElse(() => NO_GEO_RESOLVER)),
  geoRepo: GeoRepo,
  series: SeriesRepo,
  // optional: without providers, timeseries.fetch is a 503
  timeseries: Effect.map(
    Effect.serviceOption(TimeseriesProviders),
    Option.getOrElse((): TimeseriesProviders["Type"] => ({ providers: [] }))
  )
})

export type RememberDeps = Effect.Effect.Success<typeof RememberDeps>
