/**
 * The building blocks of every request schema, and the one formatter that turns a schema's
 * parse error into the wire's `{"error": "..."}` message.
 *
 * A field's schema says what is wrong with a value ("must be a string"); the formatter puts
 * the field's path in front ("items[2].text must be a string"), so one field schema serves at
 * any depth and every door (HTTP, MCP, CLI, library) words a problem the same way.
 */
import { Either, ParseResult, Schema } from "effect"
import { InvalidRequest } from "./Errors.js"
import { parseRfc3339 } from "./time.js"
import { hasLoneSurrogate } from "./unicode.js"

export const MAX_LABEL_BYTES = 128
export const MAX_USER_ID_BYTES = 256
export const DEFAULT_DATASET = "main"

export const utf8Bytes = (s: string): number => Buffer.byteLength(s, "utf8")
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
// eslint-disable-next-line no-control-regex
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/

const BODY_NOT_OBJECT = "the request body must be a JSON object"

/** `items[2].text` */
export const renderPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) => typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`,
    ""
  )

const isRecord = (u: unknown): boolean => typeof u === "object" && u !== null && !Array.isArray(u)

/** The first problem of a parse error as one sentence that names the field. */
export const formatParseError = (error: ParseResult.ParseError): string =>
  formatDecodeIssues(ParseResult.ArrayFormatter.formatErrorSync(error))

/** Decodes a request with its schema; the error is the 400 of the contract. */
export const decodeRequest = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "ignore" })
  return (input: unknown): Either.Either<A, InvalidRequest> => {
    if (!isRecord(input)) return Either.left(new InvalidRequest({ message: BODY_NOT_OBJECT }))
    return Either.mapLeft(decode(input), (e) => new InvalidRequest({ message: formatParseError(e) }))
  }
}

/** The first of a list of issues (a parse error's, or an `HttpApiDecodeError`'s) as one sentence. */
export const formatDecodeIssues = (issues: ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }>) => {
  const first = issues[0]
  if (first === undefined) return "the request is invalid"
  return first.path.length === 0 ? first.message : `${renderPath(first.path)} ${first.message}`
}

// -- field schemas ----------------------------------------------------------------------------

const typeIssue = (ast: Schema.Schema.Any["ast"], actual: unknown, message: string) =>
  ParseResult.fail(new ParseResult.Type(ast, actual, message))

/** A string; `null` where one is required reads as missing. */
export const Str = Schema.String.annotations({
  message: (issue) => (issue as { actual?: unknown }).actual === null ? "is required" : "must be a string"
})

/** A caller-chosen label (dataset, session_id, a key): non-empty, bounded, no control characters. */
export const Label = (maxBytes = MAX_LABEL_BYTES) =>
  Str.pipe(
    Schema.filter((s) => s.length > 0, { message: () => "must not be empty" }),
    Schema.filter((s) => utf8Bytes(s) <= maxBytes, { message: () => `must be at most ${maxBytes} bytes` }),
    Schema.filter((s) => !CONTROL.test(s), { message: () => "must not contain control characters" }),
    Schema.filter((s) => !hasLoneSurrogate(s), { message: () => "must be valid Unicode: it has a lone surrogate" }),
    Schema.annotations({ jsonSchema: { type: "string", minLength: 1, description: `at most ${maxBytes} bytes, no control characters` } })
  )

/** The user who owns the data: required, not blank, at most 256 bytes. */
export const UserId = Str.pipe(
  Schema.filter((s) => s.trim().length > 0, { message: () => "must not be empty" }),
  Schema.compose(Label(MAX_USER_ID_BYTES), { strict: true }),
  Schema.annotations({ description: "the user who owns the dataset", jsonSchema: { type: "string", minLength: 1, maxLength: 256 } })
)

/** A required property: absent and `null` both say "is required". */
export const required = <S extends Schema.Schema.All>(schema: S) =>
  Schema.propertySignature(schema).annotations({ missingMessage: () => "is required" })

/** An optional property; `null` means absent. */
export const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { nullable: true })

/** An optional property with a default; `null` means absent. */
export const withDefault = <S extends Schema.Schema.All>(schema: S, value: () => Schema.Schema.Type<S>) =>
  Schema.optionalWith(schema, { nullable: true, default: value as never })

export const Dataset = Label().annotations({ description: "dataset name, default main" })

/** An RFC 3339 timestamp, decoded to its canonical UTC form. */
export const Rfc3339 = Schema.transformOrFail(Schema.Unknown, Schema.String, {
  strict: true,
  decode: (u, _, ast) =>
    typeof u !== "string"
      ? typeIssue(ast, u, "must be an RFC 3339 timestamp string")
      : Either.fromNullable(parseRfc3339(u), () =>
        new ParseResult.Type(ast, u, "must be an RFC 3339 timestamp such as 2025-01-31T12:00:00Z")),
  encode: ParseResult.succeed
}).annotations({
  jsonSchema: { type: "string", format: "date-time", description: "RFC 3339, e.g. 2025-01-31T12:00:00Z" }
})

/** JSON true/false; in a URL also true/false/1/0 (and a bare flag). */
export const Flag = Schema.transformOrFail(Schema.Unknown, Schema.Boolean, {
  strict: true,
  decode: (u, _, ast) => {
    if (typeof u === "boolean") return ParseResult.succeed(u)
    if (typeof u === "string") {
      const v = u.trim().toLowerCase()
      if (v === "true" || v === "1" || v === "") return ParseResult.succeed(true)
      if (v === "false" || v === "0") return ParseResult.succeed(false)
    }
    return typeIssue(ast, u, "must be a boolean")
  },
  encode: ParseResult.succeed
}).annotations({ jsonSchema: { type: "boolean" } })

/** JSON true/false only. */
export const JsonBoolean = Schema.Boolean.annotations({ message: () => "must be a boolean" })

/** An integer in [min, max]; in a URL its digits. */
export const IntegerIn = (min: number, max: number) =>
  Schema.transformOrFail(Schema.Unknown, Schema.Number, {
    strict: true,
    decode: (u, _, ast) => {
      const n = typeof u === "string" && /^\s*-?\d+\s*$/.test(u) ? Number(u) : u
      return typeof n === "number" && Number.isInteger(n) && n >= min && n <= max
        ? ParseResult.succeed(n)
        : typeIssue(ast, u, `must be an integer from ${min} to ${max}`)
    },
    encode: ParseResult.succeed
  }).annotations({ jsonSchema: { type: "integer", minimum: min, maximum: max } })

/** One of `values`, matched after trimming and lower-casing. */
export const OneOf = <const L extends ReadonlyArray<string>>(values: L, message = `must be one of ${values.join(", ")}`) =>
  Schema.transformOrFail(Schema.Unknown, Schema.Literal(...values), {
    strict: true,
    decode: (u, _, ast) => {
      const v = typeof u === "string" ? u.trim().toLowerCase() : undefined
      return v !== undefined && (values as ReadonlyArray<string>).includes(v)
        ? ParseResult.succeed(v as L[number])
        : typeIssue(ast, u, message)
    },
    encode: ParseResult.succeed
  }).annotations({ jsonSchema: { type: "string", enum: [...values] } })

/** Why `text` cannot be stored as sent (NUL: PostgreSQL text cannot hold it), or undefined. */
export const unstorableText = (text: string): string | undefined =>
  text.includes("\u0000")
    ? "must not contain NUL characters (\\u0000)"
    : hasLoneSurrogate(text)
    ? "must be valid Unicode: it has a lone surrogate (an unpaired \\uD800-\\uDFFF escape)"
    : undefined

/** A text to store or search for: not blank, at most `maxBytes`, storable. */
export const Text = (maxBytes: number, tooLong = `must be at most ${maxBytes} bytes`) =>
  Str.pipe(
    Schema.filter((s) => s.trim().length > 0, { message: () => "must not be empty" }),
    Schema.filter((s) => utf8Bytes(s) <= maxBytes, { message: () => tooLong }),
    Schema.filter((s) => unstorableText(s) ?? true),
    Schema.annotations({ jsonSchema: { type: "string", minLength: 1, description: `at most ${maxBytes} bytes` } })
  )

/** A model name: at most 128 bytes, no whitespace or control characters. */
export const ModelName = Str.pipe(
  Schema.filter((s) => utf8Bytes(s) <= MAX_LABEL_BYTES, { message: () => `must be at most ${MAX_LABEL_BYTES} bytes` }),
  Schema.filter((s) => !WHITESPACE_OR_CONTROL.test(s) && !hasLoneSurrogate(s), {
    message: () => "must not contain whitespace, control characters or lone surrogates"
  }),
  Schema.annotations({ jsonSchema: { type: "string", maxLength: MAX_LABEL_BYTES } })
)

/** An array of `item`, with a length the messages name. */
export const ArrayOf = <S extends Schema.Schema.Any>(item: S, bounds: { readonly min?: number; readonly max?: number } = {}) => {
  const min = bounds.min ?? 0
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER
  const size = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `${min} to ${max}`
  return Schema.Array(item).annotations({ message: () => "must be an array" }).pipe(
    Schema.filter((a) => a.length >= min && a.length <= max, { message: () => `must have ${size} items` })
  )
}

/** A nested object; its fields report their own problems. */
export const Obj = <F extends Schema.Struct.Fields>(fields: F) =>
  Schema.Struct(fields).annotations({ message: () => "must be an object" })
