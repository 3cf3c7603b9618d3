import { OpenApi } from "@effect/platform"
import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { MAX_TEXT_BYTES, RememberRequest, validateRememberRequest } from "../../src/domain/Remember.js"
import { GligabaoApi } from "../../src/http/Api.js"

const error = (body: unknown): string => {
  const r = validateRememberRequest(body)
  if (Either.isRight(r)) throw new Error(`expected a validation error for ${JSON.stringify(body)}`)
  return r.left.message
}
const ok = (body: unknown) => {
  const r = validateRememberRequest(body)
  if (Either.isLeft(r)) throw new Error(r.left.message)
  return r.right
}

describe("validateRememberRequest", () => {
  it("applies the defaults", () => {
    const r = ok({ user_id: "u", text: "Alice lives in Berlin." })
    expect(r).toMatchObject({
      user_id: "u",
      dataset: "main",
      kind: "knowledge",
      models: {},
      reasoning: {},
      web_search: false
    })
    expect(r.reference_time).toBeUndefined()
    expect(r.session_id).toBeUndefined()
  })

  it.each([
    [null, "the request body must be a JSON object"],
    [[1], "the request body must be a JSON object"],
    [{ text: "x" }, "user_id is required"],
    [{ user_id: "", text: "x" }, "user_id must not be empty"],
    [{ user_id: "  ", text: "x" }, "user_id must not be empty"],
    [{ user_id: 7, text: "x" }, "user_id must be a string"],
    [{ user_id: "u" }, "text is required (or image, or messages)"],
    [{ user_id: "u", text: "" }, "text must not be empty"],
    [{ user_id: "u", text: " \n " }, "text must not be empty"],
    [{ user_id: "u", text: 5 }, "text must be a string"],
    [{ user_id: "u", image: "aGk=", text: "x" }, "text must not be given together with image"],
    [{ user_id: "u", image: "aGk=", kind: "episode" }, "kind must not be given together with image"],
    [{ user_id: "u", image: "aGk=", timeseries: {} }, "timeseries must not be given together with image"],
    [{ user_id: "u", image: "aGk=", web_search: true }, "web_search must not be given together with image"],
    [{ user_id: "u", text: "x", kind: "note" }, "kind must be one of knowledge, episode"],
    [{ user_id: "u", text: "x", kind: 3 }, "kind must be one of knowledge, episode"],
    [{ user_id: "u", text: "x", reference_time: "yesterday" }, "reference_time must be an RFC 3339"],
    [{ user_id: "u", text: "x", reference_time: "2025-13-01T00:00:00Z" }, "reference_time must be an RFC 3339"],
    [{ user_id: "u", text: "x", reference_time: "2025-01-01" }, "reference_time must be an RFC 3339"],
    [{ user_id: "u", text: "x", reference_time: 1700000000 }, "reference_time must be an RFC 3339"],
    [{ user_id: "u", text: "x", session_id: "a".repeat(129) }, "session_id must be at most 128 bytes"],
    [{ user_id: "u", text: "x", session_id: "é".repeat(65) }, "session_id must be at most 128 bytes"],
    [{ user_id: "u", text: "x", session_id: "a\nb" }, "session_id must not contain control characters"],
    [{ user_id: "u", text: "x", session_id: "" }, "session_id must not be empty"],
    [{ user_id: "u", text: "x", session_id: 4 }, "session_id must be a string"],
    [{ user_id: "u", text: "x", dataset: "" }, "dataset must not be empty"],
    [{ user_id: "u", text: "x", models: { extract: "m" } }, "models.extract is not a stage"],
    [
      { user_id: "u", text: "x", models: { extract_graph: "my model" } },
      "models.extract_graph must not contain whitespace"
    ],
    [
      { user_id: "u", text: "x", models: { extract_graph: "m".repeat(129) } },
      "models.extract_graph must be at most 128 bytes"
    ],
    [{ user_id: "u", text: "x", models: { extract_graph: 3 } }, "models.extract_graph must be a string"],
    [{ user_id: "u", text: "x", models: "m" }, "models must be an object"],
    [
      { user_id: "u", text: "x", reasoning: { web_search: "low" } },
      "reasoning.web_search is not a stage that can reason"
    ],
    [
      { user_id: "u", text: "x", reasoning: { extract_graph: "max" } },
      "reasoning.extract_graph must be one of none, low, medium, high"
    ],
    [{ user_id: "u", text: "x", web_search: "yes" }, "web_search must be a boolean"],
    [{ user_id: "u", text: "x", timeseries: [] }, "timeseries must be an object"]
  ])("rejects %j", (body, message) => {
    expect(error(body)).toContain(message)
  })

  it("rejects a text over 1 MiB and accepts one of exactly 1 MiB", () => {
    expect(error({ user_id: "u", text: "a".repeat(MAX_TEXT_BYTES + 1) })).toContain("text must be at most")
    expect(ok({ user_id: "u", text: "a".repeat(MAX_TEXT_BYTES) }).text?.length).toBe(MAX_TEXT_BYTES)
  })

  it("normalizes kind, reasoning levels and reference_time", () => {
    const r = ok({
      user_id: "u",
      text: "x",
      kind: "episode",
      reasoning: { extract_graph: "high", resolve_edges: "none" },
      reference_time: "2025-01-31T13:00:00+01:00"
    })
    expect(r.kind).toBe("episode")
    expect(r.reasoning).toEqual({ extract_graph: "high", resolve_edges: "none" })
    expect(r.reference_time).toBe("2025-01-31T12:00:00.000Z")
  })

  it("treats an empty model name as the default model, and refuses an unknown field naming the closest known one", () => {
    const r = ok({ user_id: "u", text: "x", models: { extract_graph: "", resolve_edges: "claude-x" } })
    expect(r.models).toEqual({ resolve_edges: "claude-x" })
    expect(error({ user_id: "u", text: "x", refrence_time: "2020-01-01T00:00:00Z" })).toBe(
      "unknown field \"refrence_time\" (did you mean \"reference_time\"?)"
    )
    expect(error({ user_id: "u", text: "x", models: { extract_grap: "m" } })).toMatch(/^models\.extract_grap /)
    expect(error({ user_id: "u", text: "x", surprise: 1 })).toBe("unknown field \"surprise\"")
  })

  it("accepts an image request with session_id", () => {
    // the 8-byte PNG signature and an IHDR chunk header: detected as PNG
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
      .toString("base64")
    const r = ok({ user_id: "u", image: png, session_id: "s1" })
    expect(r.image).toBe(png)
    expect(r.image_file?.media_type).toBe("image/png")
    expect(r.session_id).toBe("s1")
  })

  it("rejects bytes that are not an image, naming what they are", () => {
    expect(error({ user_id: "u", image: "aGk=" })).toContain("image")
  })
})

