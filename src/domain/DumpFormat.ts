/**
 * The dump format of `gligabao dump` and `gligabao load` (docs/TRANSFER.md): gzip JSON lines,
 * one record a line, each naming its kind in `record`. The first line is the header with the
 * format's version (major.minor). A reader accepts its own major version and any minor one:
 * fields it does not know are ignored (the schemas below drop them), records of a kind it does
 * not know are skipped and counted; a newer major version is refused with a message.
 *
 * Field names are the columns of the tables they come from; ids are the source's (load gives
 * rows new ones); JSON columns are JSON values, not text.
 */
import { Either, ParseResult, Schema } from "effect"

export const FORMAT_NAME = "gligabao-dump"
export const FORMAT_MAJOR = 1
export const FORMAT_MINOR = 0
export const FORMAT_VERSION = `${FORMAT_MAJOR}.${FORMAT_MINOR}`

const Id = Schema.Int
const Ref = Schema.NullOr(Schema.Int)
const Text = Schema.String
const OptText = Schema.NullOr(Schema.String)
const Num = Schema.Number
const OptNum = Schema.NullOr(Schema.Number)
/** a JSON column's value (null when the column is NULL) */
const Json = Schema.Unknown

const record = <K extends string, F extends Schema.Struct.Fields>(kind: K, fields: F) =>
  Schema.Struct({ record: Schema.Literal(kind), ...fields })

export const Header = record("header", {
  format: Schema.Literal(FORMAT_NAME),
  format_version: Schema.String,
  gligabao_version: Text,
  created_at: Text,
  /** what was dumped: everything (both null), one user, or one user's dataset */
  scope: Schema.Struct({ user_id: OptText, dataset: OptText }),
  source: Schema.Struct({ dialect: Text, vector_store: Text }),
  vectors: Schema.Struct({
    included: Schema.Boolean,
    /** why not, when not */
    reason: OptText,
    /** the embeddings the source was configured with when it was dumped */
    embedding_model: Text,
    embedding_dimensions: Schema.Int
  })
})
export type Header = typeof Header.Type

export const ModelRecord = record("model", { id: Id, provider: Text, name: Text, created_at: Text })

/** Opens a (user, dataset name): everything of the name, soft-deleted datasets and runs too. */
export const GroupRecord = record("group", {
  user_id: Text,
  dataset: Text,
  /** the created_at of each dataset row of the name, oldest first */
  dataset_created_at: Schema.Array(Text),
  runs: Schema.Int
})
export const GroupEndRecord = record("group_end", { user_id: Text, dataset: Text, records: Schema.Int })
export const EndRecord = record("end", { groups: Schema.Int, records: Schema.Int })

export const DatasetRecord = record("dataset", {
  id: Id,
  user_id: Text,
  name: Text,
  created_at: Text,
  deleted_at: OptText,
  /** the dataset's knowledge model (docs/SCHEMA.md), null when it has none */
  schema: Json
})

export const RunRecord = record("run", {
  id: Id,
  pipeline: Text,
  user_id: Text,
  dataset: Text,
  dataset_id: Ref,
  status: Text,
  error: OptText,
  error_tag: OptText,
  params: Json,
  queued_at: Text,
  instance_id: Text,
  started_at: OptText,
  finished_at: OptText,
  duration_ms: OptNum,
  attempts: Num
})

export const InferenceRecord = record("inference", {
  id: Id,
  type: Text,
  stage: Text,
  provider: Text,
  model: Text,
  model_id: Ref,
  reasoning: Text,
  input_tokens: Num,
  output_tokens: Num,
  cache_read_tokens: Num,
  cache_write_tokens: Num,
  web_search_requests: Num,
  cost_usd: Num,
  latency_ms: Num,
  started_at: Text,
  error: OptText,
  run_id: Ref,
  dataset_id: Ref,
  structured_mode: OptText
})

export const SeriesRecord = record("series", { id: Id, dataset_id: Id, key: Text, unit: OptText, created_at: Text })
export const SeriesPointRecord = record("series_point", { series_id: Id, ts: Text, value: Num })

export const ArtifactRecord = record("artifact", {
  id: Id,
  dataset_id: Id,
  kind: Text,
  text: Text,
  parent_id: Ref,
  session_id: OptText,
  valid_at: Text,
  created_at: Text,
  inference_id: Ref,
  query: OptText,
  metadata: Json
})

export const EntityRecord = record("entity", {
  id: Id,
  dataset_id: Id,
  name: Text,
  name_key: Text,
  type: Text,
  description: Text,
  model_id: Ref,
  created_at: Text,
  updated_at: Text,
  embedded_at: OptText,
  /** what its texts stated of it, the latest value per key (docs/SCHEMA.md) */
  attributes: Json
})

