/**
 * The HTTP contract. It drives routing and the OpenAPI document (`/openapi.json`, `/docs`).
 * The request and response schemas are the domain's (src/domain), so the document is the
 * code's: the handlers decode with the same schemas and return their Types.
 *
 * Every error body is exactly `{"error": "..."}` (spec/contracts.md section 9). The remember
 * endpoints read their own bodies (size limits before parsing, see Handlers.ts); the path and
 * URL parameters are HttpApi's, its decode errors worded by the middleware of Http.ts.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { JSONSchema, Schema, SchemaAST as AST } from "effect"
import { GLIGABAO_VERSION } from "../Config.js"
import { Trajectory } from "../domain/Atif.js"
import { ImageQuery } from "../domain/Image.js"
import { EvalRememberRequest, RememberBatchRequest, RememberRequest } from "../domain/Remember.js"
import {
  EvalRememberSuccess,
  RememberBatchQueued,
  RememberBatchResult,
  RememberQueued,
  RememberSuccess
} from "../domain/Responses.js"
import { CancelRunRequest, RememberRun, RunsParams, RunsResponse } from "../domain/runView.js"
import { PathId } from "../domain/Wire.js"
import { GRAPHML_MEDIA_TYPE } from "../query/export.js"
import { AdminApiGroup, AdminPageGroup } from "./AdminApi.js"
import { CorrectGroup } from "./CorrectApi.js"
import {
  Error400,
  Error401,
  Error403,
  Error404,
  Error409,
  Error413,
  Error415,
  Error422,
  Error500,
  Error502,
  Error503
} from "./ErrorBodies.js"
import { ForgetGroup, UsersGroup } from "./ForgetApi.js"
import { ReadGroup } from "./ReadApi.js"
import { RunEventsGroup } from "./RunEventsApi.js"

/** The run the remember examples make first, and the image they store (for the examples of the GETs). */
const IdPath = (description: string) => Schema.Struct({ id: PathId.annotations({ description, examples: [1] }) })

/** Eval mode: a failure after the run started also carries the trajectory up to the failure. */
const EvalErrorBody = (status: number, description: string) =>
  Schema.Struct({ error: Schema.String, trajectory: Trajectory }).annotations({
    ...HttpApiSchema.annotations({ status }),
    identifier: `EvalError${status}`,
    description
  })

/**
 * The 202 of `"wait": false`, documented here rather than as a second success schema: the
 * handler answers it raw, and the typed client keeps reading the synchronous response.
 */
const withQueuedResponse = (operation: Record<string, any>): Record<string, any> => {
  const { $defs, $schema: _, ...inline } = JSONSchema.make(RememberQueued) as Record<string, any>
  // like every other response schema: unknown fields allowed (see test/http/openapi.test.ts)
  const { additionalProperties: __, ...schema } = $defs?.RememberQueued ?? inline
  return {
    ...operation,
    responses: {
      ...operation.responses,
      "202": {
        description: "Queued (`\"wait\": false`): watch the run at the `Location` header, GET /v1/gb/runs/{id}.",
        headers: { Location: { schema: { type: "string" }, description: "/v1/gb/runs/{id}" } },
        content: { "application/json": { schema } }
      }
    }
  }
}

