/**
 * The read programs as one service: search, query, context, the export, an entity's story, a
 * fact's view, a user's datasets and sessions, a dataset's soft delete. Built once in the
 * composition over the app's repositories (`ReadsLive`); every door calls it: the HTTP
 * handlers, the MCP tools, `src/operations.ts` and the CLI. The admin UI builds one more per
 * extra database with `makeReads` over that database's repositories. Each method is a span
 * (`Reads.search`, ...), as each SearchRepo method is beneath it.
 */
import { Context, Effect, Layer } from "effect"
import type { DatasetSchema } from "../domain/DatasetSchema.js"
import type { NotFound } from "../domain/Errors.js"
import { ServiceSpans, traced } from "../telemetry/traced.js"
import { runContext } from "./context.js"
import { runDeleteDataset, runListDatasets, runListSessions } from "./datasets.js"
import { type ReadDeps, readDeps } from "./deps.js"
import { type EntityStoryError, runEntityStory, runEntityStoryById } from "./entity.js"
import { type GraphExport, runExportGraph } from "./export.js"
import { type FactViewError, runFactView } from "./fact.js"
import type {
  ContextRequest,
  EntityStoryRequest,
  FactViewRequest,
  GraphRequest,
  QueryRequest,
  ReadScope,
  SearchRequest
} from "./requests.js"
import type {
  ContextResponse,
  DatasetsResponse,
  DeletedDataset,
  EntityLookup,
  EntityStory,
  FactView,
  QueryResponse,
  SearchResponse,
  SessionsResponse
} from "./responses.js"
import { runGetSchema, runSetSchema } from "./schema.js"
import { type QueryError, runQuery, runSearch } from "./search.js"

export interface ReadsService {
  /** `POST /v1/gb/search` */
  readonly search: (request: SearchRequest) => Effect.Effect<SearchResponse>
  /** `POST /v1/gb/query` */
  readonly query: (request: QueryRequest) => Effect.Effect<QueryResponse, QueryError>
  /** `POST /v1/gb/context` */
  readonly context: (request: ContextRequest) => Effect.Effect<ContextResponse>
  /** `GET /v1/gb/graph`, streamed */
  readonly exportGraph: (request: GraphRequest) => Effect.Effect<GraphExport>
  /** `GET /v1/gb/entities` (by name or id), MCP `get_entity`: a story, or the candidates of an ambiguous name */
  readonly entityStory: (request: EntityStoryRequest) => Effect.Effect<EntityLookup, EntityStoryError>
  /** `GET /v1/gb/entities/{id}` */
  readonly entityStoryById: (
    request: Omit<EntityStoryRequest, "name"> & { readonly id: number }
  ) => Effect.Effect<EntityStory, EntityStoryError>
  /** `GET /v1/gb/facts/{id}` */
  readonly factView: (request: FactViewRequest) => Effect.Effect<FactView, FactViewError>
  /** `GET /v1/gb/datasets` */
  readonly datasets: (userId: string) => Effect.Effect<DatasetsResponse>
  /** `GET /v1/gb/sessions` */
  readonly sessions: (scope: ReadScope) => Effect.Effect<SessionsResponse>
  /** `DELETE /v1/gb/datasets/{name}` without `hard` */
  readonly deleteDataset: (scope: ReadScope) => Effect.Effect<DeletedDataset, NotFound>
  /** `GET /v1/gb/datasets/{name}/schema` (docs/SCHEMA.md) */
  readonly datasetSchema: (scope: ReadScope) => Effect.Effect<DatasetSchema>
  /** `PUT /v1/gb/datasets/{name}/schema`: for the remembers that start after it */
  readonly setDatasetSchema: (scope: ReadScope, schema: DatasetSchema) => Effect.Effect<DatasetSchema>
}

export class Reads extends Context.Tag("gligabao/Reads")<Reads, ReadsService>() {}

/** The read programs over one database's repositories (and the app's model services). */
export const makeReads = (deps: ReadDeps, spans = true): ReadsService =>
  traced(
    "Reads",
    {
      search: (request) => runSearch(deps, request),
      query: (request) => runQuery(deps, request),
      context: (request) => runContext(deps, request),
      exportGraph: (request) => runExportGraph(deps, request),
      entityStory: (request) => runEntityStory(deps, request),
      entityStoryById: (request) => runEntityStoryById(deps, request),
      factView: (request) => runFactView(deps, request),
      datasets: (userId) => runListDatasets(deps, userId),
      sessions: (scope) => runListSessions(deps, scope),
      deleteDataset: (scope) => runDeleteDataset(deps, scope),
      datasetSchema: (scope) => runGetSchema(deps, scope),
      setDatasetSchema: (scope, schema) => runSetSchema(deps, scope, schema)
    } satisfies ReadsService,
    spans
  )

/** The app's reads, over its repositories and model services. */
export const ReadsLive = Layer.effect(Reads, Effect.zipWith(readDeps, ServiceSpans, makeReads))
