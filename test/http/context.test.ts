/**
 * `POST /v1/gb/context` on both databases (the real app on a test server, the bench's scripted
 * model for remember): the block's format, literally; the facts valid at as_of and the session
 * filter; with a query, search's relevance order; without, the recent-and-connected order; no
 * LLM call; the budget (whole lines, `tokens` the tokenizer's count of `context`, never above
 * max_tokens); 400s naming the field, 404 across users, tokens; the library function; and the
 * SQLite plan of the no-query statement (the `(dataset_id, id)` index, no sort).
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { describe, expect } from "vitest"
import { SqliteLive } from "../../layers/sql/index.js"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { Authentication } from "../../src/auth/Authentication.js"
import { tokenTable } from "../../src/auth/tokens.js"
import type { AuthToken } from "../../src/config/tables.js"
import { countTokens } from "../../src/kernel/tokenizer.js"
import { contextMemory } from "../../src/operations.js"
import { ContextResponse, SearchResponse } from "../../src/query/responses.js"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { SearchRepo } from "../../src/services/SearchRepo.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, sqliteLayer, type StorageLayer } from "../support/databases.js"
import { expectError, postJson, postRaw, serveTest, type TestResponse } from "../support/http.js"
import { sqlCapture } from "../support/sqlCapture.js"
import { postAs, SECRETS, USER_TOKENS } from "../support/tokens.js"

/** The bench's model, counting its calls. */
const counting = () => {
  const calls = { n: 0 }
  const script = (r: LlmRequest) => {
    calls.n += 1
    return { text: answer(r).text }
  }
  return { calls, script }
}

const withApp = <A, E>(
  storage: StorageLayer,
  program: (calls: { readonly n: number }) => Effect.Effect<A, E, any>,
  auth?: ReadonlyArray<AuthToken>
) => {
  const { calls, script } = counting()
  const services = rememberLayer(storage, script)
  const layer = auth === undefined ? services : Layer.merge(services, Layer.succeed(Authentication, tokenTable(auth)))
  return program(calls).pipe(Effect.provide(serveTest(layer) as Layer.Layer<any, any, never>)) as Effect.Effect<
    A,
    E,
    never
  >
}

const remember = (text: string, extra: Record<string, unknown> = {}) =>
  Effect.map(postJson("/v1/gb/remember", { user_id: "alice", text, ...extra }), (res) => {
    expect(res.status, res.text).toBe(200)
    return res.json
  })

/** A 200's body read with the contract's schema (no field missing, none extra), and the budget checked. */
const blockOf = (res: TestResponse, maxTokens = 800): ContextResponse => {
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  const block = Schema.decodeUnknownSync(ContextResponse, { onExcessProperty: "error" })(res.json)
  expect(block.tokens).toBe(countTokens(block.context))
  expect(block.tokens).toBeLessThanOrEqual(maxTokens)
  return block
}

const context = (body: Record<string, unknown>) => postJson("/v1/gb/context", { user_id: "alice", ...body })

/** Alice's moves (Berlin closed by Lisbon), her work, a friend: four texts, one fact each. */
const aliceStory = Effect.gen(function*() {
  yield* remember("Alice Novak works at Acme in 2019.")
  yield* remember("Alice Novak lives in Berlin in 2020.")
  yield* remember("Alice Novak lives in Lisbon in 2021.")
  yield* remember("Bruno Diaz knows Alice Novak in 2015.")
})

const ALICE_NOW = [
  "# Facts",
  "- Alice Novak lives in Lisbon since 2021 (since 2021-01-01)",
  "- Bruno Diaz knows Alice Novak since 2015 (since 2015-01-01)",
  "- Alice Novak works at Acme since 2019 (since 2019-01-01)",
  "# Entities",
  "- Alice Novak (person): a person",
  "- Bruno Diaz (person): a person",
  "- Lisbon (place): a place",
  "- Acme (organization): a organization"
]

const lines = (block: ContextResponse) => block.context.split("\n")

