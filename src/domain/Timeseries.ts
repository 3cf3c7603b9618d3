/**
 * The `timeseries` field of a remember request (spec/contracts.md section 11), as a schema:
 * decoded in full before anything is queued, into a normalized form. Every problem names the
 * field (`timeseries.series[0].points[3] ...`). The limits below are documented in
 * docs/TIMESERIES.md.
 */
import { Either, ParseResult, Schema, SchemaAST as AST } from "effect"
import { parseRfc3339 } from "./time.js"
import {
  ArrayWithin,
  checkedFirst,
  decodeRequest,
  FiniteNumber,
  JsonBoolean,
  Name,
  ObjectOf,
  optional,
  RawArray,
  RawObject,
  required,
  withDefault
} from "./Wire.js"

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

const given = (u: unknown): boolean => u !== undefined && u !== null

/** A required name whose absence reads as a wrong type, as it always has ("key must be a string"). */
const nameField = (maxBytes: number) =>
  Schema.propertySignature(Name(maxBytes)).annotations({ missingMessage: () => "must be a string" })

// -- points -----------------------------------------------------------------------------------

const PointTime = Schema.transformOrFail(Schema.Unknown, Schema.String, {
  strict: true,
  decode: (u, _, ast) =>
    typeof u !== "string"
      ? ParseResult.fail(new ParseResult.Type(ast, u, "must be a time string (RFC 3339 or YYYY-MM-DD)"))
      : Either.fromNullable(
        parsePointTime(u),
        () =>
          new ParseResult.Type(ast, u, "must be an RFC 3339 time such as 2025-01-31T00:00:00Z (or a date 2025-01-31)")
      ),
  encode: ParseResult.succeed
}).annotations({ jsonSchema: { type: "string", description: "RFC 3339 with an offset, or a date YYYY-MM-DD" } })

const PointValue = Schema.Struct({ ts: Schema.String, value: Schema.Number })
export type SeriesPointInput = typeof PointValue.Type

/** `[time, number]`; decoded to `{ts, value}` with the time canonical (UTC, milliseconds). */
const Point = checkedFirst(
  RawArray("must be a pair [time, number]").pipe(
    Schema.filter((a) => a.length === 2, { message: () => "must be a pair [time, number]" })
  ),
  Schema.Tuple(PointTime, FiniteNumber)
).pipe(
  Schema.transform(PointValue, {
    strict: true,
    decode: ([ts, value]) => ({ ts, value }),
    encode: ({ ts, value }) => [ts, value] as const
  })
)

/** A series' points: each time once, sorted by time. */
const Points = ArrayWithin(Point, {
  notArray: "must be an array of [time, number] pairs",
  max: MAX_POINTS_PER_SERIES,
  length: (n) =>
    n > MAX_POINTS_PER_SERIES ? `must have at most ${MAX_POINTS_PER_SERIES} points (it has ${n})` : undefined
}).pipe(
  Schema.filter((points) => {
    const at = new Map<string, number>()
    for (const [i, p] of points.entries()) {
      const earlier = at.get(p.ts)
      if (earlier !== undefined) return { path: [i], message: `repeats the time of points[${earlier}] (${p.ts})` }
      at.set(p.ts, i)
    }
    return true
  }),
  Schema.transform(Schema.Array(PointValue), {
    strict: true,
    decode: (points) => [...points].sort((a, b) => (a.ts < b.ts ? -1 : 1)),
    encode: (points) => points
  })
)

// -- anchors ----------------------------------------------------------------------------------

const SELECTOR_SHAPE = `{"entity": {"name": ...}}, {"edge": {"source": ...}} or {"artifact": true}`
const SELECTOR_KINDS = ["entity", "edge", "artifact"] as const

const EntityRef = ObjectOf({
  // checked before the name, as it always was
  type: optional(Name(MAX_NAME_BYTES)),
  name: nameField(MAX_NAME_BYTES)
}, { message: `must be an object {"name": ..., "type"?: ...}` })

const EdgeRef = ObjectOf({
  relation: optional(Name(MAX_NAME_BYTES)),
  target: optional(Name(MAX_NAME_BYTES)),
  source: nameField(MAX_NAME_BYTES)
}, { message: `must be an object {"source": ..., "relation"?: ..., "target"?: ...}` })

