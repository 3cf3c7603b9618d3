import { Effect, Layer, Option } from "effect"
import { GeoResolver } from "../../src/services/GeoResolver.js"

/** No geo resolver configured (`geo` off): the pipeline has no resolve_geo stage. */
export const NoneGeoResolverLive = Layer.succeed(
  GeoResolver,
  GeoResolver.of({ enabled: false, provider: "none", resolve: () => Effect.succeed(Option.none()) })
)
