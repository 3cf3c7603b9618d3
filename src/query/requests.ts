/**
 * The read requests (search, query, graph export, datasets, sessions): validation of the wire
 * input into normalized requests, with a message that names the field. Plain functions, like
 * the remember request's, so the rules are unit-tested and run before any lookup.
 */
import { Either } from "effect"
import { InvalidRequest } from "../domain/Errors.js"
import {
  DEFAULT_DATASET,
  hasLoneSurrogate,
  MAX_LABEL_BYTES,
  MAX_USER_ID_BYTES,
  unstorableText
} from "../domain/Remember.js"
import { ARTIFACT_KINDS, type ArtifactKind, REASONING_LEVELS, type ReasoningLevel } from "../domain/Stages.js"
import { parseRfc3339 } from "../domain/time.js"

export const DEFAULT_SEARCH_LIMIT = 10
export const DEFAULT_QUERY_LIMIT = 20
export const MAX_LIMIT = 100
export const DEFAULT_HOPS = 1
export const MAX_HOPS = 2
export const MAX_QUERY_BYTES = 8 * 1024

/** Whose data, and which dataset (default `main`). */
export interface ReadScope {
  readonly user_id: string
  readonly dataset: string
}

/** The filters every read of facts takes (see services/SearchRepo.ts ReadFilters). */
export interface ReadOptions {
  /** canonical RFC 3339; absent: now */
  readonly as_of?: string | undefined
  readonly known_at?: string | undefined
  readonly include_expired: boolean
  readonly session_id?: string | undefined
  readonly kind?: ArtifactKind | undefined
}

export interface SearchRequest extends ReadScope, ReadOptions {
  readonly query: string
  /** per list (facts, entities, chunks) */
  readonly limit: number
  /** graph neighbourhood depth: 0 (none), 1 or 2 */
  readonly hops: number
}

export interface QueryRequest extends SearchRequest {
  /** the model of the `query` stage; absent: the LLM's default */
  readonly model?: string | undefined
  readonly reasoning: ReasoningLevel
}

export type GraphFormat = "json" | "graphml"

export interface GraphRequest extends ReadScope, ReadOptions {
  readonly format: GraphFormat
}

const utf8Bytes = (s: string): number => Buffer.byteLength(s, "utf8")

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/

class Invalid {
  constructor(readonly message: string) {}
}
/** Throws the message out of an `attempt`: validation reads as straight-line code. */
export const fail = (message: string): never => {
  throw new Invalid(message)
}

export const attempt = <A>(f: () => A): Either.Either<A, InvalidRequest> => {
  try {
    return Either.right(f())
  } catch (e) {
    if (e instanceof Invalid) return Either.left(new InvalidRequest({ message: e.message }))
    throw e
  }
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const given = (u: unknown) => u !== undefined && u !== null

const label = (field: string, value: unknown, maxBytes = MAX_LABEL_BYTES): string => {
  if (typeof value !== "string") return fail(`${field} must be a string`)
  if (value.length === 0) return fail(`${field} must not be empty`)
  if (utf8Bytes(value) > maxBytes) return fail(`${field} must be at most ${maxBytes} bytes`)
  if (CONTROL.test(value)) return fail(`${field} must not contain control characters`)
  if (hasLoneSurrogate(value)) return fail(`${field} must be valid Unicode: it has a lone surrogate`)
  return value
}

const scope = (input: Record<string, unknown>): ReadScope => {
  const user_id = input.user_id
  if (!given(user_id)) return fail("user_id is required")
  if (typeof user_id !== "string") return fail("user_id must be a string")
  if (user_id.trim().length === 0) return fail("user_id must not be empty")
  label("user_id", user_id, MAX_USER_ID_BYTES)
  const dataset = given(input.dataset) ? label("dataset", input.dataset) : DEFAULT_DATASET
  return { user_id, dataset }
}

const time = (field: string, value: unknown): string | undefined => {
  if (!given(value)) return undefined
  if (typeof value !== "string") return fail(`${field} must be an RFC 3339 timestamp string`)
  return parseRfc3339(value) ?? fail(`${field} must be an RFC 3339 timestamp such as 2025-01-31T12:00:00Z`)
}

/** JSON: a boolean; a query string: true/false/1/0 (already a string) */
const flag = (field: string, value: unknown): boolean => {
  if (!given(value)) return false
  if (typeof value === "boolean") return value
  if (typeof value === "string") {
    const v = value.trim().toLowerCase()
    if (v === "true" || v === "1" || v === "") return true
    if (v === "false" || v === "0") return false
  }
  return fail(`${field} must be a boolean`)
}

export const integer = (field: string, value: unknown, min: number, max: number, fallback: number): number => {
  if (!given(value)) return fallback
  const n = typeof value === "string" && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value
  if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max) {
    return fail(`${field} must be an integer from ${min} to ${max}`)
  }
  return n
}

