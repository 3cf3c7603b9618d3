/**
 * The remember response schemas: what a pipeline built is checked against them (the manager's
 * `decodeRememberBody`), a text's and an image's told apart, and a field of the wrong type
 * named (a bug of ours, answered as a 500).
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { decodeRememberBody, isImageBody } from "../../src/domain/Responses.js"

const AT = "2025-02-01T00:00:00.000Z"
const text = {
  artifact_id: 7,
  kind: "knowledge",
  valid_at: AT,
  created_at: AT,
  entities: [{ id: 1, name: "Alice", type: "person", description: "" }],
  edges: [{
    id: 3,
    source: "Alice",
    source_id: 1,
    target: "Berlin",
    target_id: 2,
    relation: "lives_in",
    description: "Alice lives in Berlin",
    valid_at: AT,
    created_at: AT
  }],
  invalidated_edges: [],
  geo: [{ entity: "Berlin", resolved: true }]
}
const image = {
  pipeline: "image",
  image_artifact_id: 1,
  extraction_id: 1,
  path: "1/ab.png",
  media_type: "image/png",
  bytes: 70,
  sha256: "ab",
  theme: "photo",
  title: "",
  text: "",
  text_blocks: [],
  model: "m",
  provider: "anthropic",
  reasoning: "none",
  input_tokens: 1,
  output_tokens: 1,
  cost_usd: 0,
  cached: false,
  valid_at: AT,
  created_at: AT
}

describe("decodeRememberBody", () => {
  it("takes a text's response as it is, and keeps only the contract's fields", () => {
    const body = Either.getOrThrow(decodeRememberBody({ ...text, internal: "not for the wire" }))
    expect(isImageBody(body)).toBe(false)
    expect(body).toEqual(text)
  })

  it("tells an image's response from a text's", () => {
    const body = Either.getOrThrow(decodeRememberBody(image))
    expect(isImageBody(body) && body.media_type).toBe("image/png")
  })

  it("names a field of the wrong type", () => {
    const r = decodeRememberBody({ ...text, entities: [{ id: "1", name: "Alice", type: "person", description: "" }] })
    expect(Either.isLeft(r) && r.left).toMatch(/entities/)
    expect(Either.isLeft(decodeRememberBody({ ...image, media_type: "image/bmp" }))).toBe(true)
  })
})
