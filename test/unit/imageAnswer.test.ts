/**
 * The extract_image answer: parsed with a schema (fences and prose tolerated, unusable answers
 * refused with a clear reason), then normalized as the seed says.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { IMAGE_THEMES, TEXT_BLOCK_KINDS } from "../../src/domain/Image.js"
import { buildExtractImagePrompt, parseImageAnswer } from "../../src/pipeline/image/prompt.js"

const read = (answer: unknown) => {
  const r = parseImageAnswer(typeof answer === "string" ? answer : JSON.stringify(answer))
  if (Either.isLeft(r)) throw new Error(r.left)
  return r.right
}

const unusable = (answer: string): string => {
  const r = parseImageAnswer(answer)
  if (Either.isRight(r)) throw new Error(`accepted: ${JSON.stringify(r.right)}`)
  return r.left
}

describe("parseImageAnswer", () => {
  it("reads a well-formed answer; text is the blocks joined by newlines", () => {
    expect(read({
      theme: "plot",
      title: "Revenue 2024",
      text_blocks: [
        { kind: "title", text: "Revenue 2024" },
        { kind: "axis", text: "Q1" },
        { kind: "axis", text: "Q2" }
      ]
    })).toEqual({
      theme: "plot",
      title: "Revenue 2024",
      text: "Revenue 2024\nQ1\nQ2",
      text_blocks: [
        { kind: "title", text: "Revenue 2024" },
        { kind: "axis", text: "Q1" },
        { kind: "axis", text: "Q2" }
      ]
    })
  })

  it("lowercases the theme; an unknown theme becomes other", () => {
    expect(read({ theme: " Photo ", title: "", text_blocks: [] }).theme).toBe("photo")
    expect(read({ theme: "bar chart", title: "", text_blocks: [] }).theme).toBe("other")
    expect(read({ theme: "", title: "", text_blocks: [] }).theme).toBe("other")
  })

  it("accepts every theme of the vocabulary", () => {
    for (const theme of IMAGE_THEMES) expect(read({ theme: theme.toUpperCase(), text_blocks: [] }).theme).toBe(theme)
  })

  it("takes the title from the first title block when the model gave none", () => {
    const r = read({
      theme: "slide",
      title: "  ",
      text_blocks: [{ kind: "heading", text: "Agenda" }, { kind: "Title", text: "Q3 review" }, {
        kind: "title",
        text: "second"
      }]
    })
    expect(r.title).toBe("Q3 review")
    expect(read({ theme: "slide", text_blocks: [{ kind: "title", text: "Only" }] }).title).toBe("Only")
    expect(read({ theme: "slide", title: null, text_blocks: [] }).title).toBe("")
  })

  it("keeps the model's own title over a title block", () => {
    expect(read({ theme: "slide", title: "Own", text_blocks: [{ kind: "title", text: "Block" }] }).title).toBe("Own")
  })

  it("lowercases block kinds, maps unknown or missing kinds to other, drops blank blocks", () => {
    const r = read({
      theme: "table",
      title: "",
      text_blocks: [
        { kind: "TABLE", text: "a | b" },
        { kind: "footnote", text: "* estimated" },
        { text: "no kind" },
        { kind: "paragraph", text: "   " },
        { kind: "caption", text: null },
        { kind: "legend", text: "  revenue  " }
      ]
    })
    expect(r.text_blocks).toEqual([
      { kind: "table", text: "a | b" },
      { kind: "other", text: "* estimated" },
      { kind: "other", text: "no kind" },
      { kind: "legend", text: "revenue" }
    ])
    expect(r.text).toBe("a | b\n* estimated\nno kind\nrevenue")
  })

  it("accepts every block kind of the vocabulary", () => {
    const r = read({ theme: "other", text_blocks: TEXT_BLOCK_KINDS.map((kind) => ({ kind, text: kind })) })
    expect(r.text_blocks.map((b) => b.kind)).toEqual([...TEXT_BLOCK_KINDS])
  })

  it("tolerates code fences and prose around the JSON", () => {
    const answer =
      "Here is what I see:\n```json\n{\"theme\": \"map\", \"title\": \"Berlin\", \"text_blocks\": [{\"kind\": \"label\", \"text\": \"Mitte\"}]}\n```\nDone."
    expect(read(answer)).toMatchObject({ theme: "map", title: "Berlin", text: "Mitte" })
  })

  it.each([
    ["prose without JSON", "I cannot read this image.", /not JSON/],
    ["a truncated answer", "{\"theme\": \"plot\", \"text_blocks\": [{\"kind\": \"title\", \"te", /not JSON/],
    ["no text_blocks", "{\"theme\": \"plot\", \"title\": \"x\"}", /text_blocks/],
    ["text_blocks not an array", "{\"theme\": \"plot\", \"text_blocks\": \"Q1 Q2\"}", /text_blocks.*array/],
    ["no theme", "{\"title\": \"x\", \"text_blocks\": []}", /theme/],
    [
      "a block whose text is a number",
      "{\"theme\": \"plot\", \"text_blocks\": [{\"kind\": \"axis\", \"text\": 7}]}",
      /text_blocks\[0\]\.text/
    ]
  ])("refuses %s", (_what, answer, reason) => {
    const message = unusable(answer)
    expect(message).toMatch(/^extract_image answer is/)
    expect(message).toMatch(reason)
  })
})

describe("buildExtractImagePrompt", () => {
  it("sends the image as an image block before the instruction, and asks for the JSON shape", () => {
    const prompt = buildExtractImagePrompt({ mediaType: "image/png", base64: "iVBORw0KGgo=" })
    expect(prompt.content[0]).toEqual({ type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" })
    expect(prompt.content[1]).toMatchObject({ type: "text" })
    for (const word of ["theme", "title", "text_blocks", ...IMAGE_THEMES, ...TEXT_BLOCK_KINDS]) {
      expect(prompt.system).toContain(word)
    }
  })
})
