/**
 * The admin API's requests as schemas of their query parameters (and path): each decodes into
 * the request its program takes, with a message naming the parameter (a 400), and is the HTTP
 * contract's URL parameters (src/http/AdminApi.ts).
 */
import { Clock, Effect, type Either, ParseResult, Schema } from "effect"
import { InvalidRequest } from "../domain/Errors.js"
import { RUN_STATUSES } from "../domain/Stages.js"
import { parseRfc3339, toIso } from "../domain/time.js"
import { UrlParams, type UrlParamsInput } from "../domain/UrlParams.js"
import {
  decodeRequest,
  documented,
  ExactlyOneOf,
  formatParseError,
  IntegerIn,
  PathId,
  required,
  Str,
  withDefault
} from "../domain/Wire.js"
import { entityChoiceProblem, EntityStoryFields, FactViewFields, SearchRequest } from "../query/requests.js"

export type Params = Readonly<Record<string, string | undefined>>

export const DEFAULT_PAGE = 100
export const MAX_PAGE = 500
export const DEFAULT_GRAPH_LIMIT = 300
export const MAX_GRAPH_LIMIT = 2000
/** a chart of more bars than this is unreadable and its query unbounded */
export const MAX_BUCKETS = 1000
const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
export const DEFAULT_USAGE_PERIOD_MS = 7 * DAY_MS

/** Absent means the server's own database, whatever its name (the file's or the URL's). */
const db = Schema.optional(
  documented(Str, "the database's name (see /v1/gb/admin/api/databases); the server's own database when absent")
)

const pageFields = {
  limit: withDefault(documented(IntegerIn(1, MAX_PAGE), `page size, default ${DEFAULT_PAGE}`), () => DEFAULT_PAGE),
  offset: withDefault(documented(IntegerIn(0, Number.MAX_SAFE_INTEGER), "default 0"), () => 0)
}

/** `GET /remember-runs`: the status is checked first, then the rest in order. */
export const RunsRequest = UrlParams(
  Schema.Struct({
    status: Schema.optional(documented(ExactlyOneOf(RUN_STATUSES), "queued, started, succeeded, failed or cancelled")),
    db,
    dataset: Schema.optional(documented(Str, "only runs into this dataset")),
    user_id: Schema.optional(documented(Str, "only runs of this user")),
    ...pageFields
  }),
  { examples: [{ limit: DEFAULT_PAGE, offset: 0 }] }
)
export type RunsRequest = Schema.Schema.Type<typeof RunsRequest>

/** `GET /remember-runs/{id}`: the run's id. */
export const RunPath = Schema.Struct({
  id: PathId.pipe(
    Schema.filter((id) => id >= 1, { message: () => "must be a positive integer" }),
    Schema.annotations({ jsonSchema: { type: "integer", minimum: 1, description: "the run's id", examples: [1] } })
  )
}).annotations({ examples: [{ id: 1 }] })

/** `GET /remember-runs/{id}?db`. */
export const RunParams = UrlParams(Schema.Struct({ db }))

export interface RunRequest {
  readonly db?: string | undefined
  readonly id: number
}

/** An RFC 3339 time as a parameter gives it, in its canonical UTC form. */
const Time = Schema.transformOrFail(Schema.Unknown, Schema.String, {
  strict: true,
  decode: (u, _, ast) => {
    const canonical = typeof u === "string" ? parseRfc3339(u) : undefined
    return canonical === undefined
      ? ParseResult.fail(new ParseResult.Type(ast, u, "must be an RFC 3339 time, like 2026-01-31T00:00:00Z"))
      : ParseResult.succeed(canonical)
  },
  encode: ParseResult.succeed
}).annotations({ jsonSchema: { type: "string", format: "date-time" } })

const UsageBucket = Schema.Literal("hour", "day")

const UsageParams = Schema.Struct({
  db,
  // `to` first: `from` defaults from it
  to: Schema.optional(documented(Time, "exclusive (default: now)")),
  from: Schema.optional(documented(Time, "inclusive (default: 7 days before to)")),
  bucket: Schema.optional(
    documented(
      ExactlyOneOf(UsageBucket.literals, "must be hour or day"),
      "hour or day (default: hour up to 2 days, else day)"
    )
  )
})

const UsageResolved = Schema.Struct({
  db: Schema.optional(Schema.String),
  from: Schema.String,
  to: Schema.String,
  bucket: UsageBucket
})

const spanOf = (period: { readonly from: string; readonly to: string }) =>
  Date.parse(period.to) - Date.parse(period.from)

/**
 * `GET /inferences`: `from`/`to` default to the 7 days before now (the clock's), the bucket to
 * hours up to 2 days, else days; the period must be forward and at most 1000 buckets long.
 */
