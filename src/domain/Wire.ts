/**
 * The building blocks of every request schema, and the one formatter that turns a schema's
 * parse error into the wire's `{"error": "..."}` message.
 *
 * A field's schema says what is wrong with a value ("must be a string"); the formatter puts
 * the field's path in front ("items[2].text must be a string"), so one field schema serves at
 * any depth and every door (HTTP, MCP, CLI, library) words a problem the same way.
 */
import { Either, Option, ParseResult, Schema, SchemaAST as AST } from "effect"
import { closest } from "./didYouMean.js"
import { InvalidRequest } from "./Errors.js"
import { parseRfc3339 } from "./time.js"
import { hasLoneSurrogate } from "./unicode.js"

export const MAX_LABEL_BYTES = 128
export const MAX_USER_ID_BYTES = 256
export const DEFAULT_DATASET = "main"

export const utf8Bytes = (s: string): number => Buffer.byteLength(s, "utf8")

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/

/** CONTROL as the JSON Schema `pattern` of a field that refuses it (ECMA-262 syntax, as JSON Schema's). */
const NO_CONTROL_PATTERN = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"

export const BODY_NOT_OBJECT = "the request body must be a JSON object"

/** `items[2].text` */
export const renderPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) => typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`,
    ""
  )

const isRecord = (u: unknown): boolean => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The issue with every composite cut to its first member: the formatter words every issue it is
 * given, and the other members of a failed union (`null` of a nullable field) would describe the
 * value sent, which overflows the stack for a deeply nested one.
 */
const firstBranch = (issue: ParseResult.ParseIssue): ParseResult.ParseIssue => {
  switch (issue._tag) {
    case "Composite": {
      const first = (Array.isArray(issue.issues) ? issue.issues[0] : issue.issues) as ParseResult.ParseIssue
      return new ParseResult.Composite(issue.ast, issue.actual, firstBranch(first), issue.output)
    }
    case "Pointer":
      return new ParseResult.Pointer(issue.path, issue.actual, firstBranch(issue.issue))
    case "Refinement":
      return new ParseResult.Refinement(issue.ast, issue.actual, issue.kind, firstBranch(issue.issue))
    case "Transformation":
      return new ParseResult.Transformation(issue.ast, issue.actual, issue.kind, firstBranch(issue.issue))
    default:
      return issue
  }
}

/** The first problem of a parse error as one sentence that names the field. */
export const formatParseError = (error: ParseResult.ParseError): string =>
  formatDecodeIssues(ParseResult.ArrayFormatter.formatIssueSync(firstBranch(error.issue)))

/** Decodes a request with its schema; the error is the 400 of the contract. */
export const decodeRequest = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "error" })
  return (input: unknown): Either.Either<A, InvalidRequest> => {
    if (!isRecord(input)) return Either.left(new InvalidRequest({ message: BODY_NOT_OBJECT }))
    return Either.mapLeft(decode(input), (e) => new InvalidRequest({ message: formatParseError(e) }))
  }
}

/** The first of a list of issues (a parse error's, or an `HttpApiDecodeError`'s) as one sentence. */
export const formatDecodeIssues = (
  issues: ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }>
) => {
  const first = issues[0]
  if (first === undefined) return "the request is invalid"
  const unknown = unknownField(first.path, first.message)
  if (unknown !== undefined) return unknown
  return first.path.length === 0 ? first.message : `${renderPath(first.path)} ${first.message}`
}

/**
 * A field the contract does not have (Schema's "is unexpected, expected: ..."), named with the
 * closest known one: `unknown field "refrence_time" (did you mean "reference_time"?)`. A typo
 * must not silently do nothing (docs/DECISIONS.md, Refusing what it should).
 */
const unknownField = (path: ReadonlyArray<PropertyKey>, message: string): string | undefined => {
  const m = /^is unexpected, expected: (.*)$/.exec(message)
  if (m === null || path.length === 0) return undefined
  const known = [...m[1]!.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((k) => k[1]!)
  const name = String(path[path.length - 1])
  const guess = closest(name, known)
  const at = path.slice(0, -1)
  return `unknown field ${JSON.stringify(renderPath(path))}` +
    (guess === undefined ? "" : ` (did you mean ${JSON.stringify(renderPath([...at, guess]))}?)`)
}

/** Decoding refuses fields the contract does not have, wherever the schema is decoded (HTTP, MCP, the library). */
export const STRICT = { parseOptions: { onExcessProperty: "error" } } as const

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
    Schema.annotations({
      // bytes cannot be said in JSON Schema: maxLength (characters) is the bound every valid value meets
      jsonSchema: {
        type: "string",
        minLength: 1,
        maxLength: maxBytes,
        pattern: NO_CONTROL_PATTERN,
        description: `at most ${maxBytes} bytes (UTF-8), no control characters`
      }
    })
  )

/** The user who owns the data: required, not blank, at most 256 bytes. */
export const UserId = Str.pipe(
  Schema.filter((s) => s.trim().length > 0, { message: () => "must not be empty" }),
  Schema.compose(Label(MAX_USER_ID_BYTES), { strict: true }),
  Schema.annotations({
    description: "the user who owns the dataset",
    jsonSchema: {
      type: "string",
      minLength: 1,
      maxLength: MAX_USER_ID_BYTES,
      pattern: NO_CONTROL_PATTERN,
      description:
        `the user who owns the dataset: at most ${MAX_USER_ID_BYTES} bytes (UTF-8; maxLength counts characters), no control characters`
    }
  })
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

/** JSON true/false; in a URL the words true and false. */
export const Flag = Schema.transformOrFail(Schema.Unknown, Schema.Boolean, {
  strict: true,
  // JSON true/false; a URL's words were read as a boolean by UrlParams already
  decode: (u, _, ast) => typeof u === "boolean" ? ParseResult.succeed(u) : typeIssue(ast, u, "must be a boolean"),
  encode: ParseResult.succeed
}).annotations({ jsonSchema: { type: "boolean" } })

/** JSON true/false only. */
export const JsonBoolean = Schema.Boolean.annotations({ message: () => "must be a boolean" })

/** An integer in [min, max]; in a URL its digits. */
export const IntegerIn = (min: number, max: number) =>
  Schema.transformOrFail(Schema.Unknown, Schema.Number, {
    strict: true,
    // a JSON number; a URL's digits were read as one by UrlParams already ("10" in JSON is a 400)
    decode: (u, _, ast) =>
      typeof u === "number" && Number.isInteger(u) && u >= min && u <= max
        ? ParseResult.succeed(u)
        : typeIssue(ast, u, `must be an integer from ${min} to ${max}`),
    encode: ParseResult.succeed
  }).annotations({ jsonSchema: { type: "integer", minimum: min, maximum: max } })

/** One of `values`, exactly as the document's enum spells it (a validating proxy agrees). */
export const OneOf = <const L extends ReadonlyArray<string>>(
  values: L,
  message = `must be one of ${values.join(", ")}`
) =>
  Schema.transformOrFail(Schema.Unknown, Schema.Literal(...values), {
    strict: true,
    decode: (u, _, ast) => {
      return typeof u === "string" && (values as ReadonlyArray<string>).includes(u)
        ? ParseResult.succeed(u as L[number])
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
  Schema.annotations({
    jsonSchema: {
      type: "string",
      maxLength: MAX_LABEL_BYTES,
      pattern: "^[^\\s\\u0000-\\u001f\\u007f-\\u009f]*$",
      description: `at most ${MAX_LABEL_BYTES} bytes (UTF-8), no whitespace or control characters`
    }
  })
)

/** An array of `item`, with a length the messages name. */
export const ArrayOf = <S extends Schema.Schema.Any>(
  item: S,
  bounds: { readonly min?: number; readonly max?: number } = {}
) => {
  const min = bounds.min ?? 0
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER
  const size = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `${min} to ${max}`
  return Schema.Array(item).annotations({ message: () => "must be an array" }).pipe(
    Schema.filter((a) => a.length >= min && a.length <= max, { message: () => `must have ${size} items` })
  )
}

// -- decoding in steps ------------------------------------------------------------------------

/**
 * `schema`, decoded after `first`, a check of the raw value that decides how the rest is read
 * (an array's length, which fields go together): its problem is reported before any part's own,
 * and a value it refuses is not decoded part by part first. The OpenAPI document shows `schema`,
 * so annotate `schema` (description, examples), not the result.
 */
export const checkedFirst = <S extends Schema.Schema.Any>(first: Schema.Schema<any, any, never>, schema: S) =>
  Schema.compose(first, schema, { strict: false }).annotations({ [AST.SurrogateAnnotationId]: schema.ast })

/** A JSON object as sent, any keys; `message` when it is not an object. */
export const RawObject = (message = "must be an object") =>
  Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ message: () => message })

/** A JSON array as sent; `message` when it is not an array. */
export const RawArray = (message = "must be an array") =>
  Schema.Array(Schema.Unknown).annotations({ message: () => message })

/**
 * An array of `item` whose length is checked before its items, so an array over its limit is
 * refused for that, not decoded item by item. `length` words a wrong length (undefined: fine).
 */
export const ArrayWithin = <S extends Schema.Schema.Any>(item: S, rules: {
  readonly notArray: string
  readonly min?: number
  readonly max?: number
  readonly length: (n: number) => string | undefined
}) => {
  const documented = Schema.Array(item).annotations({
    jsonSchema: {
      ...(rules.min === undefined ? {} : { minItems: rules.min }),
      ...(rules.max === undefined ? {} : { maxItems: rules.max })
    }
  })
  return checkedFirst(
    RawArray(rules.notArray).pipe(Schema.filter((a) => rules.length(a.length) ?? true)),
    Schema.Array(item)
  ).annotations({ [AST.SurrogateAnnotationId]: documented.ast })
}

// -- more field schemas -----------------------------------------------------------------------

/**
 * A nested object whose fields report their own problems, and `message` when it is not an
 * object. Unlike a message on a struct, this also holds for a struct with optional or
 * defaulted fields (a transformation, whose "not an object" comes from its encoded side).
 */
export const ObjectOf = <F extends Schema.Struct.Fields>(
  fields: F,
  docs: { readonly message?: string; readonly description?: string } = {}
) =>
  checkedFirst(
    RawObject(docs.message),
    Schema.Struct(fields).annotations(docs.description === undefined ? {} : { description: docs.description })
  )

/** A name in a request (a series key, a unit, an entity): not blank, bounded, no control characters, valid Unicode. */
export const Name = (maxBytes: number) =>
  Schema.String.annotations({ message: () => "must be a string" }).pipe(
    Schema.filter((s) => s.trim().length > 0, { message: () => "must not be empty" }),
    Schema.filter((s) => utf8Bytes(s) <= maxBytes, { message: () => `must be at most ${maxBytes} bytes` }),
    Schema.filter((s) => !CONTROL.test(s), { message: () => "must not contain control characters" }),
    // two names that differ only in a lone surrogate would be one once stored (it becomes U+FFFD)
    Schema.filter((s) => !hasLoneSurrogate(s), { message: () => "must be valid Unicode: it has a lone surrogate" }),
    Schema.annotations({ jsonSchema: { type: "string", minLength: 1, description: `at most ${maxBytes} bytes` } })
  )

/** A JSON number that is finite (1e400 parses as Infinity). */
export const FiniteNumber = Schema.Number.annotations({ message: () => "must be a finite number" }).pipe(
  Schema.filter(Number.isFinite, { message: () => "must be a finite number" }),
  Schema.annotations({ jsonSchema: { type: "number" } })
)

/**
 * A map from the names in `keys` to `value` (`models`: stage to model name), read in the order
 * sent: a key that is not one of `keys` is named by `unknownKey`, and a value for which
 * `isDefault` holds asks for the default (it is left out).
 */
export const KeyedBy = <const K extends string, S extends Schema.Schema.AnyNoContext>(
  keys: ReadonlyArray<K>,
  value: S,
  rules: {
    readonly notAnObject: string
    readonly unknownKey: string
    readonly isDefault?: (u: unknown) => boolean
    readonly description: string
  }
) => {
  const Decoded = Schema.partialWith(
    Schema.Struct(
      Object.fromEntries(keys.map((k) => [k, Schema.typeSchema(value)])) as {
        readonly [k in K]: Schema.SchemaClass<Schema.Schema.Type<S>>
      }
    ),
    { exact: true }
  )
  const documented = Schema.partialWith(
    Schema.Struct(
      Object.fromEntries(keys.map((k) => [k, rules.isDefault === undefined ? value : Schema.NullOr(value)]))
    ),
    { exact: true }
  ).annotations({ description: rules.description })
  const known: ReadonlySet<string> = new Set(keys)
  const decodeValue = ParseResult.decodeUnknownEither(value)
  const encodeValue = ParseResult.encodeUnknownEither(value)
  const each = (
    input: Readonly<Record<string, unknown>>,
    step: (u: unknown) => Either.Either<unknown, ParseResult.ParseIssue>,
    ast: AST.AST
  ): Either.Either<Record<string, unknown>, ParseResult.ParseIssue> => {
    const out: Record<string, unknown> = {}
    for (const [key, v] of Object.entries(input)) {
      if (!known.has(key)) {
        return Either.left(new ParseResult.Pointer(key, input, new ParseResult.Type(ast, v, rules.unknownKey)))
      }
      if (rules.isDefault?.(v) === true) continue
      const r = step(v)
      if (Either.isLeft(r)) return Either.left(new ParseResult.Pointer(key, input, r.left))
      out[key] = r.right
    }
    return Either.right(out)
  }
  return Schema.transformOrFail(RawObject(rules.notAnObject), Decoded, {
    strict: false,
    decode: (input, options, ast) => each(input, (v) => decodeValue(v, options), ast),
    encode: (input, options, ast) => each(input, (v) => encodeValue(v, options), ast)
  }).annotations({ [AST.SurrogateAnnotationId]: documented.ast })
}

/** A row id in a path (`/runs/12`): 1 to 15 digits. */
export const PathId = Schema.transformOrFail(Schema.String, Schema.Number, {
  strict: true,
  decode: (s, _, ast) =>
    /^\d{1,15}$/.test(s) ? ParseResult.succeed(Number(s)) : typeIssue(ast, s, "must be a positive integer"),
  encode: (n) => ParseResult.succeed(String(n))
}).annotations({ jsonSchema: { pattern: "^[0-9]{1,15}$" } })

/** A URL parameter that must be given: absent or empty (blank too, with `trim`) "is required". */
export const RequiredParam = (options: {
  readonly trim?: boolean
  readonly description: string
  readonly examples?: ReadonlyArray<string>
}) =>
  Schema.propertySignature(
    Schema.String.pipe(
      Schema.filter((s) => (options.trim === true ? s.trim() : s).length > 0, { message: () => "is required" }),
      Schema.annotations({
        jsonSchema: {
          type: "string",
          minLength: 1,
          description: options.description,
          ...(options.examples === undefined ? {} : { examples: options.examples })
        }
      })
    )
  ).annotations({ missingMessage: () => "is required" })

// -- exact values, documentation, URL parameters ----------------------------------------------

/** Exactly one of `values`, as sent (no trimming or case folding, unlike `OneOf`). */
export const ExactlyOneOf = <const L extends ReadonlyArray<string>>(
  values: L,
  message = `must be one of ${values.join(", ")}`
) =>
  Schema.transformOrFail(Schema.Unknown, Schema.Literal(...values), {
    strict: true,
    decode: (u, _, ast) =>
      typeof u === "string" && (values as ReadonlyArray<string>).includes(u)
        ? ParseResult.succeed(u as L[number])
        : typeIssue(ast, u, message),
    encode: ParseResult.succeed
  }).annotations({ jsonSchema: { type: "string", enum: [...values] } })

/**
 * `schema` with a description in the OpenAPI document. The field schemas carry a `jsonSchema`
 * annotation, which would hide a plain `description`, so the description goes into it.
 */
export const documented = <S extends Schema.Schema.Any>(schema: S, description: string): S => {
  const own = AST.getJSONSchemaAnnotation(schema.ast)
  if (Option.isNone(own)) return schema.annotations({ description }) as S
  const detail = (own.value as { readonly description?: unknown }).description
  return schema.annotations({
    jsonSchema: { ...own.value, description: typeof detail === "string" ? `${description}; ${detail}` : description }
  }) as S
}
