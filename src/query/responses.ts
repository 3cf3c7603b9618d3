/**
 * What the read programs answer, as schemas: the programs' result types, the HTTP responses
 * (encoded by HttpApi with these schemas), the OpenAPI document's success bodies and the typed
 * client's results. As in the remember response, a field that is null in the row is omitted
 * (invalid_at while a fact holds, model_id when unknown, ...). Fields are in the order the
 * programs build them, which is the order of the JSON keys.
 */
import { Schema, Struct } from "effect"
import { Entity, EntityAttributesOut } from "../domain/Responses.js"
import { edgeFields } from "../domain/Responses.js"

const provenance = {
  artifact_ids: Schema.Array(Schema.Number).annotations({
    description: "the artifacts it was inferred from, ascending (search and query: the 50 most recent)"
  }),
  session_ids: Schema.Array(Schema.String).annotations({ description: "the sessions that discovered it" })
}

const rankingFields = {
  score: Schema.Number.annotations({ description: "reciprocal rank fusion score (k = 60)" }),
  found_by: Schema.String.annotations({ description: "fulltext, vector, graph, joined by +" })
}

const factFields = {
  ...edgeFields,
  model: Schema.optional(Schema.String),
  ...provenance
}

const entityFields = {
  id: Schema.Number,
  name: Schema.String,
  type: Schema.String,
  description: Schema.String.annotations({ description: "what the latest text that described it said" }),
  summary: Schema.optional(Schema.String.annotations({
    description: "what its texts said of it, newest first, each once, within 300 characters (a story and a " +
      "context block only; absent when no text described it)"
  })),
  aliases: Schema.optional(
    Schema.Array(Schema.String).annotations({
      description: "the other names its texts gave it, which a merge brought (a story only)"
    })
  ),
  attributes: Schema.optional(EntityAttributesOut),
  created_at: Schema.String,
  model_id: Schema.optional(Schema.Number),
  model: Schema.optional(Schema.String),
  ...provenance
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

const chunkFields = {
  ...artifactFields,
  summary: Schema.optional(Schema.String.annotations({ description: "the chunk's summary, when it has one" }))
}

/** A fact as the remember response shows an edge, plus its model's name and provenance. */
export const FactOut = Schema.Struct(factFields).annotations({ identifier: "Fact" })
export type FactOut = Schema.Schema.Type<typeof FactOut>

export const LinkedEntityOut = Schema.Struct(entityFields).annotations({ identifier: "EntityView" })
export type LinkedEntityOut = Schema.Schema.Type<typeof LinkedEntityOut>

export const ArtifactOut = Schema.Struct(artifactFields).annotations({ identifier: "Artifact" })
export type ArtifactOut = Schema.Schema.Type<typeof ArtifactOut>

/** A chunk of text (or a whole short text) with its summary when it has one. */
export const ChunkOut = Schema.Struct(chunkFields)
export type ChunkOut = Schema.Schema.Type<typeof ChunkOut>

/** The fused reciprocal-rank score, and the sources that found it. */
export const Scored = Schema.Struct(rankingFields)
export type Scored = Schema.Schema.Type<typeof Scored>

export const ScoredFact = Schema.Struct({ ...factFields, ...rankingFields }).annotations({ identifier: "ScoredFact" })
export const ScoredEntity = Schema.Struct({ ...entityFields, ...rankingFields }).annotations({
  identifier: "ScoredEntity"
})
export const ScoredChunk = Schema.Struct({ ...chunkFields, ...rankingFields }).annotations({
  identifier: "ScoredChunk"
})

/** An entity as a fact's endpoint or a neighbour names it: the remember response's entity, without its description. */
export const EntityRef = Schema.Struct(Struct.pick(Entity.fields, "id", "name", "type")).annotations({
  identifier: "EntityRef"
})
export type EntityRef = Schema.Schema.Type<typeof EntityRef>

/** A fact of an entity's story: a `Fact` with its endpoints' types and every supporting artifact. */
const { id: factId, source, source_id, target, target_id, ...factRest } = factFields
export const StoryFact = Schema.Struct({
  id: factId,
  source,
  source_id,
  source_type: Schema.String.annotations({ description: "the source entity's type" }),
  target,
  target_id,
  target_type: Schema.String.annotations({ description: "the target entity's type" }),
  ...factRest,
  artifact_ids: Schema.Array(Schema.Number).annotations({
    description: "every artifact it was inferred from (gb_edge_artifacts), ascending"
  })
}).annotations({ identifier: "StoryFact" })
export type StoryFact = Schema.Schema.Type<typeof StoryFact>

/** `GET /v1/gb/entities/{id}` and `GET /v1/gb/entities?name=`: an entity and its story over time. */
export const EntityStory = Schema.Struct({
  /** with every artifact and session that named it (search and query show the 50 most recent) */
  entity: LinkedEntityOut,
  facts: Schema.Array(StoryFact).annotations({
    description: "every fact touching it, as source or target, by valid_at (an unknown start, null, first) then " +
      "id (ended ones too unless include_expired=false)"
  }),
  neighbours: Schema.Array(EntityRef).annotations({
    description: "the entities at the other end of those facts, once each, by name (case-insensitively), then id"
  })
}).annotations({ identifier: "EntityStory" })
export type EntityStory = Schema.Schema.Type<typeof EntityStory>

/** One entity a name may mean: enough to choose it by id. */
export const EntityCandidate = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  type: Schema.String,
  aliases: Schema.Array(Schema.String).annotations({ description: "the other names its texts gave it" }),
  description: Schema.String.annotations({ description: "what the latest text that described it said" }),
  facts: Schema.Number.annotations({ description: "the facts touching it, live or closed" }),
  match: Schema.Literal("name", "alias", "words of the name", "words of an alias").annotations({
    description: "how the name matched it"
  })
}).annotations({ identifier: "EntityCandidate" })
export type EntityCandidate = Schema.Schema.Type<typeof EntityCandidate>

