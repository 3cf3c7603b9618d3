/**
 * The HTTP contract. It drives routing and the OpenAPI document (`/openapi.json`, `/docs`).
 *
 * Every error body is exactly `{"error": "..."}` (spec/contracts.md section 9). The built-in
 * decoding of HttpApi answers with `{_tag, issues}` instead, so the endpoints read their own
 * bodies and parameters (see Handlers.ts) and the schemas below document the wire shape.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { MODEL_STAGES, REASONING_LEVELS, REASONING_STAGES } from "../domain/Stages.js"
import { Trajectory } from "../eval/Atif.js"
import { AdminApiGroup, AdminPageGroup } from "./AdminApi.js"
import { ReadGroup } from "./ReadApi.js"
import { edgeFields, RunDoc } from "./Shapes.js"

export { RunDoc }
import {
  Error400,
  Error401,
  Error403,
  Error404,
  Error413,
  Error422,
  Error500,
  Error502,
  Error503
} from "./ErrorBodies.js"

const stageMap = <V extends Schema.Schema.Any>(stages: ReadonlyArray<string>, value: V) =>
  Schema.partial(Schema.Struct(Object.fromEntries(stages.map((s) => [s, value])) as Record<string, V>))

export const RememberRequestDoc = Schema.Struct({
  user_id: Schema.String.annotations({ description: "the user who owns the dataset" }),
  text: Schema.optional(Schema.String.annotations({ description: "the text to remember, at most 1 MiB" })),
  image: Schema.optional(Schema.String.annotations({ description: "a base64 image, instead of text" })),
  dataset: Schema.optional(Schema.String.annotations({ description: "dataset name, default main" })),
  kind: Schema.optional(Schema.Literal("knowledge", "episode")),
  reference_time: Schema.optional(Schema.String.annotations({ description: "RFC 3339; default now" })),
  session_id: Schema.optional(Schema.String.annotations({ description: "at most 128 bytes" })),
  models: Schema.optional(stageMap(MODEL_STAGES, Schema.String)),
  reasoning: Schema.optional(stageMap(REASONING_STAGES, Schema.Literal(...REASONING_LEVELS))),
  web_search: Schema.optional(Schema.Boolean),
  timeseries: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "RememberRequest" })

const EntityDoc = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  type: Schema.String,
  description: Schema.String
}).annotations({ identifier: "Entity" })

const EdgeDoc = Schema.Struct(edgeFields).annotations({ identifier: "Edge" })

export const RememberResponseDoc = Schema.Struct({
  remember_run_id: Schema.Number,
  artifact_id: Schema.Number,
  kind: Schema.String,
  valid_at: Schema.String,
  created_at: Schema.String,
  session_id: Schema.optional(Schema.String),
  entities: Schema.Array(EntityDoc),
  edges: Schema.Array(EdgeDoc),
  invalidated_edges: Schema.Array(Schema.Number),
  embedded_entities: Schema.optional(Schema.Number),
  embedded_edges: Schema.optional(Schema.Number)
}).annotations({ identifier: "RememberResponse" })

export const ImageRememberResponseDoc = Schema.Struct({
  pipeline: Schema.Literal("image"),
  remember_run_id: Schema.Number,
  image_artifact_id: Schema.Number,
  extraction_id: Schema.Number,
  session_id: Schema.optional(Schema.String),
  path: Schema.String.annotations({ description: "<dataset id>/<sha256>.<ext>, relative to the image directory" }),
  media_type: Schema.Literal("image/jpeg", "image/png", "image/gif", "image/webp"),
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
}).annotations({ identifier: "ImageRememberResponse" })

/** Eval mode: a failure after the run started also carries the trajectory up to the failure. */
const EvalErrorBody = (status: number, description: string) =>
  Schema.Struct({ error: Schema.String, trajectory: Trajectory }).annotations({
    ...HttpApiSchema.annotations({ status }),
    identifier: `EvalError${status}`,
    description
  })

export const EvalRememberResponseDoc = Schema.Union(
  Schema.extend(RememberResponseDoc, Schema.Struct({ trajectory: Trajectory })),
  Schema.extend(ImageRememberResponseDoc, Schema.Struct({ trajectory: Trajectory }))
).annotations({ identifier: "EvalRememberResponse" })

export class RememberGroup extends HttpApiGroup.make("remember")
  .add(
    HttpApiEndpoint.post("remember", "/v1/gb/remember")
      .setPayload(RememberRequestDoc)
      .addSuccess(Schema.Union(RememberResponseDoc, ImageRememberResponseDoc))
      .addError(Error400)
      .addError(Error413)
      .addError(Error422)
      .addError(Error502)
      .addError(Error503)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Remember a text (or an image)")
  )
  .add(
    HttpApiEndpoint.post("evalRemember", "/v1/gb/eval/remember")
      .setPayload(RememberRequestDoc)
      .addSuccess(EvalRememberResponseDoc)
      .addError(Error400)
      .addError(Error413)
      .addError(EvalErrorBody(422, "A required timeseries anchor matched nothing; nothing was stored."))
      .addError(EvalErrorBody(502, "The LLM or embeddings provider failed, or a vector write after commit failed."))
      .addError(EvalErrorBody(503, "A provider the request needs is not configured."))
      .addError(EvalErrorBody(500, "Anything else; the message names the failing stage."))
      .annotate(OpenApi.Summary, "Remember, in eval mode: the response plus the call's ATIF trajectory")
      .annotate(
        OpenApi.Description,
        "The same body, validation and effects as /v1/gb/remember. `trajectory` is an ATIF-v1.7 document: one step per " +
          "model call and per stage that ran. A failure after the run started answers its status with `{error, trajectory}`."
      )
  )
  .add(
    HttpApiEndpoint.get("getRun", "/v1/gb/runs/:id")
      .addSuccess(RunDoc)
      .addError(Error400)
      .addError(Error404)
      .annotate(OpenApi.Summary, "One remember run with its stages")
  )
  .addError(Error401)
  .addError(Error403)
{}

export class ImagesGroup extends HttpApiGroup.make("images").add(
  HttpApiEndpoint.get("getImage", "/v1/gb/images/:id")
    .addSuccess(HttpApiSchema.Uint8Array({ contentType: "image/*" }))
    .addError(Error400)
    .addError(Error404)
    .addError(Error503)
    .annotate(OpenApi.Summary, "The bytes of a remembered image, with its media type")
    .annotate(
      OpenApi.Description,
      "Query parameters `user_id` and `dataset` (both required): the image must belong to that user's dataset."
    )
)
  .addError(Error401)
  .addError(Error403)
{}

export class HealthGroup extends HttpApiGroup.make("health").add(
  HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Schema.Struct({ status: Schema.Literal("ok") }))
) {}

export class GligabaoApi extends HttpApi.make("gligabao")
  .add(RememberGroup)
  .add(ImagesGroup)
  .add(HealthGroup)
  .add(ReadGroup)
  .add(AdminApiGroup)
  .add(AdminPageGroup)
  .annotate(OpenApi.Title, "gligabao")
  .annotate(OpenApi.Description, "A memory server for AI agents: texts in, a bi-temporal knowledge graph out.")
{}
