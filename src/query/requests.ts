/**
 * The read requests (search, query, graph export, an entity's story, datasets, sessions) as
 * schemas. Each one decodes the wire input into the request the programs take (defaults filled,
 * times canonical) with a message that names the field, and is also the HTTP contract's payload
 * or URL parameters (src/http/ReadApi.ts), the OpenAPI document's and the typed client's shape.
 */
import { Either, ParseResult, Schema } from "effect"
import type { InvalidRequest } from "../domain/Errors.js"
import { Filters } from "../domain/Filters.js"
import { ARTIFACT_KINDS, REASONING_LEVELS } from "../domain/Stages.js"
import { UrlParams } from "../domain/UrlParams.js"
import {
  Dataset,
  decodeRequest,
  DEFAULT_DATASET,
  documented,
  Flag,
  IntegerIn,
  KeyedBy,
  Label,
  ModelName,
  OneOf,
  optional,
  PathId,
  required,
  Rfc3339,
  STRICT,
  Text,
  UserId,
  withDefault
} from "../domain/Wire.js"

export const DEFAULT_SEARCH_LIMIT = 10
export const DEFAULT_QUERY_LIMIT = 20
export const MAX_LIMIT = 100
export const DEFAULT_HOPS = 1
export const MAX_HOPS = 2
export const MAX_QUERY_BYTES = 8 * 1024

// -- fields -----------------------------------------------------------------------------------

const scopeFields = {
  user_id: required(documented(UserId, "the user whose data is read")),
  dataset: withDefault(documented(Dataset, "the dataset (default main)"), () => DEFAULT_DATASET)
}

const optionFields = {
  as_of: optional(documented(Rfc3339, "event time: facts valid then (default now)")),
  known_at: optional(documented(Rfc3339, "ingestion time: only what was stored by then, as it was then")),
  include_expired: withDefault(documented(Flag, "also facts that had ended by as_of"), () => false),
  session_id: optional(documented(Label(), "only what this session discovered")),
  kind: optional(documented(OneOf(ARTIFACT_KINDS), "only what artifacts of this kind support")),
  filters: optional(Filters)
}

/** A search's fields in the order they are checked (the first problem is the one reported). */
const searchFields = (defaultLimit: number) => ({
  ...scopeFields,
  // PostgreSQL refuses NUL in a text parameter; a lone surrogate would not match as sent
  query: required(documented(Text(MAX_QUERY_BYTES), "the text to search for")),
  ...optionFields,
  limit: withDefault(
    documented(IntegerIn(1, MAX_LIMIT), `per list, 1 to ${MAX_LIMIT} (search: 10, query: 20)`),
    () => defaultLimit
  ),
  hops: withDefault(
    documented(IntegerIn(0, MAX_HOPS), `graph neighbourhood depth, 0 to ${MAX_HOPS} (default 1)`),
    () => DEFAULT_HOPS
  )
})

// -- requests ---------------------------------------------------------------------------------

/** Whose data, and which dataset (default `main`). */
export const ReadScope = Schema.Struct(scopeFields)
export type ReadScope = Schema.Schema.Type<typeof ReadScope>

/** The filters every read of facts takes (see services/SearchRepo.ts ReadFilters); times canonical RFC 3339. */
export const ReadOptions = Schema.Struct(optionFields)
export type ReadOptions = Schema.Schema.Type<typeof ReadOptions>

/** `POST /v1/gb/search`; a field it does not have is a 400 naming it. */
export const SearchRequest = Schema.Struct(searchFields(DEFAULT_SEARCH_LIMIT)).annotations({
  ...STRICT,
  identifier: "SearchRequest",
  description: "Ranked facts, entities and chunks for a text; a field it does not have is a 400 naming it.",
  examples: [{
    user_id: "alice",
    dataset: "main",
    query: "Where does Alice live?",
    include_expired: false,
    limit: 10,
    hops: 1
  }]
})
export type SearchRequest = Schema.Schema.Type<typeof SearchRequest>

