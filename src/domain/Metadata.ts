/**
 * A caller's metadata on what it remembers (issue 42): a flat JSON object of at most 32 keys,
 * each a string, a finite number or a boolean, bounded in size. It is stored on the artifact
 * (its `metadata`, beside the keys gligabao writes there itself, which a caller may not use) and
 * indexed key by key for the read filters (docs/READ.md, Filters).
 */
import { Either, ParseResult, Schema } from "effect"
import { parseRfc3339 } from "./time.js"
import { utf8Bytes } from "./Wire.js"

export const MAX_METADATA_KEYS = 32
export const MAX_METADATA_KEY_BYTES = 64
export const MAX_METADATA_VALUE_BYTES = 1024

/** The artifact metadata keys gligabao writes itself (contracts: chunks, web search, conversations). */
export const RESERVED_METADATA_KEYS: ReadonlySet<string> = new Set([
  "index",
  "tokens",
  "overlap_tokens",
  "start_offset",
  "end_offset",
  "messages",
  "sources"
])

export type MetadataValue = string | number | boolean
export type Metadata = Readonly<Record<string, MetadataValue>>

const KEY = /^[A-Za-z0-9_.:-]+$/

/** Why `key` cannot be a metadata key, or undefined. */
export const metadataKeyProblem = (key: string): string | undefined =>
  utf8Bytes(key) > MAX_METADATA_KEY_BYTES || !KEY.test(key)
    ? `key ${JSON.stringify(key)} must be 1 to ${MAX_METADATA_KEY_BYTES} letters, digits, _ - . or :`
    : RESERVED_METADATA_KEYS.has(key)
    ? `key ${JSON.stringify(key)} is gligabao's own (${[...RESERVED_METADATA_KEYS].join(", ")})`
    : undefined

const valueProblem = (key: string, value: unknown): string | undefined => {
  if (typeof value === "boolean") return undefined
  if (typeof value === "number") return Number.isFinite(value) ? undefined : `${key} must be a finite number`
  if (typeof value === "string") {
    return utf8Bytes(value) > MAX_METADATA_VALUE_BYTES
      ? `${key} must be at most ${MAX_METADATA_VALUE_BYTES} bytes`
      : value.includes("\u0000")
      ? `${key} must not contain NUL characters`
      : undefined
  }
  return `${key} must be a string, a number or a boolean (metadata is flat)`
}

/** The first problem of a metadata object, naming the key, or undefined. */
export const metadataProblem = (u: unknown): string | undefined => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return "must be an object of keys to values"
  const entries = Object.entries(u)
  if (entries.length > MAX_METADATA_KEYS) return `has ${entries.length} keys; at most ${MAX_METADATA_KEYS}`
  for (const [key, value] of entries) {
    const problem = metadataKeyProblem(key) ?? valueProblem(key, value)
    if (problem !== undefined) return problem
  }
  return undefined
}

/** The `metadata` field of a remember (and of a batch item). */
export const MetadataField = Schema.transformOrFail(
  Schema.Unknown,
  Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) }),
  {
    strict: true,
    decode: (u, _, ast) => {
      const problem = metadataProblem(u)
      return problem === undefined
        ? ParseResult.succeed(u as Metadata)
        : Either.left(new ParseResult.Type(ast, u, problem))
    },
    encode: ParseResult.succeed
  }
).annotations({
  identifier: "Metadata",
  description: `your own fields on the text: at most ${MAX_METADATA_KEYS} keys (letters, digits, _ - . :), each a ` +
    `string (at most ${MAX_METADATA_VALUE_BYTES} bytes), a number or a boolean; stored on the artifact, filterable`,
  jsonSchema: {
    type: "object",
    maxProperties: MAX_METADATA_KEYS,
    additionalProperties: { type: ["string", "number", "boolean"] },
    examples: [{ source: "crm", account: "a-17", priority: 2 }]
  }
})

/** The caller's keys of an artifact's stored metadata (gligabao's own left out). */
export const userMetadataOf = (metadata: Readonly<Record<string, unknown>> | null | undefined): Metadata => {
  const out: Record<string, MetadataValue> = {}
  for (const [key, value] of Object.entries(metadata ?? {})) {
    if (RESERVED_METADATA_KEYS.has(key)) continue
    if (
      typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))
    ) {
      out[key] = value
    }
  }
  return out
}

/** One indexed key of an artifact's metadata (gb_artifact_metadata, migration 0021). */
export interface MetadataRow {
  readonly key: string
  readonly value_type: "string" | "number" | "boolean"
  /** a string as given; a boolean as "true" or "false" */
  readonly text_value: string | null
  /** a number; a string that is an RFC 3339 time, as epoch milliseconds */
  readonly num_value: number | null
}

/** The epoch milliseconds of an RFC 3339 time, or undefined. */
export const timeValue = (s: string): number | undefined => {
  const canonical = parseRfc3339(s)
  return canonical === undefined ? undefined : Date.parse(canonical)
}

/** The indexed rows of an artifact's metadata: the caller's keys, typed. */
export const metadataRows = (metadata: Readonly<Record<string, unknown>> | null | undefined): Array<MetadataRow> =>
  Object.entries(userMetadataOf(metadata)).map(([key, value]): MetadataRow =>
    typeof value === "number"
      ? { key, value_type: "number", text_value: null, num_value: value }
      : typeof value === "boolean"
      ? { key, value_type: "boolean", text_value: String(value), num_value: null }
      : { key, value_type: "string", text_value: value, num_value: timeValue(value) ?? null }
  )
