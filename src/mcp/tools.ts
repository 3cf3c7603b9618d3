/**
 * The MCP tools (docs/MCP.md): each is an HTTP endpoint's program over its own request schema.
 * A tool's arguments are the request's fields by the names the HTTP API uses (its input schema
 * is derived from them), `user_id` comes from the caller where it is fixed, and the arguments
 * are decoded by the endpoint's schema, so a bad argument fails with the message the API gives.
 * Independent of the MCP SDK: src/mcp/server.ts serves these over the protocol.
 */
import { Data, Effect, JSONSchema, Option, Schema, Stream, Struct } from "effect"
import { type DomainError, NotFound } from "../domain/Errors.js"
import { RememberRequest, RememberRequestFields } from "../domain/Remember.js"
import { RememberQueued, RememberSuccess } from "../domain/Responses.js"
import { RememberRun, runView } from "../domain/runView.js"
import { decodeRequest, documented, IntegerIn, required, UserId } from "../domain/Wire.js"
import { correctWith } from "../forget/correct.js"
import type { Corrections, Forgets } from "../forget/Forgets.js"
import { ForgetArtifactRequest } from "../forget/requests.js"
import { CorrectRequest, CorrectResponse, ForgetArtifactResponse } from "../forget/schemas.js"
import type { RememberManager } from "../pipeline/RememberManager.js"
import type { RunScheduler } from "../pipeline/RunScheduler.js"
import type { Reads } from "../query/Reads.js"
import {
  ContextFields,
  ContextRequest,
  EntityStoryFields,
  EntityStoryRequest,
  GraphRequest,
  QueryRequest,
  ReadScope,
  SearchRequest
} from "../query/requests.js"
import {
  ContextResponse,
  DatasetsResponse,
  EntityLookup,
  QueryResponse,
  SearchResponse,
  SessionsResponse
} from "../query/responses.js"
import type { RunLogRepo } from "../services/RunLogRepo.js"
import { contextText, entityText, queryText, rememberText, runText, searchText } from "./answers.js"
import { type JsonSchemaObject, modelSchema } from "./modelSchema.js"

/** What the tools run on: the services the HTTP handlers take, each optional as there. */
export interface McpDeps {
  readonly manager: RememberManager["Type"]
  readonly runLog: RunLogRepo["Type"]
  readonly reads: Reads["Type"]
  readonly forgets: Forgets["Type"]
  readonly corrections: Corrections["Type"]
  /** marks the reads, so the remember runs take shorter slices meanwhile */
  readonly scheduler: RunScheduler["Type"]
}

/** Who the tools act for: a fixed user (the token's, or the configured one), or whoever `user_id` names. */
export type McpUser = { readonly _tag: "Fixed"; readonly userId: string } | { readonly _tag: "Argument" }

/** How the tools read their arguments beyond the request schemas: the dataset when none is named. */
export interface McpDefaults {
  readonly dataset?: string | undefined
  /** how long remember waits for its run when the call does not say (default MCP_REMEMBER_WAIT_MS) */
  readonly rememberWaitMs?: number | undefined
}

/** `mcp.remember_wait_ms`'s default: an agent hears what it remembered, not a run id to poll. */
export const MCP_REMEMBER_WAIT_MS = 15_000

export type { JsonSchemaObject } from "./modelSchema.js"

/** A `user_id` argument naming another user than the one the connection acts for. */
export class Refused extends Data.TaggedError("Refused")<{ readonly message: string }> {}

export type McpFailure = DomainError | Refused

export interface McpTool {
  readonly name: string
  readonly description: string
  readonly inputSchema: JsonSchemaObject
  /** runs with the arguments as sent; fails with the HTTP API's error */
  readonly call: (args: Record<string, unknown>) => Effect.Effect<unknown, McpFailure>
  /** the answer as a model reads it (answers.ts); absent: its JSON */
  readonly text?: ((answer: any) => string) | undefined
}

