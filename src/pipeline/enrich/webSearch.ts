/**
 * Stage web_search (seed: Web search; spec/contracts.md section 13). After the text is stored,
 * each key entity is searched for with one Messages call that may use Anthropic's server-side
 * web search tool; the answer is remembered like a text (extract -> candidates -> resolve ->
 * store -> vectors) as a `web_search` artifact, a child of the artifact the entity came from,
 * with the queries issued and the sources. Searches and extractions run concurrently; results
 * are reconciled and stored one after the other, against everything stored so far. All their
 * inferences are filed under web_search. A failing entity never stops the others, and the
 * stage never fails the call.
 */
import { Effect } from "effect"
import type { EdgeOut, EntityOut } from "../../domain/Responses.js"
import { callLlm } from "../ModelCalls.js"
import { edgeOut, entityOut } from "../remember/response.js"
import { callContext, onBehalfOf, type RunContext } from "../remember/RunContext.js"
import { storeUnit, type Unit, type UnitWork, unitWork } from "../remember/unit.js"
import { keyEntities, type KeyEntity, type TextPart } from "./keyEntities.js"
import { describeCause, optionalStage, type StageOutcome } from "./stage.js"
import {
  buildWebSearchPrompt,
  readWebSearchAnswer,
  WEB_SEARCH_MAX_TOKENS,
  WEB_SEARCH_TOOL,
  type WebSearchAnswer,
  type WebSource
} from "./webSearchAnswer.js"

/** One item of the response's `web_searches` (seed: Response). */
export interface WebSearchItem {
  readonly entity: string
  /** the queries the model issued, one per line; null when none was */
  readonly query: string | null
  readonly parent_artifact_id: number
  readonly artifact_id: number | null
  readonly sources: ReadonlyArray<WebSource>
  readonly entities: ReadonlyArray<EntityOut>
  readonly edges: ReadonlyArray<EdgeOut>
  readonly error?: string
}

/** The queries as the artifact's `query` column keeps them. */
export const joinQueries = (
  queries: ReadonlyArray<string>
): string | null => (queries.length === 0 ? null : queries.join("\n"))

interface Searched {
  readonly answer: WebSearchAnswer
  readonly searches: number
}

interface Prepared extends Searched {
  readonly unit: Unit
  readonly work: UnitWork
}

/** Why an answer cannot be remembered, or null when it can. */
const unusable = (answer: WebSearchAnswer): string | null => {
  const failed = answer.toolErrors.length === 0 ? "" : `the web search failed (${answer.toolErrors.join(", ")}); `
  if (answer.text === "") return `${failed}the answer has no text; nothing was stored`
  // an answer without any search result is the model's memory, not the web's
  if (answer.sources.length === 0) return `${failed}the search found no sources; nothing was stored`
  return null
}

const search = (ctx: RunContext, key: KeyEntity) =>
  Effect.gen(function*() {
    const prompt = buildWebSearchPrompt({ referenceTime: ctx.referenceTime, entity: key.entity })
    const response = yield* callLlm(callContext(ctx, "web_search"), {
      stage: "web_search",
      model: ctx.request.models.web_search,
      // web_search cannot think (seed: Reasoning)
      reasoning: "none",
      system: prompt.system,
      messages: [{ role: "user", content: prompt.user }],
      maxTokens: WEB_SEARCH_MAX_TOKENS,
      tools: [WEB_SEARCH_TOOL]
    })
    return {
      answer: readWebSearchAnswer(response.blocks),
      searches: response.usage.webSearchRequests
    } satisfies Searched
  })

