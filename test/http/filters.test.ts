/**
 * Metadata and filters (issue 42, items 1 and 2), on both databases: a remember's `metadata`
 * round-trips (the export's artifacts, a fact's sources, a chunked text's chunks), and search,
 * context, query and the export keep only the facts one of whose supporting texts passes the
 * filters (metadata equality, in, ranges over numbers and times, relations, types, any-of
 * groups). Bad filters are 400s that name the field; the SQLite plan reads the metadata by index.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, type Layer, Schema } from "effect"
import { describe, expect } from "vitest"
import { SqliteLive } from "../../layers/sql/index.js"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { conditionsOf, Filters } from "../../src/domain/Filters.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { SearchRepo } from "../../src/services/SearchRepo.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { expectError, get, postJson, serveTest } from "../support/http.js"
import { planOf, sqlCapture } from "../support/sqlCapture.js"

/** The fake model, and a query stage that cites every fact it is shown, as a model following its prompt does. */
const model = (r: LlmRequest) => {
  if (r.stage !== "query") return { text: answer(r).text }
  const facts = JSON.parse(r.messages[0]!.content as string).facts as Array<{ id: number }>
  return { text: JSON.stringify({ answer: "From what is stored.", citations: facts.map((f) => f.id) }) }
}

const withApp = <A, E>(storage: StorageLayer, program: Effect.Effect<A, E, any>, chunkSize?: number) =>
  program.pipe(
    Effect.provide(
      serveTest(rememberLayer(storage, model, {
        ...(chunkSize === undefined ? {} : { settings: { chunkSize } })
      })) as Layer.Layer<any, any, never>
    )
  ) as Effect.Effect<A, E, never>

const remember = (text: string, metadata?: Record<string, unknown>) =>
  Effect.map(
    postJson("/v1/gb/remember", { user_id: "alice", text, ...(metadata === undefined ? {} : { metadata }) }),
    (res) => {
      expect(res.status, res.text).toBe(200)
      return res.json
    }
  )

const searchFacts = (filters: unknown, query = "works lives Acme Initech Lisbon Alice Bob Carol") =>
  Effect.map(postJson("/v1/gb/search", { user_id: "alice", query, filters, limit: 50 }), (res) => {
    expect(res.status, res.text).toBe(200)
    return (res.json.facts as Array<any>).map((f) => `${f.source} ${f.relation} ${f.target}`).sort()
  })

const ALICE = "Alice Novak works_at Acme"
const BOB = "Bob Stone works_at Initech"
const CAROL = "Carol Wu lives_in Lisbon"

const seed = Effect.gen(function*() {
  const a = yield* remember("Alice Novak works at Acme in 2020.", {
    source: "crm",
    account: "a-17",
    priority: 1,
    urgent: true,
    due: "2026-01-01T09:00:00+02:00"
  })
  const b = yield* remember("Bob Stone works at Initech in 2021.", {
    source: "email",
    priority: 3,
    due: "2026-03-01T00:00:00Z"
  })
  const c = yield* remember("Carol Wu lives in Lisbon in 2022.")
  return { a, b, c }
})