/** A JSON Schema object for a schema, inlined at the top (hosts read `type` and `properties` there). */
export const jsonSchemaOf = (schema: Schema.Schema.All): JsonSchemaObject => {
  const $defs: Record<string, JSONSchema.JsonSchema7> = {}
  const out = withoutBuiltinIds(
    JSONSchema.fromAST(schema.ast, { definitions: $defs, topLevelReferenceStrategy: "skip" })
  )
  return Object.keys($defs).length === 0 ? out : { ...out, $defs: withoutBuiltinIds($defs) }
}

/**
 * Effect marks its built-in schemas (`unknown`, `object`, `{}`) with an `$id` like
 * `/schemas/unknown`; used twice in one document, a validator takes that for two schemas of one id.
 */
const withoutBuiltinIds = (value: unknown): any => {
  if (Array.isArray(value)) return value.map(withoutBuiltinIds)
  if (typeof value !== "object" || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) {
    if (key === "$id" && typeof v === "string" && v.startsWith("/schemas/")) continue
    out[key] = withoutBuiltinIds(v)
  }
  return out
}

type Fields = Schema.Struct.Fields

/** The input schema of a tool: the named fields of its request, with descriptions for a model. */
/**
 * `filters` and `metadata` in words: their full JSON Schemas (the server decodes every call
 * with them) would take more of tools/list than all the other arguments together.
 */
const IN_WORDS: Record<string, JsonSchemaObject> = {
  filters: { type: "object" },
  metadata: { type: "object", additionalProperties: { type: ["string", "number", "boolean"] } }
}

const inputOf = (fields: Fields, described: Record<string, string>, user: McpUser): JsonSchemaObject => {
  const picked = Struct.pick(fields, ...Object.keys(described)) as Fields
  const withUser = user._tag === "Argument"
    ? { user_id: required(documented(UserId, "the user whose memory this is")), ...picked }
    : picked
  // a tool without arguments still takes an (empty) object
  if (Object.keys(withUser).length === 0) return { type: "object", properties: {} }
  const schema = jsonSchemaOf(Schema.Struct(withUser)) as { properties?: Record<string, JsonSchemaObject> }
  const properties = { ...schema.properties }
  for (const [name, text] of Object.entries(described)) {
    if (properties[name] !== undefined) {
      properties[name] = { ...(IN_WORDS[name] ?? properties[name]), description: text }
    }
  }
  return modelSchema({ ...schema, properties })
}

const encoder = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const encode = Schema.encodeSync(schema)
  return (a: A): I => encode(a)
}

const RunStatusArgs = Schema.Struct({
  remember_run_id: required(documented(IntegerIn(1, Number.MAX_SAFE_INTEGER), "the run's id"))
})

const remember_run_id = "the remember_run_id a remember call answered"

