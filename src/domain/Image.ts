/**
 * Images (spec: seed-images.txt): the checked image of a request, and the rows the image
 * pipeline stores. The type is detected from the bytes (magic numbers), never taken from the
 * caller, so a file is stored under the extension of what it really is.
 */
import { Either, ParseResult, Schema } from "effect"
import { createHash } from "node:crypto"
import { RequiredParam } from "./Wire.js"

/** The Anthropic API's limit for one image, before base64 encoding. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024

export const IMAGE_MEDIA_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"] as const
export type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number]

/** The file extension of each accepted type (`<dataset id>/<sha256>.<ext>`). */
export const IMAGE_EXTENSIONS: Record<ImageMediaType, string> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/gif": "gif",
  "image/webp": "webp"
}

/** A decoded, checked image: what the pipeline stores and sends to the model. */
export const ValidImage = Schema.Struct({
  bytes: Schema.Uint8ArrayFromSelf,
  media_type: Schema.Literal(...IMAGE_MEDIA_TYPES),
  extension: Schema.String,
  /** hex SHA-256 of the bytes: the file name and how a repeat is recognised */
  sha256: Schema.String,
  /** canonical base64 of the bytes (what goes to the model) */
  base64: Schema.String
})
export type ValidImage = typeof ValidImage.Type

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>, offset = 0): boolean =>
  bytes.length >= offset + prefix.length && prefix.every((b, i) => bytes[offset + i] === b)

const ascii = (text: string): ReadonlyArray<number> => [...text].map((c) => c.charCodeAt(0))

/** The accepted type of `bytes`, from its leading bytes; undefined for anything else. */
export const detectImageType = (bytes: Uint8Array): ImageMediaType | undefined => {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg"
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png"
  if (startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a"))) return "image/gif"
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) return "image/webp"
  return undefined
}

/** Other formats people send, named in the 400 so the caller knows what went wrong. */
const KNOWN_OTHERS: ReadonlyArray<readonly [name: string, test: (b: Uint8Array) => boolean]> = [
  ["a PDF document", (b) => startsWith(b, ascii("%PDF"))],
  ["a BMP image", (b) => startsWith(b, ascii("BM"))],
  ["a TIFF image", (b) => startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2a])],
  ["an ICO icon", (b) => startsWith(b, [0x00, 0x00, 0x01, 0x00])],
  ["a HEIC/HEIF image", (b) => startsWith(b, ascii("ftyp"), 4) && /^(heic|heix|hevc|mif1|msf1)/.test(latin1(b, 8, 12))],
  ["an AVIF image", (b) => startsWith(b, ascii("ftyp"), 4) && /^avi[fs]/.test(latin1(b, 8, 12))],
  ["an MP4/QuickTime video", (b) => startsWith(b, ascii("ftyp"), 4)],
  ["a RIFF file that is not WebP", (b) => startsWith(b, ascii("RIFF"))],
  ["a ZIP archive", (b) => startsWith(b, [0x50, 0x4b, 0x03, 0x04])],
  ["a gzip archive", (b) => startsWith(b, [0x1f, 0x8b])],
  ["an SVG or XML document (vector images are not accepted)", (b) => /^\s*<(\?xml|svg)/i.test(latin1(b, 0, 64))],
  ["an HTML document", (b) => /^\s*<(!doctype|html)/i.test(latin1(b, 0, 64))]
]

function latin1(bytes: Uint8Array, from: number, to: number): string {
  return Buffer.from(bytes.subarray(from, Math.min(to, bytes.length))).toString("latin1")
}

