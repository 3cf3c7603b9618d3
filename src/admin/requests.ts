/**
 * The admin API's query parameters, validated into requests with a message naming the
 * parameter (a 400). Plain functions, unit-tested.
 */
import type { Either } from "effect"
import type { InvalidRequest } from "../domain/Errors.js"
import { RUN_STATUSES, type RunStatus } from "../domain/Stages.js"
import { parseRfc3339, toIso } from "../domain/time.js"
import { attempt, fail, integer } from "../query/requests.js"
import type { UsageBucket } from "../services/AdminRepo.js"

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

const given = (value: string | undefined): value is string => value !== undefined && value !== ""

const db = (params: Params): string => {
  if (!given(params.db)) return fail("db is required: the name of one of the server's databases")
  return params.db
}

/** An empty parameter is an absent one, as for the others (a form field left blank). */
const optional = (value: string | undefined): string | undefined => (given(value) ? value : undefined)

const page = (params: Params) => ({
  limit: integer("limit", optional(params.limit), 1, MAX_PAGE, DEFAULT_PAGE),
  offset: integer("offset", optional(params.offset), 0, Number.MAX_SAFE_INTEGER, 0)
})

export interface RunsRequest {
  readonly db: string
  readonly status?: RunStatus | undefined
  readonly dataset?: string | undefined
  readonly user_id?: string | undefined
  readonly limit: number
  readonly offset: number
}

export const validateRunsRequest = (params: Params): Either.Either<RunsRequest, InvalidRequest> =>
  attempt(() => {
    const status = params.status
    if (given(status) && !(RUN_STATUSES as ReadonlyArray<string>).includes(status)) {
      return fail(`status must be one of ${RUN_STATUSES.join(", ")}`)
    }
    return {
      db: db(params),
      status: given(status) ? (status as RunStatus) : undefined,
      dataset: given(params.dataset) ? params.dataset : undefined,
      user_id: given(params.user_id) ? params.user_id : undefined,
      ...page(params)
    }
  })

export interface RunRequest {
  readonly db: string
  readonly id: number
}

/** One run: `id` from the path, `db` from the query. */
export const validateRunRequest = (params: Params, id: string): Either.Either<RunRequest, InvalidRequest> =>
  attempt(() => {
    const name = db(params)
    if (!/^\d{1,15}$/.test(id) || Number(id) < 1) return fail("id must be a positive integer")
    return { db: name, id: Number(id) }
  })

export interface UsageRequest {
  readonly db: string
  readonly from: string
  readonly to: string
  readonly bucket: UsageBucket
}

const time = (field: string, value: string | undefined): string | undefined => {
  if (!given(value)) return undefined
  return parseRfc3339(value) ?? fail(`${field} must be an RFC 3339 time, like 2026-01-31T00:00:00Z`)
}

/** `from`/`to` default to the 7 days before now; the bucket to hours up to 2 days, else days. */
export const validateUsageRequest = (params: Params, nowMs: number): Either.Either<UsageRequest, InvalidRequest> =>
  attempt(() => {
    const name = db(params)
    const to = time("to", params.to) ?? toIso(nowMs)
    const from = time("from", params.from) ?? toIso(Date.parse(to) - DEFAULT_USAGE_PERIOD_MS)
    const span = Date.parse(to) - Date.parse(from)
    if (span <= 0) return fail("from must be before to")
    let bucket: UsageBucket
    if (!given(params.bucket)) bucket = span <= 2 * DAY_MS ? "hour" : "day"
    else if (params.bucket === "hour" || params.bucket === "day") bucket = params.bucket
    else return fail("bucket must be hour or day")
    if (span / (bucket === "hour" ? HOUR_MS : DAY_MS) > MAX_BUCKETS) {
      return fail(
        `the period from..to spans more than ${MAX_BUCKETS} ${bucket}s: choose a shorter period or bucket=day`
      )
    }
    return { db: name, from, to, bucket }
  })

export interface DatasetsRequest {
  readonly db: string
  readonly limit: number
  readonly offset: number
}

export const validateDatasetsRequest = (params: Params): Either.Either<DatasetsRequest, InvalidRequest> =>
  attempt(() => ({ db: db(params), ...page(params) }))

export interface AdminGraphRequest {
  readonly db: string
  readonly dataset_id: number
  readonly limit: number
}

export const validateAdminGraphRequest = (params: Params): Either.Either<AdminGraphRequest, InvalidRequest> =>
  attempt(() => {
    const name = db(params)
    if (!given(params.dataset_id)) return fail("dataset_id is required")
    return {
      db: name,
      dataset_id: integer("dataset_id", params.dataset_id, 1, Number.MAX_SAFE_INTEGER, 0),
      limit: integer("limit", optional(params.limit), 1, MAX_GRAPH_LIMIT, DEFAULT_GRAPH_LIMIT)
    }
  })