/** The tools for one caller, in the order `tools/list` shows them. */
export const mcpTools = (deps: McpDeps, user: McpUser, defaults: McpDefaults = {}): ReadonlyArray<McpTool> => {
  /** the arguments with the caller's user (a fixed user refuses another one) and the default dataset */
  const withUser = (given: Record<string, unknown>): Effect.Effect<Record<string, unknown>, McpFailure> => {
    const args = defaults.dataset === undefined || given.dataset !== undefined
      ? given
      : { ...given, dataset: defaults.dataset }
    if (user._tag === "Argument") return Effect.succeed(args)
    if (args.user_id !== undefined && args.user_id !== user.userId) {
      return Effect.fail(new Refused({ message: "user_id: this token may not act for that user_id" }))
    }
    return Effect.succeed({ ...args, user_id: user.userId })
  }
  const decoded = <A, I>(schema: Schema.Schema<A, I, never>) => {
    const decode = decodeRequest(schema)
    return (args: Record<string, unknown>) => Effect.flatMap(withUser(args), (input) => decode(input))
  }
  const reading = <A>(f: (reads: Reads["Type"]) => Effect.Effect<A, McpFailure>) =>
    deps.scheduler.reading(f(deps.reads))

  const decodeRemember = decoded(RememberRequest)
  const decodeRunId = decoded(Schema.Struct({ user_id: required(UserId), ...RunStatusArgs.fields }))
  const encodeQueued = encoder(RememberQueued)
  const encodeSuccess = encoder(RememberSuccess)
  const encodeRun = encoder(RememberRun)

  const tool = (
    name: string,
    description: string,
    input: JsonSchemaObject,
    call: McpTool["call"],
    text?: McpTool["text"]
  ): McpTool => ({ name, description, inputSchema: input, call, text })
  /**
   * A tool over a request and a response schema: the arguments decoded with `request` (the
   * caller's user and the default dataset filled in), `run`, the answer encoded with `response`.
   */
  const defineTool = <A, I, O, OI>(spec: {
    readonly name: string
    readonly description: string
    readonly input: JsonSchemaObject
    readonly request: Schema.Schema<A, I, never>
    readonly response: Schema.Schema<O, OI, never>
    readonly run: (request: A) => Effect.Effect<O, McpFailure>
    /** the answer (encoded) as a model reads it */
    readonly text?: (answer: OI) => string
  }): McpTool => {
    const decode = decoded(spec.request)
    const encode = encoder(spec.response)
    return tool(
      spec.name,
      spec.description,
      spec.input,
      (args) => Effect.map(Effect.flatMap(decode(args), spec.run), encode),
      spec.text
    )
  }

  return [
    tool(
      "remember",
      "Store a text in memory: facts and entities are extracted from it and reconciled with what the dataset " +
        "knows. The call waits for the facts to be stored and answers them (or the error); a long text still " +
        "working after the wait answers remember_run_id and status to poll with remember_status. wait: false " +
        "answers at once, wait: true waits however long it takes.",
      inputOf(RememberRequestFields.fields, {
        text: "the text to remember (up to 1 MiB): a note, a document, a message",
        messages: "instead of text, conversation turns to remember: [{role: user|assistant|system|tool, " +
          "name?, content, created_at?}]; first-person statements are about the speaker",
        dataset: "the dataset to store it in (default main)",
        kind: "knowledge (facts about the world, the default) or episode (something that happened)",
        reference_time: "when the text was written or said, RFC 3339; relative dates resolve against it (default now)",
        session_id: "the conversation or session this text belongs to",
        metadata:
          "your own fields on the text, flat: {\"source\": \"crm\", \"priority\": 2} (search can filter by them)",
        instructions: "extra guidance for extracting this text only, e.g. \"only facts about our customers\"",
        wait:
          "absent: wait a while for the facts (then a run id to poll); true: wait until stored; false: answer at once"
      }, user),
      (args) =>
        Effect.gen(function*() {
          // absent `wait`: the outcome if the run ends within the wait, else the run id to poll
          const bounded = args.wait === undefined
          const request = yield* decodeRemember({ ...args, wait: args.wait ?? true })
          const run = yield* deps.manager.accept(request, { idempotencyKey: request.idempotency_key })
          if (request.wait === true) {
            const waitMs = defaults.rememberWaitMs ?? MCP_REMEMBER_WAIT_MS
            const outcome = bounded ? yield* Effect.timeoutOption(run.await, waitMs) : Option.some(yield* run.await)
            if (Option.isSome(outcome)) {
              return encodeSuccess({ remember_run_id: outcome.value.runId, ...outcome.value.response })
            }
          }
          // a run just queued is queued; one waited for, or named by a key, is as its row says
          const status = run.created && request.wait !== true
            ? "queued" as const
            : Option.match(yield* deps.runLog.get(run.runId), {
              onNone: () => "queued" as const,
              onSome: (r) => r.status
            })
          return encodeQueued({ remember_run_id: run.runId, status })
        }),
      rememberText
    ),
    tool(
      "remember_status",
      "The state of a remember run: its status (queued, started, succeeded, failed, cancelled), the stages done, the " +
        "error if it failed, and once it succeeded the stored facts (response).",
      inputOf(RunStatusArgs.fields, { remember_run_id }, user),
      (args) =>
        Effect.gen(function*() {
          const request = yield* decodeRunId(args)
          // another user's run is as absent as a missing one
          const run = Option.filter(
            yield* deps.runLog.get(request.remember_run_id),
            (r) => r.user_id === request.user_id
          )
          if (Option.isNone(run)) {
            return yield* new NotFound({ message: `no remember run with id ${request.remember_run_id}` })
          }
          return encodeRun(runView(run.value))
        }),
      runText
    ),
    defineTool({
      name: "search",
      description:
        "Search memory for facts and entities relevant to a text (no model call). Each fact has its validity " +
        "(valid_at, invalid_at; valid_at null: the start is unknown, it held before invalid_at) and the ids of " +
        "the artifacts (texts) that support it.",
      input: inputOf(SearchRequest.fields, {
        query: "what to look for, in words: a question, a name, a topic",
        dataset: "the dataset to search (default main)",
        as_of: "RFC 3339: the facts that were true then (default now)",
        known_at: "RFC 3339: only what memory had been told by then",
        include_expired: "true: also facts that had ended by as_of",
        session_id: "only what this session's texts said",
        filters:
          "only facts whose texts match, e.g. {\"metadata\": {\"source\": \"crm\", \"priority\": {\"gte\": 2}}, " +
          "\"relations\": [\"works at\"], \"entity_types\": [\"person\"]}; also kind, session_id, created_after, " +
          "created_before, and any: [groups] for OR (metadata values: equal, {in: [...]}, {gte, lte})",
        limit: "how many facts and entities at most (1 to 100, default 10)"
      }, user),
      request: SearchRequest,
      response: SearchResponse,
      run: (request) => reading((reads) => reads.search(request)),
      text: searchText
    }),
    defineTool({
      name: "query",
      description: "Answer a question from memory: the answer, with the stored facts it cites. Needs the server's LLM.",
      input: inputOf(QueryRequest.from.fields, {
        query: "the question",
        dataset: "the dataset to ask (default main)",
        as_of: "RFC 3339: answer as things were then (default now)",
        session_id: "only what this session's texts said"
      }, user),
      request: QueryRequest,
      response: QueryResponse,
      run: (request) => reading((reads) => reads.query(request)),
      text: queryText
    }),
    defineTool({
      name: "get_entity",
      description: "One entity (a person, place, organization...) by name or id: what its texts said of it, every " +
        "fact about it over time, live and closed, ordered by when they became true, and the entities it is " +
        "connected to. A part of a name works (\"alice\" finds Alice Smith); a name that fits several entities " +
        "answers them, to ask again by id.",
      input: inputOf(EntityStoryFields, {
        name: "the entity's name or a word of it (case and accents do not matter); give name or id",
        id: "the entity's id (from a search result); give name or id",
        dataset: "the dataset (default main)",
        include_expired: "false: only the facts still true now (default true: the whole story)"
      }, user),
      request: EntityStoryRequest,
      response: EntityLookup,
      run: (request) => reading((reads) => reads.entityStory(request)),
      text: entityText
    }),
    defineTool({
      name: "get_context",
      description:
        "A block of text to put in your prompt: what memory knows that is relevant to a query (or, without one, " +
        "the most recent and most connected facts), one fact a line with when it became true (and ended; " +
        "\"until\" its end when the start is unknown), then the entities they concern with their descriptions; " +
        "at most max_tokens tokens. No model call. The facts and entities it holds come with it, with their ids.",
      input: inputOf(ContextFields, {
        query: "what you need context for, in words: the task, a question, a name (absent: the latest facts)",
        dataset: "the dataset (default main)",
        session_id: "only what this session's texts said",
        as_of: "RFC 3339: the facts that were true then (default now)",
        filters:
          "only facts whose texts match, as search's filters, e.g. {\"metadata\": {\"source\": \"crm\", \"priority\": {\"gte\": 2}}, " +
          "\"relations\": [\"works at\"], \"entity_types\": [\"person\"]}; also kind, session_id, created_after, " +
          "created_before, and any: [groups] for OR (metadata values: equal, {in: [...]}, {gte, lte})",
        max_tokens: "the most tokens the block may take, 1 to 8000 (default 800)"
      }, user),
      request: ContextRequest,
      response: ContextResponse,
      run: (request) => reading((reads) => reads.context(request)),
      text: contextText
    }),
    defineTool({
      name: "list_datasets",
      description: "The datasets of this memory, with how many entities, facts and artifacts each holds.",
      input: inputOf({}, {}, user),
      request: ReadScope,
      response: DatasetsResponse,
      run: (scope) => reading((reads) => reads.datasets(scope.user_id))
    }),
    defineTool({
      name: "list_sessions",
      description: "The sessions (conversations) of a dataset, with how much each discovered.",
      input: inputOf(ReadScope.fields, { dataset: "the dataset (default main)" }, user),
      request: ReadScope,
      response: SessionsResponse,
      run: (scope) => reading((reads) => reads.sessions(scope))
    }),
    defineTool({
      name: "forget",
      description: "Forget a remembered text for good: the artifact, what was derived from it, the facts only it " +
        "supported; facts it had closed are reopened. Cannot be undone.",
      input: inputOf(ForgetArtifactRequest.fields, {
        artifact_id: "the artifact_id of the text to forget (a remember response or a search result gives it)",
        dataset: "the dataset it is in (default main)"
      }, user),
      request: ForgetArtifactRequest,
      response: ForgetArtifactResponse,
      run: (request) => deps.forgets.forgetArtifact(request)
    }),
    defineTool({
      name: "correct",
      description: "Correct the memory when the user says it is wrong. close: a fact stopped being true (at " +
        "invalid_at, default now); reopen: a closed fact is true again; delete_fact / delete_entity: it was never " +
        "true, remove it; merge: entities `from` are the same as `into`. Fact and entity ids come from search, " +
        "get_context or get_entity.",
      input: inputOf(CorrectRequest.fields, {
        action: "close, reopen, delete_fact, delete_entity or merge",
        id: "the fact's id (close, reopen, delete_fact) or the entity's (delete_entity)",
        invalid_at: "close: when the fact stopped being true, RFC 3339 (default now)",
        into: "merge: the entity that stays",
        from: "merge: the entities that are the same as `into` (they are deleted)",
        dataset: "the dataset (default main)"
      }, user),
      request: CorrectRequest,
      response: CorrectResponse,
      run: (request) => correctWith(deps.corrections, request)
    })
  ]
}