/** `{models: {query: "m"}}` and `{reasoning: {query: "low"}}`: only the query stage runs a model here. */
const QueryBody = Schema.Struct({
  ...searchFields(DEFAULT_QUERY_LIMIT),
  models: optional(KeyedBy(["query"], ModelName, {
    notAnObject: "must be an object mapping a stage to a model name",
    unknownKey: "is not a stage of query (only query)",
    isDefault: (u) => u === null || u === undefined || u === "",
    description: "the model of the query stage (default: the LLM's)"
  })),
  reasoning: optional(KeyedBy(["query"], OneOf(REASONING_LEVELS), {
    notAnObject: "must be an object mapping a stage to a level",
    unknownKey: "is not a stage of query (only query)",
    isDefault: (u) => u === null || u === undefined,
    description: "the reasoning level of the query stage (default none)"
  }))
}).annotations({
  examples: [{
    user_id: "alice",
    dataset: "main",
    query: "Where does Alice live?",
    include_expired: false,
    limit: 20,
    hops: 1,
    reasoning: { query: "none" }
  }]
})

const QueryDecoded = Schema.extend(
  Schema.typeSchema(SearchRequest),
  Schema.Struct({
    /** the model of the `query` stage; absent: the LLM's default */
    model: Schema.optional(Schema.String),
    reasoning: Schema.Literal(...REASONING_LEVELS)
  })
)

/** `POST /v1/gb/query`: the search's fields plus the query stage's model and reasoning, flattened. */
export const QueryRequest = Schema.transform(QueryBody, QueryDecoded, {
  strict: true,
  decode: ({ models, reasoning, ...search }) => ({
    ...search,
    model: models?.query,
    reasoning: reasoning?.query ?? "none"
  }),
  encode: ({ model, reasoning, ...search }) => ({
    ...search,
    ...(model === undefined ? {} : { models: { query: model } }),
    reasoning: { query: reasoning }
  })
}).annotations({
  ...STRICT,
  identifier: "QueryRequest",
  description: "An answer from the stored facts; a field it does not have is a 400 naming it."
})
export type QueryRequest = Schema.Schema.Type<typeof QueryRequest>

export type GraphFormat = "json" | "graphml"

const graphFields = {
  format: withDefault(
    documented(OneOf(["json", "graphml"], "must be json or graphml"), "json (default) or graphml"),
    (): GraphFormat => "json"
  ),
  ...scopeFields,
  ...optionFields
}

/** `GET /v1/gb/graph` from its query parameters. */
export const GraphRequest = UrlParams(Schema.Struct(graphFields), {
  examples: [{ format: "json", user_id: "alice", dataset: "main", include_expired: false }]
})
export type GraphRequest = Schema.Schema.Type<typeof GraphRequest>

/** `GET /v1/gb/sessions?user_id&dataset`. */
export const ScopeParams = UrlParams(ReadScope, { examples: [{ user_id: "alice", dataset: "main" }] })

/** `GET /v1/gb/datasets?user_id` (and the owner of a deleted dataset). */
export const UserParams = UrlParams(Schema.Struct({ user_id: scopeFields.user_id }), {
  examples: [{ user_id: "alice" }]
})

/**
 * `DELETE /v1/gb/datasets/{name}?user_id=&hard=`: without `hard` a soft delete; with it every
 * row of the name goes, with what it holds (docs/FORGET.md).
 */
export const DeleteDatasetParams = UrlParams(
  Schema.Struct({
    user_id: scopeFields.user_id,
    // optional, not defaulted: a typed client's call without it stays what it was
    hard: optional(
      documented(Flag, "remove the dataset and everything in it for good, soft-deleted rows of the name too")
    )
  }),
  { examples: [{ user_id: "alice", hard: false }] }
)

const decodeDataset = ParseResult.decodeUnknownEither(Dataset)

/**
 * `DELETE /v1/gb/datasets/{name}`: the name is checked as any dataset name and reported as
 * `dataset`, the word every other endpoint uses for it.
 */
export const DatasetPath = Schema.Struct({
  name: documented(Schema.String, "the dataset's name (URL-encoded)").annotations({ examples: ["main"] })
}).pipe(
  Schema.filter(({ name }) =>
    Either.match(decodeDataset(name), {
      onLeft: (issue) => ({
        path: ["dataset"],
        message: ParseResult.ArrayFormatter.formatIssueSync(issue)[0]!.message
      }),
      onRight: () => true
    })
  ),
  Schema.annotations({ examples: [{ name: "main" }] })
)

