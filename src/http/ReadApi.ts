/**
 * The read side of the HTTP contract: search, query, graph export, datasets and sessions.
 * As for remember, the handlers read bodies and parameters themselves (errors are always
 * `{"error": "..."}`); the schemas here document the wire shapes and type the HttpApiClient.
 * Query parameters are declared with lenient schemas that never fail to decode, so a bad value
 * reaches the handler and gets its `{"error"}` answer naming the parameter.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ARTIFACT_KINDS, REASONING_LEVELS } from "../domain/Stages.js"
import { Error400, Error401, Error403, Error404, Error413, Error500, Error502, Error503 } from "./ErrorBodies.js"
import { edgeFields } from "./Shapes.js"

const firstValue = (u: string | ReadonlyArray<string>): string => (typeof u === "string" ? u : u[0] ?? "")

/** A query parameter: typed for clients, never a decode failure on the server. */
const param = <A>(type: Schema.Schema<A>, decode: (raw: string) => A, description: string, jsonType = "string") =>
  Schema.transform(Schema.Union(Schema.String, Schema.Array(Schema.String)), Schema.typeSchema(type), {
    strict: false,
    decode: (u) => decode(firstValue(u)),
    encode: (a) => String(a)
  }).annotations({ description, jsonSchema: { type: jsonType, description } })

export const text = (description: string) => Schema.optional(param(Schema.String, (s) => s, description))
const flag = (description: string) =>
  Schema.optional(param(Schema.Boolean, (s) => s === "true" || s === "1", description, "boolean"))
/** Required for a client; on the server a missing one decodes to "" and the handler says it is required. */
export const required = (description: string) =>
  Schema.optionalWith(param(Schema.String, (s) => s, description), { default: () => "" })

const Provenance = {
  artifact_ids: Schema.Array(Schema.Number).annotations({
    description: "the artifacts it was inferred from, ascending (search and query: the 50 most recent)"
  }),
  session_ids: Schema.Array(Schema.String).annotations({ description: "the sessions that discovered it" })
}

const Ranking = {
  score: Schema.Number.annotations({ description: "reciprocal rank fusion score (k = 60)" }),
  found_by: Schema.String.annotations({ description: "fulltext, vector, graph, joined by +" })
}

const factFields = {
  ...edgeFields,
  model: Schema.optional(Schema.String),
  ...Provenance
}

const entityFields = {
  id: Schema.Number,
  name: Schema.String,
  type: Schema.String,
  description: Schema.String,
  created_at: Schema.String,
  model_id: Schema.optional(Schema.Number),
  model: Schema.optional(Schema.String),
  ...Provenance
}

const artifactFields = {
  id: Schema.Number,
  kind: Schema.String,
  text: Schema.String,
  parent_id: Schema.optional(Schema.Number),
  session_id: Schema.optional(Schema.String),
  valid_at: Schema.String,
  created_at: Schema.String,
  inference_id: Schema.optional(Schema.Number),
  query: Schema.optional(Schema.String),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}

export const FactDoc = Schema.Struct(factFields).annotations({ identifier: "Fact" })
export const EntityViewDoc = Schema.Struct(entityFields).annotations({ identifier: "EntityView" })
export const ArtifactDoc = Schema.Struct(artifactFields).annotations({ identifier: "Artifact" })
export const ScoredFactDoc = Schema.Struct({ ...factFields, ...Ranking }).annotations({ identifier: "ScoredFact" })
export const ScoredEntityDoc = Schema.Struct({ ...entityFields, ...Ranking }).annotations({
  identifier: "ScoredEntity"
})
export const ScoredChunkDoc = Schema.Struct({
  ...artifactFields,
  summary: Schema.optional(Schema.String.annotations({ description: "the chunk's summary, when it has one" })),
  ...Ranking
}).annotations({ identifier: "ScoredChunk" })

const readOptions = {
  user_id: Schema.String,
  dataset: Schema.optional(Schema.String.annotations({ description: "default main" })),
  as_of: Schema.optional(
    Schema.String.annotations({ description: "event time, RFC 3339: facts valid then (default now)" })
  ),
  known_at: Schema.optional(
    Schema.String.annotations({ description: "ingestion time, RFC 3339: only what was stored by then, as it was then" })
  ),
  include_expired: Schema.optional(Schema.Boolean.annotations({ description: "also facts that had ended by as_of" })),
  session_id: Schema.optional(Schema.String.annotations({ description: "only what this session discovered" })),
  kind: Schema.optional(
    Schema.Literal(...ARTIFACT_KINDS).annotations({ description: "only what artifacts of this kind support" })
  )
}

export const SearchRequestDoc = Schema.Struct({
  ...readOptions,
  query: Schema.String.annotations({ description: "the text to search for, at most 8 KiB" }),
  limit: Schema.optional(Schema.Int.annotations({ description: "per list, 1 to 100 (search: 10, query: 20)" })),
  hops: Schema.optional(Schema.Int.annotations({ description: "graph neighbourhood depth, 0 to 2 (default 1)" }))
}).annotations({ identifier: "SearchRequest" })

export const QueryRequestDoc = Schema.Struct({
  ...SearchRequestDoc.fields,
  models: Schema.optional(Schema.Struct({ query: Schema.optional(Schema.String) })),
  reasoning: Schema.optional(Schema.Struct({ query: Schema.optional(Schema.Literal(...REASONING_LEVELS)) }))
}).annotations({ identifier: "QueryRequest" })

const echo = {
  dataset: Schema.String,
  query: Schema.String,
  as_of: Schema.String,
  known_at: Schema.optional(Schema.String),
  warnings: Schema.optional(Schema.Array(Schema.String))
}

