/**
 * Which stored facts resolve_edges shows first: both endpoints shared with a new fact, then
 * one (or found by similarity), newest first within each; exact repeats never.
 */
import { describe, expect, it } from "vitest"
import type { EdgeWithNames, EntityRow } from "../../src/domain/Rows.js"
import { type Candidates, type FoundBy, resolveEndpoints } from "../../src/pipeline/remember/candidates.js"
import { needsModel, rankForPrompt } from "../../src/pipeline/remember/reconcile.js"

const entity = (id: number, name: string): EntityRow => ({
  id,
  dataset_id: 1,
  name,
  name_key: name.toLowerCase(),
  type: "person",
  description: "",
  model_id: null,
  created_at: "2025-01-01T00:00:00.000Z"
})
const ALICE = entity(1, "Alice")
const BOB = entity(2, "Bob")
const CAROL = entity(3, "Carol")
const ALIAS = entity(4, "Ally")

// ids grow with age here: a larger id is newer, and `facts` is newest first
const fact = (id: number, source: EntityRow, target: EntityRow, relation = "knows"): EdgeWithNames => ({
  id,
  dataset_id: 1,
  source_id: source.id,
  target_id: target.id,
  relation,
  description: "",
  valid_at: "2025-01-01T00:00:00.000Z",
  invalid_at: null,
  created_at: `2025-01-01T00:00:${String(id).padStart(2, "0")}.000Z`,
  expired_at: null,
  artifact_id: null,
  model_id: null,
  source_name: source.name,
  target_name: target.name
})

const newEdge = (source: EntityRow, target: EntityRow, relation: string) => ({
  source: source.name,
  source_key: source.name_key,
  target: target.name,
  target_key: target.name_key,
  relation,
  description: "",
  valid_at: "2025-02-01T00:00:00.000Z",
  invalid_at: null
})

const candidates = (
  facts: ReadonlyArray<EdgeWithNames>,
  foundBy: Record<number, FoundBy> = {},
  foundByMeaning: ReadonlySet<number> = new Set()
): Candidates => {
  const stored = [ALICE, BOB, CAROL, ALIAS]
  const graph = { entities: [], edges: [newEdge(ALICE, BOB, "works_with")] }
  return {
    storedEntities: stored,
    facts: [...facts].sort((a, b) => b.id - a.id),
    foundBy: new Map(facts.map((f) => [f.id, foundBy[f.id] ?? "name"] as const)),
    foundByMeaning,
    similarityError: null,
    statedEnds: new Map(),
    ...resolveEndpoints(graph, stored)
  }
}

const open = [{
  index: 0,
  source_key: "id:1",
  target_key: "id:2",
  relation: "works_with",
  valid_at: "2025-02-01T00:00:00.000Z",
  invalid_at: null
}]

describe("rankForPrompt", () => {
  it("puts facts sharing both endpoints first, then one, newest first within each", () => {
    const oneOld = fact(1, ALICE, CAROL)
    const bothOld = fact(2, BOB, ALICE)
    const oneNew = fact(3, CAROL, BOB)
    const bothNew = fact(4, ALICE, BOB)
    const ranked = rankForPrompt(candidates([oneOld, bothOld, oneNew, bothNew]), open, new Set())
    expect(ranked.map((f) => f.id)).toEqual([4, 2, 3, 1])
  })

  it("counts a fact found by similarity as sharing one endpoint", () => {
    const alias = fact(5, ALIAS, CAROL)
    const one = fact(1, ALICE, CAROL)
    const ranked = rankForPrompt(candidates([one, alias], { 5: "similar" }), open, new Set())
    expect(ranked.map((f) => f.id)).toEqual([5, 1])
  })

  it("counts a fact found by its meaning as sharing both endpoints", () => {
    const both = fact(4, ALICE, BOB)
    const meant = fact(2, ALIAS, CAROL)
    const one = fact(3, ALICE, CAROL)
    const ranked = rankForPrompt(
      candidates([both, meant, one], { 2: "similar_fact" }, new Set([0])),
      open,
      new Set()
    )
    expect(ranked.map((f) => f.id)).toEqual([4, 2, 3])
  })

  it("leaves out the facts a new fact repeats exactly", () => {
    const ranked = rankForPrompt(candidates([fact(1, ALICE, CAROL), fact(4, ALICE, BOB)]), open, new Set([4]))
    expect(ranked.map((f) => f.id)).toEqual([1])
  })
})

describe("needsModel: a new fact is compared only when it shares an entity with a stored candidate", () => {
  const DAN = entity(5, "Dan")
  const EVE = entity(6, "Eve")
  const withGraph = (
    facts: ReadonlyArray<EdgeWithNames>,
    edges: ReadonlyArray<ReturnType<typeof newEdge>>,
    foundBy: Record<number, FoundBy> = {},
    foundByMeaning: ReadonlySet<number> = new Set()
  ): Candidates => {
    const stored = [ALICE, BOB, CAROL, ALIAS, DAN, EVE]
    return {
      storedEntities: stored,
      facts,
      foundBy: new Map(facts.map((f) => [f.id, foundBy[f.id] ?? "name"] as const)),
      foundByMeaning,
      similarityError: null,
      statedEnds: new Map(),
      ...resolveEndpoints({ entities: [], edges }, stored)
    }
  }

  it("asks when a new fact shares an endpoint with a candidate", () => {
    expect(needsModel(withGraph([fact(1, ALICE, CAROL)], [newEdge(ALICE, BOB, "works_with")]))).toBe(true)
  })

  it("does not ask about new facts that share no entity with any candidate", () => {
    expect(needsModel(withGraph([fact(1, ALICE, CAROL)], [newEdge(DAN, EVE, "knows")]))).toBe(false)
    expect(needsModel(withGraph([], [newEdge(ALICE, BOB, "works_with")]))).toBe(false)
  })

  it("asks about every such fact when a candidate was found by similarity (its alias is not known by name)", () => {
    expect(needsModel(withGraph([fact(1, ALIAS, CAROL)], [newEdge(DAN, EVE, "knows")], { 1: "similar" }))).toBe(true)
  })

  it("asks about a fact whose description found a candidate by its meaning, not about the others", () => {
    const edges = [newEdge(DAN, EVE, "knows"), newEdge(EVE, DAN, "met")]
    // a fact between aliases, found by meaning only: "similar_fact" alone does not open every fact
    expect(needsModel(withGraph([fact(1, ALIAS, CAROL)], edges, { 1: "similar_fact" }))).toBe(false)
    expect(needsModel(withGraph([fact(1, ALIAS, CAROL)], edges, { 1: "similar_fact" }, new Set([1])))).toBe(true)
  })

  it("does not ask when the only candidate is an exact repeat", () => {
    const repeat = { ...fact(1, ALICE, BOB, "works_with"), valid_at: "2025-02-01T00:00:00.000Z" }
    expect(needsModel(withGraph([repeat], [newEdge(ALICE, BOB, "works_with")]))).toBe(false)
  })
})
