import { Effect, Layer, Option } from "effect"
import { ComplexityClassifier } from "../../src/services/ComplexityClassifier.js"

/** No classifier configured: classify_complexity does not run. */
export const NoneClassifierLive = Layer.succeed(
  ComplexityClassifier,
  ComplexityClassifier.of({ enabled: false, classify: () => Effect.succeed(Option.none()) })
)