/** What `bytes` look like, for the message of a refused image. */
export const describeBytes = (bytes: Uint8Array): string => {
  if (bytes.length === 0) return "no data"
  const known = KNOWN_OTHERS.find(([, test]) => test(bytes))
  if (known !== undefined) return known[0]
  const head = Buffer.from(bytes.subarray(0, 8)).toString("hex").replace(/(..)(?!$)/g, "$1 ")
  return `unknown data starting with bytes ${head}`
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * Decodes standard base64 (RFC 4648 section 4, padded). Line breaks are skipped, as Go's
 * decoder and MIME tools do; any other character outside the alphabet is refused. The Left
 * says what is wrong, without the field's name ("is not base64: ...").
 */
export const decodeBase64 = (text: string): Either.Either<Uint8Array, string> => {
  const clean = text.replace(/[\r\n]/g, "")
  if (/^data:/i.test(clean)) {
    return Either.left("must be plain base64, not a data: URL (send only the part after the comma)")
  }
  if (!BASE64.test(clean)) {
    const bad = clean.match(/[^A-Za-z0-9+/=]/)?.[0]
    return Either.left(
      bad === "-" || bad === "_"
        ? "must be standard base64 (+ and /), not base64url (- and _)"
        : bad !== undefined
        ? `is not base64: it contains ${JSON.stringify(bad)}, which is outside the standard alphabet`
        : "is not base64: padding (=) may only end it"
    )
  }
  if (clean.length % 4 !== 0) {
    return Either.left("is not base64: its length is not a multiple of 4 (missing padding?)")
  }
  return Either.right(new Uint8Array(Buffer.from(clean, "base64")))
}

/**
 * Checks an uploaded image: base64, at most 5 MiB decoded, and a JPEG, PNG, GIF or WebP by
 * its bytes. The Left says what was found, without the field's name.
 */
const checkImage = (base64: string): Either.Either<ValidImage, string> => {
  // decoded size from the encoded length, so an oversized image is refused before decoding it
  const encoded = base64.replace(/[\r\n]/g, "")
  const estimate = Math.floor((encoded.length * 3) / 4) - (encoded.endsWith("==") ? 2 : encoded.endsWith("=") ? 1 : 0)
  if (estimate > MAX_IMAGE_BYTES) {
    return Either.left(`must be at most 5 MiB (${MAX_IMAGE_BYTES} bytes) decoded; it is about ${estimate} bytes`)
  }
  return Either.flatMap(decodeBase64(base64), (bytes) => {
    if (bytes.length === 0) return Either.left("is empty")
    if (bytes.length > MAX_IMAGE_BYTES) {
      return Either.left(`must be at most 5 MiB (${MAX_IMAGE_BYTES} bytes) decoded; it is ${bytes.length} bytes`)
    }
    const media_type = detectImageType(bytes)
    if (media_type === undefined) {
      return Either.left(`must be a JPEG, PNG, GIF or WebP; found ${describeBytes(bytes)}`)
    }
    return Either.right({
      bytes,
      media_type,
      extension: IMAGE_EXTENSIONS[media_type],
      sha256: createHash("sha256").update(bytes).digest("hex"),
      base64: Buffer.from(bytes).toString("base64")
    })
  })
}

/** An uploaded image checked on its own (a request built in code); the Left is the 400 message. */
export const validateImage = (base64: string): Either.Either<ValidImage, string> =>
  Either.mapLeft(checkImage(base64), (problem) => `image ${problem}`)

/** The `image` of a request as sent: a non-empty string (its content is checked by decoding it). */
export const ImageBase64 = Schema.String.annotations({ message: () => "must be a non-empty base64 string" }).pipe(
  Schema.filter((s) => s.length > 0, { message: () => "must be a non-empty base64 string" })
)

/** The `image` of a request: base64, decoded to the checked image. */
export const ImageFromBase64 = Schema.transformOrFail(
  ImageBase64,
  Schema.typeSchema(ValidImage),
  {
    strict: true,
    decode: (base64, _, ast) =>
      Either.mapLeft(checkImage(base64), (problem) => new ParseResult.Type(ast, base64, problem)),
    encode: (image) => ParseResult.succeed(image.base64)
  }
).annotations({
  jsonSchema: {
    type: "string",
    contentEncoding: "base64",
    description: "a JPEG, PNG, GIF or WebP, at most 5 MiB decoded, in standard base64; instead of text"
  }
})

/** The query of `GET /v1/gb/images/{id}`: whose dataset the image must be in. */
export const ImageQuery = Schema.Struct({
  user_id: RequiredParam({ trim: true, description: "the user who owns the dataset", examples: ["alice"] }),
  dataset: RequiredParam({ description: "the dataset the image was remembered in", examples: ["main"] })
})

/** `<dataset id>/<sha256>.<ext>`: the file's path relative to the image directory. */
export const imagePath = (datasetId: number, image: Pick<ValidImage, "sha256" | "extension">): string =>
  `${datasetId}/${image.sha256}.${image.extension}`

// ---------------------------------------------------------------------------------------------
// Rows (gb_image_artifacts, gb_image_extractions, gb_image_text_blocks)

/** The themes an image is classified by; anything else the model says becomes `other`. */
export const IMAGE_THEMES = [
  "plot",
  "chart",
  "graph",
  "diagram",
  "table",
  "document",
  "screenshot",
  "slide",
  "map",
  "photo",
  "illustration",
  "other"
] as const
export type ImageTheme = (typeof IMAGE_THEMES)[number]

/** The kinds of a text block; an unknown kind becomes `other`. */
export const TEXT_BLOCK_KINDS = [
  "title",
  "subtitle",
  "heading",
  "paragraph",
  "caption",
  "label",
  "axis",
  "legend",
  "annotation",
  "table",
  "other"
] as const
export type TextBlockKind = (typeof TEXT_BLOCK_KINDS)[number]

export interface ImageTextBlock {
  readonly kind: TextBlockKind
  readonly text: string
}

export interface ImageArtifactRow {
  readonly id: number
  readonly dataset_id: number
  readonly session_id: string | null
  readonly sha256: string
  /** relative to the image directory */
  readonly path: string
  readonly media_type: string
  /** the file's size */
  readonly bytes: number
  readonly valid_at: string
  readonly created_at: string
}

export interface ImageExtractionRow {
  readonly id: number
  readonly image_artifact_id: number
  /** the gb_inferences row of the call that made it (null if that row was deleted) */
  readonly inference_id: number | null
  readonly model: string
  readonly provider: string
  readonly reasoning: string
  readonly theme: string
  readonly title: string
  /** the blocks joined by newlines */
  readonly text: string
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cost_usd: number
  readonly created_at: string
  /** in reading order */
  readonly text_blocks: ReadonlyArray<ImageTextBlock>
}
