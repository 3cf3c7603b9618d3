/**
 * Images (spec: seed-images.txt): validation of an uploaded image, and the rows the image
 * pipeline stores. The type is detected from the bytes (magic numbers), never taken from the
 * caller, so a file is stored under the extension of what it really is.
 */
import { Either } from "effect"
import { createHash } from "node:crypto"

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
export interface ValidImage {
  readonly bytes: Uint8Array
  readonly media_type: ImageMediaType
  readonly extension: string
  /** hex SHA-256 of the bytes: the file name and how a repeat is recognised */
  readonly sha256: string
  /** canonical base64 of the bytes (what goes to the model) */
  readonly base64: string
}

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
 * decoder and MIME tools do; any other character outside the alphabet is refused.
 */
export const decodeBase64 = (text: string): Either.Either<Uint8Array, string> => {
  const clean = text.replace(/[\r\n]/g, "")
  if (/^data:/i.test(clean)) {
    return Either.left("image must be plain base64, not a data: URL (send only the part after the comma)")
  }
  if (!BASE64.test(clean)) {
    const bad = clean.match(/[^A-Za-z0-9+/=]/)?.[0]
    return Either.left(
      bad === "-" || bad === "_"
        ? "image must be standard base64 (+ and /), not base64url (- and _)"
        : bad !== undefined
        ? `image is not base64: it contains ${JSON.stringify(bad)}, which is outside the standard alphabet`
        : "image is not base64: padding (=) may only end it"
    )
  }
  if (clean.length % 4 !== 0) {
    return Either.left("image is not base64: its length is not a multiple of 4 (missing padding?)")
  }
  return Either.right(new Uint8Array(Buffer.from(clean, "base64")))
}

/**
 * Validates an uploaded image: base64, at most 5 MiB decoded, and a JPEG, PNG, GIF or WebP
 * by its bytes. The Left is the 400 message; it names what was found.
 */
export const validateImage = (base64: string): Either.Either<ValidImage, string> => {
  // decoded size from the encoded length, so an oversized image is refused before decoding it
  const encoded = base64.replace(/[\r\n]/g, "")
  const estimate = Math.floor((encoded.length * 3) / 4) - (encoded.endsWith("==") ? 2 : encoded.endsWith("=") ? 1 : 0)
  if (estimate > MAX_IMAGE_BYTES) {
    return Either.left(`image must be at most 5 MiB (${MAX_IMAGE_BYTES} bytes) decoded; it is about ${estimate} bytes`)
  }
  return Either.flatMap(decodeBase64(base64), (bytes) => {
    if (bytes.length === 0) return Either.left("image is empty")
    if (bytes.length > MAX_IMAGE_BYTES) {
      return Either.left(`image must be at most 5 MiB (${MAX_IMAGE_BYTES} bytes) decoded; it is ${bytes.length} bytes`)
    }
    const media_type = detectImageType(bytes)
    if (media_type === undefined) {
      return Either.left(`image must be a JPEG, PNG, GIF or WebP; found ${describeBytes(bytes)}`)
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