/**
 * An anchor selector (contracts section 11). Names are kept as sent (for messages) and
 * matched by the same normalization as entities (the pipeline does that).
 */
export const AnchorSelector = Schema.Union(
  Schema.Struct({ entity: Schema.typeSchema(EntityRef), required: Schema.Boolean }),
  Schema.Struct({ edge: Schema.typeSchema(EdgeRef), required: Schema.Boolean }),
  Schema.Struct({ artifact: Schema.Literal(true), required: Schema.Boolean })
)
export type AnchorSelector = typeof AnchorSelector.Type

const AnchorFields = Schema.Struct({
  required: withDefault(JsonBoolean, () => true),
  entity: optional(EntityRef),
  edge: optional(EdgeRef),
  artifact: optional(Schema.Literal(true).annotations({ message: () => "must be true" }))
}).annotations({
  description: `one of ${SELECTOR_SHAPE}; \`required\` (default true): the request fails when it matches nothing`
})

/** Exactly one kind of selector, checked before its fields. */
const Anchor = checkedFirst(
  RawObject(`must be an object: ${SELECTOR_SHAPE}`).pipe(
    Schema.filter((a) =>
      SELECTOR_KINDS.filter((k) => given(a[k])).length === 1 ||
      `must have exactly one of entity, edge or artifact: ${SELECTOR_SHAPE}`
    )
  ),
  AnchorFields
).pipe(
  Schema.transform(Schema.typeSchema(AnchorSelector), {
    strict: true,
    decode: ({ artifact: _, edge, entity, required }): AnchorSelector =>
      entity !== undefined
        ? { entity, required }
        : edge !== undefined
        ? { edge, required }
        : { artifact: true, required },
    encode: (selector) => selector
  })
)

// -- series -----------------------------------------------------------------------------------

export const SeriesInput = Schema.Struct({
  key: Schema.String,
  /** absent: a stored unit is kept */
  unit: Schema.optional(Schema.String),
  /** in time order, no two at the same time */
  points: Schema.Array(PointValue),
  /** as sent; empty when none were given (the series is anchored to the artifact) */
  anchors: Schema.Array(Schema.typeSchema(AnchorSelector))
})
export type SeriesInput = typeof SeriesInput.Type

const Series = ObjectOf({
  key: nameField(MAX_KEY_BYTES),
  unit: optional(Name(MAX_UNIT_BYTES)),
  points: Schema.propertySignature(Points).annotations({
    missingMessage: () => "must be an array of [time, number] pairs"
  }),
  anchors: withDefault(
    ArrayWithin(Anchor, {
      notArray: "must be an array of selectors",
      max: MAX_ANCHORS_PER_SERIES,
      length: (n) => n > MAX_ANCHORS_PER_SERIES ? `must have at most ${MAX_ANCHORS_PER_SERIES} selectors` : undefined
    }),
    () => []
  )
}, { message: `must be an object {"key": ..., "points": [[time, number], ...]}` })

/** The series of a request: each key once, and at most so many points in all. */
const SeriesList = ArrayWithin(Series, {
  notArray: "must be an array of series",
  max: MAX_SERIES,
  length: (n) => n > MAX_SERIES ? `must have at most ${MAX_SERIES} series` : undefined
}).pipe(
  Schema.filter((list) => {
    const keys = new Map<string, number>()
    for (const [i, s] of list.entries()) {
      const earlier = keys.get(s.key)
      if (earlier !== undefined) {
        return { path: [i, "key"], message: `repeats the key of series[${earlier}] (${JSON.stringify(s.key)})` }
      }
      keys.set(s.key, i)
    }
    const total = list.reduce((n, s) => n + s.points.length, 0)
    return total <= MAX_POINTS_PER_REQUEST ||
      `must have at most ${MAX_POINTS_PER_REQUEST} points in all (it has ${total})`
  })
)

// -- fetch ------------------------------------------------------------------------------------

