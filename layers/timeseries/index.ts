/**
 * The timeseries providers: the ones `[[timeseries.providers]]` configures (built-in kinds),
 * plus any an embedding application passes as Effect callbacks. Names must be unique.
 */
import { Effect, Layer } from "effect"
import type { AppConfig, TimeseriesProviderConfig } from "../../src/Config.js"
import { type TimeseriesProvider, TimeseriesProviders } from "../../src/services/TimeseriesProviders.js"
import { makePricesProvider } from "./PricesProvider.js"

export {
  makePricesProvider,
  parsePricesCsv,
  pricesKey,
  type PricesProviderOptions,
  pricesUrl
} from "./PricesProvider.js"

/** The providers of the configuration, in its order. */
export const providersFromConfig = (
  configs: ReadonlyArray<TimeseriesProviderConfig>
): ReadonlyArray<TimeseriesProvider> =>
  configs.map((c) => {
    switch (c.kind) {
      case "prices":
        return makePricesProvider({ name: c.name, description: c.description, baseUrl: c.baseUrl })
    }
  })

/** Exactly these providers (none: `timeseries.fetch` is a 503). Repeated names fail the layer. */
export const TimeseriesProvidersLive = (
  providers: ReadonlyArray<TimeseriesProvider>
): Layer.Layer<TimeseriesProviders> =>
  Layer.effect(
    TimeseriesProviders,
    Effect.suspend(() => {
      const names = providers.map((p) => p.name)
      const repeated = names.find((n, i) => names.indexOf(n) !== i)
      return repeated === undefined
        ? Effect.succeed(TimeseriesProviders.of({ providers }))
        : Effect.dieMessage(`timeseries providers: the name ${JSON.stringify(repeated)} is used twice`)
    })
  )

/** The configured providers, then `extra` (the callbacks of an embedding application). */
export const timeseriesFor = (config: AppConfig, extra: ReadonlyArray<TimeseriesProvider> = []) =>
  TimeseriesProvidersLive([...providersFromConfig(config.timeseries.providers), ...extra])
