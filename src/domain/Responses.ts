/**
 * The remember responses (spec: seed-remember.txt "Response", contracts section 15) as schemas:
 * the handler returns values of their Types, HttpApi encodes them, and they are the OpenAPI
 * document. The manager checks what a pipeline built against them (`decodeRememberBody`).
 */
import { Either, ParseResult, Schema } from "effect"
import { Trajectory } from "./Atif.js"
import { IMAGE_MEDIA_TYPES } from "./Image.js"
import { ARTIFACT_KINDS, REASONING_LEVELS, RUN_STATUSES } from "./Stages.js"

/** An entity's attributes (a dataset schema declares them: docs/SCHEMA.md); a date is RFC 3339 text. */
export const EntityAttributesOut = Schema.Record({
  key: Schema.String,
  value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean)
}).annotations({
  description: "the attributes its texts stated (a dataset schema declares them), the latest value of each; " +
    "absent when none"
})

export const Entity = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  type: Schema.String,
  description: Schema.String,
  attributes: Schema.optional(EntityAttributesOut)
}).annotations({ identifier: "Entity" })
export type EntityOut = typeof Entity.Type

/** An edge as the remember response and the read side show it; null fields are omitted. */
export const edgeFields = {
  id: Schema.Number,
  source: Schema.String,
  source_id: Schema.Number,
  target: Schema.String,
  target_id: Schema.Number,
  relation: Schema.String,
  description: Schema.String,
  valid_at: Schema.NullOr(Schema.String).annotations({
    description: "when the fact became true; null: the start is unknown (it held from an unknown time until invalid_at)"
  }),
  /** omitted while the fact holds */
  invalid_at: Schema.optional(Schema.String),
  created_at: Schema.String,
  /** omitted while the edge is live */
  expired_at: Schema.optional(Schema.String),
  /** the artifact that created the edge (omitted if it was deleted) */
  artifact_id: Schema.optional(Schema.Number),
  /** the gb_models id of the model that extracted the edge */
  model_id: Schema.optional(Schema.Number)
}

export const Edge = Schema.Struct(edgeFields).annotations({ identifier: "Edge" })
export type EdgeOut = typeof Edge.Type

const Chunk = Schema.Struct({
  artifact_id: Schema.Number,
  index: Schema.Number,
  tokens: Schema.Number,
  overlap_tokens: Schema.Number,
  start_offset: Schema.Number,
  end_offset: Schema.Number,
  entities: Schema.Array(Entity),
  edges: Schema.Array(Edge),
  summary: Schema.NullOr(Schema.Struct({
    artifact_id: Schema.Number,
    text: Schema.String,
    model: Schema.String,
    reasoning: Schema.Literal(...REASONING_LEVELS),
    inference_id: Schema.Number
  }))
}).annotations({ identifier: "RememberChunk" })

/** Items whose shapes the enrichment and series docs describe (docs/ENRICHMENTS.md, docs/TIMESERIES.md). */
const Items = (description: string) =>
  Schema.optional(
    Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })).annotations({ description })
  )

const runId = { remember_run_id: Schema.Number.annotations({ description: "the run in the run log" }) }

/** A remembered text: what it became in the graph. */
const textFields = {
  artifact_id: Schema.Number,
  kind: Schema.Literal(...ARTIFACT_KINDS),
  valid_at: Schema.String,
  created_at: Schema.String,
  session_id: Schema.optional(Schema.String),
  entities: Schema.Array(Entity),
  edges: Schema.Array(Edge),
  invalidated_edges: Schema.Array(Schema.Number),
  chunks: Schema.optional(Schema.Array(Chunk).annotations({ description: "a long text: its chunks, in order" })),
  resumed_after_chunks: Schema.optional(Schema.Number.annotations({
    description: "a long text whose run went on after the chunks an earlier attempt stored (a crash or a " +
      "transient failure): how many; `chunks` and the lists are this attempt's"
  })),
  /** the counts of vectors written, with embeddings on */
  embedded_entities: Schema.optional(Schema.Number),
  embedded_edges: Schema.optional(Schema.Number),
  embedded_chunks: Schema.optional(Schema.Number),
  embedded_summaries: Schema.optional(Schema.Number),
  geo: Items("resolve_geo: the places among the entities, resolved or not"),
  web_searches: Items("web_search (when asked): one search per key entity, with what it added"),
  series: Items("the series the request carried, as stored and anchored"),
  series_fetches: Items("timeseries.fetch: what the model chose to fetch, and what came back"),
  series_observations: Items("timeseries.observations: the observation text of each series")
}

/** A remembered image (contracts section 15). */
const imageFields = {
  pipeline: Schema.Literal("image"),
  image_artifact_id: Schema.Number,
  extraction_id: Schema.Number,
  session_id: Schema.optional(Schema.String),
  path: Schema.String.annotations({ description: "<dataset id>/<sha256>.<ext>, relative to the image directory" }),
  media_type: Schema.Literal(...IMAGE_MEDIA_TYPES),
  bytes: Schema.Number,
  sha256: Schema.String,
  theme: Schema.String,
  title: Schema.String,
  text: Schema.String,
  text_blocks: Schema.Array(Schema.Struct({ kind: Schema.String, text: Schema.String })),
  model: Schema.String,
  provider: Schema.String,
  reasoning: Schema.Literal(...REASONING_LEVELS),
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cost_usd: Schema.Number,
  cached: Schema.Boolean.annotations({ description: "true: a repeat answered from the stored extraction" }),
  valid_at: Schema.String,
  created_at: Schema.String
}

