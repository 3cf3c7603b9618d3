/**
 * The `timeseries` field of a remember request (spec/contracts.md section 11): validated in
 * full before anything is queued, into a normalized form. Every error names the field
 * (`timeseries.series[0].points[3]: ...`). The limits below are documented in docs/TIMESERIES.md.
 */
import { Either } from "effect"
import { parseRfc3339 } from "./time.js"
import { hasLoneSurrogate } from "./unicode.js"

/** Series in one request. */
export const MAX_SERIES = 100
/** Points in one series of a request (a decade of daily values fits). */
export const MAX_POINTS_PER_SERIES = 10_000
/** Points in one request, all series together. */
export const MAX_POINTS_PER_REQUEST = 100_000
export const MAX_ANCHORS_PER_SERIES = 20
export const MAX_KEY_BYTES = 256
export const MAX_UNIT_BYTES = 64
export const MAX_NAME_BYTES = 1024
export const MAX_FETCH_PROVIDERS = 20
/** The longest `before` / `after`: 100 years. */
export const MAX_DURATION_MS = 100 * 365 * 24 * 3600 * 1000
export const DEFAULT_FETCH_BEFORE = "30d"
export const DEFAULT_FETCH_AFTER = "0"

export interface SeriesPointInput {
  /** canonical RFC 3339 UTC with milliseconds */
  readonly ts: string
  readonly value: number
}

/**
 * An anchor selector (contracts section 11). Names are kept as sent (for messages) and
 * matched by the same normalization as entities (the pipeline does that).
 */
export type AnchorSelector =
  | { readonly entity: { readonly name: string; readonly type?: string | undefined }; readonly required: boolean }
  | {
    readonly edge: {
      readonly source: string
      readonly relation?: string | undefined
      readonly target?: string | undefined
    }
    readonly required: boolean
  }
  | { readonly artifact: true; readonly required: boolean }

export interface SeriesInput {
  readonly key: string
  /** absent: a stored unit is kept */
  readonly unit?: string | undefined
  /** in time order, no two at the same time */
  readonly points: ReadonlyArray<SeriesPointInput>
  /** as sent; empty when none were given (the series is anchored to the artifact) */
  readonly anchors: ReadonlyArray<AnchorSelector>
}

export interface FetchRequest {
  /** the providers the LLM may choose from; undefined: all of the server's */
  readonly providers?: ReadonlyArray<string> | undefined
  /** as sent (or the default), and in milliseconds */
  readonly before: string
  readonly beforeMs: number
  readonly after: string
  readonly afterMs: number
}

export interface TimeseriesRequest {
  readonly series: ReadonlyArray<SeriesInput>
  readonly fetch?: FetchRequest | undefined
  readonly observations: boolean
}

class Invalid {
  constructor(readonly message: string) {}
}
const fail = (message: string): never => {
  throw new Invalid(message)
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const given = (u: unknown): boolean => u !== undefined && u !== null
const utf8Bytes = (s: string): number => Buffer.byteLength(s, "utf8")

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

const text = (field: string, value: unknown, maxBytes: number): string => {
  if (typeof value !== "string") return fail(`${field} must be a string`)
  if (value.trim() === "") return fail(`${field} must not be empty`)
  if (utf8Bytes(value) > maxBytes) return fail(`${field} must be at most ${maxBytes} bytes`)
  if (CONTROL.test(value)) return fail(`${field} must not contain control characters`)
  // keys and anchors would collide once stored (a lone surrogate becomes U+FFFD)
  if (hasLoneSurrogate(value)) return fail(`${field} must be valid Unicode: it has a lone surrogate`)
  return value
}

const optionalText = (field: string, value: unknown, maxBytes: number): string | undefined =>
  given(value) ? text(field, value, maxBytes) : undefined

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/

/**
 * A point's time: RFC 3339 with an offset, or a bare date (midnight UTC, as daily series are
 * usually written). The calendar date must exist (`2025-02-30` is refused, not rolled over).
 */
export const parsePointTime = (input: string): string | undefined => {
  const trimmed = input.trim()
  const date = DATE_ONLY.exec(trimmed)
  const canonical = date !== null ? parseRfc3339(`${trimmed}T00:00:00Z`) : parseRfc3339(trimmed)
  if (canonical === undefined) return undefined
  if (date !== null && canonical.slice(0, 10) !== trimmed) return undefined
  // a day past the month's end (Date.parse rolls it over) is refused; offsets can shift the date, so compare the day only
  const day = Number(trimmed.slice(8, 10))
  const [y, m] = [Number(trimmed.slice(0, 4)), Number(trimmed.slice(5, 7))]
  if (day > new Date(Date.UTC(y, m, 0)).getUTCDate()) return undefined
  return canonical
}

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)$/
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/**
 * A duration relative to the reference time: a number and a unit (`ms`, `s`, `m` minutes, `h`,
 * `d`, `w`), e.g. `30d`, `12h`, `1.5h`; `0` needs no unit. Undefined when malformed or over
 * 100 years.
 */
