import { Effect } from "effect"
import { Database } from "../../services/Database.js"
import { DatasetsRepo } from "../../services/DatasetsRepo.js"
import { ImagesRepo } from "../../services/ImagesRepo.js"
import { ImageStore } from "../../services/ImageStore.js"
import { InferencesRepo } from "../../services/InferencesRepo.js"
import { Llm } from "../../services/Llm.js"
import { RunLogRepo } from "../../services/RunLogRepo.js"
import { RememberSettings } from "../Settings.js"

/** The services an image run uses, resolved once when the pipeline layer is built. */
export const ImageDeps = Effect.all({
  llm: Llm,
  database: Database,
  datasets: DatasetsRepo,
  images: ImagesRepo,
  files: ImageStore,
  inferences: InferencesRepo,
  runLog: RunLogRepo,
  settings: RememberSettings
})

export type ImageDeps = Effect.Effect.Success<typeof ImageDeps>