// -- an entity's story ------------------------------------------------------------------------

/** A name to look an entity up by: as long as a query may be. */
export const MAX_ENTITY_NAME_BYTES = MAX_QUERY_BYTES

/** A row id as a value: a JSON integer (a URL's digits were read as one by UrlParams), at least 1. */
const PositiveId = Schema.transformOrFail(Schema.Unknown, Schema.Number, {
  strict: true,
  decode: (u, _, ast) =>
    typeof u === "number" && Number.isSafeInteger(u) && u >= 1
      ? ParseResult.succeed(u)
      : ParseResult.fail(new ParseResult.Type(ast, u, "must be a positive integer")),
  encode: ParseResult.succeed
}).annotations({ jsonSchema: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER } })

/** An id in a path (`/entities/12`): its digits, at least 1. */
const PositivePathId = (description: string) =>
  PathId.pipe(
    Schema.filter((n) => n >= 1, { message: () => "must be a positive integer" }),
    Schema.annotations({
      jsonSchema: { type: "string", pattern: "^[0-9]{1,15}$", description, examples: ["1"] }
    })
  )

/** Why a story request does not name exactly one entity (by id or by name), or undefined. */
export const entityChoiceProblem = (request: {
  readonly id?: number | undefined
  readonly name?: string | undefined
}): string | undefined =>
  request.id === undefined && request.name === undefined
    ? "id or name is required (exactly one of them)"
    : request.id !== undefined && request.name !== undefined
    ? "id and name cannot both be given (exactly one of them)"
    : undefined

const storyFields = {
  include_expired: withDefault(
    documented(Flag, "also the facts that have ended (default true: the whole story, closed facts too)"),
    () => true
  )
}

const entityChoiceFields = {
  id: optional(documented(PositiveId, "the entity's id (exactly one of id and name)")),
  name: optional(documented(
    Text(MAX_ENTITY_NAME_BYTES),
    "the entity's name or whole words of it or of an alias (\"alice\" finds \"Alice Smith\"), case and accents " +
      "ignored; a name that means several entities answers them as candidates (exactly one of id and name)"
  ))
}

/** The story request's fields (an MCP tool's arguments), in the order they are checked. */
export const EntityStoryFields = { ...scopeFields, ...entityChoiceFields, ...storyFields }

/** The fields, then the choice of exactly one of id and name. */
const EntityStoryChecked = Schema.Struct(EntityStoryFields).pipe(
  Schema.filter((request) => entityChoiceProblem(request) ?? true)
)

const storyExample = { user_id: "alice", dataset: "main", name: "Alice", include_expired: true }

/**
 * An entity's story (`GET /v1/gb/entities/{id}`, `GET /v1/gb/entities?name=`, the MCP tool
 * `get_entity`): the entity by id or by name (exactly one), every fact touching it and its
 * neighbours. Unknown fields are ignored.
 */
export const EntityStoryRequest = EntityStoryChecked.annotations({
  identifier: "EntityStoryRequest",
  description:
    "One entity by id or by name (exactly one), with every fact that touches it; a field it does not have is a 400 naming it.",
  examples: [storyExample]
})
export type EntityStoryRequest = Schema.Schema.Type<typeof EntityStoryRequest>

/** `GET /v1/gb/entities?user_id&dataset&name&include_expired` (or `id` instead of `name`). */
export const EntityStoryParams = UrlParams(EntityStoryChecked, { examples: [storyExample] })

/** `GET /v1/gb/entities/{id}?user_id&dataset&include_expired`: the id is the path's. */
export const EntityStoryPathParams = UrlParams(Schema.Struct({ ...scopeFields, ...storyFields }), {
  examples: [{ user_id: "alice", dataset: "main", include_expired: true }]
})

/** `/v1/gb/entities/{id}` */
export const EntityPath = Schema.Struct({
  id: PositivePathId("the entity's id, a positive integer")
})

// -- a context block ---------------------------------------------------------------------------

export const DEFAULT_CONTEXT_TOKENS = 800
export const MAX_CONTEXT_TOKENS = 8000