const options = (input: Record<string, unknown>): ReadOptions => {
  let kind: ArtifactKind | undefined
  if (given(input.kind)) {
    const k = typeof input.kind === "string" ? input.kind.trim().toLowerCase() : undefined
    if (k === undefined || !(ARTIFACT_KINDS as ReadonlyArray<string>).includes(k)) {
      return fail(`kind must be one of ${ARTIFACT_KINDS.join(", ")}`)
    }
    kind = k as ArtifactKind
  }
  return {
    as_of: time("as_of", input.as_of),
    known_at: time("known_at", input.known_at),
    include_expired: flag("include_expired", input.include_expired),
    session_id: given(input.session_id) ? label("session_id", input.session_id) : undefined,
    kind
  }
}

const queryText = (value: unknown): string => {
  if (!given(value)) return fail("query is required")
  if (typeof value !== "string") return fail("query must be a string")
  if (value.trim().length === 0) return fail("query must not be empty")
  if (utf8Bytes(value) > MAX_QUERY_BYTES) return fail(`query must be at most ${MAX_QUERY_BYTES} bytes`)
  // PostgreSQL refuses NUL in a text parameter; a lone surrogate would not match as sent
  const unstorable = unstorableText("query", value)
  return unstorable === undefined ? value : fail(unstorable)
}

const body = (input: unknown): Record<string, unknown> =>
  isObject(input) ? input : fail("the request body must be a JSON object")

const parseSearch = (input: unknown, defaultLimit: number): SearchRequest => {
  const b = body(input)
  return {
    ...scope(b),
    query: queryText(b.query),
    ...options(b),
    limit: integer("limit", b.limit, 1, MAX_LIMIT, defaultLimit),
    hops: integer("hops", b.hops, 0, MAX_HOPS, DEFAULT_HOPS)
  }
}

/** `{models: {query: "m"}}`: only the query stage runs a model here. */
const queryModel = (value: unknown): string | undefined => {
  if (!given(value)) return undefined
  if (!isObject(value)) return fail("models must be an object mapping a stage to a model name")
  for (const stage of Object.keys(value)) {
    if (stage !== "query") return fail(`models.${stage} is not a stage of query (only query)`)
  }
  const model = value.query
  if (!given(model) || model === "") return undefined
  if (typeof model !== "string") return fail("models.query must be a string")
  if (utf8Bytes(model) > MAX_LABEL_BYTES) return fail(`models.query must be at most ${MAX_LABEL_BYTES} bytes`)
  if (WHITESPACE_OR_CONTROL.test(model) || hasLoneSurrogate(model)) {
    return fail("models.query must not contain whitespace, control characters or lone surrogates")
  }
  return model
}

const queryReasoning = (value: unknown): ReasoningLevel => {
  if (!given(value)) return "none"
  if (!isObject(value)) return fail("reasoning must be an object mapping a stage to a level")
  for (const stage of Object.keys(value)) {
    if (stage !== "query") return fail(`reasoning.${stage} is not a stage of query (only query)`)
  }
  if (!given(value.query)) return "none"
  const level = typeof value.query === "string" ? value.query.trim().toLowerCase() : undefined
  if (level === undefined || !(REASONING_LEVELS as ReadonlyArray<string>).includes(level)) {
    return fail(`reasoning.query must be one of ${REASONING_LEVELS.join(", ")}`)
  }
  return level as ReasoningLevel
}

/** `POST /v1/gb/search`; unknown fields are ignored. */
export const validateSearchRequest = (input: unknown): Either.Either<SearchRequest, InvalidRequest> =>
  attempt(() => parseSearch(input, DEFAULT_SEARCH_LIMIT))

/** `POST /v1/gb/query`. */
export const validateQueryRequest = (input: unknown): Either.Either<QueryRequest, InvalidRequest> =>
  attempt(() => {
    const b = body(input)
    return {
      ...parseSearch(b, DEFAULT_QUERY_LIMIT),
      model: queryModel(b.models),
      reasoning: queryReasoning(b.reasoning)
    }
  })

/** `GET /v1/gb/graph` from its query parameters. */
export const validateGraphRequest = (
  params: Record<string, string | undefined>
): Either.Either<GraphRequest, InvalidRequest> =>
  attempt(() => {
    const format = (params.format ?? "json").trim().toLowerCase()
    if (format !== "json" && format !== "graphml") return fail("format must be json or graphml")
    return { ...scope(params), ...options(params), format }
  })

/** `user_id` (and `dataset`, default main) from query parameters or a path. */
export const validateScope = (params: Record<string, string | undefined>): Either.Either<ReadScope, InvalidRequest> =>
  attempt(() => scope(params))

/** `GET /v1/gb/datasets?user_id`. */
export const validateUserId = (params: Record<string, string | undefined>): Either.Either<string, InvalidRequest> =>
  attempt(() => scope({ user_id: params.user_id }).user_id)
