/**
 * The remember request (spec/contracts.md section 9) as one schema: the handler decodes the
 * body with it, the HttpApi endpoint takes it as its payload (so it is the OpenAPI document),
 * and its Type is the normalized request the pipeline runs on. Every problem names the field;
 * a field the contract does not have is refused, named with the closest known one.
 */
import { Array as Arr, Either, Schema } from "effect"
import { createHash } from "node:crypto"
import { Instructions } from "./DatasetSchema.js"
import { InvalidRequest } from "./Errors.js"
import { ImageBase64, ImageFromBase64, ValidImage } from "./Image.js"
import { lastMessageTime, type Message, Messages, transcriptOf } from "./Messages.js"
import { MetadataField } from "./Metadata.js"
import { MODEL_STAGES, REASONING_LEVELS, REASONING_STAGES, REQUEST_KINDS } from "./Stages.js"
import { TimeseriesRequest } from "./Timeseries.js"
import {
  ArrayWithin,
  checkedFirst,
  Dataset,
  decodeRequest,
  DEFAULT_DATASET,
  JsonBoolean,
  KeyedBy,
  Label,
  ModelName,
  OneOf,
  optional,
  RawObject,
  required,
  Rfc3339,
  STRICT,
  Text,
  UserId,
  utf8Bytes,
  withDefault
} from "./Wire.js"

export { DEFAULT_DATASET, MAX_LABEL_BYTES, MAX_USER_ID_BYTES } from "./Wire.js"

export const MAX_TEXT_BYTES = 1024 * 1024

/** An Idempotency-Key (header or `idempotency_key`): at most 128 bytes, no control characters. */
export const MAX_IDEMPOTENCY_KEY_BYTES = 128
export const IdempotencyKey = Label(MAX_IDEMPOTENCY_KEY_BYTES).annotations({
  description: "names one submission of this user: the same key and body again give the same run " +
    "(kept remember.idempotency_ttl_hours, 24 by default); the same key with another body is a 422"
})

const given = (u: unknown): boolean => u !== undefined && u !== null

/** `models`: a model per stage that runs one. */
const ModelChoices = KeyedBy(MODEL_STAGES, ModelName, {
  notAnObject: "must be an object mapping a stage to a model name",
  unknownKey: `is not a stage that runs a model (one of ${MODEL_STAGES.join(", ")})`,
  isDefault: (u) => u === null || u === "",
  description: "a model per stage; absent, null or \"\": the server's model for that stage"
})

/** `reasoning`: a level per stage that can think. */
const ReasoningChoices = KeyedBy(REASONING_STAGES, OneOf(REASONING_LEVELS), {
  notAnObject: "must be an object mapping a stage to a level",
  unknownKey: `is not a stage that can reason (one of ${REASONING_STAGES.join(", ")})`,
  description: "a reasoning level per stage (web_search cannot reason); absent: the server's default"
})

/**
 * The fields of one text or image to remember (a remember request's, and a batch item's):
 * everything but who (user_id, dataset) and how it is answered (wait).
 */
const ItemFields = {
  image: optional(ImageFromBase64).annotations({ description: "a base64 image, instead of text" }),
  text: optional(Text(MAX_TEXT_BYTES, `must be at most ${MAX_TEXT_BYTES} bytes (1 MiB)`)).annotations({
    description: "the text to remember, at most 1 MiB"
  }),
  messages: optional(Messages),
  // defaulted below: an image request has no kind on the wire
  kind: optional(OneOf(REQUEST_KINDS)).annotations({ description: "knowledge (default) or episode; not with image" }),
  reference_time: optional(Rfc3339).annotations({ description: "RFC 3339; default: when the run starts" }),
  session_id: optional(Label()).annotations({ description: "groups the artifacts of one conversation" }),
  metadata: optional(MetadataField),
  instructions: optional(Instructions).annotations({
    description: "text added to this call's extraction prompt, after the dataset schema's instructions " +
      "(docs/SCHEMA.md); not with image"
  }),
  web_search: withDefault(JsonBoolean, () => false).annotations({
    description: "search the web for the text's key entities (needs an Anthropic key); not with image"
  }),
  timeseries: optional(TimeseriesRequest),
  models: withDefault(ModelChoices, () => ({})),
  reasoning: withDefault(ReasoningChoices, () => ({})),
  idempotency_key: optional(IdempotencyKey)
}