describe("the request schema", () => {
  // the 1x1 PNG of the documented example
  const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

  it.each([
    // text or image is decided first, before any field's own value
    [{ user_id: "u", image: "aGk=", text: 5 }, "text must not be given together with image"],
    [{ user_id: "u", image: "aGk=", kind: "note" }, "kind must not be given together with image"],
    [{ user_id: "u", image: "aGk=", web_search: "yes" }, "web_search must not be given together with image"],
    [{ user_id: "u", dataset: "" }, "text is required (or image, or messages)"],
    // ... but after user_id, and a malformed image is named as such
    [{ user_id: " ", image: "aGk=", text: "x" }, "user_id must not be empty"],
    [{ image: "aGk=", text: "x" }, "user_id is required"],
    [{ user_id: "u", image: 5, text: "x" }, "image must be a non-empty base64 string"],
    // the image is checked where it stands, before the fields after it
    [{ user_id: "u", image: "%%%%", dataset: "" }, "image is not base64"],
    // reasoning has no default value: null is not a level
    [{ user_id: "u", text: "x", reasoning: { extract_graph: null } }, "reasoning.extract_graph must be one of"],
    // a stage map is read in the order sent
    [{ user_id: "u", text: "x", models: { bogus: "m", extract_graph: 3 } }, "models.bogus is not a stage"],
    [{ user_id: "u", text: "x", models: { extract_graph: 3, bogus: "m" } }, "models.extract_graph must be a string"],
    // timeseries: series or fetch first; an array over its limit is refused for its length
    [{ user_id: "u", text: "x", timeseries: { observations: "yes" } }, "timeseries must have series or fetch"],
    [
      { user_id: "u", text: "x", timeseries: { series: Array.from({ length: 101 }, () => 5) } },
      "timeseries.series must have at most 100 series"
    ]
  ])("reports %j as %j", (body, message) => {
    expect(error(body)).toContain(message)
  })

  it("null and an empty model name mean the default model", () => {
    expect(ok({ user_id: "u", text: "x", models: { extract_graph: null, resolve_edges: "", detect_geo: "m" } }).models)
      .toEqual({ detect_geo: "m" })
  })

  it("encodes a decoded request back to a body that decodes the same (what the typed client sends)", () => {
    for (
      const body of [
        { user_id: "u", text: "x", kind: "episode", reference_time: "2025-01-31T13:00:00+01:00" },
        { user_id: "u", image: png, session_id: "s" },
        { user_id: "u", text: "x", timeseries: { series: [{ key: "k", points: [["2025-01-31", 1]] }], fetch: true } }
      ]
    ) {
      const decoded = ok({ ...body, reasoning: { extract_graph: "low" } })
      const wire = Schema.encodeSync(RememberRequest)(decoded)
      expect(wire).not.toHaveProperty("image_file")
      expect(ok(wire)).toEqual(decoded)
    }
  })

  it("every example the OpenAPI document shows is a valid request", () => {
    const schemas = OpenApi.fromApi(GligabaoApi).components.schemas as Record<string, { examples?: Array<unknown> }>
    for (const name of ["RememberRequest", "EvalRememberRequest"]) {
      const examples = schemas[name]?.examples ?? []
      expect(examples.length, name).toBeGreaterThan(0)
      for (const example of examples) expect(Either.isRight(validateRememberRequest(example)), name).toBe(true)
    }
    const image = (schemas.RememberRequest?.examples ?? []).find((e) => (e as { image?: string }).image === png)
    expect(image).toBeDefined()
    expect(image).not.toHaveProperty("kind")
  })
})
