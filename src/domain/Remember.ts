/**
 * The remember request: validation of the wire body into a normalized request, with an
 * error message that names the field (spec/contracts.md section 9). Validation is a plain
 * function so every rule is unit-tested and runs before anything is queued.
 */
import { Either } from "effect"
import { InvalidRequest } from "./Errors.js"
import { validateImage, type ValidImage } from "./Image.js"
import {
  MODEL_STAGES,
  type ModelStage,
  REASONING_LEVELS,
  REASONING_STAGES,
  type ReasoningLevel,
  type ReasoningStage,
  REQUEST_KINDS,
  type RequestKind
} from "./Stages.js"
import { parseRfc3339 } from "./time.js"
import { type TimeseriesRequest, validateTimeseries } from "./Timeseries.js"
import { hasLoneSurrogate } from "./unicode.js"

export const MAX_TEXT_BYTES = 1024 * 1024
export const MAX_LABEL_BYTES = 128
export const MAX_USER_ID_BYTES = 256
export const DEFAULT_DATASET = "main"

export interface RememberRequest {
  readonly user_id: string
  readonly dataset: string
  readonly text?: string | undefined
  /** base64 as sent */
  readonly image?: string | undefined
  /** the decoded, checked image (set by validation; the image pipeline decodes `image` without it) */
  readonly image_file?: ValidImage | undefined
  readonly kind: RequestKind
  /** canonical RFC 3339; absent = the time the run starts */
  readonly reference_time?: string | undefined
  readonly session_id?: string | undefined
  readonly models: Partial<Record<ModelStage, string>>
  readonly reasoning: Partial<Record<ReasoningStage, ReasoningLevel>>
  readonly web_search: boolean
  /** series to store and anchor, fetch, observe (spec/contracts.md section 11) */
  readonly timeseries?: TimeseriesRequest | undefined
}

const utf8Bytes = (s: string): number => Buffer.byteLength(s, "utf8")

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/
export { hasLoneSurrogate }

/** Why `text` cannot be stored as sent (NUL: PostgreSQL text cannot hold it), or undefined. */
export const unstorableText = (field: string, text: string): string | undefined =>
  text.includes("\u0000")
    ? `${field} must not contain NUL characters (\\u0000)`
    : hasLoneSurrogate(text)
    ? `${field} must be valid Unicode: it has a lone surrogate (an unpaired \\uD800-\\uDFFF escape)`
    : undefined

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

class Invalid {
  constructor(readonly message: string) {}
}
const fail = (message: string): never => {
  throw new Invalid(message)
}

/** A caller-chosen label (session_id, dataset): non-empty, at most 128 bytes, no control characters. */
const label = (field: string, value: unknown, maxBytes = MAX_LABEL_BYTES): string => {
  if (typeof value !== "string") return fail(`${field} must be a string`)
  if (value.length === 0) return fail(`${field} must not be empty`)
  if (utf8Bytes(value) > maxBytes) return fail(`${field} must be at most ${maxBytes} bytes`)
  if (CONTROL.test(value)) return fail(`${field} must not contain control characters`)
  if (hasLoneSurrogate(value)) return fail(`${field} must be valid Unicode: it has a lone surrogate`)
  return value
}

const parseModels = (value: unknown): Partial<Record<ModelStage, string>> => {
  if (value === undefined || value === null) return {}
  if (!isObject(value)) return fail("models must be an object mapping a stage to a model name")
  const out: Partial<Record<ModelStage, string>> = {}
  for (const [stage, model] of Object.entries(value)) {
    if (!(MODEL_STAGES as ReadonlyArray<string>).includes(stage)) {
      return fail(`models.${stage} is not a stage that runs a model (one of ${MODEL_STAGES.join(", ")})`)
    }
    if (model === null || model === "") continue // the default model
    if (typeof model !== "string") return fail(`models.${stage} must be a string`)
    if (utf8Bytes(model) > MAX_LABEL_BYTES) return fail(`models.${stage} must be at most ${MAX_LABEL_BYTES} bytes`)
    if (WHITESPACE_OR_CONTROL.test(model) || hasLoneSurrogate(model)) {
      return fail(`models.${stage} must not contain whitespace, control characters or lone surrogates`)
    }
    out[stage as ModelStage] = model
  }
  return out
}

const parseReasoning = (value: unknown): Partial<Record<ReasoningStage, ReasoningLevel>> => {
  if (value === undefined || value === null) return {}
  if (!isObject(value)) return fail("reasoning must be an object mapping a stage to a level")
  const out: Partial<Record<ReasoningStage, ReasoningLevel>> = {}
  for (const [stage, level] of Object.entries(value)) {
    if (!(REASONING_STAGES as ReadonlyArray<string>).includes(stage)) {
      return fail(`reasoning.${stage} is not a stage that can reason (one of ${REASONING_STAGES.join(", ")})`)
    }
    const normalized = typeof level === "string" ? level.trim().toLowerCase() : level
    if (typeof normalized !== "string" || !(REASONING_LEVELS as ReadonlyArray<string>).includes(normalized)) {
      return fail(`reasoning.${stage} must be one of ${REASONING_LEVELS.join(", ")}`)
    }
    out[stage as ReasoningStage] = normalized as ReasoningLevel
  }
  return out
}