const UserIdField = required(UserId).annotations({ description: "the user who owns the dataset" })
const DatasetField = withDefault(Dataset, () => DEFAULT_DATASET).annotations({
  description: "the dataset, default main"
})

/** The body field by field, in the order their problems are reported (the MCP tool's arguments too). */
export const RememberRequestFields = Schema.Struct({
  user_id: UserIdField,
  image: ItemFields.image,
  text: ItemFields.text,
  messages: ItemFields.messages,
  dataset: DatasetField,
  kind: ItemFields.kind,
  reference_time: ItemFields.reference_time,
  session_id: ItemFields.session_id,
  metadata: ItemFields.metadata,
  instructions: ItemFields.instructions,
  web_search: ItemFields.web_search,
  timeseries: ItemFields.timeseries,
  models: ItemFields.models,
  reasoning: ItemFields.reasoning,
  wait: optional(JsonBoolean).annotations({
    description: "false: answer 202 {remember_run_id, status} as soon as the run is queued (durably) " +
      "and watch it at GET /v1/gb/runs/{id}; absent or true: wait for the run and answer its response"
  }),
  idempotency_key: ItemFields.idempotency_key
})

/** A batch item: the item fields alone (user_id and dataset are the batch's). */
const BatchItemFields = Schema.Struct(ItemFields)

/** The checked image, as the pipeline takes it (`image_file`), and the defaulted kind. */
const NormalizedImage = Schema.Struct({
  /** canonical base64 of the image (the pipeline's image requests are those with it) */
  image: Schema.optional(Schema.String),
  /** the decoded, checked image; a request built in code may leave it out (the pipeline decodes `image`) */
  image_file: Schema.optional(ValidImage),
  kind: Schema.Literal(...REQUEST_KINDS)
})

type WireImage = typeof ImageFromBase64.Type
type Kind = (typeof REQUEST_KINDS)[number]

/**
 * `kind` defaulted, the image split into its base64 and its checked file (both schemas below),
 * a conversation's transcript as its text (an episode, at its last message's time) once the
 * user is known (a batch item's in `batchRequests`).
 */
const normalize = <
  F extends {
    readonly image?: WireImage | undefined
    readonly kind?: Kind | undefined
    readonly messages?: ReadonlyArray<Message> | undefined
    readonly reference_time?: string | undefined
    readonly user_id?: string | undefined
  }
>({ image, kind, ...fields }: F) => {
  if (fields.messages !== undefined) return conversation({ ...fields, kind: "episode" as Kind })
  return image === undefined
    ? { ...fields, kind: kind ?? "knowledge" }
    : { ...fields, kind: "knowledge" as const, image: image.base64, image_file: image }
}
const denormalize = <
  F extends {
    readonly image?: string | undefined
    readonly image_file?: WireImage | undefined
    readonly kind: Kind
    readonly messages?: ReadonlyArray<Message> | undefined
    readonly text?: string | undefined
  }
>({ image: _, image_file, kind, ...fields }: F) => {
  // a conversation's text is its transcript, written again when it is decoded
  if (fields.messages !== undefined) return { ...fields, text: undefined, kind }
  return image_file === undefined ? { ...fields, kind } : { ...fields, image: image_file }
}

/** A conversation with its transcript as text, when its user is known. */
const conversation = <
  F extends {
    readonly messages?: ReadonlyArray<Message> | undefined
    readonly reference_time?: string | undefined
    readonly user_id?: string | undefined
  }
>(fields: F): F & { readonly text?: string } => {
  if (fields.messages === undefined || fields.user_id === undefined) return fields
  const reference = fields.reference_time ?? lastMessageTime(fields.messages)
  return {
    ...fields,
    text: transcriptOf(fields.messages, fields.user_id).text,
    ...(reference === undefined ? {} : { reference_time: reference })
  }
}

/** What the pipeline runs on: the fields decoded, `kind` defaulted, the image checked (`image_file`). */
const Normalized = Schema.extend(
  Schema.typeSchema(RememberRequestFields).pipe(Schema.omit("image", "kind")),
  NormalizedImage
)

const Fields = RememberRequestFields.pipe(
  Schema.transform(Normalized, { strict: false, decode: normalize, encode: denormalize })
)