export const UsageRequest = UrlParams(
  Schema.transformOrFail(UsageParams, UsageResolved, {
    strict: true,
    decode: (params) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const to = params.to ?? toIso(now)
        const from = params.from ?? toIso(Date.parse(to) - DEFAULT_USAGE_PERIOD_MS)
        const bucket = params.bucket ?? (spanOf({ from, to }) <= 2 * DAY_MS ? "hour" : "day")
        return { db: params.db, from, to, bucket }
      }),
    encode: ParseResult.succeed
  }).pipe(
    Schema.filter((period) => spanOf(period) > 0 || { path: ["from"], message: "must be before to" }),
    Schema.filter((period) =>
      spanOf(period) / (period.bucket === "hour" ? HOUR_MS : DAY_MS) <= MAX_BUCKETS || {
        path: [],
        message:
          `the period from..to spans more than ${MAX_BUCKETS} ${period.bucket}s: choose a shorter period or bucket=day`
      }
    )
  ),
  {
    examples: [{ from: "2026-01-01T00:00:00.000Z", to: "2026-01-08T00:00:00.000Z", bucket: "day" }]
  }
)
export type UsageRequest = Schema.Schema.Type<typeof UsageRequest>

/** `GET /datasets`. */
export const DatasetsRequest = UrlParams(Schema.Struct({ db, ...pageFields }), {
  examples: [{ limit: DEFAULT_PAGE, offset: 0 }]
})
export type DatasetsRequest = Schema.Schema.Type<typeof DatasetsRequest>

/** `GET /graph`. */
export const AdminGraphRequest = UrlParams(
  Schema.Struct({
    db,
    dataset_id: required(
      documented(IntegerIn(1, Number.MAX_SAFE_INTEGER), "the dataset's id (see /v1/gb/admin/api/datasets)")
    ),
    limit: withDefault(
      documented(
        IntegerIn(1, MAX_GRAPH_LIMIT),
        `the most recent facts to return, default ${DEFAULT_GRAPH_LIMIT}, at most ${MAX_GRAPH_LIMIT}`
      ),
      () => DEFAULT_GRAPH_LIMIT
    )
  }),
  { examples: [{ dataset_id: 1, limit: DEFAULT_GRAPH_LIMIT }] }
)
export type AdminGraphRequest = Schema.Schema.Type<typeof AdminGraphRequest>

// -- decoders (the same schemas, for tests) ---------------------------------------------------

export const validateRunsRequest: (params: UrlParamsInput) => Either.Either<RunsRequest, InvalidRequest> =
  decodeRequest(RunsRequest)

export const validateDatasetsRequest: (params: UrlParamsInput) => Either.Either<DatasetsRequest, InvalidRequest> =
  decodeRequest(DatasetsRequest)

export const validateAdminGraphRequest: (params: UrlParamsInput) => Either.Either<AdminGraphRequest, InvalidRequest> =
  decodeRequest(AdminGraphRequest)

/** The usage request as decoded at `nowMs` (the defaults of `from` and `to` come from the clock). */
export const validateUsageRequest = (
  params: UrlParamsInput,
  nowMs: number
): Either.Either<UsageRequest, InvalidRequest> =>
  Schema.decodeUnknown(UsageRequest)(params).pipe(
    Effect.mapError((e) => new InvalidRequest({ message: formatParseError(e) })),
    Effect.either,
    Effect.withClock(fixedClock(nowMs)),
    Effect.runSync
  )

const fixedClock = (ms: number): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => ms,
  unsafeCurrentTimeNanos: () => BigInt(ms) * 1_000_000n,
  currentTimeMillis: Effect.succeed(ms),
  currentTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
  sleep: () => Effect.void
})

// -- the Memory view: the user endpoints' requests, in the database `db` ----------------------

/** `GET /memory/search`: `POST /v1/gb/search`'s fields as parameters, with `db`. */
export const MemorySearchRequest = UrlParams(Schema.Struct({ db, ...SearchRequest.fields }), {
  examples: [{
    user_id: "alice",
    dataset: "main",
    query: "Where does Alice live?",
    include_expired: false,
    limit: 10,
    hops: 1
  }]
})
export type MemorySearchRequest = Schema.Schema.Type<typeof MemorySearchRequest>

/** `GET /memory/entity`: `GET /v1/gb/entities`'s parameters (exactly one of id and name), with `db`. */
export const MemoryEntityRequest = UrlParams(
  Schema.Struct({ db, ...EntityStoryFields }).pipe(Schema.filter((request) => entityChoiceProblem(request) ?? true)),
  { examples: [{ user_id: "alice", dataset: "main", id: 1, include_expired: true }] }
)
export type MemoryEntityRequest = Schema.Schema.Type<typeof MemoryEntityRequest>

/** `GET /memory/fact`: `GET /v1/gb/facts/{id}`'s parameters and id, with `db`. */
export const MemoryFactRequest = UrlParams(Schema.Struct({ db, ...FactViewFields }), {
  examples: [{ user_id: "alice", dataset: "main", id: 1 }]
})
export type MemoryFactRequest = Schema.Schema.Type<typeof MemoryFactRequest>