export class RememberGroup extends HttpApiGroup.make("remember")
  .add(
    HttpApiEndpoint.post("remember", "/v1/gb/remember")
      .setPayload(RememberRequest)
      .addError(Error415)
      .addSuccess(RememberSuccess)
      .annotate(OpenApi.Transform, withQueuedResponse)
      .addError(Error400)
      .addError(Error404)
      .addError(Error409)
      .addError(Error413)
      .addError(Error422)
      .addError(Error502)
      .addError(Error503)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Remember a text (or an image)")
      .annotate(
        OpenApi.Description,
        "The request is queued durably before it is acknowledged. By default the call waits for the run and answers " +
          "its response; with `\"wait\": false` it answers 202 `{remember_run_id, status}` with a `Location` header " +
          "(`/v1/gb/runs/{id}`, which shows `response` once the run succeeded). An `Idempotency-Key` header (or " +
          "`idempotency_key`) makes a repeated submission give the same run; the same key with another body is a 422. " +
          "A 404: the user or the dataset was forgotten while the run waited, and nothing of it was stored. A 409: " +
          "the run was cancelled while it was queued (POST /v1/gb/runs/{id}/cancel), and nothing of it was stored."
      )
  )
  .add(
    HttpApiEndpoint.post("rememberBatch", "/v1/gb/remember/batch")
      .setPayload(RememberBatchRequest)
      .addError(Error415)
      .addSuccess(RememberBatchQueued, { status: 202 })
      .addSuccess(RememberBatchResult)
      .addError(Error400)
      .addError(Error413)
      .addError(Error422)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Remember many texts (or images) of one user and dataset")
      .annotate(
        OpenApi.Description,
        "Up to 1,000 items in a body of at most 32 MiB (413 over it). Every item is validated first (a 400 names " +
          "`items[i].<field>`, and nothing is queued); then one run per item is queued, in item order, in one " +
          "transaction. Answers 202 `{runs: [{remember_run_id, status}]}`; with `\"wait\": true`, 200 `{items}`: each " +
          "item's response or `{error, status}`, in order. An item's `idempotency_key` works as the single call's; " +
          "one that names another request is a 422 and nothing is queued."
      )
  )
  .add(
    HttpApiEndpoint.post("evalRemember", "/v1/gb/eval/remember")
      .setPayload(EvalRememberRequest)
      .addError(Error415)
      .addSuccess(EvalRememberSuccess)
      .addError(Error400)
      .addError(Error413)
      .addError(EvalErrorBody(404, "The user or the dataset was forgotten while the run waited; nothing was stored."))
      .addError(EvalErrorBody(409, "The run was cancelled while it was queued; nothing was stored."))
      .addError(EvalErrorBody(422, "A required timeseries anchor matched nothing; nothing was stored."))
      .addError(EvalErrorBody(502, "The LLM or embeddings provider failed, or a vector write after commit failed."))
      .addError(
        EvalErrorBody(
          503,
          "A provider the request needs is not configured: without an LLM the request is refused before any run " +
            "(`{error}`); web_search or timeseries.fetch without their providers fail the run (`{error, trajectory}`)."
        )
      )
      // refused before any run (no LLM configured): no trajectory
      .addError(Error503)
      .addError(EvalErrorBody(500, "Anything else; the message names the failing stage."))
      .annotate(OpenApi.Summary, "Remember, in eval mode: the response plus the call's ATIF trajectory")
      .annotate(
        OpenApi.Description,
        "The same body, validation and effects as /v1/gb/remember. `trajectory` is an ATIF-v1.7 document: one step per " +
          "model call and per stage that ran. A failure after the run started answers its status with `{error, trajectory}`; " +
          "on a server without an LLM the request is refused before any run with a plain 503 `{error}`."
      )
  )
  .add(
    HttpApiEndpoint.get("getRun", "/v1/gb/runs/:id")
      .setPath(IdPath("the run's id (remember_run_id)"))
      .addSuccess(RememberRun)
      .addError(Error400)
      .addError(Error404)
      .annotate(OpenApi.Summary, "One remember run with its stages")
  )
  .add(
    HttpApiEndpoint.post("cancelRun", "/v1/gb/runs/:id/cancel")
      .setPath(IdPath("the run's id (remember_run_id)"))
      .setPayload(CancelRunRequest)
      .addError(Error415)
      .addSuccess(RememberRun)
      .addError(Error400)
      .addError(Error404)
      .addError(Error409)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Cancel a queued remember run")
      .annotate(
        OpenApi.Description,
        "Only a queued run can be cancelled: it leaves the queue, its status becomes `cancelled` (with `finished_at`), " +
          "nothing of it is stored, and whoever waits for it (a `wait: true` remember, its event stream) is answered " +
          "(a 409, the `cancelled` event). Answers the run as GET /v1/gb/runs/{id} shows it; a run cancelled before " +
          "answers the same. A run already started is not interrupted: 409, saying it runs to its end; a finished " +
          "run is a 409 naming its status; another user's run a 404. The run's Idempotency-Key is released: the " +
          "same key again queues a new run. `gligabao runs cancel` does the same from the command line."
      )
  )
  .add(
    HttpApiEndpoint.get("listRuns", "/v1/gb/runs")
      .setUrlParams(RunsParams)
      .addSuccess(RunsResponse)
      .addError(Error400)
      .addError(Error500)
      .annotate(OpenApi.Summary, "A user's remember runs, newest first (page with before_id)")
  )
  .addError(Error401)
  .addError(Error403)
{}