/** A duration as sent, trimmed (`"30d"`, `"12h"`, `"0"`). */
const Duration = Schema.transformOrFail(Schema.Unknown, Schema.String, {
  strict: true,
  decode: (u, _, ast) =>
    typeof u !== "string"
      ? ParseResult.fail(new ParseResult.Type(ast, u, `must be a duration string such as "30d", "12h" or "0"`))
      : parseDuration(u) === undefined
      ? ParseResult.fail(
        new ParseResult.Type(
          ast,
          u,
          `must be a duration such as "30d", "12h" or "0" (units ms, s, m, h, d, w; at most 100 years)`
        )
      )
      : ParseResult.succeed(u.trim()),
  encode: ParseResult.succeed
}).annotations({ jsonSchema: { type: "string", description: "a number and a unit (ms, s, m, h, d, w), or 0" } })

export const FetchRequest = Schema.Struct({
  /** the providers the LLM may choose from; undefined: all of the server's */
  providers: Schema.optional(Schema.Array(Schema.String)),
  /** as sent (or the default), and in milliseconds */
  before: Schema.String,
  beforeMs: Schema.Number,
  after: Schema.String,
  afterMs: Schema.Number
})
export type FetchRequest = typeof FetchRequest.Type

const FetchFields = ObjectOf({
  providers: optional(
    ArrayWithin(Name(MAX_KEY_BYTES), {
      notArray: "must be an array of provider names",
      min: 1,
      max: MAX_FETCH_PROVIDERS,
      length: (n) =>
        n === 0
          ? "must not be empty (leave it out for all providers)"
          : n > MAX_FETCH_PROVIDERS
          ? `must have at most ${MAX_FETCH_PROVIDERS} names`
          : undefined
    }).pipe(
      Schema.transform(Schema.Array(Schema.String), {
        strict: true,
        decode: (names) => [...new Set(names)],
        encode: (names) => names
      })
    )
  ),
  before: withDefault(Duration, () => DEFAULT_FETCH_BEFORE),
  after: withDefault(Duration, () => DEFAULT_FETCH_AFTER)
}, {
  message: `must be an object {"providers"?: [...], "before"?: "30d", "after"?: "0"}`,
  description: "let the model pick series to fetch for the text's entities, from `before` to `after` the reference time"
})

const decodeFetch = ParseResult.decodeUnknownEither(FetchFields)

/** `fetch`: an object, `true` for the defaults, `false` for none (undefined). */
const Fetch = Schema.transformOrFail(Schema.Unknown, Schema.UndefinedOr(Schema.typeSchema(FetchRequest)), {
  strict: true,
  decode: (u, options) =>
    u === false ? ParseResult.succeed(undefined) : Either.map(decodeFetch(u === true ? {} : u, options), (f) => ({
      ...(f.providers === undefined ? {} : { providers: f.providers }),
      before: f.before,
      beforeMs: parseDuration(f.before)!,
      after: f.after,
      afterMs: parseDuration(f.after)!
    })),
  encode: (f) =>
    ParseResult.succeed(
      f === undefined
        ? false
        : { ...(f.providers === undefined ? {} : { providers: f.providers }), before: f.before, after: f.after }
    )
}).annotations({ [AST.SurrogateAnnotationId]: Schema.Union(Schema.Boolean, FetchFields).ast })

// -- the field --------------------------------------------------------------------------------

const TimeseriesFields = Schema.Struct({
  series: withDefault(SeriesList, () => []),
  fetch: optional(Fetch),
  observations: withDefault(JsonBoolean, () => false)
}).annotations({ description: "series to store and anchor, fetch, observe (docs/TIMESERIES.md)" })

/** The `timeseries` field: series or fetch (or both), checked before the rest. */
export const TimeseriesRequest = checkedFirst(
  RawObject().pipe(
    Schema.filter((t) =>
      given(t.series) || (given(t.fetch) && t.fetch !== false) ||
      `must have series or fetch: {"series": [{"key": ..., "points": [[time, number]]}]} or {"fetch": {}}`
    )
  ),
  TimeseriesFields
)
export type TimeseriesRequest = typeof TimeseriesRequest.Type

const decodeField = decodeRequest(Schema.Struct({ timeseries: required(TimeseriesRequest) }))

/** Decodes the `timeseries` field of a request body on its own; the Left names the field. */
export const validateTimeseries = (value: unknown): Either.Either<TimeseriesRequest, string> =>
  Either.match(decodeField({ timeseries: value }), {
    onLeft: (e) => Either.left(e.message),
    onRight: (r) => Either.right(r.timeseries)
  })
