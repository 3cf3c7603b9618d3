import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  entityKey,
  type ExtractedGraph,
  nameKey,
  type NormalizedEntity,
  normalizeExtraction,
  normalizeRelation,
  normalizeType,
  resolveEndpoint
} from "../../src/kernel/normalize.js"

const edge = (
  source: string,
  relation: string,
  target: string,
  extra: Partial<ExtractedGraph["edges"][number]> = {}
) => ({
  source,
  target,
  relation,
  description: `${source} ${relation} ${target}`,
  valid_at: "2024-03-01T00:00:00.000Z",
  invalid_at: null,
  ...extra
})

describe("nameKey", () => {
  it("lowercases, trims and collapses whitespace", () => {
    expect(nameKey("  Alice   SMITH ")).toBe("alice smith")
  })

  it("treats Unicode whitespace as whitespace", () => {
    // NBSP, ideographic space, em space, line separator, tab and newline
    expect(nameKey("\u00a0Alice\u3000\u2003Smith\u2028\tJr\n")).toBe("alice smith jr")
  })

  it("keeps non-ASCII letters, lowercased", () => {
    expect(nameKey("ÉCOLE  Polytechnique")).toBe("école polytechnique")
  })

  it("is idempotent", () => {
    fc.assert(fc.property(fc.string({ unit: "grapheme" }), (s) => nameKey(nameKey(s)) === nameKey(s)))
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => nameKey(nameKey(s)) === nameKey(s)))
  })

  it("never has leading, trailing or repeated whitespace", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        const key = nameKey(s)
        return !/^\s|\s$|\s\s/u.test(key)
      })
    )
  })
})

describe("normalizeType", () => {
  it("lowercases, trims and collapses whitespace", () => {
    expect(normalizeType("  Sports   Team ")).toBe("sports team")
    expect(normalizeType("PERSON")).toBe("person")
  })

  it("makes an empty, blank or absent type `other`", () => {
    expect(normalizeType("")).toBe("other")
    expect(normalizeType(" \u00a0 ")).toBe("other")
    expect(normalizeType(null)).toBe("other")
    expect(normalizeType(undefined)).toBe("other")
  })
})

describe("normalizeRelation", () => {
  it("lowercases and turns whitespace runs into one underscore", () => {
    expect(normalizeRelation("  Lives   In ")).toBe("lives_in")
    expect(normalizeRelation("WORKS\u00a0AT\tAcme")).toBe("works_at_acme")
    expect(normalizeRelation("founded")).toBe("founded")
  })

  it("has no whitespace in its output, and is idempotent", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        const relation = normalizeRelation(s)
        return !/\s/u.test(relation) && normalizeRelation(relation) === relation
      })
    )
  })
})

describe("entityKey", () => {
  it("tells apart pairs that a naive join would confuse", () => {
    expect(entityKey("a b", "c")).not.toBe(entityKey("a", "b c"))
    expect(entityKey("alice", "person")).toBe(entityKey("alice", "person"))
    expect(entityKey("alice", "person")).not.toBe(entityKey("alice", "other"))
  })
})

describe("normalizeExtraction", () => {
  it("dedups entities on (name key, type), keeping the first spelling and first non-empty description", () => {
    const graph = normalizeExtraction({
      entities: [
        { name: "Alice  Smith", type: "Person", description: "" },
        { name: "alice smith", type: "person ", description: "Engineer" },
        { name: "ALICE SMITH", type: "person", description: "Manager" },
        { name: "Alice Smith", type: "organization", description: "A band" }
      ],
      edges: []
    })
    expect(graph.entities).toEqual([
      { name: "Alice Smith", name_key: "alice smith", type: "person", description: "Engineer" },
      { name: "Alice Smith", name_key: "alice smith", type: "organization", description: "A band" }
    ])
  })

  it("gives an untyped entity the type other and drops nameless ones", () => {
    const graph = normalizeExtraction({
      entities: [
        { name: "Acme", type: "", description: " Maker of things " },
        { name: "  ", type: "person", description: "nobody" }
      ],
      edges: []
    })
    expect(graph.entities).toEqual([{ name: "Acme", name_key: "acme", type: "other", description: "Maker of things" }])
  })

  it("normalizes edges: relation, trimmed endpoints and their keys", () => {
    const graph = normalizeExtraction({
      entities: [],
      edges: [edge("  Alice\u00a0Smith ", "Lives In", "Berlin ", {
        description: " Alice lives in Berlin. ",
        invalid_at: "2025-01-01T00:00:00.000Z"
      })]
    })
    expect(graph.edges).toEqual([
      {
        source: "Alice Smith",
        source_key: "alice smith",
        target: "Berlin",
        target_key: "berlin",
        relation: "lives_in",
        description: "Alice lives in Berlin.",
        valid_at: "2024-03-01T00:00:00.000Z",
        invalid_at: "2025-01-01T00:00:00.000Z"
      }
    ])
  })

  it("merges repeated edges of one text (same keys and relation), keeping the first", () => {
    const graph = normalizeExtraction({
      entities: [],
      edges: [
        edge("Alice", "lives in", "Berlin", { description: "first" }),
        edge("ALICE", "Lives  in", "berlin", { description: "second" }),
        edge("Alice", "works in", "Berlin", { description: "other relation" }),
        edge("Berlin", "lives in", "Alice", { description: "reversed" })
      ]
    })
    expect(graph.edges.map((e) => e.description)).toEqual(["first", "other relation", "reversed"])
  })
})

describe("resolveEndpoint", () => {
  const text: Array<NormalizedEntity> = [
    { name: "Paris", name_key: "paris", type: "place", description: "capital" },
    { name: "Paris", name_key: "paris", type: "person", description: "a Trojan prince" }
  ]
  const stored = [
    { id: 9, name: "Berlin", name_key: "berlin", type: "place", description: "new" },
    { id: 4, name: "berlin", name_key: "berlin", type: "other", description: "old" },
    { id: 7, name: "Paris", name_key: "paris", type: "place", description: "stored" }
  ]

  it("prefers an entity of the text, the first one listed when the name has several types", () => {
    expect(resolveEndpoint("paris", text, stored)).toEqual({ from: "text", entity: text[0] })
  })

  it("then a stored entity of any type with the same key, the lowest id", () => {
    expect(resolveEndpoint("berlin", text, stored)).toEqual({ from: "stored", entity: stored[1] })
  })

  it("else a new entity of type other, named as the edge spelled it", () => {
    expect(resolveEndpoint("acme corp", text, stored, "Acme  Corp")).toEqual({
      from: "new",
      entity: { name: "Acme Corp", name_key: "acme corp", type: "other", description: "" }
    })
    expect(resolveEndpoint("acme", [], []).entity.name).toBe("acme")
  })

  it("does not match a stored entity by a different key", () => {
    expect(resolveEndpoint("paris hilton", text, stored).from).toBe("new")
  })
})
