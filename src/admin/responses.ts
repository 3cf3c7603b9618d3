/**
 * What the admin API answers (docs/ADMIN.md), as schemas: the programs' result types, the HTTP
 * responses (encoded by HttpApi with these schemas) and the OpenAPI document's success bodies.
 * Fields are in the order the programs and repositories build them, the JSON keys' order.
 */
import { Schema } from "effect"
import { RememberRun } from "../domain/runView.js"

export const AdminDatabasesResponse = Schema.Struct({
  databases: Schema.Array(Schema.Struct({
    name: Schema.String,
    dialect: Schema.Literal("sqlite", "postgres"),
    primary: Schema.Boolean.annotations({ description: "the database the rest of the API serves" })
  }))
}).annotations({ identifier: "AdminDatabases" })
export type AdminDatabasesResponse = Schema.Schema.Type<typeof AdminDatabasesResponse>

/** A remember run as the run log shows it, flagged when it succeeded although a stage failed. */
export const AdminRunView = Schema.extend(
  RememberRun,
  Schema.Struct({ flagged: Schema.Boolean.annotations({ description: "succeeded, but a stage failed" }) })
).annotations({ identifier: "AdminRememberRunView" })
export type AdminRunView = Schema.Schema.Type<typeof AdminRunView>

export const AdminRunsResponse = Schema.Struct({
  counts: Schema.Struct({
    total: Schema.Number,
    queued: Schema.Number,
    started: Schema.Number,
    succeeded: Schema.Number,
    failed: Schema.Number,
    cancelled: Schema.Number
  }).annotations({ description: "every run of the database by status, whatever the filter" }),
  stages: Schema.Array(Schema.String).annotations({ description: "every stage name, in pipeline order" }),
  runs: Schema.Array(AdminRunView),
  total: Schema.Number.annotations({ description: "the runs the filter matches" }),
  limit: Schema.Number,
  offset: Schema.Number
}).annotations({ identifier: "AdminRememberRuns" })
export type AdminRunsResponse = Schema.Schema.Type<typeof AdminRunsResponse>

/** A model call as gb_inferences keeps it. */
export const AdminInference = Schema.Struct({
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

export const AdminRunResponse = Schema.Struct({
  run: AdminRunView,
  inferences: Schema.Array(AdminInference)
}).annotations({ identifier: "AdminRememberRun" })
export type AdminRunResponse = Schema.Schema.Type<typeof AdminRunResponse>

const totals = {
  calls: Schema.Number,
  failed: Schema.Number,
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cost_usd: Schema.Number
}

export const AdminUsageResponse = Schema.Struct({
  from: Schema.String,
  to: Schema.String,
  bucket: Schema.Literal("hour", "day"),
  totals: Schema.Struct(totals),
  by_stage: Schema.Array(Schema.Struct({ stage: Schema.String, ...totals })),
  by_model: Schema.Array(Schema.Struct({ provider: Schema.String, model: Schema.String, ...totals })),
  buckets: Schema.Array(Schema.Struct({ start: Schema.String, stage: Schema.String, model: Schema.String, ...totals }))
}).annotations({ identifier: "AdminInferenceUsage" })
export type AdminUsageResponse = Schema.Schema.Type<typeof AdminUsageResponse>

export const AdminDatasetsResponse = Schema.Struct({
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
export type AdminDatasetsResponse = Schema.Schema.Type<typeof AdminDatasetsResponse>

export const AdminGraphResponse = Schema.Struct({
  dataset: Schema.Struct({ id: Schema.Number, user_id: Schema.String, name: Schema.String }),
  truncated: Schema.Boolean.annotations({ description: "the dataset has more facts than the limit" }),
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
    valid_at: Schema.NullOr(Schema.String),
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
export type AdminGraphResponse = Schema.Schema.Type<typeof AdminGraphResponse>