const BatchItemNormalized = BatchItemFields.pipe(
  Schema.transform(
    Schema.extend(Schema.typeSchema(BatchItemFields).pipe(Schema.omit("image", "kind")), NormalizedImage),
    { strict: false, decode: normalize, encode: denormalize }
  )
)

/** Whether `field` decodes `u` (its whole decoding: `Schema.is` checks only the decoded side). */
const decodes = (field: Schema.Schema<any, any, never>) => {
  const decode = Schema.decodeUnknownEither(field)
  return (u: unknown): boolean => Either.isRight(decode(u))
}
const isUserId = decodes(UserId)
const isImageBase64 = decodes(ImageBase64)
const NOT_WITH_IMAGE = "must not be given together with image"

/**
 * Text or image decides which fields apply, so it is checked first: a field that does not go
 * with an image is named as such before its own value is looked at, and an image is not
 * decoded when the request could not be served anyway. A malformed `user_id` or `image` is
 * left to its field.
 */
const textOrImage = (body: Record<string, unknown>): true | { path: [string]; message: string } => {
  if (given(body.messages)) {
    if (given(body.text)) return { path: ["messages"], message: "must not be given together with text" }
    if (given(body.image)) return { path: ["messages"], message: NOT_WITH_IMAGE }
    return body.kind === undefined || body.kind === null || body.kind === "episode" ||
      { path: ["kind"], message: "must be episode (or absent) with messages" }
  }
  if (!given(body.image)) return given(body.text) || { path: ["text"], message: "is required (or image, or messages)" }
  if (!isImageBase64(body.image)) return true
  // an image's metadata would have no artifact of the text side to live on (not built)
  const conflict =
    (["text", "kind", "timeseries", "metadata", "instructions"] as const).find((field) => given(body[field])) ??
      (given(body.web_search) && body.web_search !== false ? "web_search" : undefined)
  return conflict === undefined || { path: [conflict], message: NOT_WITH_IMAGE }
}
const TextOrImage = RawObject().pipe(Schema.filter((body) => !isUserId(body.user_id) || textOrImage(body)))

/** a 1x1 PNG */
const TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

const decodeExample = Schema.decodeUnknownSync(Fields)

/** The request schema with its documentation; the examples are written as sent and shown as the server reads them. */
const documented = (
  identifier: string,
  description: string,
  examples: Arr.NonEmptyReadonlyArray<Record<string, unknown>>
) =>
  checkedFirst(TextOrImage, Fields.annotations({ description, examples: Arr.map(examples, (e) => decodeExample(e)) }))
    .annotations({ identifier, ...STRICT })

export const RememberRequest = documented(
  "RememberRequest",
  "A text (or an image) to remember for a user. A field the contract does not have is a 400 naming it.",
  [
    { user_id: "alice", text: "Alice moved from Paris to Berlin in March 2024 and works at Acme." },
    {
      user_id: "alice",
      dataset: "notes",
      text: "Met Bob at the conference.",
      kind: "episode",
      reference_time: "2025-01-31T12:00:00Z",
      session_id: "chat-42"
    },
    { user_id: "alice", image: TINY_PNG }
  ]
)
export type RememberRequest = typeof RememberRequest.Type

/** The eval remember's body: the same request (and decoding) as remember's. */
export const EvalRememberRequest = documented(
  "EvalRememberRequest",
  "The remember request; the response adds the run's ATIF trajectory.",
  [
    {
      user_id: "eval",
      dataset: "eval",
      text: "Alice lives in Berlin.",
      reference_time: "2025-01-31T12:00:00Z",
      reasoning: { extract_graph: "low" }
    }
  ]
)

/** A batch's limits: items, and bytes of its body (413 over it, before parsing). */
export const MAX_BATCH_ITEMS = 1000
export const BATCH_BODY_LIMIT = 32 * 1024 * 1024

/** One item of a batch: a remember request's item fields, checked as a request's are. */
const BatchItem = checkedFirst(RawObject().pipe(Schema.filter(textOrImage)), BatchItemNormalized)
  .annotations({ identifier: "RememberBatchItem" })