forEachDialect((_dialect, makeLayer) => {
  describe("POST /v1/gb/context", () => {
    it.live("the block, literally: the facts valid at as_of with their dates, then the entities; no LLM call", () =>
      withApp(makeLayer(), (calls) =>
        Effect.gen(function*() {
          yield* aliceStory
          const called = calls.n
          const now = blockOf(yield* context({ query: "Where does Alice Novak live?" }))
          expect(lines(now)).toEqual(ALICE_NOW)
          expect(now.context).toBe(ALICE_NOW.join("\n"))
          expect(now.facts.map((f) => f.target)).toEqual(["Lisbon", "Alice Novak", "Acme"])
          expect(now.entities.map((e) => e.name)).toEqual(["Alice Novak", "Bruno Diaz", "Lisbon", "Acme"])
          // the search response's fact and entity shapes (ids, provenance), without the ranking fields
          expect(now.facts[0]).toMatchObject({
            id: expect.any(Number),
            source: "Alice Novak",
            relation: "lives_in",
            valid_at: "2021-01-01T00:00:00.000Z",
            artifact_ids: [expect.any(Number)]
          })
          expect(now.facts[0]).not.toHaveProperty("score")
          expect(now.entities[0]).toMatchObject({ name: "Alice Novak", type: "person", description: "a person" })

          // in mid-2020 Berlin held (closed since: both dates), Lisbon was not true yet
          const then = blockOf(yield* context({ query: "Where does Alice Novak live?", as_of: "2020-06-01T00:00:00Z" }))
          expect(lines(then)).toEqual([
            "# Facts",
            "- Alice Novak lives in Berlin since 2020 (2020-01-01 to 2021-01-01)",
            "- Bruno Diaz knows Alice Novak since 2015 (since 2015-01-01)",
            "- Alice Novak works at Acme since 2019 (since 2019-01-01)",
            "# Entities",
            "- Alice Novak (person): a person",
            "- Bruno Diaz (person): a person",
            "- Berlin (place): a place",
            "- Acme (organization): a organization"
          ])
          expect(then.facts[0]).toMatchObject({ invalid_at: "2021-01-01T00:00:00.000Z" })
          // before anything was true: nothing, not even a header
          const before = blockOf(yield* context({ query: "Alice Novak", as_of: "2010-01-01T00:00:00Z" }))
          expect(before.facts).toEqual([])
          expect(before.context.startsWith("# Entities")).toBe(true)

          // without a query too, every kept entity has the texts it came from
          const recent = blockOf(yield* context({}))
          expect(recent.entities.length).toBeGreaterThan(0)
          for (const e of recent.entities) expect(e.artifact_ids.length, e.name).toBeGreaterThan(0)
          for (const f of recent.facts) expect(f.artifact_ids.length, f.description).toBeGreaterThan(0)
          blockOf(yield* context({ query: "Acme", session_id: "nobody", max_tokens: 20 }))
          // neither the block nor the search under it asked the model anything
          expect(calls.n).toBe(called)
        })))

    it.live("with a query: search's relevance order, its facts and entities", () =>
      withApp(makeLayer(), () =>
        Effect.gen(function*() {
          yield* aliceStory
          yield* remember("Carla Rossi works at Acme in 2018. Carla Rossi visited Rome in 2018.")
          for (const query of ["Where does Alice Novak live?", "Acme", "Who knows Alice Novak?", "Rome"]) {
            const block = blockOf(yield* context({ query, max_tokens: 8000 }))
            const searched = Schema.decodeUnknownSync(SearchResponse)(
              (yield* postJson("/v1/gb/search", { user_id: "alice", query, limit: 50 })).json
            )
            expect(block.facts.map((f) => f.id), query).toEqual(searched.facts.map((f) => f.id))
            expect(block.entities.map((e) => e.id), query).toEqual(searched.entities.map((e) => e.id))
            // the block reads its facts' and entities' links after it is cut: the same as search's
            const links = (e: { artifact_ids: ReadonlyArray<number>; session_ids: ReadonlyArray<string> }) => [
              e.artifact_ids,
              e.session_ids
            ]
            expect(block.facts.map(links), query).toEqual(searched.facts.map(links))
            expect(block.entities.map(links), query).toEqual(searched.entities.map(links))
          }
          const acme = blockOf(yield* context({ query: "Acme" }))
          expect(acme.facts.map((f) => f.target).slice(0, 2)).toEqual(["Acme", "Acme"])
          expect(acme.entities[0]!.name).toBe("Acme")
          expect(lines(blockOf(yield* context({ query: "Rome" })))[1]).toBe(
            "- Carla Rossi visited Rome since 2018 (since 2018-01-01)"
          )
        })))

    it.live("without a query: the recent facts, most connected first, ties newest first; entities by degree", () =>
      withApp(makeLayer(), () =>
        Effect.gen(function*() {
          yield* remember("Alice Novak works at Acme in 2019.")
          yield* remember("Bruno Diaz knows Alice Novak in 2015.")
          yield* remember("Carla Rossi visited Rome in 2018.")
          yield* remember("Alice Novak visited Paris in 2017.")
          // degrees: Alice 3, the others 1; connections: Paris 4, knows 4, Acme 4, Rome 2
          const block = blockOf(yield* context({}))
          expect(block.context).toBe([
            "# Facts",
            "- Alice Novak visited Paris since 2017 (since 2017-01-01)",
            "- Bruno Diaz knows Alice Novak since 2015 (since 2015-01-01)",
            "- Alice Novak works at Acme since 2019 (since 2019-01-01)",
            "- Carla Rossi visited Rome since 2018 (since 2018-01-01)",
            "# Entities",
            "- Alice Novak (person): a person",
            "- Paris (place): a place",
            "- Bruno Diaz (person): a person",
            "- Acme (organization): a organization",
            "- Carla Rossi (person): a person",
            "- Rome (place): a place"
          ].join("\n"))
          // the facts valid at as_of only: in mid-2016 only the friendship held (its entities of
          // equal degree in the order the fact names them)
          const then = blockOf(yield* context({ as_of: "2016-06-01T00:00:00Z" }))
          expect(then.context).toBe([
            "# Facts",
            "- Bruno Diaz knows Alice Novak since 2015 (since 2015-01-01)",
            "# Entities",
            "- Bruno Diaz (person): a person",
            "- Alice Novak (person): a person"
          ].join("\n"))
          // a closed fact is not in today's block
          yield* remember("Carla Rossi lives in Oslo in 2019.")
          yield* remember("Carla Rossi lives in Milan in 2020.")
          const later = blockOf(yield* context({}))
          expect(later.facts.map((f) => f.target)).not.toContain("Oslo")
          expect(later.facts.map((f) => f.target)).toContain("Milan")
        })))

    it.live("session_id: only what that session discovered, with or without a query", () =>
      withApp(makeLayer(), () =>
        Effect.gen(function*() {
          yield* remember("Alice Novak lives in Berlin in 2020.", { session_id: "chat-1" })
          yield* remember("Bruno Diaz works at Acme in 2019.", { session_id: "chat-2" })
          const expected = [
            "# Facts",
            "- Alice Novak lives in Berlin since 2020 (since 2020-01-01)",
            "# Entities",
            "- Alice Novak (person): a person",
            "- Berlin (place): a place"
          ].join("\n")
          expect(blockOf(yield* context({ session_id: "chat-1" })).context).toBe(expected)
          const queried = blockOf(yield* context({ session_id: "chat-1", query: "Alice Novak Bruno Diaz Acme Berlin" }))
          expect(queried.facts.map((f) => f.target)).toEqual(["Berlin"])
          expect(queried.entities.map((e) => e.name).sort()).toEqual(["Alice Novak", "Berlin"])
          const both = blockOf(yield* context({}))
          expect(both.facts).toHaveLength(2)
          expect(blockOf(yield* context({ session_id: "nobody" }))).toEqual({
            context: "",
            facts: [],
            entities: [],
            tokens: 0
          })
        })))

    it.live("max_tokens: whole lines only, a line that does not fit is skipped, tokens never above", () =>
      withApp(makeLayer(), () =>
        Effect.gen(function*() {
          yield* aliceStory
          const query = "Where does Alice Novak live?"
          const full = blockOf(yield* context({ query }))
          expect(full.tokens).toBe(countTokens(ALICE_NOW.join("\n")))
          // the first fact alone
          const first = ALICE_NOW.slice(0, 2).join("\n")
          const one = blockOf(yield* context({ query, max_tokens: countTokens(first) }), countTokens(first))
          expect(one).toMatchObject({ context: first, tokens: countTokens(first) })
          expect(one.facts.map((f) => f.target)).toEqual(["Lisbon"])
          expect(one.entities).toEqual([])
          // room for a short entity line but not the next facts: they are skipped, the entity fits
          const skipping = [...ALICE_NOW.slice(0, 2), "# Entities", "- Alice Novak (person): a person"].join("\n")
          const budget = countTokens(skipping)
          expect(countTokens([...ALICE_NOW.slice(0, 3)].join("\n"))).toBeGreaterThan(budget)
          const skipped = blockOf(yield* context({ query, max_tokens: budget }), budget)
          expect(skipped.context).toBe(skipping)
          expect(skipped.entities.map((e) => e.name)).toEqual(["Alice Novak"])
          // too small for any line: empty
          for (const max_tokens of [1, 3]) {
            expect(blockOf(yield* context({ query, max_tokens }), max_tokens)).toEqual({
              context: "",
              facts: [],
              entities: [],
              tokens: 0
            })
          }
          for (let max_tokens = 1; max_tokens <= full.tokens + 1; max_tokens += 7) {
            const block = blockOf(yield* context({ query, max_tokens }), max_tokens)
            // every line is a whole line of the full block, in its order
            const all = lines(full)
            let at = 0
            for (const line of block.context === "" ? [] : lines(block)) {
              at = all.indexOf(line, at)
              expect(at, line).toBeGreaterThanOrEqual(0)
            }
          }
        })))

    it.live("bad input is a 400 naming the field; an unknown field too, with the closest known one; another user's dataset a 404", () =>
      withApp(makeLayer(), () =>
        Effect.gen(function*() {
          yield* remember("Alice Novak lives in Berlin in 2020.")
          yield* Effect.map(
            postJson("/v1/gb/remember", { user_id: "bob", text: "Bruno Diaz works at Acme in 2019." }),
            (res) => expect(res.status).toBe(200)
          )
          const cases: ReadonlyArray<readonly [unknown, RegExp]> = [
            [{ raw: "{\"user_id\": " }, /JSON/],
            [{ raw: "[1]" }, /object/],
            [{}, /^user_id is required/],
            [{ user_id: " " }, /^user_id/],
            [{ user_id: "alice", max_tokens: 0 }, /^max_tokens must be an integer from 1 to 8000/],
            [{ user_id: "alice", max_tokens: 8001 }, /^max_tokens must be an integer from 1 to 8000/],
            [{ user_id: "alice", max_tokens: 2.5 }, /^max_tokens must be an integer from 1 to 8000/],
            [{ user_id: "alice", max_tokens: "lots" }, /^max_tokens must be an integer from 1 to 8000/],
            [{ user_id: "alice", query: " " }, /^query must not be empty/],
            [{ user_id: "alice", query: 7 }, /^query must be a string/],
            [{ user_id: "alice", query: "x".repeat(9000) }, /^query must be at most/],
            [{ user_id: "alice", as_of: "yesterday" }, /^as_of must be an RFC 3339/],
            [{ user_id: "alice", session_id: "a\nb" }, /^session_id must not contain control/],
            [{ user_id: "alice", dataset: "" }, /^dataset/]
          ]
          for (const [body, message] of cases) {
            const res = typeof body === "object" && body !== null && "raw" in body
              ? yield* postRaw("/v1/gb/context", (body as { raw: string }).raw)
              : yield* postJson("/v1/gb/context", body)
            expectError(res, 400, message)
          }
          // an unknown field is a 400 naming it, with the closest known one
          expectError(
            yield* postJson("/v1/gb/context", { user_id: "alice", max_token: 10 }),
            400,
            /^unknown field "max_token" \(did you mean "max_tokens"\?\)$/
          )
          expectError(
            yield* postJson("/v1/gb/context", { user_id: "alice", include_expired: true }),
            400,
            /^unknown field "include_expired"$/
          )
          // null reads as absent
          const lenient = blockOf(
            yield* postJson("/v1/gb/context", {
              user_id: "alice",
              query: null,
              max_tokens: null
            })
          )
          expect(lenient.facts.map((f) => f.target)).toEqual(["Berlin"])

          // bob has a "main", and sees only his; eve has none; alice has no "work"
          const bob = blockOf(yield* postJson("/v1/gb/context", { user_id: "bob", query: "Alice Novak Berlin Acme" }))
          expect(bob.context).not.toContain("Alice")
          expect(bob.facts.map((f) => f.source)).toEqual(["Bruno Diaz"])
          // nothing stored yet: an empty block, not an error (the first call of a new user's agent)
          for (
            const empty of [
              yield* postJson("/v1/gb/context", { user_id: "eve" }),
              yield* context({ dataset: "work", query: "Berlin" })
            ]
          ) {
            expect(empty.status).toBe(200)
            expect(empty.json).toMatchObject({ facts: [], entities: [] })
            expect(blockOf(empty).facts).toEqual([])
          }
        })))
  })
})

