import { Context, Data, type Effect, type Option } from "effect"

export interface GeoPlace {
  readonly latitude: number
  readonly longitude: number
  readonly display_name: string
  readonly country: string | null
  readonly country_code: string | null
  readonly region: string | null
}

export class GeoFailed extends Data.TaggedError("GeoFailed")<{ readonly message: string }> {}

/** Resolves a place query to coordinates (Nominatim by default); rate-limited and cached by the adapter. */
export class GeoResolver extends Context.Tag("gligabao/GeoResolver")<
  GeoResolver,
  {
    readonly enabled: boolean
    readonly provider: string
    readonly resolve: (query: string) => Effect.Effect<Option.Option<GeoPlace>, GeoFailed>
  }
>() {}
