/**
 * The enrichments of a remembered text that run after it is stored, in the seed's order:
 * resolve_geo (when the server has a geo resolver), then web_search (when the request asks).
 * Neither can fail the call; each adds its items to the response.
 */
import { Effect } from "effect"
import type { RememberRequest } from "../../domain/Remember.js"
import type { RememberServices, RunContext } from "../remember/RunContext.js"
import { resolveGeo } from "./geo.js"
import type { TextPart } from "./keyEntities.js"
import { webSearch } from "./webSearch.js"

export type { GeoItem } from "./geo.js"
export type { KeyEntity, TextPart } from "./keyEntities.js"
export type { WebSearchItem } from "./webSearch.js"

export const WEB_SEARCH_UNAVAILABLE = "web_search needs an Anthropic API key"

/** Checked before any work: a request the server cannot serve is a 503 with nothing done. */
export const enrichmentRefusal = (deps: RememberServices, request: RememberRequest): string | undefined =>
  request.web_search && !deps.settings.webSearch ? WEB_SEARCH_UNAVAILABLE : undefined

/** Runs the enrichments over the stored text (`parts`: the text, or its chunks in order); the response fields they add. */
export const enrichText = Effect.fn("remember.enrich_text")(function*(ctx: RunContext, parts: ReadonlyArray<TextPart>) {
  const fields: Record<string, unknown> = {}
  if (ctx.deps.geo.enabled) fields.geo = yield* resolveGeo(ctx, parts.flatMap((p) => p.entities))
  if (ctx.request.web_search) fields.web_searches = yield* webSearch(ctx, parts)
  return fields
})