export const SearchResponseDoc = Schema.Struct({
  ...echo,
  facts: Schema.Array(ScoredFactDoc),
  entities: Schema.Array(ScoredEntityDoc),
  chunks: Schema.Array(ScoredChunkDoc)
}).annotations({ identifier: "SearchResponse" })

export const QueryInferenceDoc = Schema.Struct({
  id: Schema.Number,
  stage: Schema.String,
  provider: Schema.String,
  model: Schema.String,
  model_id: Schema.optional(Schema.Number),
  reasoning: Schema.String,
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cost_usd: Schema.Number,
  latency_ms: Schema.Number
}).annotations({ identifier: "QueryInference" })

export const QueryResponseDoc = Schema.Struct({
  ...echo,
  answer: Schema.String,
  citations: Schema.Array(Schema.Number).annotations({ description: "the ids of the facts the answer relies on" }),
  facts: Schema.Array(ScoredFactDoc),
  entities: Schema.Array(ScoredEntityDoc),
  artifacts: Schema.Array(ScoredChunkDoc),
  inference: Schema.NullOr(QueryInferenceDoc).annotations({
    description: "null when no fact was found (no model call)"
  })
}).annotations({ identifier: "QueryResponse" })

export const GraphDoc = Schema.Struct({
  dataset: Schema.Struct({ id: Schema.Number, name: Schema.String, created_at: Schema.String }),
  as_of: Schema.String,
  known_at: Schema.String,
  include_expired: Schema.Boolean,
  session_id: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  entities: Schema.Array(EntityViewDoc),
  edges: Schema.Array(FactDoc),
  artifacts: Schema.Array(ArtifactDoc)
}).annotations({ identifier: "GraphExport" })

export const DatasetsDoc = Schema.Struct({
  datasets: Schema.Array(Schema.Struct({
    id: Schema.Number,
    name: Schema.String,
    created_at: Schema.String,
    artifacts: Schema.Number,
    entities: Schema.Number,
    edges: Schema.Number,
    live_edges: Schema.Number
  }))
}).annotations({ identifier: "Datasets" })

export const DeletedDatasetDoc = Schema.Struct({
  dataset: Schema.String,
  id: Schema.Number,
  deleted_at: Schema.String
}).annotations({ identifier: "DeletedDataset" })

export const SessionsDoc = Schema.Struct({
  dataset: Schema.String,
  sessions: Schema.Array(Schema.Struct({
    session_id: Schema.String,
    artifacts: Schema.Number,
    entities: Schema.Number,
    edges: Schema.Number,
    first_at: Schema.NullOr(Schema.String),
    last_at: Schema.NullOr(Schema.String)
  }))
}).annotations({ identifier: "Sessions" })

const scopeParams = {
  user_id: required("the user whose data is read (required)"),
  dataset: text("the dataset (default main)")
}

export class ReadGroup extends HttpApiGroup.make("read")
  .add(
    HttpApiEndpoint.post("search", "/v1/gb/search")
      .setPayload(SearchRequestDoc)
      .addSuccess(SearchResponseDoc)
      .addError(Error400)
      .addError(Error404)
      .addError(Error413)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Ranked facts, entities and chunks for a text (no LLM)")
  )
  .add(
    HttpApiEndpoint.post("query", "/v1/gb/query")
      .setPayload(QueryRequestDoc)
      .addSuccess(QueryResponseDoc)
      .addError(Error400)
      .addError(Error404)
      .addError(Error413)
      .addError(Error502)
      .addError(Error503)
      .addError(Error500)
      .annotate(OpenApi.Summary, "An answer from the stored facts, citing them")
  )
  .add(
    HttpApiEndpoint.get("graph", "/v1/gb/graph")
      .setUrlParams(Schema.Struct({
        ...scopeParams,
        format: text("json (default) or graphml"),
        as_of: text("event time, RFC 3339 (default now)"),
        known_at: text("ingestion time, RFC 3339 (default: when the export starts)"),
        include_expired: flag("also facts that had ended by as_of"),
        session_id: text("only what this session discovered"),
        kind: text("only what artifacts of this kind support")
      }))
      .addSuccess(GraphDoc)
      .addError(Error400)
      .addError(Error404)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Export a dataset's graph (streamed)")
      .annotate(
        OpenApi.Description,
        "JSON by default; `format=graphml` returns GraphML (application/graphml+xml) for Gephi or yEd. " +
          "The typed client reads the JSON form."
      )
  )
  .add(
    HttpApiEndpoint.get("listDatasets", "/v1/gb/datasets")
      .setUrlParams(Schema.Struct({ user_id: scopeParams.user_id }))
      .addSuccess(DatasetsDoc)
      .addError(Error400)
      .addError(Error500)
      .annotate(OpenApi.Summary, "A user's datasets with counts")
  )
  .add(
    HttpApiEndpoint.del("deleteDataset", "/v1/gb/datasets/:name")
      .setPath(Schema.Struct({ name: Schema.String }))
      .setUrlParams(Schema.Struct({ user_id: scopeParams.user_id }))
      .addSuccess(DeletedDatasetDoc)
      .addError(Error400)
      .addError(Error404)
      .addError(Error500)
      .annotate(OpenApi.Summary, "Soft-delete a dataset (its name starts afresh on the next remember)")
  )
  .add(
    HttpApiEndpoint.get("listSessions", "/v1/gb/sessions")
      .setUrlParams(Schema.Struct(scopeParams))
      .addSuccess(SessionsDoc)
      .addError(Error400)
      .addError(Error404)
      .addError(Error500)
      .annotate(OpenApi.Summary, "A dataset's sessions with counts")
  )
  .addError(Error401)
  .addError(Error403)
{}
