import { Context, Data, type Effect } from "effect"

export interface SeriesPoint {
  readonly ts: string
  readonly value: number
}

export interface FetchedSeries {
  readonly key: string
  readonly unit?: string | undefined
  readonly points: ReadonlyArray<SeriesPoint>
}

export class ProviderFailed extends Data.TaggedError("ProviderFailed")<{ readonly message: string }> {}

export interface TimeseriesProvider {
  readonly name: string
  readonly description: string
  readonly fetch: (
    query: string,
    from: string,
    to: string
  ) => Effect.Effect<ReadonlyArray<FetchedSeries>, ProviderFailed>
}

/** The timeseries providers this server was started with (config or a Layer when embedding). */
export class TimeseriesProviders extends Context.Tag("gligabao/TimeseriesProviders")<
  TimeseriesProviders,
  { readonly providers: ReadonlyArray<TimeseriesProvider> }
>() {}