export const parseDuration = (input: string): number | undefined => {
  const trimmed = input.trim().toLowerCase()
  if (/^0+(\.0+)?$/.test(trimmed)) return 0
  const m = DURATION.exec(trimmed)
  if (m === null) return undefined
  const ms = Math.round(Number(m[1]) * UNIT_MS[m[2]!]!)
  return Number.isFinite(ms) && ms <= MAX_DURATION_MS ? ms : undefined
}

const required = (field: string, selector: Record<string, unknown>): boolean => {
  if (!given(selector.required)) return true
  if (typeof selector.required !== "boolean") return fail(`${field}.required must be a boolean`)
  return selector.required
}

const SELECTOR_SHAPE = `{"entity": {"name": ...}}, {"edge": {"source": ...}} or {"artifact": true}`

const anchor = (field: string, value: unknown): AnchorSelector => {
  if (!isObject(value)) return fail(`${field} must be an object: ${SELECTOR_SHAPE}`)
  const kinds = ["entity", "edge", "artifact"].filter((k) => given(value[k]))
  if (kinds.length !== 1) {
    return fail(`${field} must have exactly one of entity, edge or artifact: ${SELECTOR_SHAPE}`)
  }
  const req = required(field, value)
  if (kinds[0] === "artifact") {
    if (value.artifact !== true) return fail(`${field}.artifact must be true`)
    return { artifact: true, required: req }
  }
  if (kinds[0] === "entity") {
    const e = value.entity
    if (!isObject(e)) return fail(`${field}.entity must be an object {"name": ..., "type"?: ...}`)
    const type = optionalText(`${field}.entity.type`, e.type, MAX_NAME_BYTES)
    return {
      entity: { name: text(`${field}.entity.name`, e.name, MAX_NAME_BYTES), ...(type === undefined ? {} : { type }) },
      required: req
    }
  }
  const e = value.edge
  if (!isObject(e)) return fail(`${field}.edge must be an object {"source": ..., "relation"?: ..., "target"?: ...}`)
  const relation = optionalText(`${field}.edge.relation`, e.relation, MAX_NAME_BYTES)
  const target = optionalText(`${field}.edge.target`, e.target, MAX_NAME_BYTES)
  return {
    edge: {
      source: text(`${field}.edge.source`, e.source, MAX_NAME_BYTES),
      ...(relation === undefined ? {} : { relation }),
      ...(target === undefined ? {} : { target })
    },
    required: req
  }
}

const point = (field: string, value: unknown): SeriesPointInput => {
  if (!Array.isArray(value) || value.length !== 2) return fail(`${field} must be a pair [time, number]`)
  const [time, number] = value as [unknown, unknown]
  if (typeof time !== "string") return fail(`${field}[0] must be a time string (RFC 3339 or YYYY-MM-DD)`)
  const ts = parsePointTime(time)
  if (ts === undefined) {
    return fail(`${field}[0] must be an RFC 3339 time such as 2025-01-31T00:00:00Z (or a date 2025-01-31)`)
  }
  if (typeof number !== "number" || !Number.isFinite(number)) return fail(`${field}[1] must be a finite number`)
  return { ts, value: number }
}

const series = (field: string, value: unknown): SeriesInput => {
  if (!isObject(value)) return fail(`${field} must be an object {"key": ..., "points": [[time, number], ...]}`)
  const key = text(`${field}.key`, value.key, MAX_KEY_BYTES)
  const unit = optionalText(`${field}.unit`, value.unit, MAX_UNIT_BYTES)
  if (!Array.isArray(value.points)) return fail(`${field}.points must be an array of [time, number] pairs`)
  if (value.points.length > MAX_POINTS_PER_SERIES) {
    return fail(`${field}.points must have at most ${MAX_POINTS_PER_SERIES} points (it has ${value.points.length})`)
  }
  const points = value.points.map((p, i) => point(`${field}.points[${i}]`, p))
  const at = new Map<string, number>()
  points.forEach((p, i) => {
    const earlier = at.get(p.ts)
    if (earlier !== undefined) return fail(`${field}.points[${i}] repeats the time of points[${earlier}] (${p.ts})`)
    at.set(p.ts, i)
  })
  let anchors: ReadonlyArray<AnchorSelector> = []
  if (given(value.anchors)) {
    if (!Array.isArray(value.anchors)) return fail(`${field}.anchors must be an array of selectors`)
    if (value.anchors.length > MAX_ANCHORS_PER_SERIES) {
      return fail(`${field}.anchors must have at most ${MAX_ANCHORS_PER_SERIES} selectors`)
    }
    anchors = value.anchors.map((a, i) => anchor(`${field}.anchors[${i}]`, a))
  }
  return {
    key,
    ...(unit === undefined ? {} : { unit }),
    points: [...points].sort((a, b) => (a.ts < b.ts ? -1 : 1)),
    anchors
  }
}

