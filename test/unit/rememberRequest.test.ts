import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { MAX_TEXT_BYTES, validateRememberRequest } from "../../src/domain/Remember.js"

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
    [{ user_id: "u" }, "text is required (or image)"],
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
      kind: "EPISODE",
      reasoning: { extract_graph: "High", resolve_edges: "none" },
      reference_time: "2025-01-31T13:00:00+01:00"
    })
    expect(r.kind).toBe("episode")
    expect(r.reasoning).toEqual({ extract_graph: "high", resolve_edges: "none" })
    expect(r.reference_time).toBe("2025-01-31T12:00:00.000Z")
  })

  it("treats an empty model name as the default model and ignores unknown fields", () => {
    const r = ok({ user_id: "u", text: "x", models: { extract_graph: "", resolve_edges: "claude-x" }, surprise: 1 })
    expect(r.models).toEqual({ resolve_edges: "claude-x" })
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
