/**
 * The pure half of finding an entity by part of its name and of describing it by all its texts
 * (src/kernel/nameWords.ts, src/query/names.ts).
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { foldedName, nameWords } from "../../src/kernel/nameWords.js"
import { rankNamed, resolveName, summaryOf } from "../../src/query/names.js"
import type { EntityStatement, NamedEntity } from "../../src/services/SearchRepo.js"

const entity = (id: number, name: string, facts = 1, aliases: Array<string> = []): NamedEntity => ({
  id,
  name,
  type: "person",
  description: "",
  aliases,
  facts
})

const said = (artifact_id: number, description: string, valid_at = "2026-01-01T00:00:00.000Z"): EntityStatement => ({
  entity_id: 1,
  artifact_id,
  description,
  valid_at,
  created_at: valid_at
})

describe("nameWords", () => {
  it("folds case and accents and splits on anything but letters and digits", () => {
    expect(nameWords("Zoë  O'Brien-Smith")).toEqual(["zoe", "o", "brien", "smith"])
    expect(nameWords("ÅSA Øberg")).toEqual(["asa", "øberg"])
    expect(nameWords("İstanbul")).toEqual(["istanbul"])
    expect(nameWords("P17 (Acme)")).toEqual(["p17", "acme"])
    expect(nameWords("山田 太郎")).toEqual(["山田", "太郎"])
    expect(nameWords("  ...  ")).toEqual([])
    expect(foldedName("Bob  J.")).toBe("bob j")
  })

  it("a name's words are found in its folded form, whatever the case", () => {
    fc.assert(fc.property(fc.string(), (name) => {
      expect(nameWords(name.toUpperCase()).join(" ")).toBe(nameWords(name.toLowerCase()).join(" "))
      for (const word of nameWords(name)) expect(word).not.toMatch(/\s/u)
    }))
  })
})

describe("rankNamed and resolveName", () => {
  const smith = entity(1, "Alice Smith", 3)
  const jones = entity(2, "Alice Jones", 5)
  const alice = entity(3, "Alice", 1)
  const bob = entity(4, "Bob Jones", 2, ["Bob J.", "Bobby"])

  it("the name spelled whole wins, of several types the one with the most facts", () => {
    const ranked = rankNamed("alice", [smith, jones, alice])
    expect(ranked.map((r) => [r.entity.id, r.match])).toEqual([
      [3, "name"],
      [2, "words of the name"],
      [1, "words of the name"]
    ])
    expect(resolveName(ranked)).toEqual({ _tag: "One", entity: alice })
    const twoTypes = [entity(5, "Mercury", 1), { ...entity(6, "mercury", 4), type: "place" }]
    expect(resolveName(rankNamed("MERCURY", twoTypes))).toMatchObject({ _tag: "One", entity: { id: 6 } })
  })

  it("words that several names hold are ambiguous: the candidates, most facts first", () => {
    const resolution = resolveName(rankNamed("Alice", [smith, jones]))
    expect(resolution._tag).toBe("Many")
    if (resolution._tag === "Many") expect(resolution.candidates.map((c) => c.entity.id)).toEqual([2, 1])
    expect(resolveName(rankNamed("smith", [smith, jones]))).toEqual({ _tag: "One", entity: smith })
  })

  it("an alias spelled whole finds its entity before any name holding its words", () => {
    const bobJ = entity(7, "Bob J. Miller", 9)
    const ranked = rankNamed("bob j", [bobJ, bob])
    expect(ranked.map((r) => [r.entity.id, r.match])).toEqual([[4, "alias"], [7, "words of the name"]])
    expect(resolveName(ranked)).toEqual({ _tag: "One", entity: bob })
    expect(rankNamed("bobby", [bob]).map((r) => r.match)).toEqual(["alias"])
  })

  it("the words must all be in one name or one alias, whole", () => {
    // "bob" in the name, "bobby" in an alias: no one spelling holds both
    expect(rankNamed("jones bobby", [bob])).toEqual([])
    expect(rankNamed("Ali", [smith])).toEqual([])
    expect(resolveName([])).toEqual({ _tag: "None" })
  })
})

describe("summaryOf", () => {
  it("newest first, each once (case, accents and the full stop aside), joined by semicolons", () => {
    expect(summaryOf([
      said(1, "engineer at Acme"),
      said(2, "leads the payments team"),
      said(3, "Engineer at Acme."),
      said(4, "  ")
    ])).toBe("Engineer at Acme; leads the payments team")
  })

  it("by the texts' event time, then the latest stored", () => {
    expect(summaryOf([
      said(5, "moved to Paris", "2020-01-01T00:00:00.000Z"),
      said(1, "lives in Berlin", "2025-01-01T00:00:00.000Z")
    ])).toBe("lives in Berlin; moved to Paris")
  })

  it("a statement whose words another holds in a row adds nothing", () => {
    expect(summaryOf([said(2, "engineer"), said(1, "senior engineer at Acme")])).toBe(
      "engineer; senior engineer at Acme"
    )
    expect(summaryOf([said(2, "senior engineer at Acme"), said(1, "engineer")])).toBe("senior engineer at Acme")
  })

  it("stays within the budget; a first statement too long is cut at a word with an ellipsis", () => {
    expect(summaryOf([said(1, "one two three four")], 10)).toBe("one two…")
    fc.assert(fc.property(
      fc.array(fc.string({ maxLength: 80 }), { maxLength: 20 }),
      fc.integer({ min: 2, max: 300 }),
      (texts, chars) => {
        const summary = summaryOf(texts.map((t, i) => said(i + 1, t)), chars)
        expect([...summary].length).toBeLessThanOrEqual(chars)
      }
    ))
  })
})
