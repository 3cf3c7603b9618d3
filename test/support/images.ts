/**
 * Tiny images for tests, made here rather than checked in: a real PNG of any size and colour
 * (so each test can make distinct content), real 1x1 GIF and WebP files, and a JPEG that is
 * only its markers (enough for type detection; the scripted model never decodes it).
 */
import { createHash } from "node:crypto"
import { crc32, deflateSync } from "node:zlib"

const chunk = (type: string, data: Uint8Array): Buffer => {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, "latin1"), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

/** A valid RGB PNG filled with one colour. */
export const png = (
  options: { readonly width?: number; readonly height?: number; readonly rgb?: readonly [number, number, number] } = {}
): Uint8Array => {
  const width = options.width ?? 1
  const height = options.height ?? 1
  const [r, g, b] = options.rgb ?? [255, 0, 0]
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8 // bit depth
  ihdr[9] = 2 // colour type RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => [r, g, b]).flat())])
  const raw = Buffer.concat(Array.from({ length: height }, () => row))
  return new Uint8Array(Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", new Uint8Array())
  ]))
}

/** The classic 1x1 transparent GIF89a. */
export const gif = (): Uint8Array =>
  new Uint8Array(Buffer.from("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==", "base64"))

/** A 1x1 lossless WebP (RIFF....WEBPVP8L). */
export const webp = (): Uint8Array =>
  new Uint8Array(Buffer.from("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==", "base64"))

/** SOI, a JFIF APP0 segment, EOI. */
export const jpeg = (): Uint8Array =>
  new Uint8Array([
    0xff,
    0xd8,
    0xff,
    0xe0,
    0x00,
    0x10,
    0x4a,
    0x46,
    0x49,
    0x46,
    0x00,
    0x01,
    0x01,
    0x00,
    0x00,
    0x01,
    0x00,
    0x01,
    0x00,
    0x00,
    0xff,
    0xd9
  ])

export const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64")

export const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")