export class ImagesGroup extends HttpApiGroup.make("images").add(
  HttpApiEndpoint.get("getImage", "/v1/gb/images/:id")
    .setPath(IdPath("the image's id (image_artifact_id)"))
    .setUrlParams(ImageQuery)
    .addSuccess(HttpApiSchema.Uint8Array({ contentType: "image/*" }))
    .addError(Error400)
    .addError(Error404)
    .addError(Error503)
    .annotate(OpenApi.Summary, "The bytes of a remembered image, with its media type")
    .annotate(OpenApi.Description, "The image must belong to the dataset `dataset` of the user `user_id`.")
)
  .addError(Error401)
  .addError(Error403)
{}

/** What `GET /readyz` says of the database: answering and migrated, or why not. */
const ReadyDatabase = Schema.Struct({
  dialect: Schema.optional(Schema.Literal("sqlite", "postgres")),
  /** the latest migration applied, `<id>_<name>` */
  migration: Schema.optional(Schema.String),
  error: Schema.optional(Schema.String)
}).annotations({ identifier: "ReadyDatabase" })

/** What `GET /readyz` says of the vector store: its name and search, or why it is not usable. */
const ReadyVectorStore = Schema.Struct({
  name: Schema.String,
  /** e.g. "pgvector hnsw", "portable binary codes", "sqlite-vec binary codes", "pinecone" */
  search: Schema.optional(Schema.String),
  error: Schema.optional(Schema.String)
}).annotations({ identifier: "ReadyVectorStore" })

/** What `GET /readyz` says of the LLM: its provider and whether one is configured (it is not called). */
const ReadyLlm = Schema.Struct({
  /** "anthropic", "openai", or "none" */
  provider: Schema.String,
  /** false: no key is configured, and every remember is refused with a 503 */
  configured: Schema.Boolean
}).annotations({ identifier: "ReadyLlm" })

export const Ready = Schema.Struct({
  status: Schema.Literal("ready"),
  database: ReadyDatabase,
  vector_store: ReadyVectorStore,
  llm: ReadyLlm
}).annotations({
  identifier: "Ready",
  description: "The database answers, every migration is applied, and the vector store is usable."
})

export const NotReady = Schema.Struct({
  error: Schema.String,
  database: ReadyDatabase,
  vector_store: ReadyVectorStore,
  llm: ReadyLlm
}).annotations({
  ...HttpApiSchema.annotations({ status: 503 }),
  identifier: "NotReady",
  description: "`not ready: <what>`: the database does not answer, a migration is missing, or the vector store fails."
})

/**
 * Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the database, its
 * migrations and the vector store are usable). Both are public, like the OpenAPI document.
 */
export class HealthGroup extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Schema.Struct({ status: Schema.Literal("ok") })))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Ready).addError(NotReady))
{}

/**
 * `GET /metrics`: every metric in the Prometheus text format (docs/DEPLOY.md). It describes the
 * whole server, so with `[auth]` tokens it needs an admin token, like the admin API.
 */
export class MetricsGroup extends HttpApiGroup.make("metrics")
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(
        HttpApiSchema.Text({ contentType: "text/plain; version=0.0.4" }).annotations({
          description: "The Prometheus text exposition format: gligabao_* counters, gauges and histograms"
        })
      )
      .annotate(OpenApi.Summary, "Every metric of this process, for Prometheus (an admin token under [auth])")
  )
  .addError(Error401)
  .addError(Error403)
{}

/**
 * HttpApi documents its own decode failure (`{_tag, issues, message}`) as a 400 of every
 * endpoint, but the server answers every 400 with `{"error"}` (src/http/Http.ts, jsonErrors):
 * the document says what is answered.
 */
const withoutDecodeErrorBody = (spec: Record<string, any>): Record<string, any> => {
  const decodeRef = "#/components/schemas/HttpApiDecodeError"
  for (const operations of Object.values<Record<string, any>>(spec.paths ?? {})) {
    for (const operation of Object.values<any>(operations)) {
      const json = operation?.responses?.["400"]?.content?.["application/json"]
      // an endpoint with nothing to decode has no 400 of its own
      if (json?.schema?.$ref === decodeRef) {
        delete operation.responses["400"]
        continue
      }
      const anyOf: Array<{ $ref?: string }> | undefined = json?.schema?.anyOf
      if (anyOf === undefined) continue
      const rest = anyOf.filter((s) => s.$ref !== decodeRef)
      json.schema = rest.length === 1 ? rest[0] : { anyOf: rest }
      operation.responses["400"].description = Error400.ast.annotations[AST.DescriptionAnnotationId] as string
    }
  }
  if (spec.components?.schemas !== undefined) {
    delete spec.components.schemas.HttpApiDecodeError
    delete spec.components.schemas.Issue
  }
  return withSeriesOrFetch(withExclusiveInputs(withGraphMl(strictRequestBodies(withoutRepeatedIds(spec)))))
}

