/**
 * Reading JSON out of a model's answer. Models wrap JSON in code fences or prose, and an
 * answer cut by the output limit is incomplete: both must be told apart from a real answer.
 */
import { Either, ParseResult, Schema } from "effect"

const THINK_BLOCK = /<think(?:ing)?>([\s\S]*?)<\/think(?:ing)?>/gi
const THINK_OPEN = /^\s*<think(?:ing)?>/i
const THINK_CLOSE = /<\/think(?:ing)?>/i

/**
 * A model's answer without its visible reasoning (DeepSeek R1, Qwen3, ... write it in
 * `<think>...</think>`): every closed block is removed; an unclosed block at the start is
 * reasoning to the end (the answer is then empty); a lone `</think>` (the server's chat template
 * opened the block in the prompt) ends reasoning that began with the answer. `thinking` is what
 * was removed, trimmed, or undefined when there was none.
 */
export const splitThinking = (text: string): { readonly answer: string; readonly thinking: string | undefined } => {
  const thoughts: Array<string> = []
  let rest = text
  const lone = THINK_CLOSE.exec(rest)
  if (lone !== null && !/<think(?:ing)?>/i.test(rest.slice(0, lone.index))) {
    thoughts.push(rest.slice(0, lone.index))
    rest = rest.slice(lone.index + lone[0].length)
  }
  rest = rest.replace(THINK_BLOCK, (_, inside: string) => {
    thoughts.push(inside)
    return ""
  })
  const open = THINK_OPEN.exec(rest)
  if (open !== null) {
    thoughts.push(rest.slice(open[0].length))
    rest = ""
  }
  if (thoughts.length === 0) return { answer: text, thinking: undefined }
  return { answer: rest.trim(), thinking: thoughts.map((t) => t.trim()).filter((t) => t !== "").join("\n\n") }
}

/**
 * The end (exclusive) of the brace-balanced span starting at `start` (a `{`), honouring
 * strings and escapes; undefined if the text ends first.
 */
const balancedEnd = (text: string, start: number): number | undefined => {
  let depth = 0
  let inString = false
  for (let i = start; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === "\\") i++
      else if (c === "\"") inString = false
    } else if (c === "\"") {
      inString = true
    } else if (c === "{") {
      depth++
    } else if (c === "}") {
      depth--
      if (depth === 0) return i + 1
    }
  }
  return undefined
}

const firstJsonObjectWithValue = (text: string): { readonly json: string; readonly value: unknown } | undefined => {
  let from = 0
  for (;;) {
    const start = text.indexOf("{", from)
    if (start < 0) return undefined
    const end = balancedEnd(text, start)
    // Unclosed: everything after it is inside it, so there is no later top-level object
    // (this is how a truncated answer looks).
    if (end === undefined) return undefined
    const json = text.slice(start, end)
    try {
      const value: unknown = JSON.parse(json)
      return { json, value }
    } catch {
      // Balanced but not JSON (prose such as "{name}"): look after it, not inside it,
      // so that an object nested in a broken one is never taken for the answer.
      from = end
    }
  }
}

/**
 * The first complete top-level JSON object in `text` (code fences and prose around it
 * are tolerated), or undefined if there is none (e.g. the answer was truncated).
 */
export const firstJsonObject = (text: string): string | undefined => firstJsonObjectWithValue(text)?.json

/** Deeper than any stage's answer form needs; deeper values are refused before decoding. */
export const MAX_ANSWER_DEPTH = 32

/** Whether `value` nests arrays and objects more than `max` levels (iterative: no recursion). */
const nestedDeeperThan = (value: unknown, max: number): boolean => {
  const stack: Array<readonly [unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (typeof v !== "object" || v === null) continue
    if (depth >= max) return true
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1])
  }
  return false
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * A model's string made storable: a lone surrogate becomes U+FFFD (what SQLite and PostgreSQL
 * would store, so a name read back equals the name written) and NUL is dropped (PostgreSQL
 * text cannot hold it).
 */
export const storableText = (text: string): string => text.replace(LONE_SURROGATE, "\ufffd").replace(/\u0000/g, "")

/** `storableText` applied to every string (keys included) of a parsed JSON value. */
const storableJson = (value: unknown): unknown => {
  if (typeof value === "string") return storableText(value)
  if (Array.isArray(value)) return value.map(storableJson)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(k), storableJson(v)]))
  }
  return value
}

/** An array schema whose type error reads "`path` must be an array". */
export const jsonArray = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Array(item).annotations({ message: () => "must be an array" })

/** A struct schema whose type error reads "`path` must be an object" (field errors keep theirs). */
export const jsonObject = <F extends Schema.Struct.Fields>(fields: F) =>
  Schema.Struct(fields).annotations({ message: () => "must be an object" })

const PREVIEW_CHARS = 80

const preview = (text: string): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  if (flat === "") return "the answer is empty"
  return JSON.stringify(flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS)}...` : flat)
}

const renderPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join("")

const lowerFirst = (text: string): string => text.charAt(0).toLowerCase() + text.slice(1)

/** One sentence for the first problem of a decode failure, naming where it is. */
export const describeParseError = (error: ParseResult.ParseError): string => {
  let issue: ParseResult.ArrayFormatterIssue | undefined
  try {
    issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  } catch {
    // the formatter prints the offending value recursively: a deeply nested one overflows the stack
    return "does not match the expected form"
  }
  if (issue === undefined) return "does not match the expected form"
  if (issue.path.length === 0) return lowerFirst(issue.message)
  // A custom missingMessage ("missing array `edges`") already names the field.
  if (issue._tag === "Missing" && issue.message !== "is missing") return issue.message
  return `\`${renderPath(issue.path)}\` ${lowerFirst(issue.message)}`
}

/**
 * Finds the first JSON object of a model answer and decodes it with `schema`, its strings made
 * storable first (storableText). The Left is one clear sentence that starts with `what` (the
 * stage name), e.g. "extract_graph answer is not JSON: ..." or "extract_graph answer is
 * invalid: missing array `edges`"; an object nested deeper than MAX_ANSWER_DEPTH is invalid.
 */
export const parseModelJson = <A, I>(
  schema: Schema.Schema<A, I, never>,
  text: string,
  what: string
): Either.Either<A, string> => {
  // a `{` in the model's reasoning must not be taken for the answer
  const found = firstJsonObjectWithValue(splitThinking(text).answer)
  if (found === undefined) {
    return Either.left(`${what} answer is not JSON: no complete JSON object in ${preview(text)}`)
  }
  if (nestedDeeperThan(found.value, MAX_ANSWER_DEPTH)) {
    return Either.left(`${what} answer is invalid: it is nested more than ${MAX_ANSWER_DEPTH} levels deep`)
  }
  return Schema.decodeUnknownEither(schema, { errors: "first" })(storableJson(found.value)).pipe(
    Either.mapLeft((error) => `${what} answer is invalid: ${describeParseError(error)}`)
  )
}
