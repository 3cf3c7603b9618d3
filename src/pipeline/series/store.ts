/**
 * Writing series (spec/contracts.md section 11; seed step 4b): anchors are resolved first, by
 * the same normalized names as entities, and a required anchor that matches nothing fails with
 * AnchorNotFound before anything of the series is written; the caller's transaction then rolls
 * back everything (the text included). Then each series is upserted on (dataset, key), its
 * points upserted (a repeated time overwrites), its anchors added (always the artifact it came
 * with, plus what its selectors matched), and its stats computed over the whole series.
 */
import { Clock, Effect } from "effect"
import { AnchorNotFound } from "../../domain/Errors.js"
import type { EdgeWithNames, EntityRow } from "../../domain/Rows.js"
import { toIso } from "../../domain/time.js"
import type { AnchorSelector, SeriesInput, SeriesPointInput } from "../../domain/Timeseries.js"
import { nameKey, normalizeRelation, normalizeType } from "../../kernel/normalize.js"
import type { NewAnchor } from "../../services/SeriesRepo.js"
import type { RememberServices } from "../remember/RunContext.js"
import type { Stored } from "../remember/store.js"
import { type SeriesStats, seriesStats } from "./stats.js"

/** The repositories a series write uses: the run's own (its store transaction's). */
type SeriesRepos = Pick<RememberServices, "graph" | "series">

export type AnchorMatch =
  | { readonly entity_id: number; readonly name: string; readonly type: string }
  | { readonly edge_id: number; readonly source: string; readonly relation: string; readonly target: string }
  | { readonly artifact_id: number }

/** What one selector matched: the selector as sent, with `matched`. */
export type AnchorOutcome = AnchorSelector & { readonly matched: ReadonlyArray<AnchorMatch> }

/** One item of the response's `series` (and of a fetch's `series`). */
export interface SeriesItem {
  readonly id: number
  readonly key: string
  readonly unit: string | null
  /** a new series (false: points were added to a stored one) */
  readonly created: boolean
  /** points written by this request */
  readonly points: number
  /** points of the series in all */
  readonly point_count: number
  readonly stats: SeriesStats
  /** the artifact the series came with (the anchoring artifact) */
  readonly artifact_id: number
  readonly anchors: ReadonlyArray<AnchorOutcome>
}

/** A series as this request stored it: what the observation of it needs. */
export interface StoredSeries {
  readonly item: SeriesItem
  /** the span of the points written now; null when none was */
  readonly period: { readonly from: string; readonly to: string } | null
  /** names of the entities it is anchored to, and the endpoints of its edges */
  readonly about: ReadonlyArray<string>
  /** the provider query of a fetched series */
  readonly query: string | null
}

export interface SeriesToStore {
  readonly key: string
  readonly unit?: string | undefined
  /** in time order, one per time */
  readonly points: ReadonlyArray<SeriesPointInput>
  readonly anchors: ReadonlyArray<AnchorSelector>
  /** anchors given directly (a fetched series: its entity) */
  readonly direct?: ReadonlyArray<{ readonly anchor: NewAnchor; readonly name: string }> | undefined
  readonly query?: string | null | undefined
  /** how errors name it: `timeseries.series[0]` */
  readonly field: string
}

export interface StoreSeriesInput {
  readonly datasetId: number
  /** the artifact every series is anchored to */
  readonly artifactId: number
  /** the facts of the text: an edge selector may match them even if stored already closed */
  readonly textEdgeIds: ReadonlyArray<number>
  readonly series: ReadonlyArray<SeriesToStore>
  readonly now: string
}

const describeSelector = (s: AnchorSelector): string => {
  if ("entity" in s) {
    return `no entity named ${JSON.stringify(s.entity.name)}${
      s.entity.type === undefined ? "" : ` of type ${normalizeType(s.entity.type)}`
    }`
  }
  if ("edge" in s) {
    const parts = [`from ${JSON.stringify(s.edge.source)}`]
    if (s.edge.relation !== undefined) parts.push(`relation ${normalizeRelation(s.edge.relation)}`)
    if (s.edge.target !== undefined) parts.push(`to ${JSON.stringify(s.edge.target)}`)
    return `no live fact ${parts.join(", ")}`
  }
  return "no artifact"
}

const entityMatch = (e: EntityRow): AnchorMatch => ({ entity_id: e.id, name: e.name, type: e.type })
const edgeMatch = (e: EdgeWithNames): AnchorMatch => ({
  edge_id: e.id,
  source: e.source_name,
  relation: e.relation,
  target: e.target_name
})

const resolveSelector = (deps: SeriesRepos, input: StoreSeriesInput, selector: AnchorSelector) =>
  Effect.gen(function*() {
    if ("entity" in selector) {
      const type = selector.entity.type === undefined ? undefined : normalizeType(selector.entity.type)
      const found = yield* deps.graph.findEntitiesByNameKeys(input.datasetId, [nameKey(selector.entity.name)])
      return found.filter((e) => type === undefined || e.type === type).map(entityMatch)
    }
    if ("edge" in selector) {
      const found = yield* deps.series.findAnchorEdges(input.datasetId, {
        sourceKey: nameKey(selector.edge.source),
        relation: selector.edge.relation === undefined ? undefined : normalizeRelation(selector.edge.relation),
        targetKey: selector.edge.target === undefined ? undefined : nameKey(selector.edge.target)
      }, input.textEdgeIds)
      return found.map(edgeMatch)
    }
    return [{ artifact_id: input.artifactId }] as ReadonlyArray<AnchorMatch>
  })

