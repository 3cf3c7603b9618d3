/**
 * The read side of the HTTP contract: search, query, a context block, graph export, an entity's
 * story, datasets and sessions. The request and response schemas are the read programs' own
 * (src/query/requests.ts and responses.ts). HttpApi decodes the path and URL parameters with
 * them (a failure is a 400 `{"error"}` naming the parameter, see Http.ts) and encodes the
 * responses; the search, query and context handlers read their bodies themselves, for the size limit,
 * then decode them with the same schema the payload documents.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DatasetSchemaDocument, DatasetSchemaView } from "../domain/DatasetSchema.js"
import { HardDeletedDataset } from "../forget/schemas.js"
import {
  ContextRequest,
  DatasetPath,
  DeleteDatasetParams,
  EntityPath,
  EntityStoryParams,
  EntityStoryPathParams,
  FactPath,
  GraphRequest,
  QueryRequest,
  ScopeParams,
  SearchRequest,
  UserParams
} from "../query/requests.js"
import {
  ContextResponse,
  DatasetsResponse,
  DeletedDataset,
  EntityCandidates,
  EntityStory,
  FactView,
  GraphDocument,
  QueryResponse,
  SearchResponse,
  SessionsResponse
} from "../query/responses.js"
import {
  Error400,
  Error401,
  Error403,
  Error404,
  Error413,
  Error415,
  Error500,
  Error502,
  Error503
} from "./ErrorBodies.js"

export class ReadGroup extends HttpApiGroup.make("read")
  .add(
    HttpApiEndpoint.post("search", "/v1/gb/search")
      .setPayload(SearchRequest)
      .addError(Error415)
      .addSuccess(SearchResponse)
      .addError(Error400)
      .addError(Error413)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Ranked facts, entities and chunks for a text (no LLM)")
  )
  .add(
    HttpApiEndpoint.post("query", "/v1/gb/query")
      .setPayload(QueryRequest)
      .addError(Error415)
      .addSuccess(QueryResponse)
      .addError(Error400)
      .addError(Error413)
      .addError(Error502)
      .addError(Error503)
      .addError(Error500)
      .annotate(OpenApi.Summary, "An answer from the stored facts, citing them")
  )
  .add(
    HttpApiEndpoint.post("context", "/v1/gb/context")
      .setPayload(ContextRequest)
      .addError(Error415)
      .addSuccess(ContextResponse)
      .addError(Error400)
      .addError(Error413)
      .addError(Error500)
      .annotate(OpenApi.Summary, "A context block for a prompt: facts and entities as text, cut to max_tokens (no LLM)")
      .annotate(
        OpenApi.Description,
        "The facts valid at `as_of` most relevant to `query` (search's ranking), or without a query the most " +
          "recently stored and most connected ones, then the entities, one a line under `# Facts` and " +
          "`# Entities`, whole lines only, at most `max_tokens` (default 800) cl100k_base tokens. `facts` and " +
          "`entities` are exactly what the block holds; `tokens` is its count. See docs/READ.md, Context block."
      )
  )
  .add(
    HttpApiEndpoint.get("graph", "/v1/gb/graph")
      .setUrlParams(GraphRequest)
      .addSuccess(GraphDocument)
      .addError(Error400)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Export a dataset's graph (streamed)")
      .annotate(
        OpenApi.Description,
        "JSON by default; `format=graphml` returns GraphML (application/graphml+xml) for Gephi or yEd. " +
          "The typed client reads the JSON form."
      )
  )
  .add(
    HttpApiEndpoint.get("getEntity", "/v1/gb/entities/:id")
      .setPath(EntityPath)
      .setUrlParams(EntityStoryPathParams)
      .addSuccess(EntityStory)
      .addError(Error400)
      .addError(Error404)
      .addError(Error500)
      .annotate(OpenApi.Summary, "An entity's story: the entity, every fact touching it over time, its neighbours")
      .annotate(
        OpenApi.Description,
        "Facts by valid_at (an unknown start, `valid_at: null`, first) then id, closed ones too unless " +
          "`include_expired=false` (default true: the story over time); each with its endpoints' types and every " +
          "supporting artifact. Another user's entity is a 404."
      )
  )
  .add(
    HttpApiEndpoint.get("findEntity", "/v1/gb/entities")
      .setUrlParams(EntityStoryParams)
      .addSuccess(EntityStory)
      .addSuccess(EntityCandidates, { status: 300 })
      .addError(Error400)
      .addError(Error404)
      .addError(Error500)
      .annotate(OpenApi.Summary, "An entity's story, the entity found by name (or id)")
      .annotate(
        OpenApi.Description,
        "Exactly one of `name` and `id`. A name is found by whole words of entities' names and aliases, case and " +
          "accents ignored (`name=alice` finds \"Alice Smith\"; `name=zoe` finds \"Zoë\"). The name spelled whole " +
          "wins (of several types, the one with the most facts, ties by lowest id); else one entity with it as an " +
          "alias, or one holding its words. A name that means more than one answers 300 with the candidates, best " +
          "first, to ask again by id. The story is that of `GET /v1/gb/entities/{id}`."
      )
  )
  .add(
    HttpApiEndpoint.get("listDatasets", "/v1/gb/datasets")
      .setUrlParams(UserParams)
      .addSuccess(DatasetsResponse)
      .addError(Error400)
      .addError(Error500)
      .annotate(OpenApi.Summary, "A user's datasets with counts")
  )
  .add(
    HttpApiEndpoint.del("deleteDataset", "/v1/gb/datasets/:name")
      .setPath(DatasetPath)
      .setUrlParams(DeleteDatasetParams)
      .addSuccess(Schema.Union(DeletedDataset, HardDeletedDataset))
      .addError(Error400)
      .addError(Error404)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Delete a dataset: soft (its name starts afresh on the next remember), or hard")
      .annotate(
        OpenApi.Description,
        "Without `hard`, a soft delete of the live dataset (`DeletedDataset`); its rows stay. With `hard=true`, every " +
          "dataset of the name, the live one and the soft-deleted ones, goes for good with everything in it, the " +
          "user's runs of it, their vectors and image files (`HardDeletedDataset`); an admin token may do that too. " +
          "See docs/FORGET.md."
      )
  )
  .add(
    HttpApiEndpoint.get("getDatasetSchema", "/v1/gb/datasets/:name/schema")
      .setPath(DatasetPath)
      .setUrlParams(UserParams)
      .addSuccess(DatasetSchemaView)
      .addError(Error400)
      .addError(Error500)
      .annotate(OpenApi.Summary, "A dataset's schema: entity and edge types, exclusive relations, instructions")
      .annotate(
        OpenApi.Description,
        "The schema as stored; the empty schema when the dataset has none or does not exist yet. See docs/SCHEMA.md."
      )
  )
  .add(
    HttpApiEndpoint.put("setDatasetSchema", "/v1/gb/datasets/:name/schema")
      .setPath(DatasetPath)
      .setUrlParams(UserParams)
      .setPayload(DatasetSchemaDocument)
      .addError(Error415)
      .addSuccess(DatasetSchemaView)
      .addError(Error400)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Set a dataset's schema, for the remembers that start after it")
      .annotate(
        OpenApi.Description,
        "Replaces the schema (creating the dataset when it is not there yet) and answers it as stored. Later " +
          "remembers extract with it; the stored graph is not rewritten. An empty body ({}) removes it. " +
          "See docs/SCHEMA.md."
      )
  )
  .add(
    HttpApiEndpoint.get("listSessions", "/v1/gb/sessions")
      .setUrlParams(ScopeParams)
      .addSuccess(SessionsResponse)
      .addError(Error400)
      .addError(Error500)
      .annotate(OpenApi.Summary, "A dataset's sessions with counts")
  )
  .add(
    HttpApiEndpoint.get("getFact", "/v1/gb/facts/:id")
      .setPath(FactPath)
      .setUrlParams(ScopeParams)
      .addSuccess(FactView)
      .addError(Error400)
      .addError(Error404)
      .addError(Error500)
      .annotate(OpenApi.Summary, "A fact: the artifact that created it, those that restated it, what closed it")
      .annotate(
        OpenApi.Description,
        "The fact as an entity's story shows it; `created_by` and `restated_by` (oldest first) with each text's " +
          "first 280 characters and what it stated; `closed_by`, the recorded decisions that closed it (empty while " +
          "it is live). Another user's fact is a 404."
      )
  )
  .addError(Error401)
  .addError(Error403)
{}