/** The context request's fields (an MCP tool's arguments), in the order they are checked. */
export const ContextFields = {
  ...scopeFields,
  query: optional(documented(
    Text(MAX_QUERY_BYTES),
    "what the context is for: the facts and entities most relevant to it (absent: the most recent and most " +
      "connected facts)"
  )),
  session_id: optionFields.session_id,
  as_of: optionFields.as_of,
  filters: optionFields.filters,
  max_tokens: withDefault(
    documented(
      IntegerIn(1, MAX_CONTEXT_TOKENS),
      `the context's budget in cl100k_base tokens, 1 to ${MAX_CONTEXT_TOKENS} (default ${DEFAULT_CONTEXT_TOKENS})`
    ),
    () => DEFAULT_CONTEXT_TOKENS
  )
}

/**
 * `POST /v1/gb/context` (the MCP tool `get_context`): a text block of the facts valid at `as_of`
 * and the entities they concern, cut to `max_tokens`. Unknown fields are ignored.
 */
export const ContextRequest = Schema.Struct(ContextFields).annotations({
  ...STRICT,
  identifier: "ContextRequest",
  description:
    "A context block for a prompt, of at most max_tokens tokens (no LLM); a field it does not have is a 400 naming it.",
  examples: [
    { user_id: "alice", dataset: "main", query: "Where does Alice live?", max_tokens: 800 },
    { user_id: "alice", dataset: "main", max_tokens: 300 }
  ]
})
export type ContextRequest = Schema.Schema.Type<typeof ContextRequest>

// -- decoders (the same schemas, for the CLI and tests) ---------------------------------------

export const validateSearchRequest: (input: unknown) => Either.Either<SearchRequest, InvalidRequest> = decodeRequest(
  SearchRequest
)

export const validateQueryRequest: (input: unknown) => Either.Either<QueryRequest, InvalidRequest> = decodeRequest(
  QueryRequest
)

/** From query parameters (a record of strings, as the CLI builds it too). */
export const validateGraphRequest: (params: Record<string, string | undefined>) => Either.Either<
  GraphRequest,
  InvalidRequest
> = decodeRequest(GraphRequest)

/** `user_id` (and `dataset`, default main) from query parameters. */
export const validateScope: (params: Record<string, string | undefined>) => Either.Either<ReadScope, InvalidRequest> =
  decodeRequest(ScopeParams)

export const validateUserId = (params: Record<string, string | undefined>): Either.Either<string, InvalidRequest> =>
  Either.map(decodeRequest(UserParams)(params), (p) => p.user_id)

/** An entity's story request, from a JSON object (the MCP tool's arguments) or query parameters. */
export const validateEntityStoryRequest: (input: unknown) => Either.Either<EntityStoryRequest, InvalidRequest> =
  decodeRequest(EntityStoryRequest)

export const validateContextRequest: (input: unknown) => Either.Either<ContextRequest, InvalidRequest> = decodeRequest(
  ContextRequest
)

// -- a fact's view ----------------------------------------------------------------------------

/** The fact view request's fields (an MCP tool's arguments), in the order they are checked. */
export const FactViewFields = {
  ...scopeFields,
  id: required(documented(PositiveId, "the fact's id"))
}

/**
 * A fact with where it came from and what closed it (`GET /v1/gb/facts/{id}`): the fact, the
 * artifact that created it, the others that restated it and the decisions that closed it.
 * Unknown fields are ignored.
 */
export const FactViewRequest = Schema.Struct(FactViewFields).annotations({
  ...STRICT,
  identifier: "FactViewRequest",
  description: "One fact by id, with its sources and what closed it; a field it does not have is a 400 naming it.",
  examples: [{ user_id: "alice", dataset: "main", id: 1 }]
})
export type FactViewRequest = Schema.Schema.Type<typeof FactViewRequest>

/** `/v1/gb/facts/{id}` (its query parameters are `ScopeParams`) */
export const FactPath = Schema.Struct({
  id: PositivePathId("the fact's id, a positive integer")
})

/** A fact view request, from a JSON object or query parameters. */
export const validateFactViewRequest: (input: unknown) => Either.Either<FactViewRequest, InvalidRequest> =
  decodeRequest(FactViewRequest)