const BatchFields = Schema.Struct({
  user_id: UserIdField.annotations({ description: "the user who owns the dataset (of every item)" }),
  dataset: DatasetField.annotations({ description: "the dataset of every item, default main" }),
  items: required(ArrayWithin(BatchItem, {
    notArray: "must be an array of items",
    min: 1,
    max: MAX_BATCH_ITEMS,
    length: (n) =>
      n === 0 ? "must not be empty" : n > MAX_BATCH_ITEMS ? `must have at most ${MAX_BATCH_ITEMS} items` : undefined
  })).annotations({ description: `1 to ${MAX_BATCH_ITEMS} texts or images, each one run, queued in order` }),
  wait: optional(JsonBoolean).annotations({
    description: "absent or false: answer 202 {runs} once every run is queued (durably); " +
      "true: wait for every run and answer each item's response or {error, status}, in order"
  })
})

const decodeBatchExample = Schema.decodeUnknownSync(BatchFields)

export const RememberBatchRequest = BatchFields.annotations({
  ...STRICT,
  identifier: "RememberBatchRequest",
  description: "Many texts (or images) of one user and dataset, one run each, queued in order in one transaction. " +
    "Every item is validated before any is queued. A field the contract does not have is a 400 naming it.",
  examples: [
    decodeBatchExample({
      user_id: "alice",
      dataset: "notes",
      items: [
        { text: "Alice moved to Berlin in March 2024.", idempotency_key: "note-1" },
        { text: "Met Bob at the conference.", kind: "episode", reference_time: "2025-01-31T12:00:00Z" }
      ]
    })
  ]
})
export type RememberBatchRequest = typeof RememberBatchRequest.Type

/** Decodes a parsed JSON batch body; the Left is the 400 that names the field (`items[2].text`). */
export const validateRememberBatch = decodeRequest(RememberBatchRequest)

/** The batch's items as remember requests (the batch's user and dataset on each). */
export const batchRequests = (batch: RememberBatchRequest): ReadonlyArray<RememberRequest> =>
  batch.items.map((item) => conversation({ ...item, user_id: batch.user_id, dataset: batch.dataset }))

const decodeKey = decodeRequest(Schema.Struct({ "Idempotency-Key": IdempotencyKey }))

/**
 * The submission's Idempotency-Key: the header's (checked as the body field is), or the body's
 * `idempotency_key`; both given and different is a 400.
 */
export const idempotencyKeyOf = (
  header: string | undefined,
  request: RememberRequest
): Either.Either<string | undefined, InvalidRequest> => {
  if (header === undefined) return Either.right(request.idempotency_key)
  return Either.flatMap(
    decodeKey({ "Idempotency-Key": header }),
    ({ "Idempotency-Key": key }) =>
      request.idempotency_key !== undefined && request.idempotency_key !== key
        ? Either.left(new InvalidRequest({ message: "idempotency_key and the Idempotency-Key header differ" }))
        : Either.right(key)
  )
}

/** Decodes a parsed JSON body; the Left is the 400 that names the field. */
export const validateRememberRequest = decodeRequest(RememberRequest)

const encodeRequest = Schema.encodeEither(RememberRequest)

/**
 * The request as the durable queue keeps it: the schema's encoded form (a worker decodes it
 * again with `validateRememberRequest`). A request built in code may carry its image as
 * base64 alone, which the encoding would drop; it is kept.
 */
export const encodeRememberRequest = (request: RememberRequest): Record<string, unknown> => {
  const encoded = Either.getOrElse(
    encodeRequest(request) as Either.Either<Record<string, unknown>, unknown>,
    // a request built in code that its wire form refuses (e.g. an image that is not one): kept
    // as given, so the worker's decoding fails it with the 400 the API would have answered
    () => {
      const { image_file: _, ...fields } = request
      return fields as Record<string, unknown>
    }
  )
  return request.image !== undefined && encoded.image === undefined ? { ...encoded, image: request.image } : encoded
}

/** JSON with object keys sorted, so equal requests have equal text. */
const canonicalJson = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonicalJson).join(",")}]`
    : typeof value === "object" && value !== null
    ? `{${
      Object.keys(value).sort().filter((k) => (value as Record<string, unknown>)[k] !== undefined).map((k) =>
        `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`
      ).join(",")
    }}`
    : JSON.stringify(value)

/**
 * What an Idempotency-Key is checked against: sha256 of the canonical encoded request, without
 * `wait` and the key itself (the same submission may wait once and not the next time).
 */
export const requestHash = (encoded: Record<string, unknown>): string => {
  const { idempotency_key: _, wait: __, ...body } = encoded
  return createHash("sha256").update(canonicalJson(body)).digest("hex")
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