describe("POST /v1/gb/context: tokens and the library", () => {
  it.live("a user's token reads that user's context only", () =>
    withApp(
      sqliteLayer(),
      () =>
        Effect.gen(function*() {
          const stored = yield* postAs(
            "/v1/gb/remember",
            { user_id: "alice", text: "Alice Novak lives in Berlin in 2020." },
            SECRETS.alice
          )
          expect(stored.status, stored.text).toBe(200)
          const body = { user_id: "alice", query: "Berlin" }
          expectError(yield* postAs("/v1/gb/context", body), 401)
          expectError(yield* postAs("/v1/gb/context", body, SECRETS.bob), 403, /may not act for/)
          expect(blockOf(yield* postAs("/v1/gb/context", body, SECRETS.alice)).facts).toHaveLength(1)
        }),
      USER_TOKENS
    ))

  it.live("contextMemory: the same block from the library, the same 400 message as InvalidRequest", () =>
    withApp(sqliteLayer(), () =>
      Effect.gen(function*() {
        yield* aliceStory
        const body = { user_id: "alice", query: "Where does Alice Novak live?", max_tokens: 40 }
        const served = blockOf(yield* postJson("/v1/gb/context", body), 40)
        expect(yield* contextMemory(body)).toEqual(served)
        const refused = yield* Effect.flip(contextMemory({ user_id: "alice", max_tokens: 0 }))
        expect(refused).toMatchObject({ _tag: "InvalidRequest", message: expect.stringMatching(/^max_tokens/) })
      })))
})

