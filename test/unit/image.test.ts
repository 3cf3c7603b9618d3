/**
 * Validation of an uploaded image: base64 (standard alphabet), at most 5 MiB decoded, and the
 * type detected from the bytes, with a 400 message that names what was found.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  decodeBase64,
  describeBytes,
  detectImageType,
  imagePath,
  MAX_IMAGE_BYTES,
  validateImage
} from "../../src/domain/Image.js"
import { runParams, validateRememberRequest } from "../../src/domain/Remember.js"
import { b64, gif, jpeg, png, sha256, webp } from "../support/images.js"

const valid = (base64: string) => {
  const r = validateImage(base64)
  if (Either.isLeft(r)) throw new Error(r.left)
  return r.right
}

const refused = (base64: string): string => {
  const r = validateImage(base64)
  if (Either.isRight(r)) throw new Error(`accepted as ${r.right.media_type}`)
  return r.left
}

const ascii = (s: string) => new Uint8Array(Buffer.from(s, "latin1"))

describe("detectImageType", () => {
  it.each(
    [
      ["JPEG", jpeg(), "image/jpeg"],
      ["PNG", png(), "image/png"],
      ["GIF89a", gif(), "image/gif"],
      ["GIF87a", ascii("GIF87a\x01\x00\x01\x00"), "image/gif"],
      ["WebP", webp(), "image/webp"]
    ] as const
  )("detects %s from its bytes", (_what, bytes, type) => {
    expect(detectImageType(bytes)).toBe(type)
  })

  it.each([
    ["a PDF", ascii("%PDF-1.7\n%...")],
    ["a truncated PNG signature", png().subarray(0, 7)],
    ["a RIFF that is not WebP", ascii("RIFF\x10\x00\x00\x00WAVEfmt ")],
    ["GIF with a wrong version", ascii("GIF88a\x01\x00")],
    ["two bytes of JPEG", new Uint8Array([0xff, 0xd8])],
    ["nothing", new Uint8Array()]
  ])("refuses %s", (_what, bytes) => {
    expect(detectImageType(bytes)).toBeUndefined()
  })
})

describe("validateImage", () => {
  it.each(
    [
      ["JPEG", jpeg(), "image/jpeg", "jpg"],
      ["PNG", png({ width: 3, height: 2 }), "image/png", "png"],
      ["GIF", gif(), "image/gif", "gif"],
      ["WebP", webp(), "image/webp", "webp"]
    ] as const
  )("accepts a %s: type, extension, SHA-256 and canonical base64", (_what, bytes, type, ext) => {
    const image = valid(b64(bytes))
    expect(image.media_type).toBe(type)
    expect(image.extension).toBe(ext)
    expect(Buffer.from(image.bytes).equals(Buffer.from(bytes))).toBe(true)
    expect(image.sha256).toBe(sha256(bytes))
    expect(image.sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(image.base64).toBe(b64(bytes))
    expect(imagePath(12, image)).toBe(`12/${sha256(bytes)}.${ext}`)
  })

  it("skips line breaks (wrapped base64, as MIME tools write it)", () => {
    const text = b64(png({ width: 8, height: 8 }))
    const wrapped = text.replace(/(.{76})/g, "$1\r\n")
    expect(wrapped).toContain("\r\n")
    expect(valid(wrapped).base64).toBe(text)
  })

  it.each([
    ["a character outside the alphabet", "iVBORw0K GgoAAAA", /not base64.*" "/],
    ["base64url", b64(png()).slice(0, 8) + "-_AA", /standard base64.*base64url/],
    ["a data URL", `data:image/png;base64,${b64(png())}`, /data: URL/],
    ["missing padding", "iVBORw0KGgo", /multiple of 4/],
    ["padding in the middle", "iVBO=w0KGgoA", /padding/],
    ["zero bytes", "", /empty/]
  ])("refuses %s", (_what, text, message) => {
    expect(refused(text)).toMatch(message)
  })

  it.each([
    ["a PDF document", ascii("%PDF-1.4 hello"), /JPEG, PNG, GIF or WebP; found a PDF document/],
    ["a BMP", ascii("BM6\x00\x00\x00\x00\x00"), /found a BMP image/],
    ["a TIFF", new Uint8Array([0x49, 0x49, 0x2a, 0x00, 1, 2, 3, 4]), /found a TIFF image/],
    ["an SVG", ascii("<?xml version=\"1.0\"?><svg></svg>"), /found an SVG or XML document/],
    ["a HEIC", ascii("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00"), /found a HEIC\/HEIF image/],
    ["a WAV", ascii("RIFF\x10\x00\x00\x00WAVEfmt "), /found a RIFF file that is not WebP/],
    ["text", ascii("hello world"), /found unknown data starting with bytes 68 65 6c 6c 6f 20 77 6f$/]
  ])("refuses %s, naming what it found", (_what, bytes, message) => {
    expect(refused(b64(bytes))).toMatch(message)
  })

  it("accepts exactly 5 MiB and refuses one byte more", () => {
    const exactly = new Uint8Array(MAX_IMAGE_BYTES)
    exactly.set(png())
    expect(valid(b64(exactly)).bytes.length).toBe(MAX_IMAGE_BYTES)
    const over = new Uint8Array(MAX_IMAGE_BYTES + 1)
    over.set(png())
    expect(refused(b64(over))).toMatch(/at most 5 MiB \(5242880 bytes\).*5242881 bytes/)
  })

  it("describes bytes for messages", () => {
    expect(describeBytes(new Uint8Array())).toBe("no data")
    expect(describeBytes(new Uint8Array([0xde, 0xad]))).toBe("unknown data starting with bytes de ad")
  })

  it("decodeBase64 decodes standard base64", () => {
    expect(Either.getOrThrow(decodeBase64("aGk="))).toEqual(new Uint8Array([0x68, 0x69]))
  })
})

describe("validateRememberRequest with an image", () => {
  it("carries the decoded image, so the pipeline does not decode it again", () => {
    const bytes = png({ width: 2, height: 2 })
    const r = validateRememberRequest({ user_id: "u", image: b64(bytes), session_id: "s1" })
    if (Either.isLeft(r)) throw new Error(r.left.message)
    expect(r.right.image_file?.media_type).toBe("image/png")
    expect(r.right.image_file?.sha256).toBe(sha256(bytes))
    expect(r.right.session_id).toBe("s1")
  })

  it.each([
    ["not base64", "%%%%", /image is not base64/],
    ["not an image", b64(ascii("%PDF-1.4")), /image must be a JPEG, PNG, GIF or WebP; found a PDF document/]
  ])("refuses an image that is %s with a 400", (_what, image, message) => {
    const r = validateRememberRequest({ user_id: "u", image })
    expect(Either.isLeft(r) && r.left._tag === "InvalidRequest" && message.test(r.left.message)).toBe(true)
  })

  it("still reports a conflicting field before looking at the image", () => {
    const r = validateRememberRequest({ user_id: "u", image: "%%%%", text: "x" })
    expect(Either.isLeft(r) && r.left.message).toBe("text must not be given together with image")
  })

  it("run params keep the media type, size and hash, never the bytes", () => {
    const bytes = gif()
    const r = Either.getOrThrow(validateRememberRequest({ user_id: "u", image: b64(bytes) }))
    const params = runParams(r)
    expect(params).toMatchObject({
      kind: "image",
      media_type: "image/gif",
      image_bytes: bytes.length,
      sha256: sha256(bytes)
    })
    expect(JSON.stringify(params)).not.toContain(b64(bytes))
  })
})