/**
 * `GET /v1/gb/entities?name=` (status 300) and MCP `get_entity` when a name means more than one
 * entity: the candidates, best first, for the caller to ask again by id.
 */
export const EntityCandidates = Schema.Struct({
  name: Schema.String.annotations({ description: "the name asked for" }),
  candidates: Schema.Array(EntityCandidate).annotations({
    description: "best match first (an alias spelled whole, then names and aliases holding every word), then the " +
      "most facts, then lowest id; at most 10"
  }),
  matches: Schema.Number.annotations({
    description: "how many entities matched (of the 50 with the most facts that hold its words)"
  })
}).annotations({ identifier: "EntityCandidates" })
export type EntityCandidates = Schema.Schema.Type<typeof EntityCandidates>

/** A lookup by name: the story of the one entity it means, or the candidates. */
export const EntityLookup = Schema.Union(EntityStory, EntityCandidates)
export type EntityLookup = Schema.Schema.Type<typeof EntityLookup>

const echoFields = {
  dataset: Schema.String,
  query: Schema.String,
  as_of: Schema.String.annotations({ description: "the event time the facts are valid at (the request's, or now)" }),
  known_at: Schema.optional(Schema.String),
  warnings: Schema.optional(
    Schema.Array(Schema.String).annotations({
      description: "a source that could not run; the results come from the others"
    })
  )
}

/** What search and query repeat of the request. */
export const Echo = Schema.Struct(echoFields)
export type Echo = Schema.Schema.Type<typeof Echo>

export const SearchResponse = Schema.Struct({
  ...echoFields,
  facts: Schema.Array(ScoredFact),
  entities: Schema.Array(ScoredEntity),
  chunks: Schema.Array(ScoredChunk)
}).annotations({ identifier: "SearchResponse" })
export type SearchResponse = Schema.Schema.Type<typeof SearchResponse>

