import { Either, Schema } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { firstJsonObject, parseModelJson } from "../../src/kernel/json.js"

describe("firstJsonObject", () => {
  it("returns a bare object", () => {
    expect(firstJsonObject(`{"a":1}`)).toBe(`{"a":1}`)
  })

  it("tolerates ```json fences and prose around the object", () => {
    const text = "Here is the graph:\n```json\n{\"entities\": [], \"edges\": []}\n```\nHope this helps {:"
    expect(firstJsonObject(text)).toBe(`{"entities": [], "edges": []}`)
  })

  it("keeps braces and escaped quotes inside strings", () => {
    const json = String.raw`{"name": "a } b { c", "quote": "she said \"}\" and left", "back": "x\\"}`
    expect(firstJsonObject(`prefix ${json} suffix {"b":2}`)).toBe(json)
    expect(JSON.parse(firstJsonObject(json)!)).toEqual({
      name: "a } b { c",
      quote: "she said \"}\" and left",
      back: "x\\"
    })
  })

  it("returns the first of several top-level objects, with nesting intact", () => {
    expect(firstJsonObject(`{"a":{"b":{"c":[{}]}}} {"d":1}`)).toBe(`{"a":{"b":{"c":[{}]}}}`)
  })

  it("skips balanced braces in prose that are not JSON", () => {
    expect(firstJsonObject(`Use {name} and {type}: {"ok": true}`)).toBe(`{"ok": true}`)
  })

  it("does not take an object nested in a broken one for the answer", () => {
    expect(firstJsonObject(`{"edges": [{"a": 1}], oops}`)).toBeUndefined()
  })

  it("returns undefined for a truncated object, even when it holds complete inner objects", () => {
    expect(firstJsonObject(`{"entities": [{"name": "Alice"}, {"name": "Bo`)).toBeUndefined()
    expect(firstJsonObject("```json\n{\"entities\": [")).toBeUndefined()
  })

  it("returns undefined when there is no object", () => {
    expect(firstJsonObject("")).toBeUndefined()
    expect(firstJsonObject("I cannot help with that.")).toBeUndefined()
    expect(firstJsonObject("[1, 2, 3]")).toBeUndefined()
  })

  it("finds any JSON object wrapped in fences and prose without braces", () => {
    const prose = fc.string().map((s) => s.replace(/[{}]/g, ""))
    const value = fc.dictionary(fc.string(), fc.jsonValue())
    fc.assert(
      fc.property(prose, value, prose, (before, object, after) => {
        const text = `${before}\n\`\`\`json\n${JSON.stringify(object, null, 1)}\n\`\`\`\n${after}`
        const found = firstJsonObject(text)
        return found !== undefined && JSON.stringify(JSON.parse(found)) === JSON.stringify(object)
      })
    )
  })

  it("returns undefined for any strict prefix of an object (a truncated answer)", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), fc.nat(), (object, cut) => {
        const json = JSON.stringify(object)
        return firstJsonObject(json.slice(0, cut % json.length)) === undefined
      })
    )
  })
})

describe("parseModelJson", () => {
  const Answer = Schema.Struct({
    items: Schema.propertySignature(Schema.Array(Schema.Struct({ n: Schema.Number }))).annotations({
      missingMessage: () => "missing array `items`"
    })
  })

  it("decodes the first object of the answer", () => {
    expect(parseModelJson(Answer, "```json\n{\"items\": [{\"n\": 1}], \"extra\": true}\n```", "test")).toEqual(
      Either.right({ items: [{ n: 1 }] })
    )
  })

  it("says the answer is not JSON, quoting its start", () => {
    expect(parseModelJson(Answer, "Sorry, I can't.", "test")).toEqual(
      Either.left(`test answer is not JSON: no complete JSON object in "Sorry, I can't."`)
    )
    expect(parseModelJson(Answer, "  ", "test")).toEqual(
      Either.left("test answer is not JSON: no complete JSON object in the answer is empty")
    )
  })

  it("names a missing field with its custom message", () => {
    expect(parseModelJson(Answer, "{}", "test")).toEqual(Either.left("test answer is invalid: missing array `items`"))
  })

  it("names the path of a mistyped field", () => {
    expect(parseModelJson(Answer, `{"items": [{"n": 1}, {"n": "2"}]}`, "test")).toEqual(
      Either.left("test answer is invalid: `items[1].n` expected number, actual \"2\"")
    )
    expect(parseModelJson(Answer, `{"items": [{}]}`, "test")).toEqual(
      Either.left("test answer is invalid: `items[0].n` is missing")
    )
  })
})
