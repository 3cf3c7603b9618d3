/**
 * Stage fetch_series (seed: How it works, step 2; spec/contracts.md section 11). After the
 * text is stored: the resolve_series LLM stage chooses, from the providers' descriptions,
 * which provider fetches which series for which entity of the text (its own entities, not
 * those of a web search); the providers' callbacks run concurrently; each fetched series is
 * stored (its own transaction) and anchored to the entity and to the artifact the entity came
 * from. A failing provider or store is reported in its item; the stage never fails the call.
 */
import { Clock, Effect, Either } from "effect"
import { LlmFailed } from "../../domain/Errors.js"
import type { EntityRow } from "../../domain/Rows.js"
import { toIso } from "../../domain/time.js"
import {
  type FetchRequest,
  MAX_POINTS_PER_SERIES,
  parsePointTime,
  type SeriesPointInput
} from "../../domain/Timeseries.js"
import type { FetchedSeries, TimeseriesProvider } from "../../services/TimeseriesProviders.js"
import { describeCause, optionalStage, type StageOutcome } from "../enrich/stage.js"
import { callLlm } from "../ModelCalls.js"
import { callContext, onBehalfOf, type RunContext } from "../remember/RunContext.js"
import {
  buildResolveSeriesPrompt,
  type ChosenFetch,
  parseResolveSeries,
  RESOLVE_SERIES_ANSWER,
  RESOLVE_SERIES_MAX_TOKENS,
  type SeriesWindow
} from "./resolveSeries.js"
import { type SeriesItem, type SeriesToStore, type StoredSeries, storeSeries } from "./store.js"

/** Provider calls in flight at once. */
const FETCH_CONCURRENCY = 4

/** One item of the response's `series_fetches` (seed: Response). */
export interface FetchItem {
  readonly entity: string
  readonly entity_id: number
  readonly provider: string
  readonly query: string
  readonly reason: string
  readonly from: string
  readonly to: string
  /** the artifact the entity came from: the fetched series are anchored to it */
  readonly parent_artifact_id: number
  readonly series: ReadonlyArray<SeriesItem>
  readonly error?: string
}

/** An entity of the text and the artifact (the text, or its chunk) it first came from. */
export interface TextEntity {
  readonly id: number
  readonly name: string
  readonly entity: EntityRow
  readonly artifactId: number
}

export interface FetchOutcome {
  readonly items: ReadonlyArray<FetchItem>
  /** every series stored, for the observations */
  readonly stored: ReadonlyArray<StoredSeries>
}

const NOTHING: FetchOutcome = { items: [], stored: [] }

/** The window `before`/`after` spans around the reference time. */
export const fetchWindow = (referenceTime: string, fetch: FetchRequest): SeriesWindow => {
  const ref = Date.parse(referenceTime)
  return { from: toIso(ref - fetch.beforeMs), to: toIso(ref + fetch.afterMs) }
}

/**
 * A provider's series checked like a request's: a key, finite values at readable times. Bad
 * points are dropped (and counted), repeated times keep the last value, at most
 * MAX_POINTS_PER_SERIES are kept (the latest).
 */
export const cleanFetched = (
  fetched: FetchedSeries
): { readonly points: ReadonlyArray<SeriesPointInput>; readonly dropped: number } => {
  const byTs = new Map<string, number>()
  let dropped = 0
  for (const p of fetched.points) {
    const ts = typeof p.ts === "string" ? parsePointTime(p.ts) : undefined
    if (ts === undefined || typeof p.value !== "number" || !Number.isFinite(p.value)) dropped++
    else byTs.set(ts, p.value)
  }
  const points = [...byTs.entries()].map(([ts, value]) => ({ ts, value })).sort((a, b) => (a.ts < b.ts ? -1 : 1))
  const kept = points.slice(Math.max(0, points.length - MAX_POINTS_PER_SERIES))
  return { points: kept, dropped: dropped + points.length - kept.length }
}

const choose = (
  ctx: RunContext,
  entities: ReadonlyArray<TextEntity>,
  providers: ReadonlyArray<TimeseriesProvider>,
  window: SeriesWindow
) =>
  Effect.gen(function*() {
    const prompt = buildResolveSeriesPrompt({
      referenceTime: ctx.referenceTime,
      window,
      providers,
      entities: entities.map((e) => e.entity)
    })
    const response = yield* callLlm(callContext(ctx, "fetch_series"), {
      stage: "resolve_series",
      model: ctx.request.models.resolve_series,
      reasoning: ctx.request.reasoning.resolve_series ?? "none",
      system: prompt.system,
      messages: [{ role: "user", content: prompt.user }],
      maxTokens: RESOLVE_SERIES_MAX_TOKENS,
      answerSchema: RESOLVE_SERIES_ANSWER
    })
    const parsed = parseResolveSeries(response.text, entities, providers.map((p) => p.name), window)
    if (Either.isLeft(parsed)) {
      return yield* new LlmFailed({
        message: `resolve_series: unusable answer from the model: ${parsed.left}`,
        stage: "resolve_series"
      })
    }
    return parsed.right
  })

