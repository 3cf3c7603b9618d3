/**
 * The context block's budget as a property (src/query/contextBlock.ts, docs/READ.md "Context
 * block"), with fast-check:
 *
 * - pure, over random facts and entities with any text (line breaks, runs of spaces, punctuation
 *   at the ends, astral and lone-surrogate characters): `tokens <= max_tokens`, `tokens` is
 *   `countTokens(context)`, the block is exactly the headers and lines of the facts and entities
 *   it lists, and it is what the same greedy cut gives when every step counts the whole
 *   candidate block with the tokenizer (so the line-by-line sum the cut uses is exact);
 * - over random small graphs seeded into SQLite and `runContext` (with and without a query):
 *   the same budget and line checks.
 *
 * Plus the sentence rules of a fact and an entity, literally.
 */
import { it } from "@effect/vitest"
import { Effect, Layer, Runtime } from "effect"
import fc from "fast-check"
import { describe, expect } from "vitest"
import { SqliteLive } from "../../layers/sql/index.js"
import { MemoryVectorStoreLive } from "../../layers/vectors/MemoryVectorStore.js"
import { countTokens } from "../../src/kernel/tokenizer.js"
import { runContext } from "../../src/query/context.js"
import {
  ENTITIES_HEADER,
  entityLine,
  factLine,
  FACTS_HEADER,
  factSentence,
  renderContext
} from "../../src/query/contextBlock.js"
import { readDeps } from "../../src/query/deps.js"
import { DEFAULT_CONTEXT_TOKENS } from "../../src/query/requests.js"
import type { FactOut, LinkedEntityOut } from "../../src/query/responses.js"
import type { Database } from "../../src/services/Database.js"
import type { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import type { GraphRepo } from "../../src/services/GraphRepo.js"
import type { InferencesRepo } from "../../src/services/InferencesRepo.js"
import type { SearchRepo } from "../../src/services/SearchRepo.js"
import type { VectorStore } from "../../src/services/VectorStore.js"
import { noModels } from "../support/app.js"
import { seedGraph } from "../support/readSeed.js"

/** The block's lines as its facts and entities render them, under their headers. */
const expectedLines = (facts: ReadonlyArray<FactOut>, entities: ReadonlyArray<LinkedEntityOut>) => [
  ...(facts.length === 0 ? [] : [FACTS_HEADER, ...facts.map(factLine)]),
  ...(entities.length === 0 ? [] : [ENTITIES_HEADER, ...entities.map(entityLine)])
]

const checkBudget = (
  block: { context: string; tokens: number; facts: ReadonlyArray<FactOut>; entities: ReadonlyArray<LinkedEntityOut> },
  maxTokens: number
) => {
  expect(block.tokens).toBeLessThanOrEqual(maxTokens)
  expect(block.tokens).toBe(countTokens(block.context))
  expect(block.context).toBe(expectedLines(block.facts, block.entities).join("\n"))
}

/** The cut with the whole candidate block counted at every step: slow, obviously right. */
const referenceCut = (facts: ReadonlyArray<FactOut>, entities: ReadonlyArray<LinkedEntityOut>, maxTokens: number) => {
  const lines: Array<string> = []
  const keptFacts: Array<FactOut> = []
  const keptEntities: Array<LinkedEntityOut> = []
  const section = <A>(header: string, items: ReadonlyArray<A>, render: (a: A) => string, keep: (a: A) => void) => {
    let started = false
    for (const item of items) {
      const candidate = [...lines, ...(started ? [] : [header]), render(item)]
      if (countTokens(candidate.join("\n")) > maxTokens) continue
      lines.splice(0, lines.length, ...candidate)
      keep(item)
      started = true
    }
  }
  section(FACTS_HEADER, facts, factLine, (f) => keptFacts.push(f))
  section(ENTITIES_HEADER, entities, entityLine, (e) => keptEntities.push(e))
  return { context: lines.join("\n"), facts: keptFacts, entities: keptEntities }
}

const DAY = 24 * 3600 * 1000
const instant = fc.integer({ min: 0, max: 20_000 }).map((d) => new Date(Date.UTC(2000, 0, 1) + d * DAY).toISOString())

/** Text of every awkward kind: words, whitespace runs and line breaks, punctuation, any code unit. */
const text = fc.oneof(
  fc.constantFrom("Alice Novak", "Berlin", "a person", "lives in", ")", "...", "  ", "\n", "", "東京", "🙂"),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.array(fc.constantFrom("Alice", "lives", "in", " ", "\n", "\t", ".", ")", "(", "-", "#", "2021", "x"), {
    maxLength: 12
  }).map((parts) => parts.join(""))
)

const entityArb = (id: number): fc.Arbitrary<LinkedEntityOut> =>
  fc.record({ name: text, type: text, description: text }).map((e) => ({
    id,
    ...e,
    created_at: "2024-01-01T00:00:00.000Z",
    artifact_ids: [],
    session_ids: []
  }))

const graphArb = fc.integer({ min: 0, max: 8 }).chain((n) =>
  fc.record({
    entities: fc.tuple(...Array.from({ length: n }, (_, i) => entityArb(i + 1))),
    facts: fc.array(
      fc.record({
        source: fc.integer({ min: 0, max: Math.max(0, n - 1) }),
        target: fc.integer({ min: 0, max: Math.max(0, n - 1) }),
        relation: text,
        description: text,
        valid_at: instant,
        closed: fc.option(fc.integer({ min: 1, max: 2000 })),
        // an ended fact may have an unknown start
        openStart: fc.boolean()
      }),
      // a fact needs its two ends
      { maxLength: n === 0 ? 0 : 12 }
    )
  }).map(({ entities, facts }) => ({
    entities,
    facts: facts.map((f, i): FactOut => {
      const source = entities[f.source]!
      const target = entities[f.target]!
      return {
        id: i + 1,
        source: source.name,
        source_id: source.id,
        target: target.name,
        target_id: target.id,
        relation: f.relation,
        description: f.description,
        valid_at: f.closed !== null && f.openStart ? null : f.valid_at,
        ...(f.closed === null
          ? {}
          : { invalid_at: new Date(Date.parse(f.valid_at) + f.closed * DAY).toISOString() }),
        created_at: "2024-01-01T00:00:00.000Z",
        artifact_ids: [],
        session_ids: []
      }
    })
  }))
)

describe("the context block", () => {
  it("property: never above max_tokens, counted exactly, whole lines, the exact greedy cut", () => {
    fc.assert(
      fc.property(graphArb, fc.integer({ min: 1, max: 300 }), ({ entities, facts }, maxTokens) => {
        const block = renderContext(facts, entities, maxTokens)
        checkBudget(block, maxTokens)
        expect(block).toEqual({ ...referenceCut(facts, entities, maxTokens), tokens: block.tokens })
      }),
      { numRuns: 400 }
    )
  })

  it("a fact is its description when that names both ends, else source relation target", () => {
    const fact = (description: string, invalid_at?: string): FactOut => ({
      id: 1,
      source: "Alice  Smith",
      source_id: 1,
      target: "Paris",
      target_id: 2,
      relation: "lives_in",
      description,
      valid_at: "2025-01-15T00:00:00.000Z",
      ...(invalid_at === undefined ? {} : { invalid_at }),
      created_at: "2025-02-01T00:00:00.000Z",
      artifact_ids: [],
      session_ids: []
    })
    expect(factLine(fact("alice smith moved to  PARIS\nfor work."))).toBe(
      "- alice smith moved to PARIS for work (since 2025-01-15)"
    )
    expect(factLine(fact("Moved there.", "2026-03-01T00:00:00.000Z"))).toBe(
      "- Alice Smith lives in Paris (2025-01-15 to 2026-03-01)"
    )
    // an unknown start: the end alone; with neither (a known_at view hid the end) the sentence alone
    expect(factLine({ ...fact("Moved there.", "2026-03-01T00:00:00.000Z"), valid_at: null })).toBe(
      "- Alice Smith lives in Paris (until 2026-03-01)"
    )
    expect(factLine({ ...fact("Moved there."), valid_at: null })).toBe("- Alice Smith lives in Paris")
    expect(factSentence(fact(""))).toBe("Alice Smith lives in Paris")
    expect(entityLine({ name: "Alice  Smith", type: "person", description: "an engineer\nat Acme" })).toBe(
      "- Alice Smith (person): an engineer at Acme"
    )
    expect(entityLine({ name: "Paris", type: "", description: "" })).toBe("- Paris")
    expect(renderContext([], [], DEFAULT_CONTEXT_TOKENS)).toEqual({ context: "", facts: [], entities: [], tokens: 0 })
  })

  it("renders docs/READ.md's example block exactly", () => {
    const fact = (id: number, target: string, relation: string, description: string, valid_at: string, end?: string) =>
      ({
        id,
        source: "Alice Smith",
        source_id: 1,
        target,
        target_id: id,
        relation,
        description,
        valid_at,
        ...(end === undefined ? {} : { invalid_at: end }),
        created_at: "2025-01-15T00:00:00.000Z",
        artifact_ids: [],
        session_ids: []
      }) satisfies FactOut
    const entity = (id: number, name: string, type: string, description: string): LinkedEntityOut => ({
      id,
      name,
      type,
      description,
      created_at: "2020-01-01T00:00:00.000Z",
      artifact_ids: [],
      session_ids: []
    })
    const block = renderContext(
      [
        fact(
          7,
          "Berlin",
          "lives_in",
          "Alice Smith lives in Berlin.",
          "2020-01-01T00:00:00.000Z",
          "2025-01-15T00:00:00.000Z"
        ),
        fact(8, "Acme", "works_at", "She joined them.", "2021-03-01T00:00:00.000Z")
      ],
      [
        entity(1, "Alice Smith", "person", "Engineer at Acme"),
        entity(7, "Berlin", "place", "capital of Germany"),
        entity(8, "Acme", "organization", "a rocket maker in Bremen")
      ],
      DEFAULT_CONTEXT_TOKENS
    )
    expect(block.context).toBe([
      "# Facts",
      "- Alice Smith lives in Berlin (2020-01-01 to 2025-01-15)",
      "- Alice Smith works at Acme (since 2021-03-01)",
      "# Entities",
      "- Alice Smith (person): Engineer at Acme",
      "- Berlin (place): capital of Germany",
      "- Acme (organization): a rocket maker in Bremen"
    ].join("\n"))
    expect(block.tokens).toBe(77)
  })

  // live: as_of defaults to now, which the TestClock would hold at 1970
  it.live(
    "property: over random small graphs in SQLite, with and without a query",
    () =>
      Effect.gen(function*() {
        const runtime = yield* Effect.runtime<
          | Database
          | DatasetsRepo
          | GraphRepo
          | InferencesRepo
          | SearchRepo
          | VectorStore
          | Layer.Layer.Success<ReturnType<typeof noModels>>
        >()
        const NAMES = ["Alice Novak", "Bruno Diaz", "Berlin", "Lisbon", "Acme", "Rome"]
        let run = 0
        let nonEmpty = 0
        const world = fc.record({
          entities: fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: NAMES.length }),
          descriptions: fc.array(text, { minLength: NAMES.length, maxLength: NAMES.length }),
          facts: fc.array(
            fc.record({
              source: fc.nat(),
              target: fc.nat(),
              relation: fc.constantFrom("lives_in", "works_at", "knows"),
              description: text,
              valid_at: fc.integer({ min: 0, max: 3000 }).map((d) =>
                new Date(Date.UTC(2000, 0, 1) + d * DAY).toISOString()
              ),
              closed: fc.oneof(
                { arbitrary: fc.constant(null), weight: 3 },
                { arbitrary: fc.integer({ min: 1, max: 3000 }), weight: 1 }
              ),
              // an ended fact may have an unknown start
              openStart: fc.boolean(),
              session: fc.constantFrom(undefined, "s1", "s1")
            }),
            { minLength: 1, maxLength: 10 }
          ),
          query: fc.constantFrom(
            undefined,
            undefined,
            "Alice Novak",
            "Where does Alice live?",
            "Berlin Acme",
            "nothing"
          ),
          session_id: fc.constantFrom(undefined, undefined, "s1"),
          as_of: fc.constantFrom(undefined, "2006-01-01T00:00:00.000Z", "2030-01-01T00:00:00.000Z"),
          max_tokens: fc.integer({ min: 1, max: 300 })
        })
        const check = (w: typeof world extends fc.Arbitrary<infer T> ? T : never) =>
          Effect.gen(function*() {
            const user = `u${run++}`
            yield* seedGraph({
              user,
              entities: w.entities.map((name, i) => ({
                name,
                type: "thing",
                description: w.descriptions[i]!,
                at: "2024-01-01T00:00:00.000Z",
                sessions: ["s1"]
              })),
              facts: w.facts.map((f, i) => ({
                key: `F${i}`,
                source: w.entities[f.source % w.entities.length]!,
                target: w.entities[f.target % w.entities.length]!,
                relation: f.relation,
                description: f.description,
                valid_at: f.closed !== null && f.openStart ? null : f.valid_at,
                ...(f.closed === null
                  ? {}
                  : { invalid_at: new Date(Date.parse(f.valid_at) + f.closed * DAY).toISOString() }),
                at: "2024-01-01T00:00:00.000Z",
                ...(f.session === undefined ? {} : { sessions: [f.session] })
              }))
            })
            const deps = yield* readDeps
            const block = yield* runContext(deps, {
              user_id: user,
              dataset: "main",
              ...(w.query === undefined ? {} : { query: w.query }),
              ...(w.session_id === undefined ? {} : { session_id: w.session_id }),
              ...(w.as_of === undefined ? {} : { as_of: w.as_of }),
              max_tokens: w.max_tokens
            })
            checkBudget(block, w.max_tokens)
            if (block.facts.length > 0) nonEmpty++
          })
        yield* Effect.promise(() =>
          fc.assert(fc.asyncProperty(world, (w) => Runtime.runPromise(runtime)(check(w))), {
            numRuns: 100,
            endOnFailure: true
          })
        )
        // blocks with facts in them, or the property proves little
        expect(nonEmpty).toBeGreaterThanOrEqual(20)
      }).pipe(Effect.provide(Layer.mergeAll(SqliteLive(":memory:"), MemoryVectorStoreLive(), noModels()))),
    60_000
  )
})
