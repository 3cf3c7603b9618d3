/**
 * The forget's planner (src/forget/plan.ts) on generated stores, in memory: a small world of
 * artifacts, facts with their supporters, recorded decisions and entities, and a forget of some
 * artifacts, facts and entities. The loader is played by the world itself. Checked: the plan
 * does not depend on how much was read before it was asked (incremental reads give the plan of a
 * store read whole), and what it writes keeps the rules of docs/FORGET.md.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type ForgetTarget, type Neighbourhood, planForget, type Planned, type Wants } from "../../src/forget/plan.js"
import { tripleKey } from "../../src/kernel/closures.js"
import type { ForgetEntity, ForgetFact, StoredClosure } from "../../src/services/ForgetRepo.js"

const NOW = "2030-06-01T00:00:00.000Z"
const year = (y: number) => `${2020 + y}-01-01T00:00:00.000Z`
const ARTIFACTS = [1, 2, 3, 4, 5]
const ENTITIES = [101, 102, 103, 104]

interface World {
  readonly facts: ReadonlyArray<ForgetFact>
  readonly closures: ReadonlyArray<StoredClosure>
  readonly entities: ReadonlyArray<ForgetEntity & { readonly linkedBy: ReadonlyArray<number> }>
  readonly sessions: ReadonlyMap<number, string>
}

const maybeYear = fc.option(fc.integer({ min: 0, max: 6 }).map(year), { nil: null })

const factArb = (id: number) =>
  fc.record({
    source_id: fc.constantFrom(101, 102),
    target_id: fc.constantFrom(103, 104),
    relation: fc.constantFrom("lives_in", "works_at"),
    valid_at: maybeYear,
    length: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
    closed: fc.boolean(),
    artifact_id: fc.option(fc.constantFrom(...ARTIFACTS), { nil: null, freq: 8 }),
    embedded: fc.boolean(),
    supporters: fc.uniqueArray(
      fc.record({
        artifact_id: fc.constantFrom(...ARTIFACTS),
        stated: fc.boolean(),
        valid_at: maybeYear,
        invalid_at: maybeYear
      }),
      { selector: (s) => s.artifact_id, maxLength: 3 }
    )
  }).map((f): ForgetFact => {
    const invalid_at = f.length === null || f.valid_at === null
      ? null
      : year(Number(f.valid_at.slice(0, 4)) - 2020 + f.length)
    const anchor = f.artifact_id ?? f.supporters[0]?.artifact_id ?? null
    const supporters = [
      ...f.supporters,
      ...(anchor === null || f.supporters.some((s) => s.artifact_id === anchor)
        ? []
        : [{ artifact_id: anchor, stated: true, valid_at: f.valid_at, invalid_at }])
    ]
    return {
      id,
      source_id: f.source_id,
      target_id: f.target_id,
      relation: f.relation,
      description: `fact ${id}`,
      valid_at: f.valid_at,
      invalid_at,
      expired_at: f.closed && invalid_at !== null ? NOW : null,
      artifact_id: anchor,
      embedded: f.embedded,
      supporters: supporters.map((s) => ({
        artifact_id: s.artifact_id,
        artifact_created_at: year(s.artifact_id),
        description: s.stated ? `text ${s.artifact_id} on ${id}` : null,
        valid_at: s.valid_at,
        invalid_at: s.invalid_at
      }))
    }
  })

const worldArb: fc.Arbitrary<World> = fc.integer({ min: 1, max: 8 }).chain((count) => {
  const ids = Array.from({ length: count }, (_, i) => i + 1)
  return fc.record({
    facts: fc.tuple(...ids.map(factArb)),
    closures: fc.array(
      fc.record({
        edge_id: fc.constantFrom(...ids),
        by_edge_id: fc.option(fc.constantFrom(...ids), { nil: null }),
        artifact_id: fc.option(fc.constantFrom(...ARTIFACTS), { nil: null }),
        kind: fc.constantFrom("close", "born_closed", "repeat_end", "inherited", "hand", "contradicts"),
        invalid_at: maybeYear,
        prev_invalid_at: maybeYear
      }),
      { maxLength: 10 }
    ),
    statements: fc.array(
      fc.record({
        entity: fc.constantFrom(...ENTITIES),
        artifact: fc.constantFrom(...ARTIFACTS),
        name: fc.option(fc.constantFrom("Ann", "ann", "Bo"), { nil: null }),
        description: fc.option(fc.constantFrom("", "a person", "a place"), { nil: null })
      }),
      { maxLength: 10 }
    ),
    embedded: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
    sessions: fc.array(fc.constantFrom("s1", "s2"), { minLength: 5, maxLength: 5 })
  }).map(({ closures, embedded, facts, sessions, statements }): World => ({
    facts,
    closures: closures
      .filter((c) => c.by_edge_id !== c.edge_id)
      .map((c, i): StoredClosure => ({
        ...c,
        id: i + 1,
        by_edge_id: c.kind === "repeat_end" || c.kind === "hand" ? null : c.by_edge_id,
        expired_at: NOW,
        created_at: NOW
      })),
    entities: ENTITIES.map((id, i) => {
      // a link per artifact, oldest artifact first
      const own = [...new Map(statements.filter((s) => s.entity === id).map((s) => [s.artifact, s])).values()]
        .sort((a, b) => a.artifact - b.artifact)
      return {
        id,
        // its texts spell it "Ann" or "ann"; a merge may have brought "Bo", an alias
        name: "Ann",
        description: "",
        embedded: embedded[i]!,
        statements: own.map((s) => ({ name: s.name, description: s.description })),
        linkedBy: own.map((s) => s.artifact),
        fact_ends: facts.filter((f) => f.source_id === id).length + facts.filter((f) => f.target_id === id).length
      }
    }),
    sessions: new Map(ARTIFACTS.map((a, i) => [a, sessions[i]!]))
  }))
})

/** What a forget names: artifacts, and (a correction) a stored fact or entity. */
const targetOf = (world: World): fc.Arbitrary<ForgetTarget> =>
  fc.record({
    artifacts: fc.subarray(ARTIFACTS).map((ids) => ids.map((id) => ({ id, kind: id % 2 === 0 ? "chunk" : "text" }))),
    facts: fc.subarray(world.facts.map((f) => f.id), { maxLength: 1 }),
    entities: fc.subarray(ENTITIES, { maxLength: 1 })
  })