export const QueryInference = Schema.Struct({
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
export type QueryInference = Schema.Schema.Type<typeof QueryInference>

export const QueryResponse = Schema.Struct({
  ...echoFields,
  facts: Schema.Array(ScoredFact).annotations({ description: "the facts the model was given, best first" }),
  entities: Schema.Array(ScoredEntity),
  artifacts: Schema.Array(ScoredChunk).annotations({
    description: "the passages retrieved with them (chunks, or short texts), with the facts' sources"
  }),
  answer: Schema.String,
  citations: Schema.Array(Schema.Number).annotations({ description: "the ids of the facts the answer relies on" }),
  inference: Schema.NullOr(QueryInference).annotations({
    description: "the model call; null when no fact was found (no call is made)"
  })
}).annotations({ identifier: "QueryResponse" })
export type QueryResponse = Schema.Schema.Type<typeof QueryResponse>

/**
 * `POST /v1/gb/context`: the context block and exactly the facts and entities it renders, in its
 * order (the search response's shapes without the ranking fields: without a query there is no
 * fused score; the order is the rank).
 */
export const ContextResponse = Schema.Struct({
  context: Schema.String.annotations({
    description: "the block: a `# Facts` section, then a `# Entities` section, one item a line (docs/READ.md)"
  }),
  facts: Schema.Array(FactOut).annotations({ description: "the facts of the block, in its order" }),
  entities: Schema.Array(LinkedEntityOut).annotations({ description: "the entities of the block, in its order" }),
  tokens: Schema.Number.annotations({
    description: "the block's length in cl100k_base tokens, never above max_tokens"
  })
}).annotations({ identifier: "ContextResponse" })
export type ContextResponse = Schema.Schema.Type<typeof ContextResponse>

/** The JSON form of `GET /v1/gb/graph` (it is streamed; the typed client reads it whole). */
export const GraphDocument = Schema.Struct({
  dataset: Schema.Struct({
    id: Schema.NullOr(Schema.Number),
    name: Schema.String,
    created_at: Schema.NullOr(Schema.String)
  }).annotations({ description: "id and created_at are null for a dataset the user has stored nothing in yet" }),
  as_of: Schema.String,
  known_at: Schema.String,
  include_expired: Schema.Boolean,
  session_id: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  entities: Schema.Array(LinkedEntityOut),
  edges: Schema.Array(FactOut),
  artifacts: Schema.Array(ArtifactOut)
}).annotations({ identifier: "GraphExport" })
export type GraphDocument = Schema.Schema.Type<typeof GraphDocument>

export const DatasetOut = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  created_at: Schema.String,
  artifacts: Schema.Number,
  entities: Schema.Number,
  edges: Schema.Number,
  live_edges: Schema.Number.annotations({ description: "edges not superseded (expired_at null)" })
}).annotations({ identifier: "DatasetCounts" })
export type DatasetOut = Schema.Schema.Type<typeof DatasetOut>

export const DatasetsResponse = Schema.Struct({ datasets: Schema.Array(DatasetOut) }).annotations({
  identifier: "Datasets"
})
export type DatasetsResponse = Schema.Schema.Type<typeof DatasetsResponse>

export const DeletedDataset = Schema.Struct({
  dataset: Schema.String,
  id: Schema.Number,
  deleted_at: Schema.String
}).annotations({ identifier: "DeletedDataset" })
export type DeletedDataset = Schema.Schema.Type<typeof DeletedDataset>

export const SessionOut = Schema.Struct({
  session_id: Schema.String,
  artifacts: Schema.Number,
  entities: Schema.Number,
  edges: Schema.Number,
  first_at: Schema.NullOr(Schema.String).annotations({
    description: "event time: the earliest reference time of the session's texts (a conversation's is its last " +
      "message's created_at, else reference_time or when it was sent); null when its artifacts were deleted"
  }),
  last_at: Schema.NullOr(Schema.String).annotations({
    description: "event time: the latest reference time of the session's texts"
  }),
  first_stored_at: Schema.NullOr(Schema.String).annotations({
    description: "system time: when the session's first text was stored"
  }),
  last_stored_at: Schema.NullOr(Schema.String).annotations({
    description: "system time: when the session's last text was stored"
  })
}).annotations({ identifier: "SessionCounts" })
export type SessionOut = Schema.Schema.Type<typeof SessionOut>

