/**
 * Stage resolve_geo (seed: How it works, 4c; spec/contracts.md section 12). After the text is
 * stored: its entities that have no geo row yet go to the detect_geo LLM stage, which names
 * the places among them; the GeoResolver looks each up and the result becomes the entity's
 * gb_entity_geo row. A row that records a failed lookup is not final: the entity is looked up
 * again next time. Never fails the call.
 */
import { Clock, Effect, Either, Option } from "effect"
import { LlmFailed } from "../../domain/Errors.js"
import type { EntityRow } from "../../domain/Rows.js"
import { toIso } from "../../domain/time.js"
import type { EntityGeoRow } from "../../services/GeoRepo.js"
import type { GeoPlace } from "../../services/GeoResolver.js"
import { callLlm } from "../ModelCalls.js"
import { callContext, type RunContext } from "../remember/RunContext.js"
import {
  buildDetectGeoPrompt,
  DETECT_GEO_ANSWER,
  DETECT_GEO_MAX_TOKENS,
  type DetectedPlace,
  parseDetectGeo
} from "./detectGeo.js"
import { describeCause, optionalStage, type StageOutcome } from "./stage.js"

/** One item of the response's `geo` (seed: Response). */
export interface GeoItem {
  readonly entity: string
  readonly entity_type: string
  readonly entity_id: number
  readonly kind: string
  readonly query: string
  readonly resolved: boolean
  readonly latitude: number | null
  readonly longitude: number | null
  readonly display_name: string | null
  readonly country: string | null
  readonly country_code: string | null
  readonly region: string | null
  readonly provider: string | null
  readonly error?: string
}

const nowIso = Effect.map(Clock.currentTimeMillis, toIso)

const unresolved = {
  latitude: null,
  longitude: null,
  display_name: null,
  country: null,
  country_code: null,
  region: null
}

const placeFields = (place: GeoPlace) => ({
  latitude: place.latitude,
  longitude: place.longitude,
  display_name: place.display_name,
  country: place.country,
  country_code: place.country_code,
  region: place.region
})

/** Looks one place up and stores the outcome; the item says what happened, never fails. */
const resolvePlace = (ctx: RunContext, place: DetectedPlace<EntityRow>): Effect.Effect<GeoItem> =>
  Effect.gen(function*() {
    const { geo, geoRepo } = ctx.deps
    const found = yield* Effect.either(geo.resolve(place.query))
    const row: EntityGeoRow = {
      entity_id: place.entity.id,
      kind: place.kind,
      query: place.query,
      provider: geo.provider,
      created_at: yield* nowIso,
      ...Either.match(found, {
        onLeft: (e) => ({ resolved: false, ...unresolved, error: e.message }),
        onRight: Option.match({
          onNone: () => ({ resolved: false, ...unresolved, error: null }),
          onSome: (p) => ({ resolved: true, ...placeFields(p), error: null })
        })
      })
    }
    const stored = yield* geoRepo.upsert(row).pipe(
      Effect.map(() => null),
      Effect.catchAllCause((cause) => Effect.succeed(`storing the place failed: ${describeCause(cause)}`))
    )
    const error = [row.error, stored].filter((e): e is string => e !== null).join("; ")
    return {
      entity: place.entity.name,
      entity_type: place.entity.type,
      entity_id: place.entity.id,
      kind: row.kind,
      query: row.query,
      resolved: row.resolved,
      latitude: row.latitude,
      longitude: row.longitude,
      display_name: row.display_name,
      country: row.country,
      country_code: row.country_code,
      region: row.region,
      provider: row.provider,
      ...(error === "" ? {} : { error })
    } satisfies GeoItem
  }).pipe(
    // a defect anywhere (a resolver that dies) is this item's error, not the stage's
    Effect.catchAllCause((cause) =>
      Effect.succeed({
        entity: place.entity.name,
        entity_type: place.entity.type,
        entity_id: place.entity.id,
        kind: place.kind,
        query: place.query,
        resolved: false,
        ...unresolved,
        provider: ctx.deps.geo.provider,
        error: describeCause(cause)
      })
    )
  )

const work = (
  ctx: RunContext,
  textEntities: ReadonlyArray<EntityRow>
): Effect.Effect<StageOutcome<ReadonlyArray<GeoItem>>, unknown> =>
  Effect.gen(function*() {
    const { deps, request } = ctx
    const entities = [...new Map(textEntities.map((e) => [e.id, e])).values()]
    // a row with an error recorded a failed lookup: that entity is tried again
    const known = new Set(
      (yield* deps.geoRepo.findByEntityIds(entities.map((e) => e.id)))
        .filter((row) => row.error === null)
        .map((row) => row.entity_id)
    )
    const candidates = entities.filter((e) => !known.has(e.id))
    const counts = { entities: entities.length, skipped: entities.length - candidates.length }
    if (candidates.length === 0) return { value: [], error: null, detail: { ...counts, places: 0, resolved: 0 } }

    const prompt = buildDetectGeoPrompt(candidates)
    const response = yield* callLlm(callContext(ctx, "resolve_geo"), {
      stage: "detect_geo",
      model: request.models.detect_geo,
      reasoning: request.reasoning.detect_geo ?? "none",
      system: prompt.system,
      messages: [{ role: "user", content: prompt.user }],
      maxTokens: DETECT_GEO_MAX_TOKENS,
      answerSchema: DETECT_GEO_ANSWER
    })
    const detected = parseDetectGeo(response.text, candidates)
    if (Either.isLeft(detected)) {
      return yield* new LlmFailed({
        message: `detect_geo: unusable answer from the model: ${detected.left}`,
        stage: "detect_geo"
      })
    }
    if (detected.right.ignored.length > 0) {
      yield* Effect.logInfo("detect_geo: ignored part of the answer", { ignored: detected.right.ignored })
    }

    const items = yield* Effect.forEach(detected.right.places, (place) => resolvePlace(ctx, place))
    const failed = items.filter((i) => i.error !== undefined)
    return {
      value: items,
      error: failed.length === 0
        ? null
        : `geo failed for ${failed.length} of ${items.length} places: ${
          failed.map((i) => `${i.entity}: ${i.error}`).join("; ")
        }`,
      detail: {
        ...counts,
        places: items.length,
        resolved: items.filter((i) => i.resolved).length,
        model: response.model,
        ...(detected.right.ignored.length === 0 ? {} : { ignored: detected.right.ignored })
      }
    }
  })

/** resolve_geo for the text's entities; the response's `geo` items (empty when the stage failed). */
export const resolveGeo = Effect.fn("remember.resolve_geo")(
  (ctx: RunContext, textEntities: ReadonlyArray<EntityRow>): Effect.Effect<ReadonlyArray<GeoItem>> =>
    optionalStage(ctx.recorder, "resolve_geo", work(ctx, textEntities), [])
)
