/**
 * Timeseries in the text pipeline (seed: steps 4b, 2 and 3; spec/contracts.md section 11):
 *
 * - `timeseriesRefusal`: checked before any work (503 without providers, 400 for a provider
 *   the server does not have);
 * - `storeSeriesStep`: store_series, attached to the text's last unit so it runs inside that
 *   unit's store transaction (for a chunked text: after the last chunk, anchored to the parent);
 * - `seriesAfterText`: fetch_series then observe_series, after the text and its other
 *   enrichments are stored; neither can fail the call. Returns the response fields.
 */
import { Clock, Effect, Either } from "effect"
import { type AnchorNotFound, InvalidRequest, type RememberError, ServiceUnavailable } from "../../domain/Errors.js"
import type { RememberRequest } from "../../domain/Remember.js"
import { toIso } from "../../domain/time.js"
import type { RememberDeps } from "../remember/Deps.js"
import type { Lookahead } from "../remember/lookahead.js"
import type { Stored } from "../remember/store.js"
import type { RunScope, Unit, UnitWork } from "../remember/unit.js"
import { fetchSeries, type TextEntity } from "./fetch.js"
import { observeSeries } from "./observe.js"
import { precheckAnchors } from "./precheck.js"
import { fromRequest, type StoredSeries, storeSeries } from "./store.js"

export type { FetchItem } from "./fetch.js"
export type { ObservationItem } from "./observe.js"
export type { AnchorMatch, AnchorOutcome, SeriesItem } from "./store.js"

export const NO_TIMESERIES_PROVIDERS = "timeseries.fetch: the server has no timeseries providers"

/** Checked before any work: what the server cannot serve is refused with nothing done. */
export const timeseriesRefusal = (
  deps: RememberDeps,
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

export interface StoreSeriesStep {
  /**
   * a chunked text: its required anchors checked against the dataset and the chunks'
   * extractions before its first chunk is stored (see precheck.ts); lets every unit's work
   * start and waits for all of it
   */
  readonly precheck: (work: Lookahead<UnitWork, RememberError>, units: number) => Effect.Effect<void, AnchorNotFound>
  /** the unit with store_series attached when it is the text's last one (and there are series) */
  readonly attach: (unit: Unit, isLast: boolean) => Unit
  /** the series store_series wrote (once the last unit is stored) */
  readonly stored: () => ReadonlyArray<StoredSeries>
}

/**
 * store_series for the request's series. `earlier` gives the units stored before the last
 * one (their facts count as the text's for edge anchors).
 */
export const storeSeriesStep = (
  scope: RunScope,
  chunked: boolean,
  earlier: () => ReadonlyArray<Stored>
): StoreSeriesStep => {
  const series = scope.request.timeseries?.series ?? []
  let written: ReadonlyArray<StoredSeries> = []
  const store = (last: Stored) =>
    Effect.gen(function*() {
      // a chunked text anchors its series to the parent (the whole text), not to its last chunk
      const artifactId = chunked
        ? (earlier()[0]?.parent?.id ?? last.parent?.id ?? last.artifact.parent_id!)
        : last.artifact.id
      written = yield* storeSeries({ graph: scope.deps.graph, series: scope.deps.series }, {
        datasetId: last.dataset.id,
        artifactId,
        textEdgeIds: [...earlier(), last].flatMap((u) => u.edges.map((e) => e.id)),
        series: fromRequest(series),
        now: toIso(yield* Clock.currentTimeMillis)
      })
    })
  const detail = () => ({
    series: written.length,
    created: written.filter((s) => s.item.created).length,
    points: written.reduce((n, s) => n + s.item.points, 0),
    anchors: written.reduce((n, s) => n + s.item.anchors.reduce((m, a) => m + a.matched.length, 0), 0)
  })
  const precheck = (work: Lookahead<UnitWork, RememberError>, units: number) =>
    Effect.gen(function*() {
      const needed = chunked && series.some((s) => s.anchors.some((a) => a.required && !("artifact" in a)))
      if (!needed) return
      yield* work.openAll
      const done = yield* Effect.forEach(
        Array.from({ length: units }, (_, i) => i),
        (i) => Effect.either(work.result(i))
      )
      // a chunk whose extraction failed fails the call when its turn comes, as without series
      if (done.some(Either.isLeft)) return
      const graphs = done.flatMap((w) => (Either.isRight(w) ? [w.right.extraction.graph] : []))
      yield* precheckAnchors(
        { graph: scope.deps.graph, series: scope.deps.series },
        scope.datasetId,
        graphs,
        fromRequest(series)
      ).pipe(
        // recorded as a failed store_series: nothing was stored
        Effect.tapError((e) => Effect.ignore(scope.recorder.stage("store_series", Effect.fail(e))))
      )
    })
  return {
    precheck,
    attach: (unit, isLast) => (isLast && series.length > 0 ? { ...unit, series: { store, detail } } : unit),
    stored: () => written
  }
}

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
export const seriesAfterText = (
  scope: RunScope,
  units: ReadonlyArray<Stored>,
  supplied: ReadonlyArray<StoredSeries>
): Effect.Effect<Record<string, unknown>> =>
  Effect.gen(function*() {
    const ts = scope.request.timeseries
    if (ts === undefined) return {}
    const fields: Record<string, unknown> = { series: supplied.map((s) => s.item) }
    let fetched: ReadonlyArray<StoredSeries> = []
    if (ts.fetch !== undefined) {
      const outcome = yield* fetchSeries(scope, textEntities(units), ts.fetch)
      fields.series_fetches = outcome.items
      fetched = outcome.stored
    }
    if (ts.observations) fields.series_observations = yield* observeSeries(scope, [...supplied, ...fetched])
    return fields
  })
