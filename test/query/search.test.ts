/**
 * Retrieval on a seeded graph, on SQLite and PostgreSQL: each source alone (full text, vectors,
 * graph neighbourhood) and fused, time travel in event time (as_of) and ingestion time
 * (known_at), session and kind filters, chunks, and isolation between users.
 */
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, TestClock } from "effect"
import { EmbeddingFailed } from "../../src/domain/Errors.js"
import type { InferenceInput } from "../../src/domain/Rows.js"
import { RRF_K } from "../../src/kernel/fusion.js"
import { runContext } from "../../src/query/context.js"
import { type ReadDeps, readDeps } from "../../src/query/deps.js"
import { DEFAULT_HOPS, type SearchRequest } from "../../src/query/requests.js"
import { runSearch, type SearchResponse } from "../../src/query/search.js"
import { forEachDialect } from "../support/databases.js"
import { TODAY, World, worldLayer } from "./world.js"

const request = (query: string, rest: Partial<SearchRequest> = {}): SearchRequest => ({
  user_id: "alice",
  dataset: "main",
  query,
  include_expired: false,
  limit: 10,
  hops: DEFAULT_HOPS,
  ...rest
})

/** full text and graph only */
const withoutVectors = (deps: ReadDeps): ReadDeps => ({ ...deps, embeddings: null })

const searchWith = (query: string, rest: Partial<SearchRequest> = {}, options: { vectors?: boolean } = {}) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(Date.parse(TODAY))
    const deps = yield* readDeps
    return yield* runSearch(options.vectors === true ? deps : withoutVectors(deps), request(query, rest))
  })

const factIds = (r: SearchResponse) => r.facts.map((f) => f.id)
const foundBy = (r: SearchResponse, id: number) => r.facts.find((f) => f.id === id)?.found_by