const duration = (field: string, value: unknown, fallback: string): { readonly text: string; readonly ms: number } => {
  if (!given(value)) return { text: fallback, ms: parseDuration(fallback)! }
  if (typeof value !== "string") return fail(`${field} must be a duration string such as "30d", "12h" or "0"`)
  const ms = parseDuration(value)
  if (ms === undefined) {
    return fail(`${field} must be a duration such as "30d", "12h" or "0" (units ms, s, m, h, d, w; at most 100 years)`)
  }
  return { text: value.trim(), ms }
}

const fetchRequest = (value: unknown): FetchRequest => {
  if (value === true) value = {}
  if (!isObject(value)) {
    return fail(`timeseries.fetch must be an object {"providers"?: [...], "before"?: "30d", "after"?: "0"}`)
  }
  let providers: ReadonlyArray<string> | undefined
  if (given(value.providers)) {
    if (!Array.isArray(value.providers)) return fail("timeseries.fetch.providers must be an array of provider names")
    if (value.providers.length === 0) {
      return fail("timeseries.fetch.providers must not be empty (leave it out for all providers)")
    }
    if (value.providers.length > MAX_FETCH_PROVIDERS) {
      return fail(`timeseries.fetch.providers must have at most ${MAX_FETCH_PROVIDERS} names`)
    }
    providers = [...new Set(value.providers.map((p, i) => text(`timeseries.fetch.providers[${i}]`, p, MAX_KEY_BYTES)))]
  }
  const before = duration("timeseries.fetch.before", value.before, DEFAULT_FETCH_BEFORE)
  const after = duration("timeseries.fetch.after", value.after, DEFAULT_FETCH_AFTER)
  return { providers, before: before.text, beforeMs: before.ms, after: after.text, afterMs: after.ms }
}

const parse = (value: unknown): TimeseriesRequest => {
  if (!isObject(value)) return fail("timeseries must be an object")
  const wantsFetch = given(value.fetch) && value.fetch !== false
  if (!given(value.series) && !wantsFetch) {
    return fail(
      `timeseries must have series or fetch: {"series": [{"key": ..., "points": [[time, number]]}]} or {"fetch": {}}`
    )
  }
  let list: ReadonlyArray<SeriesInput> = []
  if (given(value.series)) {
    if (!Array.isArray(value.series)) return fail("timeseries.series must be an array of series")
    if (value.series.length > MAX_SERIES) return fail(`timeseries.series must have at most ${MAX_SERIES} series`)
    list = value.series.map((s, i) => series(`timeseries.series[${i}]`, s))
    const keys = new Map<string, number>()
    list.forEach((s, i) => {
      const earlier = keys.get(s.key)
      if (earlier !== undefined) {
        return fail(`timeseries.series[${i}].key repeats the key of series[${earlier}] (${JSON.stringify(s.key)})`)
      }
      keys.set(s.key, i)
    })
    const total = list.reduce((n, s) => n + s.points.length, 0)
    if (total > MAX_POINTS_PER_REQUEST) {
      return fail(`timeseries.series must have at most ${MAX_POINTS_PER_REQUEST} points in all (it has ${total})`)
    }
  }
  const fetch = wantsFetch ? fetchRequest(value.fetch) : undefined
  let observations = false
  if (given(value.observations)) {
    if (typeof value.observations !== "boolean") return fail("timeseries.observations must be a boolean")
    observations = value.observations
  }
  return { series: list, ...(fetch === undefined ? {} : { fetch }), observations }
}

/** Validates the `timeseries` field of a request body; the Left names the field. */
export const validateTimeseries = (value: unknown): Either.Either<TimeseriesRequest, string> => {
  try {
    return Either.right(parse(value))
  } catch (e) {
    if (e instanceof Invalid) return Either.left(e.message)
    throw e
  }
}