/** The port's reads, answered by the world as the SQL repository answers them. */
const reader = (world: World, target: ForgetTarget) => {
  const forgotten = new Set(target.artifacts.map((a) => a.id))
  const fact = (id: number): ForgetFact | null => {
    const f = world.facts.find((x) => x.id === id)
    if (f === undefined) return null
    const remaining = f.supporters.filter((s) => !forgotten.has(s.artifact_id))
    return { ...f, supporters: remaining.sort((a, b) => a.artifact_id - b.artifact_id) }
  }
  const entity = (id: number): ForgetEntity | null => {
    const e = world.entities.find((x) => x.id === id)
    if (e === undefined) return null
    const { linkedBy, ...row } = e
    return { ...row, statements: row.statements.filter((_, i) => !forgotten.has(linkedBy[i]!)) }
  }
  const touching = (id: number) => world.closures.filter((c) => c.edge_id === id || c.by_edge_id === id)
  const first: Neighbourhood = {
    datasetId: 9,
    touched: [
      ...new Set([
        ...world.facts.filter((f) =>
          (f.artifact_id !== null && forgotten.has(f.artifact_id)) ||
          f.supporters.some((s) => forgotten.has(s.artifact_id))
        ).map((f) => f.id),
        ...target.facts
      ])
    ],
    linkedEntities: world.entities.filter((e) => e.linkedBy.some((a) => forgotten.has(a))).map((e) => e.id),
    sessions: [...new Set([...forgotten].map((a) => world.sessions.get(a)!))],
    facts: new Map(),
    closures: new Map(),
    closuresOf: new Set(),
    triples: new Map(),
    entities: new Map()
  }
  const more = (n: Neighbourhood, wants: Wants): Neighbourhood => ({
    ...n,
    facts: new Map([...n.facts, ...wants.facts.map((id) => [id, fact(id)] as const)]),
    closures: new Map([...n.closures, ...wants.closuresOf.flatMap(touching).map((c) => [c.id, c] as const)]),
    closuresOf: new Set([...n.closuresOf, ...wants.closuresOf]),
    triples: new Map([
      ...n.triples,
      ...wants.triples.map((t) =>
        [tripleKey(t), world.facts.filter((f) => tripleKey(f) === tripleKey(t)).map((f) => f.id)] as const
      )
    ]),
    entities: new Map([...n.entities, ...wants.entities.map((id) => [id, entity(id)] as const)])
  })
  const whole = more(first, {
    facts: world.facts.map((f) => f.id),
    closuresOf: world.facts.map((f) => f.id),
    triples: world.facts,
    entities: ENTITIES
  })
  return { first, more, whole }
}