const parse = (body: unknown): RememberRequest => {
  if (!isObject(body)) return fail("the request body must be a JSON object")

  const user_id = body.user_id
  if (user_id === undefined || user_id === null) return fail("user_id is required")
  if (typeof user_id !== "string") return fail("user_id must be a string")
  if (user_id.trim().length === 0) return fail("user_id must not be empty")
  label("user_id", user_id, MAX_USER_ID_BYTES)

  const hasImage = body.image !== undefined && body.image !== null
  const hasText = body.text !== undefined && body.text !== null
  let image_file: ValidImage | undefined
  if (hasImage) {
    if (typeof body.image !== "string" || body.image.length === 0) {
      return fail("image must be a non-empty base64 string")
    }
    if (hasText) return fail("text must not be given together with image")
    if (body.kind !== undefined && body.kind !== null) return fail("kind must not be given together with image")
    if (body.timeseries !== undefined && body.timeseries !== null) {
      return fail("timeseries must not be given together with image")
    }
    if (body.web_search !== undefined && body.web_search !== null && body.web_search !== false) {
      return fail("web_search must not be given together with image")
    }
    const checked = validateImage(body.image)
    if (Either.isLeft(checked)) return fail(checked.left)
    image_file = checked.right
  } else {
    if (!hasText) return fail("text is required (or image)")
    if (typeof body.text !== "string") return fail("text must be a string")
    if (body.text.trim().length === 0) return fail("text must not be empty")
    if (utf8Bytes(body.text) > MAX_TEXT_BYTES) return fail(`text must be at most ${MAX_TEXT_BYTES} bytes (1 MiB)`)
    const unstorable = unstorableText("text", body.text)
    if (unstorable !== undefined) return fail(unstorable)
  }

  const dataset = body.dataset === undefined || body.dataset === null ? DEFAULT_DATASET : label("dataset", body.dataset)

  let kind: RequestKind = "knowledge"
  if (body.kind !== undefined && body.kind !== null) {
    const k = typeof body.kind === "string" ? body.kind.trim().toLowerCase() : undefined
    if (k === undefined || !(REQUEST_KINDS as ReadonlyArray<string>).includes(k)) {
      return fail(`kind must be one of ${REQUEST_KINDS.join(", ")}`)
    }
    kind = k as RequestKind
  }

  let reference_time: string | undefined
  if (body.reference_time !== undefined && body.reference_time !== null) {
    if (typeof body.reference_time !== "string") return fail("reference_time must be an RFC 3339 timestamp string")
    reference_time = parseRfc3339(body.reference_time)
    if (reference_time === undefined) {
      return fail("reference_time must be an RFC 3339 timestamp such as 2025-01-31T12:00:00Z")
    }
  }

  const session_id = body.session_id === undefined || body.session_id === null
    ? undefined
    : label("session_id", body.session_id)

  let web_search = false
  if (body.web_search !== undefined && body.web_search !== null) {
    if (typeof body.web_search !== "boolean") return fail("web_search must be a boolean")
    web_search = body.web_search
  }

  let timeseries: TimeseriesRequest | undefined
  if (body.timeseries !== undefined && body.timeseries !== null) {
    const checked = validateTimeseries(body.timeseries)
    if (Either.isLeft(checked)) return fail(checked.left)
    timeseries = checked.right
  }

  return {
    user_id,
    dataset,
    text: hasText ? (body.text as string) : undefined,
    image: hasImage ? (body.image as string) : undefined,
    image_file,
    kind,
    reference_time,
    session_id,
    models: parseModels(body.models),
    reasoning: parseReasoning(body.reasoning),
    web_search,
    timeseries
  }
}

/** Validates a decoded JSON body; unknown fields are ignored. */
export const validateRememberRequest = (body: unknown): Either.Either<RememberRequest, InvalidRequest> => {
  try {
    return Either.right(parse(body))
  } catch (e) {
    if (e instanceof Invalid) return Either.left(new InvalidRequest({ message: e.message }))
    throw e
  }
}

/** What the run log keeps of a request: everything but the text and the image (its type, size and hash). */
export const runParams = (request: RememberRequest): Record<string, unknown> => ({
  kind: request.image === undefined ? request.kind : "image",
  ...(request.session_id === undefined ? {} : { session_id: request.session_id }),
  ...(request.reference_time === undefined ? {} : { reference_time: request.reference_time }),
  models: request.models,
  reasoning: request.reasoning,
  web_search: request.web_search,
  timeseries: request.timeseries === undefined
    ? false
    : {
      series: request.timeseries.series.length,
      points: request.timeseries.series.reduce((n, s) => n + s.points.length, 0),
      fetch: request.timeseries.fetch !== undefined,
      observations: request.timeseries.observations
    },
  ...(request.text === undefined ? {} : { text_length: request.text.length, text_bytes: utf8Bytes(request.text) }),
  ...(request.image_file !== undefined
    ? {
      media_type: request.image_file.media_type,
      image_bytes: request.image_file.bytes.length,
      sha256: request.image_file.sha256
    }
    : request.image === undefined
    ? {}
    : { image_base64_length: request.image.length })
})