export const RememberResponse = Schema.Struct({ ...runId, ...textFields }).annotations({
  identifier: "RememberResponse"
})
export type RememberResponse = typeof RememberResponse.Type

export const ImageRememberResponse = Schema.Struct({ ...runId, ...imageFields }).annotations({
  identifier: "ImageRememberResponse"
})
export type ImageRememberResponse = typeof ImageRememberResponse.Type

/** The success of `POST /v1/gb/remember`: a text's or an image's. */
export const RememberSuccess = Schema.Union(RememberResponse, ImageRememberResponse)
export type RememberSuccess = typeof RememberSuccess.Type

const trajectory = { trajectory: Trajectory }

export const EvalRememberResponse = Schema.Struct({ ...runId, ...textFields, ...trajectory }).annotations({
  identifier: "EvalRememberResponse"
})
export const EvalImageRememberResponse = Schema.Struct({ ...runId, ...imageFields, ...trajectory }).annotations({
  identifier: "EvalImageRememberResponse"
})

/** `POST /v1/gb/remember` with `"wait": false` (202): the run is queued; watch it at `Location`. */
export const RememberQueued = Schema.Struct({
  remember_run_id: Schema.Number,
  status: Schema.Literal(...RUN_STATUSES).annotations({
    description: "queued for a new run; a repeated Idempotency-Key gives its run's status now"
  })
}).annotations({
  identifier: "RememberQueued",
  description: "The run is queued (durably); GET /v1/gb/runs/{id} shows it, with `response` once it succeeded.",
  examples: [{ remember_run_id: 1, status: "queued" }]
})
export type RememberQueued = typeof RememberQueued.Type

/** The success of `POST /v1/gb/eval/remember`: the response plus the run's ATIF trajectory. */
export const EvalRememberSuccess = Schema.Union(EvalRememberResponse, EvalImageRememberResponse)
export type EvalRememberSuccess = typeof EvalRememberSuccess.Type

/** A response as a pipeline builds it: everything but the run's id (the manager has it). */
const TextRememberBody = Schema.Struct(textFields)
export type TextRememberBody = typeof TextRememberBody.Type
const ImageRememberBody = Schema.Struct(imageFields)
export type ImageRememberBody = typeof ImageRememberBody.Type
const RememberBody = Schema.Union(TextRememberBody, ImageRememberBody)
export type RememberBody = typeof RememberBody.Type

/** Whether a response is an image's (it names its pipeline; a text's does not). */
export const isImageBody = (body: RememberBody): body is ImageRememberBody => "pipeline" in body

const decodeBody = Schema.decodeUnknownEither(RememberBody)

/**
 * Checks what a pipeline built against the response schema; a Left is a bug of ours (a field
 * of the wrong type), the message names it.
 */
export const decodeRememberBody = (response: unknown): Either.Either<RememberBody, string> =>
  Either.mapLeft(decodeBody(response), (e) => ParseResult.TreeFormatter.formatErrorSync(e))

/** What a finished run hands back to the manager: the response as built and the ids for the run log. */
export interface RememberOutcome {
  readonly response: Record<string, unknown>
  readonly dataset_id: number | null
  readonly artifact_id: number | null
}

/** A finished run as the manager hands it back: its id, and the response checked against the contract. */
export interface RememberResult {
  readonly runId: number
  readonly response: RememberBody
  readonly dataset_id: number | null
  readonly artifact_id: number | null
}

/** `POST /v1/gb/remember/batch` without `"wait": true` (202): each item's run, in item order. */
export const RememberBatchQueued = Schema.Struct({ runs: Schema.Array(RememberQueued) }).annotations({
  identifier: "RememberBatchQueued",
  description: "Every item's run is queued (durably), in item order; GET /v1/gb/runs/{id} shows each.",
  examples: [{ runs: [{ remember_run_id: 1, status: "queued" }, { remember_run_id: 2, status: "queued" }] }]
})
export type RememberBatchQueued = typeof RememberBatchQueued.Type

/** A batch item whose run failed: its error and the status the single call would have answered. */
export const RememberBatchItemError = Schema.Struct({ error: Schema.String, status: Schema.Number }).annotations({
  identifier: "RememberBatchItemError"
})

/** `POST /v1/gb/remember/batch` with `"wait": true` (200): each item's response or error, in item order. */
export const RememberBatchResult = Schema.Struct({
  items: Schema.Array(Schema.Union(RememberSuccess, RememberBatchItemError))
}).annotations({
  identifier: "RememberBatchResult",
  description: "Each item's remember response, or {error, status} for an item whose run failed, in item order."
})
export type RememberBatchResult = typeof RememberBatchResult.Type