/**
 * A `timeseries` object needs series or fetch (src/domain/Timeseries.ts, TimeseriesRequest checks
 * it first; its schema is a transformation, whose JSON Schema annotations Effect does not merge).
 */
const withSeriesOrFetch = (spec: Record<string, any>): Record<string, any> => {
  for (const schema of Object.values<any>(spec.components?.schemas ?? {})) {
    const members: Array<any> = schema?.properties?.timeseries?.anyOf ?? []
    for (const member of members) {
      if (member.properties?.series !== undefined && member.properties?.fetch !== undefined) {
        member.anyOf = [{ required: ["series"] }, { required: ["fetch"] }]
      }
    }
  }
  return spec
}

/**
 * `text`, `image` and `messages` exclude each other, and one is required (src/domain/Remember.ts,
 * textOrImage); a null one is an absent one, so each alternative asks for its field not null.
 */
const withExclusiveInputs = (spec: Record<string, any>): Record<string, any> => {
  for (const name of ["RememberRequest", "EvalRememberRequest"]) {
    const schema = spec.components?.schemas?.[name]
    if (schema?.properties?.text === undefined) continue
    schema.oneOf = ["text", "image", "messages"].map((field) => ({
      required: [field],
      properties: { [field]: { not: { type: "null" } } }
    }))
  }
  return spec
}

/** The export's other media type: `format=graphml` answers GraphML, which HttpApi cannot declare beside the JSON. */
const withGraphMl = (spec: Record<string, any>): Record<string, any> => {
  const ok = spec.paths?.["/v1/gb/graph"]?.get?.responses?.["200"]
  if (ok?.content !== undefined) {
    ok.content[GRAPHML_MEDIA_TYPE] = {
      schema: { type: "string", description: "GraphML 1.0 (with format=graphml), streamed" }
    }
  }
  return spec
}

/**
 * Request bodies refuse unknown fields (STRICT in src/domain/Wire.ts) while responses may grow, so
 * the objects a request body reaches say `additionalProperties: false`; the document is built
 * with "allow" for the responses' sake.
 */
const strictRequestBodies = (spec: Record<string, any>): Record<string, any> => {
  const components: Record<string, any> = spec.components?.schemas ?? {}
  const seen = new Set<string>()
  const visit = (node: any): void => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (node === null || typeof node !== "object") return
    if (typeof node.$ref === "string") {
      const name = node.$ref.replace("#/components/schemas/", "")
      if (!seen.has(name) && components[name] !== undefined) {
        seen.add(name)
        visit(components[name])
      }
    }
    // a record (additionalProperties a schema) stays open: its keys are the caller's
    if (node.type === "object" && node.properties !== undefined && node.additionalProperties === true) {
      node.additionalProperties = false
    }
    for (const [key, child] of Object.entries(node)) if (key !== "$ref") visit(child)
  }
  for (const operations of Object.values<Record<string, any>>(spec.paths ?? {})) {
    for (const operation of Object.values<any>(operations)) visit(operation?.requestBody)
  }
  return spec
}

/**
 * Effect's JSON Schema of `Schema.Unknown` carries `"$id": "/schemas/unknown"`, once per use; an
 * `$id` must be unique in an OpenAPI 3.1 document, so validators refuse it. Dropped: `{}` already
 * says "anything".
 */
const withoutRepeatedIds = <A>(node: A): A => {
  if (Array.isArray(node)) return node.map(withoutRepeatedIds) as A
  if (node === null || typeof node !== "object") return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === "$id" && typeof value === "string" && value.startsWith("/schemas/")) continue
    out[key] = withoutRepeatedIds(value)
  }
  return out as A
}

export class GligabaoApi extends HttpApi.make("gligabao")
  .add(RememberGroup)
  .add(ImagesGroup)
  .add(HealthGroup)
  .add(MetricsGroup)
  .add(CorrectGroup)
  .add(ForgetGroup)
  .add(ReadGroup)
  .add(UsersGroup)
  .add(AdminApiGroup)
  .add(AdminPageGroup)
  .add(RunEventsGroup)
  .annotate(OpenApi.Transform, withoutDecodeErrorBody)
  .annotate(OpenApi.Title, "gligabao")
  .annotate(OpenApi.Version, GLIGABAO_VERSION)
  .annotate(OpenApi.Description, "A memory server for AI agents: texts in, a bi-temporal knowledge graph out.")
{}
