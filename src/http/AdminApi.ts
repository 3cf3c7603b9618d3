/**
 * The admin UI's HTTP contract: its JSON API (docs/ADMIN.md) and the page with its assets.
 * As elsewhere, handlers read their parameters themselves so every error is `{"error": "..."}`.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Error400, Error401, Error403, Error404, Error500 } from "./ErrorBodies.js"
import { required, text } from "./ReadApi.js"
import { RunDoc } from "./Shapes.js"

const db = required("the database's name (see /v1/gb/admin/api/databases)")

const Totals = {
  calls: Schema.Number,
  failed: Schema.Number,
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cost_usd: Schema.Number
}

export const AdminDatabasesDoc = Schema.Struct({
  databases: Schema.Array(Schema.Struct({
    name: Schema.String,
    dialect: Schema.Literal("sqlite", "postgres"),
    primary: Schema.Boolean
  }))
}).annotations({ identifier: "AdminDatabases" })

export const AdminRunsDoc = Schema.Struct({
  counts: Schema.Struct({
    total: Schema.Number,
    started: Schema.Number,
    succeeded: Schema.Number,
    failed: Schema.Number
  }),
  stages: Schema.Array(Schema.String),
  runs: Schema.Array(Schema.extend(
    RunDoc,
    Schema.Struct({
      flagged: Schema.Boolean.annotations({ description: "succeeded, but a stage failed" })
    })
  )),
  total: Schema.Number,
  limit: Schema.Number,
  offset: Schema.Number
}).annotations({ identifier: "AdminRememberRuns" })

const InferenceDoc = Schema.Struct({
  id: Schema.Number,
  type: Schema.String,
  stage: Schema.String,
  provider: Schema.String,
  model: Schema.String,
  model_id: Schema.NullOr(Schema.Number),
  reasoning: Schema.String,
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cache_read_tokens: Schema.Number,
  cache_write_tokens: Schema.Number,
  web_search_requests: Schema.Number,
  cost_usd: Schema.Number,
  latency_ms: Schema.Number,
  started_at: Schema.String,
  error: Schema.NullOr(Schema.String),
  run_id: Schema.NullOr(Schema.Number),
  dataset_id: Schema.NullOr(Schema.Number)
}).annotations({ identifier: "Inference" })

export const AdminRunDoc = Schema.Struct({
  run: AdminRunsDoc.fields.runs.value,
  inferences: Schema.Array(InferenceDoc)
}).annotations({ identifier: "AdminRememberRun" })

export const AdminUsageDoc = Schema.Struct({
  from: Schema.String,
  to: Schema.String,
  bucket: Schema.Literal("hour", "day"),
  totals: Schema.Struct(Totals),
  by_stage: Schema.Array(Schema.Struct({ stage: Schema.String, ...Totals })),
  by_model: Schema.Array(Schema.Struct({ provider: Schema.String, model: Schema.String, ...Totals })),
  buckets: Schema.Array(Schema.Struct({ start: Schema.String, stage: Schema.String, model: Schema.String, ...Totals }))
}).annotations({ identifier: "AdminInferenceUsage" })

export const AdminDatasetsDoc = Schema.Struct({
  datasets: Schema.Array(Schema.Struct({
    id: Schema.Number,
    user_id: Schema.String,
    name: Schema.String,
    created_at: Schema.String,
    deleted_at: Schema.NullOr(Schema.String),
    artifacts: Schema.Number,
    entities: Schema.Number,
    edges: Schema.Number
  })),
  total: Schema.Number,
  limit: Schema.Number,
  offset: Schema.Number
}).annotations({ identifier: "AdminDatasets" })

export const AdminGraphDoc = Schema.Struct({
  dataset: Schema.Struct({ id: Schema.Number, user_id: Schema.String, name: Schema.String }),
  truncated: Schema.Boolean,
  entities: Schema.Array(Schema.Struct({
    id: Schema.Number,
    name: Schema.String,
    type: Schema.String,
    description: Schema.String,
    created_at: Schema.String
  })),
  edges: Schema.Array(Schema.Struct({
    id: Schema.Number,
    source_id: Schema.Number,
    target_id: Schema.Number,
    relation: Schema.String,
    description: Schema.String,
    valid_at: Schema.String,
    invalid_at: Schema.NullOr(Schema.String),
    created_at: Schema.String,
    expired_at: Schema.NullOr(Schema.String),
    artifact_ids: Schema.Array(Schema.Number)
  })),
  artifacts: Schema.Array(Schema.Struct({
    id: Schema.Number,
    kind: Schema.String,
    text: Schema.String,
    text_truncated: Schema.Boolean,
    session_id: Schema.NullOr(Schema.String),
    valid_at: Schema.String,
    created_at: Schema.String
  }))
}).annotations({ identifier: "AdminGraph" })

const adminGet = <Name extends string>(name: Name, path: `/${string}`) =>
  HttpApiEndpoint.get(name, path).addError(Error400).addError(Error404).addError(Error500)

export class AdminApiGroup extends HttpApiGroup.make("admin")
  .add(
    adminGet("databases", "/v1/gb/admin/api/databases").addSuccess(AdminDatabasesDoc)
      .annotate(OpenApi.Summary, "The databases the admin UI shows (the first serves the API)")
  )
  .add(
    adminGet("rememberRuns", "/v1/gb/admin/api/remember-runs")
      .setUrlParams(Schema.Struct({
        db,
        status: text("started, succeeded or failed"),
        dataset: text("only runs into this dataset"),
        user_id: text("only runs of this user"),
        limit: text("page size, default 100, at most 500"),
        offset: text("default 0")
      }))
      .addSuccess(AdminRunsDoc)
      .annotate(OpenApi.Summary, "Remember runs of a database, newest first, with unfiltered counts by status")
  )
  .add(
    adminGet("rememberRun", "/v1/gb/admin/api/remember-runs/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .setUrlParams(Schema.Struct({ db }))
      .addSuccess(AdminRunDoc)
      .annotate(OpenApi.Summary, "One remember run with its model calls (tokens, cost, latency, error)")
  )
  .add(
    adminGet("inferences", "/v1/gb/admin/api/inferences")
      .setUrlParams(Schema.Struct({
        db,
        from: text("RFC 3339, inclusive (default: 7 days before to)"),
        to: text("RFC 3339, exclusive (default: now)"),
        bucket: text("hour or day (default: hour up to 2 days, else day)")
      }))
      .addSuccess(AdminUsageDoc)
      .annotate(OpenApi.Summary, "Model calls, tokens and cost by stage, by model and over time")
  )
  .add(
    adminGet("datasets", "/v1/gb/admin/api/datasets")
      .setUrlParams(Schema.Struct({ db, limit: text("default 100, at most 500"), offset: text("default 0") }))
      .addSuccess(AdminDatasetsDoc)
      .annotate(OpenApi.Summary, "Every user's datasets with counts, newest first")
  )
  .add(
    adminGet("graph", "/v1/gb/admin/api/graph")
      .setUrlParams(Schema.Struct({
        db,
        dataset_id: required("the dataset's id (see /v1/gb/admin/api/datasets)"),
        limit: text("the most recent facts to return, default 300, at most 2000")
      }))
      .addSuccess(AdminGraphDoc)
      .annotate(OpenApi.Summary, "A dataset's most recent facts with their entities and artifacts, to draw")
  )
  .addError(Error401)
  .addError(Error403)
  .annotate(OpenApi.Description, "Operators' views of every database; behind an admin token when [auth] is configured.")
{}

/** The page and its static code: public (no data in them), never cached stale, CSP-locked. */
export class AdminPageGroup extends HttpApiGroup.make("adminPage")
  .add(
    // the router answers /v1/gb/admin here too: the handler redirects it to the trailing slash
    HttpApiEndpoint.get("page", "/v1/gb/admin/")
      .addSuccess(HttpApiSchema.Text({ contentType: "text/html" }))
      .annotate(OpenApi.Summary, "The admin UI")
  )
  .add(
    HttpApiEndpoint.get("asset", "/v1/gb/admin/assets/:name")
      .setPath(Schema.Struct({ name: Schema.String }))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/plain" }))
      .addError(Error404)
  )
  .annotate(OpenApi.Exclude, true)
{}
