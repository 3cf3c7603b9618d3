/**
 * Stage observe_series (seed: How it works, step 3; spec/contracts.md section 11). For each
 * series this request stored (at most 10, in the order stored: the request's series, then the
 * fetched ones), a text is written in code from its stats over the period the request wrote;
 * it is remembered like a text (extract_graph -> candidates -> resolve -> store -> vectors) as
 * a `series_observation` artifact, a child of the artifact that anchors the series. All its
 * inferences are filed under observe_series. A failing observation never stops the others,
 * and the stage never fails the call.
 */
import { Effect } from "effect"
import type { EdgeOut, EntityOut } from "../../domain/Responses.js"
import { describeCause, optionalStage, type StageOutcome } from "../enrich/stage.js"
import { edgeOut, entityOut } from "../remember/response.js"
import { onBehalfOf, type RunContext } from "../remember/RunContext.js"
import { storeUnit, type Unit, type UnitWork, unitWork } from "../remember/unit.js"
import { extremes, type SeriesStats, seriesStats, type TimedValue } from "./stats.js"
import type { StoredSeries } from "./store.js"

export const MAX_OBSERVATIONS = 10

/** One item of the response's `series_observations` (seed: Response). */
export interface ObservationItem {
  readonly series_id: number
  readonly key: string
  /** the artifact that anchors the series: the observation's parent */
  readonly parent_artifact_id: number
  /** the provider query of a fetched series; null for a series the request carried */
  readonly query: string | null
  /** the period the request wrote */
  readonly from: string
  readonly to: string
  readonly text: string
  readonly artifact_id: number | null
  readonly entities: ReadonlyArray<EntityOut>
  readonly edges: ReadonlyArray<EdgeOut>
  readonly error?: string
}

const atMidnight = (ts: string): boolean => ts.endsWith("T00:00:00.000Z")

/** A number as a reader wants it: 2 decimals from 1 up, 4 significant digits below. */
export const formatNumber = (x: number): string => {
  const options: Intl.NumberFormatOptions = Math.abs(x) >= 1 || x === 0
    ? { maximumFractionDigits: 2, useGrouping: false }
    : { maximumSignificantDigits: 4, useGrouping: false }
  return new Intl.NumberFormat("en-US", options).format(x)
}

export interface ObservationInput {
  readonly key: string
  readonly unit: string | null
  /** what the series is about: anchored entity names */
  readonly about: ReadonlyArray<string>
  /** in time order */
  readonly points: ReadonlyArray<TimedValue>
}

/**
 * The observation text: plain sentences with dates and values, naming the series and what it
 * is about, so the extraction can state dated facts about those entities.
 */
export const observationText = (input: ObservationInput): string => {
  const stats: SeriesStats = seriesStats(input.points)
  const dateOnly = input.points.every((p) => atMidnight(p.ts))
  const when = (ts: string) => (dateOnly ? ts.slice(0, 10) : `${ts.slice(0, 16).replace("T", " ")} UTC`)
  const value = (x: number) => `${formatNumber(x)}${input.unit === null ? "" : ` ${input.unit}`}`
  const subject = `The time series ${input.key}${input.about.length === 0 ? "" : ` of ${input.about.join(", ")}`}`
  if (stats.count === 0) return `${subject} has no values.`
  if (stats.count === 1) return `${subject} was ${value(stats.first!)} on ${when(stats.from!)}.`
  const { maxAt, minAt } = extremes(input.points)
  const change = stats.change!
  const pct = stats.change_pct === null ? "" : ` (${stats.change_pct >= 0 ? "+" : ""}${stats.change_pct.toFixed(2)}%)`
  const movement = change === 0
    ? "unchanged"
    : `${change > 0 ? "up" : "down"} ${value(Math.abs(change))}${pct}`
  return [
    `${subject} went from ${value(stats.first!)} on ${when(stats.from!)} to ${value(stats.last!)} on ${
      when(stats.to!)
    }, ${movement}, over ${stats.count} values.`,
    `Its lowest value in that period was ${value(stats.min!)} on ${when(minAt!)} and its highest ${
      value(stats.max!)
    } on ${when(maxAt!)}; the mean was ${value(stats.mean!)}.`
  ].join(" ")
}