/** Searches and extracts (nothing stored yet): safe to run for every key entity at once. */
const prepare = (
  ctx: RunContext,
  key: KeyEntity
): Effect.Effect<Prepared, { readonly searched: Searched | null; readonly error: string }> =>
  Effect.gen(function*() {
    const searched = yield* search(ctx, key).pipe(
      Effect.catchAllCause((cause) => Effect.fail({ searched: null, error: describeCause(cause) }))
    )
    const refusal = unusable(searched.answer)
    if (refusal !== null) return yield* Effect.fail({ searched, error: refusal })
    const unit: Unit = {
      text: searched.answer.text,
      kind: "web_search",
      chunk: null,
      parentId: key.parentArtifactId,
      query: joinQueries(searched.answer.queries),
      metadata: { sources: searched.answer.sources }
    }
    const work = yield* unitWork(ctx, unit).pipe(
      Effect.catchAllCause((cause) => Effect.fail({ searched, error: describeCause(cause) }))
    )
    return { ...searched, unit, work }
  })

const item = (key: KeyEntity, searched: Searched | null, rest: Partial<WebSearchItem>): WebSearchItem => ({
  entity: key.entity.name,
  query: searched === null ? null : joinQueries(searched.answer.queries),
  parent_artifact_id: key.parentArtifactId,
  artifact_id: null,
  sources: searched?.answer.sources ?? [],
  entities: [],
  edges: [],
  ...rest
})

/** Stores one prepared result; the item says what happened, never fails. */
const store = (ctx: RunContext, key: KeyEntity, prepared: Prepared): Effect.Effect<WebSearchItem> =>
  storeUnit(ctx, prepared.unit, prepared.work).pipe(
    Effect.map((stored) =>
      item(key, prepared, {
        artifact_id: stored.artifact.id,
        entities: stored.entities.map(entityOut),
        edges: stored.edges.map(edgeOut)
      })
    ),
    Effect.catchAllCause((cause) => {
      const error = describeCause(cause)
      // after commit, only the vectors failed: the artifact is stored (and its vectors wait in the outbox)
      const failure = cause._tag === "Fail"
        ? (cause.error as { readonly _tag?: string; readonly artifact_id?: number })
        : undefined
      const artifactId = failure?._tag === "VectorWriteFailed" ? failure.artifact_id ?? null : null
      return Effect.succeed(item(key, prepared, { artifact_id: artifactId, error }))
    })
  )

const work = (
  ctx: RunContext,
  parts: ReadonlyArray<TextPart>
): Effect.Effect<StageOutcome<ReadonlyArray<WebSearchItem>>> =>
  Effect.gen(function*() {
    const keys = keyEntities(parts)
    const prepared = yield* Effect.forEach(keys, (key) => Effect.either(prepare(ctx, key)), {
      concurrency: "unbounded"
    })
    const items: Array<WebSearchItem> = []
    let searches = 0
    for (const [i, key] of keys.entries()) {
      const result = prepared[i]!
      if (result._tag === "Left") {
        searches += result.left.searched?.searches ?? 0
        items.push(item(key, result.left.searched, { error: result.left.error }))
        continue
      }
      searches += result.right.searches
      items.push(yield* store(ctx, key, result.right))
    }
    const failed = items.filter((i) => i.error !== undefined)
    return {
      value: items,
      error: failed.length === 0
        ? null
        : `web search failed for ${failed.length} of ${items.length} entities: ${
          failed.map((i) => `${i.entity}: ${i.error}`).join("; ")
        }`,
      detail: {
        entities: keys.map((k) => k.entity.name),
        searches,
        stored: items.filter((i) => i.artifact_id !== null).length
      }
    }
  })

/**
 * web_search for the key entities of the text (`parts`: the text, or its chunks in order);
 * the response's `web_searches` items.
 */
export const webSearch = Effect.fn("remember.web_search")(
  (ctx: RunContext, parts: ReadonlyArray<TextPart>): Effect.Effect<ReadonlyArray<WebSearchItem>> =>
    // every inference of this work is filed under web_search; the text's own stages are left alone
    optionalStage(ctx.recorder, "web_search", work(onBehalfOf(ctx, "web_search"), parts), [])
)