describe("POST /v1/gb/context: the query plan", () => {
  const trace = sqlCapture()

  it.effect("the recent facts walk the (dataset_id, id) index backwards: no scan, no sort", () =>
    Effect.gen(function*() {
      const dataset = yield* (yield* DatasetsRepo).getOrCreate("u", "main", "2026-01-01T00:00:00.000Z")
      const search = yield* SearchRepo
      trace.start()
      yield* search.recentFacts(dataset.id, {
        asOf: "2026-01-01T00:00:00.000Z",
        knownAt: null,
        includeExpired: false,
        sessionId: "s1",
        kind: null
      }, 100)
      trace.stop()
      const recent = trace.captured.filter((q) => q.includes("ORDER BY e.id DESC"))
      expect(recent).toHaveLength(1)
      const sql = yield* SqlClient.SqlClient
      const params = (recent[0]!.match(/\?/g) ?? []).map(() => null)
      const plan = (yield* sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${recent[0]!}`, params).pipe(
        Effect.orDie
      )).map((r) => r.detail).join("\n")
      expect(plan).toMatch(/SEARCH e USING INDEX gb_edges_dataset_id \(dataset_id=\?\)/)
      expect(plan).not.toMatch(/TEMP B-TREE/)
      expect(plan).not.toMatch(/\bSCAN (e|n|s|t)\b/)
    }).pipe(Effect.provide(SqliteLive(":memory:"))))
})
