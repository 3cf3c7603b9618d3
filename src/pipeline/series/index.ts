/**
 * Timeseries in the text pipeline (seed: steps 4b, 2 and 3; spec/contracts.md section 11),
 * in the order the program runs them:
 *
 * - `timeseriesRefusal`: checked before any work (503 without providers, 400 for a provider
 *   the server does not have);
 * - `precheckSeries`: a chunked text's required anchors, before its first chunk is stored;
 * - store_series: the request's series (`requestSeries`), written in the text's last store
 *   transaction (remember/store.ts; for a chunked text anchored to the document);
 * - `seriesAfterText`: fetch_series then observe_series, after the text and its other
 *   enrichments are stored; neither can fail the call. Returns the response fields.
 */
import { Effect, Either } from "effect"
import { InvalidRequest, type RememberError, ServiceUnavailable } from "../../domain/Errors.js"
import type { RememberRequest } from "../../domain/Remember.js"
import type { Lookahead } from "../remember/lookahead.js"
import type { RememberServices, RunContext } from "../remember/RunContext.js"
import type { Stored } from "../remember/store.js"
import type { UnitWork } from "../remember/unit.js"
import { fetchSeries, type TextEntity } from "./fetch.js"
import { observeSeries } from "./observe.js"
import { precheckAnchors } from "./precheck.js"
import { fromRequest, type SeriesToStore, type StoredSeries } from "./store.js"

export type { FetchItem } from "./fetch.js"
export type { ObservationItem } from "./observe.js"
export type { AnchorMatch, AnchorOutcome, SeriesItem } from "./store.js"

export const NO_TIMESERIES_PROVIDERS = "timeseries.fetch: the server has no timeseries providers"

/** Checked before any work: what the server cannot serve is refused with nothing done. */
export const timeseriesRefusal = (
  deps: RememberServices,
  request: RememberRequest
): InvalidRequest | ServiceUnavailable | undefined => {
  const fetch = request.timeseries?.fetch
  if (fetch === undefined) return undefined
  const names = deps.timeseries.providers.map((p) => p.name)
  if (names.length === 0) return new ServiceUnavailable({ message: NO_TIMESERIES_PROVIDERS })
  const unknown = (fetch.providers ?? []).filter((p) => !names.includes(p))
  if (unknown.length > 0) {
    return new InvalidRequest({
      message: `timeseries.fetch.providers: the server has no provider ${
        unknown.map((p) => JSON.stringify(p)).join(", ")
      } (it has ${names.join(", ")})`
    })
  }
  return undefined
}

/** The request's series, as store_series writes them. */
export const requestSeries = (request: RememberRequest): ReadonlyArray<SeriesToStore> =>
  fromRequest(request.timeseries?.series ?? [])

/**
 * A chunked text stores its series with its last chunk, so its required anchors are checked
 * (precheck.ts) before the first chunk is stored: this lets every unit's work start and waits
 * for all of it. A failure is recorded as a failed store_series, with nothing stored.
 */
export const precheckSeries = Effect.fn("remember.precheck_series")(
  function*(
    ctx: RunContext,
    series: ReadonlyArray<SeriesToStore>,
    work: Lookahead<UnitWork, RememberError, RunContext>,
    units: number
  ) {
    if (!series.some((s) => s.anchors.some((a) => a.required && !("artifact" in a)))) return
    yield* work.openAll
    const done = yield* Effect.forEach(
      Array.from({ length: units }, (_, i) => i),
      (i) => Effect.either(work.result(i))
    )
    // a chunk whose extraction failed fails the call when its turn comes, as without series
    if (done.some(Either.isLeft)) return
    const graphs = done.flatMap((w) => (Either.isRight(w) ? [w.right.extraction.graph] : []))
    yield* precheckAnchors({ graph: ctx.deps.graph, series: ctx.deps.series }, ctx.datasetId, graphs, series).pipe(
      Effect.tapError((e) => Effect.ignore(ctx.recorder.stage("store_series", Effect.fail(e))))
    )
  }
)

/** The text's own entities in order of first appearance, each with the artifact it came from. */
const textEntities = (units: ReadonlyArray<Stored>): ReadonlyArray<TextEntity> => {
  const seen = new Map<number, TextEntity>()
  for (const u of units) {
    for (const entity of u.entities) {
      if (!seen.has(entity.id)) {
        seen.set(entity.id, { id: entity.id, name: entity.name, entity, artifactId: u.artifact.id })
      }
    }
  }
  return [...seen.values()]
}

/**
 * fetch_series and observe_series over the stored text (`units`: the text, or its chunks in
 * order) and the series store_series wrote; the response fields `series`, `series_fetches`
 * and `series_observations` (each only when the request asked for it).
 */
export const seriesAfterText = Effect.fn("remember.series_after_text")(
  function*(ctx: RunContext, units: ReadonlyArray<Stored>, supplied: ReadonlyArray<StoredSeries>) {
    const ts = ctx.request.timeseries
    if (ts === undefined) return {}
    const fields: Record<string, unknown> = { series: supplied.map((s) => s.item) }
    let fetched: ReadonlyArray<StoredSeries> = []
    if (ts.fetch !== undefined) {
      const outcome = yield* fetchSeries(ctx, textEntities(units), ts.fetch)
      fields.series_fetches = outcome.items
      fetched = outcome.stored
    }
    if (ts.observations) fields.series_observations = yield* observeSeries(ctx, [...supplied, ...fetched])
    return fields
  }
)