export const SessionsResponse = Schema.Struct({
  dataset: Schema.String,
  sessions: Schema.Array(SessionOut)
}).annotations({ identifier: "Sessions" })
export type SessionsResponse = Schema.Schema.Type<typeof SessionsResponse>

// -- a fact's view ----------------------------------------------------------------------------

/** An artifact as a fact's source shows it: its id, kind and times, and the start of its text. */
export const ArtifactExcerpt = Schema.Struct({
  ...Struct.pick(artifactFields, "id", "kind", "valid_at", "created_at"),
  excerpt: Schema.String.annotations({
    description: "the text's first 280 characters (code points) at most; a longer text is cut to 279 and ends with …"
  })
}).annotations({ identifier: "ArtifactExcerpt" })
export type ArtifactExcerpt = Schema.Schema.Type<typeof ArtifactExcerpt>

/** What one artifact stated of a fact (gb_edge_artifacts): its words and times, which a forget falls back on. */
export const FactStatement = Schema.Struct({
  description: Schema.String,
  valid_at: Schema.NullOr(Schema.String),
  invalid_at: Schema.optional(Schema.String)
}).annotations({ identifier: "FactStatement" })
export type FactStatement = Schema.Schema.Type<typeof FactStatement>

/** An artifact that supports a fact, with its statement (absent for a link recorded before migration 0009). */
export const FactSource = Schema.Struct({
  ...ArtifactExcerpt.fields,
  metadata: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })
      .annotations({ description: "the metadata the caller gave the text (remember's `metadata`)" })
  ),
  statement: Schema.optional(FactStatement)
}).annotations({ identifier: "FactSource" })
export type FactSource = Schema.Schema.Type<typeof FactSource>

/** A recorded decision that closed a fact (gb_edge_closures, docs/FORGET.md). */
export const FactClosure = Schema.Struct({
  kind: Schema.Literal("close", "born_closed", "repeat_end", "inherited", "hand").annotations({
    description: "close: a newer fact ended it; born_closed: stored already ended by an existing one; repeat_end: a " +
      "repeat stated its end; inherited: passed on by a forget; hand: POST /v1/gb/facts/{id}/invalidate"
  }),
  by_fact: Schema.optional(
    Schema.Struct({ id: Schema.Number, description: Schema.String }).annotations({
      description: "the fact that caused it (close, born_closed, inherited)"
    })
  ),
  artifact: Schema.optional(
    Schema.Struct({ id: Schema.Number }).annotations({ description: "the artifact whose store decided it" })
  ),
  invalid_at: Schema.String.annotations({ description: "the end it gave the fact (event time)" }),
  at: Schema.String.annotations({ description: "when it was decided (the closure's created_at)" })
}).annotations({ identifier: "FactClosure" })
export type FactClosure = Schema.Schema.Type<typeof FactClosure>

/** `GET /v1/gb/facts/{id}`: a fact, where it came from, and what closed it. */
export const FactView = Schema.Struct({
  fact: StoryFact,
  created_by: Schema.optional(FactSource).annotations({
    description: "the artifact the fact is anchored to (artifact_id): the one that created it, or after a forget " +
      "its oldest remaining supporter; absent when it has none"
  }),
  restated_by: Schema.Array(FactSource).annotations({
    description: "every other artifact that supports it, oldest first (created_at, then id)"
  }),
  closed_by: Schema.Array(FactClosure).annotations({
    description: "the decisions that closed it, the earliest of those that set its current invalid_at first, then " +
      "the others by when they were decided; empty while it is live (expired_at absent)"
  })
}).annotations({ identifier: "FactView" })
export type FactView = Schema.Schema.Type<typeof FactView>