forEachDialect((_dialect, makeLayer) => {
  layer(worldLayer(makeLayer()))("search", (it) => {
    it.effect("full text alone: the facts and entities whose words match, current facts only by default", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        const r = yield* searchWith("Where does Alice live?", { hops: 0 })
        expect(r.as_of).toBe(TODAY)
        // both words match "Alice Smith lives in Paris"; the Berlin fact ended last month
        expect(r.facts[0]!.id).toBe(alice.fact("F2"))
        expect(factIds(r)).not.toContain(alice.fact("F1"))
        expect(factIds(r)).toEqual(expect.arrayContaining([alice.fact("F4"), alice.fact("F7")]))
        for (const f of r.facts) expect(f.found_by).toBe("fulltext")
        expect(r.entities.map((e) => e.name)).toEqual(["Alice Smith"])
        expect(r.entities[0]!.found_by).toBe("fulltext")
        // provenance and model
        const f2 = r.facts[0]!
        expect(f2).toMatchObject({
          source: "Alice Smith",
          target: "Paris",
          relation: "lives in",
          valid_at: "2025-05-01T00:00:00.000Z",
          artifact_ids: [alice.artifact("A3")],
          session_ids: ["s3"],
          model: "extractor-1"
        })
        expect(f2.invalid_at).toBeUndefined()
        // scores are the fused reciprocal ranks, best first
        expect(f2.score).toBeCloseTo(1 / (RRF_K + 1), 12)
        const scores = r.facts.map((f) => f.score)
        expect([...scores].sort((a, b) => b - a)).toEqual(scores)
      }))

    it.effect("time travel: a fact closed last month is absent today and present as of two months ago", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        const today = yield* searchWith("Alice lives Berlin Paris", { hops: 0 })
        expect(factIds(today)).toContain(alice.fact("F2"))
        expect(factIds(today)).not.toContain(alice.fact("F1"))

        const twoMonthsAgo = yield* searchWith("Alice lives Berlin Paris", {
          hops: 0,
          as_of: "2025-04-01T00:00:00.000Z"
        })
        expect(twoMonthsAgo.as_of).toBe("2025-04-01T00:00:00.000Z")
        expect(factIds(twoMonthsAgo)).toContain(alice.fact("F1"))
        // Paris was not true yet
        expect(factIds(twoMonthsAgo)).not.toContain(alice.fact("F2"))
        // and F1 is shown as it is stored now: closed on 2025-05-01
        expect(twoMonthsAgo.facts.find((f) => f.id === alice.fact("F1"))).toMatchObject({
          invalid_at: "2025-05-01T00:00:00.000Z",
          expired_at: "2025-05-01T00:00:00.000Z"
        })

        const history = yield* searchWith("Alice lives Berlin Paris", { hops: 0, include_expired: true })
        expect(factIds(history)).toEqual(expect.arrayContaining([alice.fact("F1"), alice.fact("F2")]))
      }))

    it.effect("known_at: what gligabao knew then; a later remember's facts are hidden, a later close undone", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        const r = yield* searchWith("Alice Bob lives Berlin Paris", { hops: 0, known_at: "2024-01-15T00:00:00.000Z" })
        expect(r.known_at).toBe("2024-01-15T00:00:00.000Z")
        // Bob's facts (stored 2024-02-01) and Paris (2025-05-01) were not known yet
        expect(factIds(r)).not.toContain(alice.fact("F4"))
        expect(factIds(r)).not.toContain(alice.fact("F2"))
        expect(r.entities.map((e) => e.name)).not.toContain("Bob")
        // the Berlin fact was still open then, so it is valid as of today as far as gligabao knew
        const f1 = r.facts.find((f) => f.id === alice.fact("F1"))
        expect(f1).toBeDefined()
        expect(f1!.invalid_at).toBeUndefined()
        expect(f1!.expired_at).toBeUndefined()
        // links to artifacts stored later are hidden too
        const aliceEntity = r.entities.find((e) => e.name === "Alice Smith")!
        expect(aliceEntity.artifact_ids).toEqual([alice.artifact("A1")])

        const before = yield* searchWith("Alice", { known_at: "2023-12-31T00:00:00.000Z" })
        expect(before.facts).toEqual([])
        expect(before.entities).toEqual([])
      }))

    it.effect("session_id: only what that session discovered", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        const r = yield* searchWith("Alice", { session_id: "s2" })
        expect(factIds(r)).toEqual([alice.fact("F4")])
        for (const e of r.entities) expect(e.session_ids).toContain("s2")
        expect(r.entities.map((e) => e.name).sort()).toEqual(["Alice Smith", "Bob"])
        const none = yield* searchWith("Alice", { session_id: "s9" })
        expect(none.facts).toEqual([])
        expect(none.entities).toEqual([])
      }))

    it.effect("kind: only what artifacts of that kind support (a chunk counts as its document's kind)", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        const episode = yield* searchWith("Bob chess Alice Acme", { kind: "episode", hops: 0 })
        expect(factIds(episode).sort()).toEqual([alice.fact("F4"), alice.fact("F5")].sort())
        const knowledge = yield* searchWith("Acme Bremen", { kind: "knowledge", hops: 0 })
        expect(factIds(knowledge)).toContain(alice.fact("F6"))
        const chunk = yield* searchWith("Acme Bremen", { kind: "chunk", hops: 0 })
        expect(factIds(chunk)).toEqual([alice.fact("F6")])
        const web = yield* searchWith("Acme Bremen", { kind: "web_search" })
        expect(web.facts).toEqual([])
      }))

    it.effect("graph alone: the facts around matched entities, one hop by default, two on request", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        // "rocket" is only in Acme's description: no fact description matches it
        const none = yield* searchWith("rocket", { hops: 0 })
        expect(none.entities.map((e) => e.name)).toEqual(["Acme"])
        expect(none.facts).toEqual([])

        const one = yield* searchWith("rocket")
        expect(factIds(one).sort()).toEqual([alice.fact("F3"), alice.fact("F6")].sort())
        for (const f of one.facts) expect(f.found_by).toBe("graph")
        // the neighbours come in as graph-found entities
        const names = one.entities.map((e) => `${e.name}:${e.found_by}`)
        expect(names).toEqual(expect.arrayContaining(["Acme:fulltext", "Alice Smith:graph", "Bremen:graph"]))

        const two = yield* searchWith("rocket", { hops: 2 })
        const ids = factIds(two)
        expect(ids).toEqual(expect.arrayContaining([alice.fact("F2"), alice.fact("F4")]))
        // the closed Berlin fact stays out at any depth
        expect(ids).not.toContain(alice.fact("F1"))
        // the first hop ranks before the second
        expect(ids.indexOf(alice.fact("F3"))).toBeLessThan(ids.indexOf(alice.fact("F2")))
      }))

    it.effect("a fact connecting two matched entities ranks first in the neighbourhood", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        // "Germany" and "engineer" are only in entity descriptions (Berlin's, Alice's)
        const r = yield* searchWith("Germany engineer", { as_of: "2025-04-01T00:00:00.000Z" })
        expect(r.facts[0]!.id).toBe(alice.fact("F1"))
        expect(r.facts[0]!.found_by).toBe("graph")
      }))

    it.effect("vectors alone: a name spelled differently is found by similarity, not by its words", () =>
      Effect.gen(function*() {
        const r = yield* searchWith("Alicia (person)", { hops: 0 }, { vectors: true })
        expect(r.entities[0]!.name).toBe("Alice Smith")
        expect(r.entities[0]!.found_by).toBe("vector")
        // the same request without vectors finds no one
        const plain = yield* searchWith("Alicia (person)", { hops: 0 })
        expect(plain.entities).toEqual([])
      }))

    it.effect("vector hits pass the filters too: a closed fact's vector does not bring it back", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        const r = yield* searchWith("Alice Smith lives in Berlin", { hops: 0 }, { vectors: true })
        expect(factIds(r)).not.toContain(alice.fact("F1"))
        const then = yield* searchWith("Alice Smith lives in Berlin", { hops: 0, as_of: "2025-04-01T00:00:00.000Z" }, {
          vectors: true
        })
        expect(foundBy(then, alice.fact("F1"))).toBe("fulltext+vector")
      }))

    it.effect("fused: a fact found by every source ranks first with the sum of its reciprocal ranks", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        const r = yield* searchWith("Alice Smith lives in Berlin", { as_of: "2025-04-01T00:00:00.000Z" }, {
          vectors: true
        })
        const first = r.facts[0]!
        expect(first.id).toBe(alice.fact("F1"))
        expect(first.found_by).toBe("fulltext+vector+graph")
        expect(first.score).toBeGreaterThan(2 / (RRF_K + 2))
        expect(first.score).toBeLessThanOrEqual(3 / (RRF_K + 1))
      }))

    it.effect("chunks: by their own and their summaries' vectors, and as the sources of ranked facts", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        const r = yield* searchWith("reusable rockets", {}, { vectors: true })
        const c1 = r.chunks.find((c) => c.id === alice.artifact("C1"))
        expect(c1).toMatchObject({
          kind: "chunk",
          parent_id: alice.artifact("A4"),
          text: "The quarterly report says Acme builds reusable rockets in Bremen.",
          summary: "Acme builds rockets."
        })
        expect(c1!.found_by).toBe("vector+graph")
        // without vectors, the texts behind the ranked facts
        const plain = yield* searchWith("Carol Rome")
        expect(plain.chunks[0]).toMatchObject({ id: alice.artifact("A5"), kind: "knowledge", found_by: "graph" })
      }))

    it.effect("users never see each other's data, even with the same dataset name and names", () =>
      Effect.gen(function*() {
        const { alice, mallory } = yield* World
        const aliceView = yield* searchWith("Alice Smith London spy", {}, { vectors: true })
        expect(factIds(aliceView)).not.toContain(mallory.fact("M1"))
        expect(aliceView.entities.map((e) => e.id)).not.toContain(mallory.entity("Alice Smith"))
        expect(aliceView.entities.map((e) => e.id)).not.toContain(mallory.entity("London"))

        const malloryView = yield* searchWith("Alice Smith Berlin Paris Acme", { user_id: "mallory" }, {
          vectors: true
        })
        expect(factIds(malloryView)).toEqual([mallory.fact("M1")])
        expect(malloryView.entities.map((e) => e.id).sort()).toEqual(
          [mallory.entity("Alice Smith"), mallory.entity("London")].sort()
        )
        expect(malloryView.chunks.map((c) => c.id)).toEqual([mallory.artifact("M")])
        expect(alice.datasetId).not.toBe(mallory.datasetId)

        // nothing stored yet (another user, another dataset name): empty, not an error
        const missing = yield* searchWith("x", { user_id: "eve" })
        expect([missing.facts, missing.entities, missing.chunks]).toEqual([[], [], []])
        const otherName = yield* searchWith("x", { dataset: "work" })
        expect(otherName).toMatchObject({ dataset: "work", facts: [], entities: [], chunks: [] })
      }))

    it.effect("the vector searches are sent before the full-text queries run; a failed embedding does not hold those back", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse(TODAY))
        const deps = yield* readDeps
        const events: Array<string> = []
        const note = <A, E>(event: string, effect: Effect.Effect<A, E>) =>
          Effect.suspend(() => {
            events.push(event)
            return effect
          })
        const vectors = deps.vectors!
        const traced: ReadDeps = {
          ...deps,
          vectors: { ...vectors, query: (index, v, k, min) => note("vector", vectors.query(index, v, k, min)) },
          search: {
            ...deps.search,
            matchEntities: (...args) => note("fulltext", deps.search.matchEntities(...args)),
            matchFacts: (...args) => note("fulltext", deps.search.matchFacts(...args))
          }
        }
        const r = yield* runSearch(traced, request("Where does Alice live?", { hops: 0 }))
        expect(events).toEqual(["vector", "vector", "vector", "vector", "fulltext", "fulltext"])
        expect(r.facts.length).toBeGreaterThan(0)

        events.length = 0
        const failing: ReadDeps = {
          ...traced,
          embeddings: { ...deps.embeddings!, embed: () => Effect.fail(new EmbeddingFailed({ message: "down" })) }
        }
        const without = yield* runSearch(failing, request("Where does Alice live?", { hops: 0 }))
        expect(events).toEqual(["fulltext", "fulltext"])
        expect(without.facts.map((f) => f.id)).toContain(r.facts[0]!.id)
      }))

    it.effect("a context block searches the fact and entity indexes only, and reads the links of what it keeps", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse(TODAY))
        const deps = yield* readDeps
        const asked: Array<string> = []
        const linked: Array<readonly [string, ReadonlyArray<number>]> = []
        const vectors = deps.vectors!
        const traced: ReadDeps = {
          ...deps,
          vectors: {
            ...vectors,
            query: (index, v, k, min) =>
              Effect.zipRight(Effect.sync(() => asked.push(index)), vectors.query(index, v, k, min))
          },
          search: {
            // rows never carry links (SearchRepo.facts and entities read none): links are asked apart
            ...deps.search,
            links: (owner, ids, filters) =>
              Effect.zipRight(Effect.sync(() => linked.push([owner, ids])), deps.search.links(owner, ids, filters))
          }
        }
        const block = yield* runContext(traced, {
          user_id: "alice",
          dataset: "main",
          query: "Where does Alice live?",
          max_tokens: 60
        })
        expect(asked.map((index) => index.replace(/^dataset-\d+-/, "")).sort()).toEqual(["edges", "entities"])
        expect(block.facts.length).toBeGreaterThan(0)
        expect(linked).toEqual([["fact", block.facts.map((f) => f.id)], ["entity", block.entities.map((e) => e.id)]])
        // what the block shows is what a search shows for those rows
        const searched = yield* runSearch(deps, request("Where does Alice live?", { limit: 50 }))
        const byId = new Map(searched.facts.map((f) => [f.id, f]))
        for (const f of block.facts) {
          expect(f).toMatchObject({
            artifact_ids: byId.get(f.id)!.artifact_ids,
            session_ids: byId.get(f.id)!.session_ids
          })
        }
      }))

    it.effect("the query's embeddings row is stored by the time the search answers, failed or not, and if it is interrupted", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse(TODAY))
        const { alice } = yield* World
        const deps = yield* readDeps
        const stored: Array<InferenceInput> = []
        let written = yield* Deferred.make<void>()
        let hold: Deferred.Deferred<void> | null = null
        const reached = yield* Deferred.make<void>()
        const recording: ReadDeps = {
          ...deps,
          inferences: {
            ...deps.inferences,
            record: (input) =>
              Effect.zipRight(
                hold === null
                  ? Effect.void
                  : Effect.zipRight(Deferred.succeed(reached, undefined), Deferred.await(hold)),
                Effect.tap(
                  deps.inferences.record(input),
                  () => Effect.zipRight(Effect.sync(() => stored.push(input)), Deferred.succeed(written, undefined))
                )
              )
          }
        }
        yield* runSearch(recording, request("Where does Alice live?", { hops: 0 }))
        expect(stored).toMatchObject([{ type: "query", stage: "embed", dataset_id: alice.datasetId, error: null }])

        const failing: ReadDeps = {
          ...recording,
          embeddings: { ...deps.embeddings!, embed: () => Effect.fail(new EmbeddingFailed({ message: "down" })) }
        }
        yield* runSearch(failing, request("Where does Alice live?", { hops: 0 }))
        expect(stored.at(-1)).toMatchObject({ type: "query", stage: "embed", error: "down" })

        // the row waits (for the writer's connection, under load): the search does not answer
        // before it is stored, and a search interrupted meanwhile still leaves it
        stored.length = 0
        hold = yield* Deferred.make<void>()
        written = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(runSearch(recording, request("Where does Alice live?", { hops: 0 })))
        yield* Deferred.await(reached)
        // time for the rest of the search (real time: the clock here is a test clock)
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
        expect(fiber.unsafePoll()).toBeNull()
        yield* Fiber.interrupt(fiber)
        expect(stored).toEqual([])
        yield* Deferred.succeed(hold, undefined)
        yield* Deferred.await(written)
        expect(stored).toMatchObject([{ type: "query", stage: "embed" }])
      }))

    it.effect("limit applies per list", () =>
      Effect.gen(function*() {
        const r = yield* searchWith("Alice Bob Carol Acme lives", { limit: 2, include_expired: true }, {
          vectors: true
        })
        expect(r.facts.length).toBe(2)
        expect(r.entities.length).toBe(2)
        expect(r.chunks.length).toBeLessThanOrEqual(2)
      }))
  })
})