/** Stores what one fetch returned (one transaction); the item says what happened. */
const storeFetched = (
  ctx: RunContext,
  chosen: ChosenFetch<TextEntity>,
  fetched: ReadonlyArray<FetchedSeries>
): Effect.Effect<{ readonly item: FetchItem; readonly stored: ReadonlyArray<StoredSeries> }> =>
  Effect.gen(function*() {
    const { deps } = ctx
    const base = itemOf(chosen)
    const problems: Array<string> = []
    const toStore: Array<SeriesToStore> = []
    for (const [i, f] of fetched.entries()) {
      const key = typeof f.key === "string" ? f.key.trim() : ""
      if (key === "") {
        problems.push(`series ${i} has no key`)
        continue
      }
      const { dropped, points } = cleanFetched(f)
      if (dropped > 0) problems.push(`${key}: ${dropped} unusable points dropped`)
      // a series the provider has no data for is not stored
      if (points.length === 0) continue
      toStore.push({
        key,
        unit: typeof f.unit === "string" && f.unit.trim() !== "" ? f.unit.trim() : undefined,
        points,
        anchors: [],
        direct: [{ anchor: { entity_id: chosen.entity.entity.id }, name: chosen.entity.entity.name }],
        query: chosen.query,
        field: `${chosen.provider}(${JSON.stringify(chosen.query)})`
      })
    }
    const now = toIso(yield* Clock.currentTimeMillis)
    const stored = toStore.length === 0 ? [] : yield* deps.database.withTransaction(
      storeSeries({ graph: deps.graph, series: deps.series }, {
        datasetId: ctx.datasetId!,
        artifactId: chosen.entity.artifactId,
        textEdgeIds: [],
        series: toStore,
        now
      })
    ).pipe(Effect.withSpan("sql.store_series", { attributes: { run_id: ctx.runId } }))
    const item: FetchItem = {
      ...base,
      series: stored.map((s) => s.item),
      ...(problems.length === 0 ? {} : { error: problems.join("; ") })
    }
    return { item, stored }
  }).pipe(
    Effect.catchAllCause((cause) =>
      Effect.succeed({
        item: { ...itemOf(chosen), error: `storing the series failed: ${describeCause(cause)}` },
        stored: []
      })
    )
  )

const itemOf = (chosen: ChosenFetch<TextEntity>): FetchItem => ({
  entity: chosen.entity.entity.name,
  entity_id: chosen.entity.entity.id,
  provider: chosen.provider,
  query: chosen.query,
  reason: chosen.reason,
  from: chosen.from,
  to: chosen.to,
  parent_artifact_id: chosen.entity.artifactId,
  series: []
})

const work = (
  ctx: RunContext,
  entities: ReadonlyArray<TextEntity>,
  fetch: FetchRequest
): Effect.Effect<StageOutcome<FetchOutcome>, unknown> =>
  Effect.gen(function*() {
    const wanted = fetch.providers
    const providers = ctx.deps.timeseries.providers.filter((p) => wanted === undefined || wanted.includes(p.name))
    // no entity, nothing to fetch for: no model call
    if (entities.length === 0) return { value: NOTHING, error: null, detail: { entities: 0, chosen: 0 } }
    const window = fetchWindow(ctx.referenceTime, fetch)
    const chosen = yield* choose(ctx, entities, providers, window)
    const byName = new Map(providers.map((p) => [p.name, p] as const))
    const results = yield* Effect.forEach(
      chosen.fetches,
      (c) =>
        byName.get(c.provider)!.fetch(c.query, c.from, c.to).pipe(
          // a provider callback that dies is that fetch's failure, not the stage's
          Effect.catchAllCause((cause) => Effect.fail(describeCause(cause))),
          Effect.either
        ),
      { concurrency: FETCH_CONCURRENCY }
    )
    const items: Array<FetchItem> = []
    const stored: Array<StoredSeries> = []
    for (const [i, c] of chosen.fetches.entries()) {
      const result = results[i]!
      if (Either.isLeft(result)) {
        items.push({ ...itemOf(c), error: `${c.provider} failed: ${result.left}` })
        continue
      }
      const done = yield* storeFetched(ctx, c, result.right)
      items.push(done.item)
      stored.push(...done.stored)
    }
    const failed = items.filter((i) => i.error !== undefined)
    return {
      value: { items, stored },
      error: failed.length === 0
        ? null
        : `${failed.length} of ${items.length} fetches had errors: ${
          failed.map((i) => `${i.entity} (${i.provider} ${i.query}): ${i.error}`).join("; ")
        }`,
      detail: {
        entities: entities.length,
        window,
        chosen: chosen.fetches.length,
        ...(chosen.ignored.length === 0 ? {} : { ignored: chosen.ignored }),
        series_stored: stored.length
      }
    }
  })

/** fetch_series over the text's entities; its items and the series it stored. Never fails. */
export const fetchSeries = Effect.fn("remember.fetch_series")(
  (ctx: RunContext, entities: ReadonlyArray<TextEntity>, fetch: FetchRequest): Effect.Effect<FetchOutcome> =>
    // every inference of this work (resolve_series) is filed under fetch_series
    optionalStage(ctx.recorder, "fetch_series", work(onBehalfOf(ctx, "fetch_series"), entities, fetch), NOTHING)
)