/** The driver of src/forget/forgetRows.ts over the world; the plan and how many reads it took. */
const plan = (world: World, target: ForgetTarget): { readonly plan: Planned; readonly reads: number } => {
  const { first, more } = reader(world, target)
  let n = first
  let reads = 0
  let p = planForget(n, target, NOW)
  while (p._tag === "NeedsMore") {
    n = more(n, p.wants)
    reads++
    if (reads > 500) throw new Error("the planner keeps asking")
    p = planForget(n, target, NOW)
  }
  return { plan: p, reads }
}

const cases = worldArb.chain((world) => fc.tuple(fc.constant(world), targetOf(world)))

describe("planForget properties", () => {
  it("plans the same from incremental reads as from the store read whole", () => {
    fc.assert(fc.property(cases, ([world, target]) => {
      const whole = planForget(reader(world, target).whole, target, NOW)
      expect(whole._tag).toBe("Planned")
      expect(plan(world, target).plan).toEqual(whole)
    }))
  })

  it("deletes the facts named and those no remaining artifact supports; the others only as merged repeats", () => {
    fc.assert(fc.property(cases, ([world, target]) => {
      const { plan: p } = plan(world, target)
      const forgotten = new Set(target.artifacts.map((a) => a.id))
      const merged = new Set(p.merges.map((m) => m.from))
      const deleted = new Set(p.deletedFacts)
      for (const f of world.facts) {
        const touched = f.supporters.some((s) => forgotten.has(s.artifact_id)) ||
          (f.artifact_id !== null && forgotten.has(f.artifact_id))
        const unsupported = f.supporters.every((s) => forgotten.has(s.artifact_id))
        if (target.facts.includes(f.id) || (touched && unsupported)) expect(deleted.has(f.id)).toBe(true)
        else if (deleted.has(f.id)) expect(merged.has(f.id)).toBe(true)
      }
      expect(p.deletedFacts.length).toBe(deleted.size)
    }))
  })

  it("anchors what stays to a remaining artifact, with its words; merges only repeats, into facts that stay", () => {
    fc.assert(fc.property(cases, ([world, target]) => {
      const { plan: p } = plan(world, target)
      const forgotten = new Set(target.artifacts.map((a) => a.id))
      const deleted = new Set(p.deletedFacts)
      for (const u of p.factUpdates) {
        expect(deleted.has(u.id)).toBe(false)
        if (u.artifact_id !== null) expect(forgotten.has(u.artifact_id)).toBe(false)
        const before = world.facts.find((f) => f.id === u.id)!
        if (p.reanchored.includes(u.id)) {
          const anchor = before.supporters.filter((s) => !forgotten.has(s.artifact_id))
            .sort((a, b) => a.artifact_id - b.artifact_id)[0]!
          expect(u.artifact_id).toBe(anchor.artifact_id)
          expect(u.description).toBe(anchor.description ?? before.description)
        }
        if (u.reembed) expect(before.embedded && u.description !== before.description).toBe(true)
      }
      for (const m of p.merges) {
        const [from, into] = [m.from, m.into].map((id) => world.facts.find((f) => f.id === id)!)
        expect(from!.id).not.toBe(into!.id)
        expect(tripleKey(from!)).toBe(tripleKey(into!))
        expect(deleted.has(m.from)).toBe(true)
      }
      expect(p.reopened.every((id) => !deleted.has(id))).toBe(true)
      expect(p.reanchored.every((id) => !deleted.has(id))).toBe(true)
    }))
  })

  it("passes decisions on only between facts that stay, of different texts, never to a fact itself", () => {
    fc.assert(fc.property(cases, ([world, target]) => {
      const { plan: p } = plan(world, target)
      const deleted = new Set(p.deletedFacts)
      const anchorOf = new Map(world.facts.map((f) => [f.id, f.artifact_id]))
      for (const u of p.factUpdates) anchorOf.set(u.id, u.artifact_id)
      for (const c of p.closures) {
        expect(c.kind).toBe("inherited")
        expect(c.by_edge_id).not.toBeNull()
        expect(c.edge_id).not.toBe(c.by_edge_id)
        expect(deleted.has(c.edge_id) || deleted.has(c.by_edge_id!)).toBe(false)
      }
    }))
  })

  it("deletes the entities named and those nothing remaining states or touches; renames only those that stay", () => {
    fc.assert(fc.property(cases, ([world, target]) => {
      const { plan: p } = plan(world, target)
      const forgotten = new Set(target.artifacts.map((a) => a.id))
      const deletedFacts = new Set(p.deletedFacts)
      const deleted = new Set([...p.deletedEntities.named, ...p.deletedEntities.orphans])
      expect(new Set(p.deletedEntities.named)).toEqual(new Set(target.entities))
      for (const e of world.entities) {
        const stated = e.linkedBy.some((a) => !forgotten.has(a))
        const touched = world.facts.some((f) =>
          !deletedFacts.has(f.id) && (f.source_id === e.id || f.target_id === e.id)
        )
        if (p.deletedEntities.orphans.includes(e.id)) expect(stated || touched).toBe(false)
        if (!deleted.has(e.id) && !stated && !touched && p.sessionLinks.entityIds.includes(e.id)) {
          throw new Error(`entity ${e.id} is left with nothing`)
        }
      }
      for (const u of p.entityUpdates) expect(deleted.has(u.id)).toBe(false)
      // an alias never becomes the name: a spelling of the same key may
      for (const u of p.entityUpdates) expect(u.name.toLowerCase()).toBe("ann")
      // the words of those that lost statements are read anew; none when no text is forgotten
      expect(p.renamedEntities.filter((id) => deleted.has(id))).toEqual([])
      if (target.artifacts.length === 0) expect(p.renamedEntities).toEqual([])
      for (const e of world.entities) {
        if (!deleted.has(e.id) && e.linkedBy.some((a) => forgotten.has(a))) expect(p.renamedEntities).toContain(e.id)
      }
      expect(p.vectorDeletes.filter((v) => v.index_name.endsWith("entities")).length).toBe(
        [...deleted].filter((id) => world.entities.find((e) => e.id === id)!.embedded).length +
          p.entityUpdates.filter((u) => world.entities.find((e) => e.id === u.id)!.embedded).length
      )
    }))
  })

  it("a forget of nothing plans nothing", () => {
    fc.assert(fc.property(worldArb, (world) => {
      const { plan: p } = plan(world, { artifacts: [], facts: [], entities: [] })
      expect(p).toMatchObject({
        merges: [],
        closures: [],
        factUpdates: [],
        deletedFacts: [],
        deletedEntities: { named: [], orphans: [] },
        entityUpdates: [],
        vectorDeletes: []
      })
    }))
  })

  it("merges a fact without a start whose stated end moved later with the stay of it it now overlaps", () => {
    // Osaka (no start) said "until 2024" by artifact 1 and "until 2021" by artifact 2, cut at 2020 by
    // a Lisbon of 2020 (fact 3); Osaka 2022 (fact 2, artifact 3) was stored anew, closing Lisbon.
    // Forgetting artifact 2 leaves Osaka until 2024, the same stay as Osaka 2022: one fact.
    const support = (artifact_id: number, valid_at: string | null, invalid_at: string | null) => ({
      artifact_id,
      artifact_created_at: year(artifact_id),
      description: `text ${artifact_id}`,
      valid_at,
      invalid_at
    })
    const osaka = { source_id: 101, target_id: 103, relation: "lives_in", embedded: false }
    const world: World = {
      facts: [
        {
          ...osaka,
          id: 1,
          description: "until 2024",
          valid_at: null,
          invalid_at: year(0),
          expired_at: NOW,
          artifact_id: 1,
          supporters: [support(1, null, year(4)), support(2, null, year(1))]
        },
        {
          ...osaka,
          id: 2,
          description: "since 2022",
          valid_at: year(2),
          invalid_at: null,
          expired_at: null,
          artifact_id: 3,
          supporters: [support(3, year(2), null)]
        },
        {
          ...osaka,
          id: 3,
          target_id: 104,
          description: "Lisbon",
          valid_at: year(0),
          invalid_at: year(2),
          expired_at: NOW,
          artifact_id: 4,
          supporters: [support(4, year(0), null)]
        }
      ],
      closures: [
        { id: 1, edge_id: 1, by_edge_id: 3, artifact_id: 1, kind: "born_closed" as const, invalid_at: year(0) },
        { id: 2, edge_id: 1, by_edge_id: null, artifact_id: 2, kind: "repeat_end" as const, invalid_at: year(1) },
        { id: 3, edge_id: 3, by_edge_id: 2, artifact_id: 3, kind: "close" as const, invalid_at: year(2) }
      ].map((c): StoredClosure => ({ ...c, prev_invalid_at: null, expired_at: NOW, created_at: NOW })),
      entities: [],
      sessions: new Map()
    }
    const { plan: p } = plan(world, { artifacts: [{ id: 2, kind: "text" }], facts: [], entities: [] })
    expect(p.merges).toEqual([{ from: 2, into: 1 }])
    expect(p.factUpdates.find((u) => u.id === 1)).toMatchObject({
      valid_at: year(2),
      invalid_at: year(4),
      expired_at: null
    })
  })
})
