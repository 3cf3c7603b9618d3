import { Context, Effect, Layer, Option } from "effect"
import { GeoFailed, type GeoPlace, GeoResolver } from "../../src/services/GeoResolver.js"

/** What the fake answers for a query: a place, `null` (nothing matched) or a failure. */
export type FakeGeoAnswer = GeoPlace | null | { readonly fail: string }

/**
 * A deterministic GeoResolver for tests: answers from a table keyed by query (an unknown query
 * is unresolved). Its own tag exposes the queries it received: `(yield* FakeGeo).lookups`.
 */
export class FakeGeo extends Context.Tag("gligabao/testing/FakeGeo")<
  FakeGeo,
  { readonly lookups: ReadonlyArray<string> }
>() {
  static readonly PROVIDER = "fake"

  static make(answers: Readonly<Record<string, FakeGeoAnswer>>) {
    const lookups: Array<string> = []
    const resolver = GeoResolver.of({
      enabled: true,
      provider: FakeGeo.PROVIDER,
      resolve: (query) =>
        Effect.suspend(() => {
          lookups.push(query)
          const answer = Object.hasOwn(answers, query) ? answers[query]! : null
          if (answer === null) return Effect.succeed(Option.none())
          if ("fail" in answer) return Effect.fail(new GeoFailed({ message: answer.fail }))
          return Effect.succeed(Option.some(answer))
        })
    })
    return { resolver, fake: FakeGeo.of({ lookups }) }
  }

  /** The resolver and this recorder; a fresh record per build. */
  static layer(answers: Readonly<Record<string, FakeGeoAnswer>> = {}): Layer.Layer<GeoResolver | FakeGeo> {
    return Layer.effectContext(
      Effect.sync(() => {
        const { fake, resolver } = FakeGeo.make(answers)
        return Context.make(GeoResolver, resolver).pipe(Context.add(FakeGeo, fake))
      })
    )
  }

  /** A place with the given coordinates (the other fields derived from the name). */
  static place(
    name: string,
    latitude: number,
    longitude: number,
    country: string | null = null,
    countryCode: string | null = null
  ): GeoPlace {
    return {
      latitude,
      longitude,
      display_name: country === null ? name : `${name}, ${country}`,
      country,
      country_code: countryCode,
      region: null
    }
  }
}