interface Prepared {
  readonly series: StoredSeries
  readonly period: { readonly from: string; readonly to: string }
  readonly text: string
  readonly unit: Unit
}

const itemOf = (p: Prepared, rest: Partial<ObservationItem>): ObservationItem => ({
  series_id: p.series.item.id,
  key: p.series.item.key,
  parent_artifact_id: p.series.item.artifact_id,
  query: p.series.query,
  from: p.period.from,
  to: p.period.to,
  text: p.text,
  artifact_id: null,
  entities: [],
  edges: [],
  ...rest
})

const prepare = (ctx: RunContext, series: StoredSeries, period: { readonly from: string; readonly to: string }) =>
  Effect.map(ctx.deps.series.points(series.item.id, period), (points): Prepared => {
    const text = observationText({ key: series.item.key, unit: series.item.unit, about: series.about, points })
    const stats = seriesStats(points)
    return {
      series,
      period,
      text,
      unit: {
        text,
        kind: "series_observation",
        chunk: null,
        parentId: series.item.artifact_id,
        query: series.query,
        metadata: { series_id: series.item.id, key: series.item.key, from: period.from, to: period.to, stats }
      }
    }
  })

/** Stores one observation; the item says what happened, never fails. */
const store = (ctx: RunContext, p: Prepared, work: UnitWork): Effect.Effect<ObservationItem> =>
  storeUnit(ctx, p.unit, work).pipe(
    Effect.map((stored) =>
      itemOf(p, {
        artifact_id: stored.artifact.id,
        entities: stored.entities.map(entityOut),
        edges: stored.edges.map(edgeOut)
      })
    ),
    Effect.catchAllCause((cause) => {
      // after commit only the vectors failed: the artifact is stored (its vectors wait in the outbox)
      const failure = cause._tag === "Fail"
        ? (cause.error as { readonly _tag?: string; readonly artifact_id?: number })
        : undefined
      const artifactId = failure?._tag === "VectorWriteFailed" ? failure.artifact_id ?? null : null
      return Effect.succeed(itemOf(p, { artifact_id: artifactId, error: describeCause(cause) }))
    })
  )

const work = (
  ctx: RunContext,
  stored: ReadonlyArray<StoredSeries>
): Effect.Effect<StageOutcome<ReadonlyArray<ObservationItem>>, unknown> =>
  Effect.gen(function*() {
    // a series the request wrote no point to has no period to observe
    const observed = stored.flatMap((s) => (s.period === null ? [] : [{ series: s, period: s.period }])).slice(
      0,
      MAX_OBSERVATIONS
    )
    const prepared = yield* Effect.forEach(observed, (o) => prepare(ctx, o.series, o.period))
    // the extractions need nothing stored: they run at once, the stores one after the other
    const works = yield* Effect.forEach(prepared, (p) => Effect.either(unitWork(ctx, p.unit)), {
      concurrency: "unbounded"
    })
    const items: Array<ObservationItem> = []
    for (const [i, p] of prepared.entries()) {
      const w = works[i]!
      items.push(w._tag === "Left" ? itemOf(p, { error: w.left.message }) : yield* store(ctx, p, w.right))
    }
    const failed = items.filter((i) => i.error !== undefined)
    return {
      value: items,
      error: failed.length === 0
        ? null
        : `${failed.length} of ${items.length} observations failed: ${
          failed.map((i) => `${i.key}: ${i.error}`).join("; ")
        }`,
      detail: {
        series: items.length,
        stored: items.filter((i) => i.artifact_id !== null).length,
        ...(stored.length > observed.length ? { not_observed: stored.length - observed.length } : {})
      }
    }
  })

/** observe_series over the series this request stored; the response's `series_observations`. Never fails. */
export const observeSeries = Effect.fn("remember.observe_series")(
  (ctx: RunContext, stored: ReadonlyArray<StoredSeries>): Effect.Effect<ReadonlyArray<ObservationItem>> =>
    optionalStage(ctx.recorder, "observe_series", work(onBehalfOf(ctx, "observe_series"), stored), [])
)