/** The URI template of a dataset's graph (its JSON export, `GET /v1/gb/graph`). */
export const GRAPH_TEMPLATE = "gligabao://datasets/{dataset}/graph"
const GRAPH_URI = /^gligabao:\/\/datasets\/([^/]+)\/graph$/

const decodeGraph = decodeRequest(GraphRequest)

/** The JSON export of the dataset a graph URI names; NotFound for another URI or dataset. */
export const readGraphResource = (
  deps: McpDeps,
  user: McpUser,
  uri: string
): Effect.Effect<string, McpFailure> =>
  Effect.gen(function*() {
    const match = GRAPH_URI.exec(uri)
    if (match === null) return yield* new NotFound({ message: `no resource ${uri}` })
    if (user._tag === "Argument") {
      return yield* new NotFound({ message: "a graph resource needs a fixed user (mcp.user_id or a user token)" })
    }
    const userId = user.userId
    const request = yield* decodeGraph({ user_id: userId, dataset: decodeURIComponent(match[1]!), format: "json" })
    // a resource names a dataset the list offered: one that does not exist is not a resource
    const { datasets } = yield* deps.reads.datasets(userId)
    if (!datasets.some((d) => d.name === request.dataset)) return yield* new NotFound({ message: `no resource ${uri}` })
    const exported = yield* deps.reads.exportGraph(request)
    return yield* Stream.mkString(exported.body)
  })
