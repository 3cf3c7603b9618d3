/**
 * The admin UI's HTTP contract: its JSON API (docs/ADMIN.md) and the page with its assets. The
 * request and response schemas are the admin programs' own (src/admin/requests.ts and
 * responses.ts): HttpApi decodes the URL parameters and path with them (a failure is a 400
 * `{"error"}` naming the parameter, see Http.ts) and encodes the responses.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  AdminGraphRequest,
  DatasetsRequest,
  MemoryEntityRequest,
  MemoryFactRequest,
  MemorySearchRequest,
  RunParams,
  RunPath,
  RunsRequest,
  UsageRequest
} from "../admin/requests.js"
import {
  AdminDatabasesResponse,
  AdminDatasetsResponse,
  AdminGraphResponse,
  AdminRunResponse,
  AdminRunsResponse,
  AdminUsageResponse
} from "../admin/responses.js"
import { EntityCandidates, EntityStory, FactView, SearchResponse } from "../query/responses.js"
import { Error400, Error401, Error403, Error404, Error500 } from "./ErrorBodies.js"

const adminGet = <Name extends string>(name: Name, path: `/${string}`) =>
  HttpApiEndpoint.get(name, path).addError(Error400).addError(Error404).addError(Error500)

export class AdminApiGroup extends HttpApiGroup.make("admin")
  .add(
    adminGet("databases", "/v1/gb/admin/api/databases").addSuccess(AdminDatabasesResponse)
      .annotate(OpenApi.Summary, "The databases the admin UI shows (the first serves the API)")
  )
  .add(
    adminGet("rememberRuns", "/v1/gb/admin/api/remember-runs")
      .setUrlParams(RunsRequest)
      .addSuccess(AdminRunsResponse)
      .annotate(OpenApi.Summary, "Remember runs of a database, newest first, with unfiltered counts by status")
  )
  .add(
    adminGet("rememberRun", "/v1/gb/admin/api/remember-runs/:id")
      .setPath(RunPath)
      .setUrlParams(RunParams)
      .addSuccess(AdminRunResponse)
      .annotate(OpenApi.Summary, "One remember run with its model calls (tokens, cost, latency, error)")
  )
  .add(
    adminGet("inferences", "/v1/gb/admin/api/inferences")
      .setUrlParams(UsageRequest)
      .addSuccess(AdminUsageResponse)
      .annotate(OpenApi.Summary, "Model calls, tokens and cost by stage, by model and over time")
  )
  .add(
    adminGet("datasets", "/v1/gb/admin/api/datasets")
      .setUrlParams(DatasetsRequest)
      .addSuccess(AdminDatasetsResponse)
      .annotate(OpenApi.Summary, "Every user's datasets with counts, newest first")
  )
  .add(
    adminGet("graph", "/v1/gb/admin/api/graph")
      .setUrlParams(AdminGraphRequest)
      .addSuccess(AdminGraphResponse)
      .annotate(OpenApi.Summary, "A dataset's most recent facts with their entities and artifacts, to draw")
  )
  // the Memory view: the user endpoints' programs and answers, in the database `db`
  .add(
    adminGet("memorySearch", "/v1/gb/admin/api/memory/search")
      .setUrlParams(MemorySearchRequest)
      .addSuccess(SearchResponse)
      .annotate(OpenApi.Summary, "A user's search (POST /v1/gb/search) in a database")
  )
  .add(
    adminGet("memoryEntity", "/v1/gb/admin/api/memory/entity")
      .setUrlParams(MemoryEntityRequest)
      .addSuccess(EntityStory)
      .addSuccess(EntityCandidates, { status: 300 })
      .annotate(OpenApi.Summary, "An entity's story (GET /v1/gb/entities) of a user in a database")
  )
  .add(
    adminGet("memoryFact", "/v1/gb/admin/api/memory/fact")
      .setUrlParams(MemoryFactRequest)
      .addSuccess(FactView)
      .annotate(OpenApi.Summary, "A fact's view (GET /v1/gb/facts/{id}) of a user in a database")
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