forEachDialect((_dialect, makeLayer) => {
  describe("metadata", () => {
    it.live("round-trips: the export's artifacts, a fact's sources, a long text's chunks", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const { a } = yield* seed
          const graph = yield* get("/v1/gb/graph?user_id=alice")
          expect(graph.status).toBe(200)
          const artifact = graph.json.artifacts.find((x: any) => x.id === a.artifact_id)
          expect(artifact.metadata).toEqual({
            source: "crm",
            account: "a-17",
            priority: 1,
            urgent: true,
            due: "2026-01-01T09:00:00+02:00"
          })
          const fact = yield* get(`/v1/gb/facts/${a.edges[0].id}?user_id=alice`)
          expect(fact.status, fact.text).toBe(200)
          expect(fact.json.created_by.metadata).toMatchObject({ source: "crm", priority: 1 })
          // an entity's provenance: its artifacts carry it
          const story = yield* get(`/v1/gb/entities?user_id=alice&name=${encodeURIComponent("Alice Novak")}`)
          expect(story.json.entity.artifact_ids).toContain(a.artifact_id)
        })
      ))

    it.live("a chunked text's chunks carry it, so the facts of a chunk pass a filter on it", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const text = Array.from({ length: 12 }, (_, i) => `Person${i} Novak works at Acme${i} in 20${10 + i}.`)
            .join(" ")
          const remembered = yield* remember(text, { source: "wiki" })
          expect(remembered.chunks.length).toBeGreaterThan(1)
          const facts = yield* searchFacts({ metadata: { source: "wiki" } }, "Novak works Acme0 Acme11")
          expect(facts.length).toBeGreaterThan(0)
          expect(yield* searchFacts({ metadata: { source: "crm" } }, "Novak works Acme0 Acme11")).toEqual([])
        }),
        64
      ))

    it.live("bad metadata is a 400 naming the key, and nothing is stored", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const send = (metadata: unknown) =>
            postJson("/v1/gb/remember", { user_id: "alice", text: "Alice Novak works at Acme.", metadata })
          expectError(
            yield* send({ nested: { a: 1 } }),
            400,
            /^metadata nested must be a string, a number or a boolean/
          )
          expectError(yield* send({ index: 3 }), 400, /^metadata key "index" is gligabao's own/)
          expectError(
            yield* send(Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i]))),
            400,
            /33 keys/
          )
          expectError(yield* send({ "bad key": 1 }), 400, /key "bad key" must be/)
          expectError(yield* send(["a"]), 400, /^metadata must be an object/)
          const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT COUNT(*) AS n FROM gb_artifacts`)
          expect(Number(rows[0]!.n)).toBe(0)
        })
      ))
  })

  describe("filters", () => {
    it.live("search, context, query and the export keep the facts of the texts that pass", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          yield* seed
          expect(yield* searchFacts(undefined)).toEqual([ALICE, BOB, CAROL])
          expect(yield* searchFacts({ metadata: { source: "crm" } })).toEqual([ALICE])
          expect(yield* searchFacts({ metadata: { source: { in: ["crm", "email"] } } })).toEqual([ALICE, BOB])
          expect(yield* searchFacts({ metadata: { priority: { gte: 2 } } })).toEqual([BOB])
          expect(yield* searchFacts({ metadata: { priority: { gte: 1, lte: 1 }, urgent: true } })).toEqual([ALICE])
          // times compare as times: 09:00+02:00 is 07:00Z, before 08:00Z
          expect(yield* searchFacts({ metadata: { due: { lte: "2026-01-01T08:00:00Z" } } })).toEqual([ALICE])
          expect(yield* searchFacts({ metadata: { due: { gte: "2026-02-01T00:00:00Z" } } })).toEqual([BOB])
          // a number is not a string: "1" is not 1
          expect(yield* searchFacts({ metadata: { priority: "1" } })).toEqual([])
          expect(yield* searchFacts({ relations: ["works at"] })).toEqual([ALICE, BOB])
          expect(yield* searchFacts({ entity_types: ["place"] })).toEqual([CAROL])
          expect(yield* searchFacts({ any: [{ metadata: { source: "crm" } }, { relations: ["lives_in"] }] })).toEqual([
            ALICE,
            CAROL
          ])
          expect(yield* searchFacts({ relations: ["works_at"], any: [{ metadata: { account: "a-17" } }] })).toEqual([
            ALICE
          ])
          expect(yield* searchFacts({ kind: "episode" })).toEqual([])

          const context = yield* postJson("/v1/gb/context", {
            user_id: "alice",
            filters: { metadata: { source: "email" } }
          })
          expect(context.status, context.text).toBe(200)
          expect(context.json.facts.map((f: any) => f.source)).toEqual(["Bob Stone"])
          expect(context.json.context).not.toContain("Alice")

          const query = yield* postJson("/v1/gb/query", {
            user_id: "alice",
            query: "Who works where?",
            filters: { metadata: { source: "crm" } }
          })
          expect(query.status, query.text).toBe(200)
          expect(query.json.facts.map((f: any) => f.source)).toEqual(["Alice Novak"])

          const filters = encodeURIComponent(JSON.stringify({ metadata: { source: "crm" } }))
          const graph = yield* get(`/v1/gb/graph?user_id=alice&include_expired=true&filters=${filters}`)
          expect(graph.status, graph.text).toBe(200)
          expect(graph.json.edges.map((e: any) => e.source)).toEqual(["Alice Novak"])
          expect(graph.json.artifacts.map((x: any) => x.metadata?.source)).toEqual(["crm"])
          expect(graph.json.entities.map((e: any) => e.name).sort()).toEqual(["Acme", "Alice Novak"])
        })
      ))

    it.live("a fact passes when one of its supporting texts passes", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          yield* seed
          // the same fact again, from a text of another source: one fact, two supporting texts
          const again = yield* remember("Alice Novak works at Acme in 2020.", { source: "web" })
          expect(again.edges).toHaveLength(1)
          expect(yield* searchFacts({ metadata: { source: "web" } })).toEqual([ALICE])
          expect(yield* searchFacts({ metadata: { source: "crm" } })).toEqual([ALICE])
          // both conditions on one text: no text is both crm and web
          expect(yield* searchFacts({ metadata: { source: "crm", account: "a-18" } })).toEqual([])
        })
      ))

    it.live("unknown or malformed filter fields are 400s that name them", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const search = (filters: unknown) => postJson("/v1/gb/search", { user_id: "alice", query: "x", filters })
          expectError(yield* search({ colour: "red" }), 400, /filters.*colour/)
          expectError(yield* search({ any: [{ colour: "red" }] }), 400, /filters\.any.*colour/)
          expectError(yield* search({ metadata: { priority: { gt: 1 } } }), 400, /filters\.metadata\.priority .*"gt"/)
          expectError(yield* search({ metadata: { due: { gte: "soon" } } }), 400, /gte must be a number or an RFC 3339/)
          expectError(yield* search({ relations: [] }), 400, /filters\.relations must have 1 to 100/)
          expectError(yield* search("crm"), 400, /^filters /)
          // the context request ignores unknown fields of its own, not of its filters
          const context = yield* postJson("/v1/gb/context", { user_id: "alice", filters: { colour: "red" } })
          expectError(context, 400, /filters.*colour/)
          expectError(
            yield* get(`/v1/gb/graph?user_id=alice&filters=${encodeURIComponent("{\"colour\":1}")}`),
            400,
            /colour/
          )
          expectError(yield* get("/v1/gb/graph?user_id=alice&filters=notjson"), 400, /^filters /)
        })
      ))
  })
})

describe("filters: query plans", () => {
  const trace = sqlCapture()

  it.effect("a metadata condition reads gb_artifact_metadata by its primary key, a fact's texts by theirs", () =>
    Effect.gen(function*() {
      const search = yield* SearchRepo
      const conditions = conditionsOf(
        Schema.decodeUnknownSync(Filters)({ metadata: { source: "crm", priority: { gte: 2 } } })
      )
      const filters = {
        asOf: "2026-01-01T00:00:00.000Z",
        knownAt: null,
        includeExpired: false,
        sessionId: null,
        kind: null,
        conditions
      }
      trace.start()
      yield* search.facts(1, [1, 2, 3], filters)
      const statements = trace.stop().filter((q) => q.includes("gb_artifact_metadata"))
      expect(statements).toHaveLength(1)
      const plan = yield* planOf(statements[0]!)
      expect(plan).toMatch(
        /SEARCH m EXISTS USING INDEX sqlite_autoindex_gb_artifact_metadata_1 \(artifact_id=\? AND key=\?\)/
      )
      expect(plan).toMatch(/SEARCH fa USING (COVERING )?INDEX sqlite_autoindex_gb_edge_artifacts_1 \(edge_id=\?\)/)
      expect(plan).toMatch(/SEARCH a USING INTEGER PRIMARY KEY \(rowid=\?\)/)
      expect(plan).not.toMatch(/\bSCAN\b/)
      // the index for a filter-first read exists on both kinds of values
      const sql = yield* SqlClient.SqlClient
      const indexes = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index'
        AND tbl_name = 'gb_artifact_metadata' ORDER BY name`
      expect(indexes.map((i) => i.name)).toEqual([
        "gb_artifact_metadata_number",
        "gb_artifact_metadata_text",
        "sqlite_autoindex_gb_artifact_metadata_1"
      ])
    }).pipe(Effect.provide(SqliteLive(":memory:"))))
})