export const EdgeRecord = record("edge", {
  id: Id,
  dataset_id: Id,
  source_id: Id,
  target_id: Id,
  relation: Text,
  description: Text,
  valid_at: OptText,
  invalid_at: OptText,
  created_at: Text,
  expired_at: OptText,
  artifact_id: Ref,
  model_id: Ref,
  embedded_at: OptText
})

/** A provenance link with what its text stated of the entity. */
export const EntityArtifactRecord = record("entity_artifact", {
  entity_id: Id,
  artifact_id: Id,
  name: OptText,
  description: OptText,
  attributes: Json
})

/** A provenance link with what its text stated of the fact. */
export const EdgeArtifactRecord = record("edge_artifact", {
  edge_id: Id,
  artifact_id: Id,
  description: OptText,
  valid_at: OptText,
  invalid_at: OptText
})

export const EntitySessionRecord = record("entity_session", { entity_id: Id, session_id: Text })
export const EdgeSessionRecord = record("edge_session", { edge_id: Id, session_id: Text })

/** A closing decision: which fact was closed (or contradicted), by which, and what it replaced. */
export const EdgeClosureRecord = record("edge_closure", {
  id: Id,
  edge_id: Id,
  by_edge_id: Ref,
  artifact_id: Ref,
  kind: Text,
  invalid_at: OptText,
  expired_at: Text,
  prev_invalid_at: OptText,
  created_at: Text
})

export const EntityGeoRecord = record("entity_geo", {
  entity_id: Id,
  kind: Text,
  query: Text,
  resolved: Schema.Int,
  latitude: OptNum,
  longitude: OptNum,
  display_name: OptText,
  country: OptText,
  country_code: OptText,
  region: OptText,
  provider: OptText,
  error: OptText,
  created_at: Text
})

/** An image artifact with its file: `data` is the file's bytes in base64, null when the file was missing. */
export const ImageRecord = record("image", {
  id: Id,
  dataset_id: Id,
  session_id: OptText,
  sha256: Text,
  path: Text,
  media_type: Text,
  bytes: Num,
  valid_at: Text,
  created_at: Text,
  data: OptText
})

export const ImageExtractionRecord = record("image_extraction", {
  id: Id,
  image_artifact_id: Id,
  inference_id: Ref,
  model: Text,
  provider: Text,
  reasoning: Text,
  theme: Text,
  title: Text,
  text: Text,
  input_tokens: Num,
  output_tokens: Num,
  cost_usd: Num,
  created_at: Text
})

export const ImageTextBlockRecord = record("image_text_block", {
  id: Id,
  extraction_id: Id,
  position: Num,
  kind: Text,
  text: Text
})

export const SeriesAnchorRecord = record("series_anchor", {
  id: Id,
  series_id: Id,
  artifact_id: Ref,
  entity_id: Ref,
  edge_id: Ref
})

export const RunStageRecord = record("run_stage", {
  run_id: Id,
  stage: Text,
  status: Text,
  started_at: OptText,
  finished_at: OptText,
  duration_ms: OptNum,
  error: OptText,
  inference_ids: Schema.Array(Schema.Int),
  progress: Json,
  detail: Json
})

/** A run still in the durable queue: its whole request. */
export const RunQueueRecord = record("run_queue", {
  run_id: Id,
  request: Json,
  document_id: Ref,
  stored_chunks: Num
})

export const IdempotencyKeyRecord = record("idempotency_key", {
  user_id: Text,
  idempotency_key: Text,
  request_hash: Text,
  run_id: Id,
  created_at: Text
})

/** What a run pointed at once the rows exist: its artifact and its response. */
export const RunResultRecord = record("run_result", { run_id: Id, artifact_id: Ref, response: Json })

export const VECTOR_KINDS = ["entities", "edges", "chunks", "summaries"] as const
export type VectorKindName = (typeof VECTOR_KINDS)[number]

/** A vector of a row: `row_id` is the entity's, the edge's or the artifact's (chunk, summary) id. */
export const VectorRecord = record("vector", {
  dataset_id: Id,
  kind: Schema.Literal(...VECTOR_KINDS),
  row_id: Id,
  values: Schema.Array(Schema.Number),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })
})

/** A vector change the source's outbox had not written to its store yet. */
export const VectorPendingRecord = record("vector_pending", {
  dataset_id: Id,
  kind: Schema.Literal(...VECTOR_KINDS),
  row_id: Id,
  op: Schema.Literal("upsert", "delete"),
  values: Schema.Array(Schema.Number),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })
})