/** Resolves every selector of every series; fails on the first required one that matched nothing. */
const resolveAll = (deps: SeriesRepos, input: StoreSeriesInput) =>
  Effect.forEach(
    input.series,
    (s) =>
      Effect.forEach(s.anchors, (selector, j) =>
        Effect.flatMap(resolveSelector(deps, input, selector), (matched) =>
          matched.length === 0 && selector.required
            ? Effect.fail(
              new AnchorNotFound({
                message: `${s.field}.anchors[${j}] (series ${JSON.stringify(s.key)}): ${
                  describeSelector(selector)
                } in the dataset; nothing was stored`
              })
            )
            : Effect.succeed({ ...selector, matched } as AnchorOutcome)))
  )

const toNewAnchor = (m: AnchorMatch): NewAnchor =>
  "entity_id" in m
    ? { entity_id: m.entity_id }
    : "edge_id" in m
    ? { edge_id: m.edge_id }
    : { artifact_id: m.artifact_id }

const aboutNames = (outcomes: ReadonlyArray<AnchorOutcome>, direct: ReadonlyArray<string>): ReadonlyArray<string> => {
  const names = [...direct]
  for (const o of outcomes) {
    for (const m of o.matched) {
      if ("entity_id" in m) names.push(m.name)
      else if ("edge_id" in m) names.push(m.source, m.target)
    }
  }
  return [...new Set(names)]
}

/**
 * Stores the series (within the caller's transaction); AnchorNotFound when a required anchor
 * matched nothing, before any series is written.
 */
export const storeSeries = (
  deps: SeriesRepos,
  input: StoreSeriesInput
): Effect.Effect<ReadonlyArray<StoredSeries>, AnchorNotFound> =>
  Effect.gen(function*() {
    const resolved = yield* resolveAll(deps, input)
    const stored: Array<StoredSeries> = []
    for (const [i, s] of input.series.entries()) {
      const outcomes = resolved[i]!
      const { series, created } = yield* deps.series.upsertSeries(input.datasetId, s.key, s.unit ?? null, input.now)
      yield* deps.series.upsertPoints(series.id, s.points)
      const anchors: Array<NewAnchor> = [
        { artifact_id: input.artifactId },
        ...(s.direct ?? []).map((d) => d.anchor),
        ...outcomes.flatMap((o) => o.matched.map(toNewAnchor))
      ]
      yield* deps.series.addAnchors(series.id, anchors)
      const all = yield* deps.series.points(series.id)
      stored.push({
        item: {
          id: series.id,
          key: series.key,
          unit: series.unit,
          created,
          points: s.points.length,
          point_count: all.length,
          stats: seriesStats(all),
          artifact_id: input.artifactId,
          anchors: s.anchors.length === 0
            ? [{ artifact: true, required: true, matched: [{ artifact_id: input.artifactId }] }]
            : outcomes
        },
        period: s.points.length === 0 ? null : { from: s.points[0]!.ts, to: s.points[s.points.length - 1]!.ts },
        about: aboutNames(outcomes, (s.direct ?? []).map((d) => d.name)),
        query: s.query ?? null
      })
    }
    return stored
  })

/** The request's series as store input. */
export const fromRequest = (series: ReadonlyArray<SeriesInput>): ReadonlyArray<SeriesToStore> =>
  series.map((s, i) => ({ ...s, field: `timeseries.series[${i}]` }))

/** store_series as the text's last store runs it, inside that store's transaction. */
export interface SeriesWrite {
  /** the request's series */
  readonly series: ReadonlyArray<SeriesToStore>
  /** a chunked text anchors its series to the document (the parent), not to its last chunk */
  readonly chunked: boolean
  /** the text's units stored before the last one: their facts count as the text's for edge anchors */
  readonly earlier: ReadonlyArray<Stored>
}

/** The request's series, anchored to the text that `last` completes (see SeriesWrite). */
export const storeTextSeries = (
  deps: SeriesRepos,
  write: SeriesWrite,
  last: Stored
): Effect.Effect<ReadonlyArray<StoredSeries>, AnchorNotFound> =>
  Effect.gen(function*() {
    const artifactId = write.chunked
      ? (write.earlier[0]?.parent?.id ?? last.parent?.id ?? last.artifact.parent_id!)
      : last.artifact.id
    return yield* storeSeries(deps, {
      datasetId: last.dataset.id,
      artifactId,
      textEdgeIds: [...write.earlier, last].flatMap((u) => u.edges.map((e) => e.id)),
      series: write.series,
      now: toIso(yield* Clock.currentTimeMillis)
    })
  })

/** What the run log keeps of store_series. */
export const seriesDetail = (written: ReadonlyArray<StoredSeries>) => ({
  series: written.length,
  created: written.filter((s) => s.item.created).length,
  points: written.reduce((n, s) => n + s.item.points, 0),
  anchors: written.reduce((n, s) => n + s.item.anchors.reduce((m, a) => m + a.matched.length, 0), 0)
})