/** Every kind of record but the header, by its `record` name. */
export const RECORDS = {
  model: ModelRecord,
  group: GroupRecord,
  group_end: GroupEndRecord,
  end: EndRecord,
  dataset: DatasetRecord,
  run: RunRecord,
  inference: InferenceRecord,
  series: SeriesRecord,
  series_point: SeriesPointRecord,
  artifact: ArtifactRecord,
  entity: EntityRecord,
  edge: EdgeRecord,
  entity_artifact: EntityArtifactRecord,
  edge_artifact: EdgeArtifactRecord,
  entity_session: EntitySessionRecord,
  edge_session: EdgeSessionRecord,
  edge_closure: EdgeClosureRecord,
  entity_geo: EntityGeoRecord,
  image: ImageRecord,
  image_extraction: ImageExtractionRecord,
  image_text_block: ImageTextBlockRecord,
  series_anchor: SeriesAnchorRecord,
  run_stage: RunStageRecord,
  run_queue: RunQueueRecord,
  idempotency_key: IdempotencyKeyRecord,
  run_result: RunResultRecord,
  vector: VectorRecord,
  vector_pending: VectorPendingRecord
} as const

export type RecordKind = keyof typeof RECORDS
export type DumpRecord = { [K in RecordKind]: typeof RECORDS[K]["Type"] }[RecordKind]
export type RecordOf<K extends RecordKind> = typeof RECORDS[K]["Type"]
/** A record's fields without its `record` name: a row of its table. */
export type RowOf<K extends RecordKind> = Omit<RecordOf<K>, "record">

const isKind = (kind: unknown): kind is RecordKind => typeof kind === "string" && Object.hasOwn(RECORDS, kind)

/** One line: the record's JSON (its `record` name first). */
export const encodeLine = (kind: RecordKind | "header", row: object): string => JSON.stringify({ record: kind, ...row })

/** What a line is: a known record, one of a kind this version does not know, or why it cannot be read. */
export type ReadLine =
  | { readonly _tag: "Record"; readonly record: DumpRecord }
  | { readonly _tag: "Unknown"; readonly kind: string }
  | { readonly _tag: "Invalid"; readonly message: string }

const format = (error: ParseResult.ParseError) => ParseResult.TreeFormatter.formatErrorSync(error)

const parse = (line: string): Either.Either<Record<string, unknown>, string> => {
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? Either.right(value as Record<string, unknown>)
      : Either.left("not a JSON object")
  } catch (e) {
    return Either.left(`not JSON (${e instanceof Error ? e.message : String(e)})`)
  }
}

const decoders = Object.fromEntries(
  Object.entries(RECORDS).map(([kind, schema]) => [kind, Schema.decodeUnknownEither(schema as Schema.Schema<any, any>)])
) as Record<RecordKind, (u: unknown) => Either.Either<DumpRecord, ParseResult.ParseError>>

/** Reads one line after the header; fields this version does not know are dropped. */
export const readLine = (line: string): ReadLine => {
  const parsed = parse(line)
  if (Either.isLeft(parsed)) return { _tag: "Invalid", message: parsed.left }
  const kind = parsed.right.record
  if (!isKind(kind)) {
    return typeof kind === "string" && kind !== "header"
      ? { _tag: "Unknown", kind }
      : { _tag: "Invalid", message: "no `record` naming its kind" }
  }
  const decoded = decoders[kind](parsed.right)
  return Either.isLeft(decoded)
    ? { _tag: "Invalid", message: `${kind}: ${format(decoded.left)}` }
    : { _tag: "Record", record: decoded.right }
}

const VERSION = /^(\d+)\.(\d+)$/

/**
 * The header of a dump, checked: its format, and a major version this build reads. A newer
 * minor version is fine (what it adds is ignored); a newer major one is refused with a message
 * saying what to do.
 */
export const readHeader = (line: string | undefined): Either.Either<Header, string> => {
  if (line === undefined) return Either.left("the dump is empty: it has no header line")
  const parsed = parse(line)
  if (Either.isLeft(parsed)) return Either.left(`its first line is not a dump header: ${parsed.left}`)
  if (parsed.right.record !== "header" || parsed.right.format !== FORMAT_NAME) {
    return Either.left(`its first line is not a ${FORMAT_NAME} header: this is not a gligabao dump`)
  }
  const version = VERSION.exec(String(parsed.right.format_version))
  if (version === null) {
    return Either.left(`its format_version ${JSON.stringify(parsed.right.format_version)} is not major.minor`)
  }
  const major = Number(version[1])
  if (major > FORMAT_MAJOR) {
    return Either.left(
      `the dump is format ${version[0]}, written by gligabao ${String(parsed.right.gligabao_version)}; ` +
        `this gligabao reads format ${FORMAT_MAJOR}.x: load it with a newer gligabao`
    )
  }
  if (major < FORMAT_MAJOR) return Either.left(`the dump is format ${version[0]}, which no gligabao wrote`)
  return Either.mapLeft(Schema.decodeUnknownEither(Header)(parsed.right), (e) => `its header: ${format(e)}`)
}
