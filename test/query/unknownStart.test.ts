/**
 * A fact whose start is unknown (`valid_at` null: "Alice moved from Berlin to Paris in January
 * 2025" says she lived in Berlin until then, not since when) on every read surface, on both
 * databases, over the real app: search's `as_of` (true before its end, not at or after it), the
 * JSON and GraphML exports, the context block ("until"), query's prompt, an entity's story
 * (an unknown start first), a fact's view (its statement too) and the MCP tools.
 */
import { type HttpClient, type HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { type Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Context, Effect, Layer, Schema } from "effect"
import { EntityStory, FactView, SearchResponse } from "../../src/query/responses.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { get, postJson, serveTest, type TestResponse } from "../support/http.js"
import { mcpClient } from "../support/mcp.js"
import { seedGraph } from "../support/readSeed.js"
import { dataOf, parseXml } from "../support/xml.js"

/** Berlin's end, Paris's start */
const MOVED = "2025-01-01T00:00:00.000Z"
const STORED = "2025-02-01T00:00:00.000Z"
const BEFORE = "2024-06-01T00:00:00.000Z"
const AFTER = "2025-06-01T00:00:00.000Z"
const MOVE_TEXT = "Alice Smith moved from Berlin to Paris in January 2025."

class Seeded extends Context.Tag("test/UnknownStart")<Seeded, {
  readonly berlin: number
  readonly paris: number
  readonly acme: number
  readonly moveText: number
}>() {}

/**
 * Acme (2020, open), Paris (from the move, open) and Berlin (unknown start, ended by the move),
 * stored in that order so that ids cannot put Berlin first in a story. Berlin's link to the text
 * carries what the text stated: an end and no start.
 */
const seed = Effect.gen(function*() {
  const g = yield* seedGraph({
    user: "alice",
    artifacts: [
      { key: "W", text: "Alice Smith has worked at Acme since 2020.", at: "2020-06-01T00:00:00.000Z" },
      { key: "M", text: MOVE_TEXT, session: "s1", at: STORED }
    ],
    entities: [
      { name: "Alice Smith", type: "person", description: "an engineer", at: "2020-06-01T00:00:00.000Z" },
      { name: "Acme", type: "organization", description: "a rocket maker", at: "2020-06-01T00:00:00.000Z" },
      { name: "Paris", type: "place", description: "capital of France", at: STORED },
      { name: "Berlin", type: "place", description: "capital of Germany", at: STORED }
    ],
    facts: [
      {
        key: "ACME",
        source: "Alice Smith",
        target: "Acme",
        relation: "works_at",
        description: "Alice Smith works at Acme",
        valid_at: "2020-01-01T00:00:00.000Z",
        at: "2020-06-01T00:00:00.000Z",
        artifacts: ["W"]
      },
      {
        key: "PARIS",
        source: "Alice Smith",
        target: "Paris",
        relation: "lives_in",
        description: "Alice Smith lives in Paris",
        valid_at: MOVED,
        at: STORED,
        artifacts: ["M"],
        sessions: ["s1"]
      },
      {
        key: "BERLIN",
        source: "Alice Smith",
        target: "Berlin",
        relation: "lives_in",
        description: "Alice Smith lives in Berlin",
        valid_at: null,
        invalid_at: MOVED,
        at: STORED,
        artifacts: ["M"],
        sessions: ["s1"]
      }
    ]
  })
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE gb_edge_artifacts SET description = 'Alice Smith lives in Berlin', valid_at = NULL,
    invalid_at = ${MOVED} WHERE edge_id = ${g.fact("BERLIN")} AND artifact_id = ${g.artifact("M")}`
  return { berlin: g.fact("BERLIN"), paris: g.fact("PARIS"), acme: g.fact("ACME"), moveText: g.artifact("M") }
})

/** The facts each query call showed the model. */
const prompts: Array<ReadonlyArray<Record<string, unknown>>> = []

/** A query is answered citing the first fact it was shown; remember is never called here. */
const script = (r: LlmRequest) => {
  const facts = JSON.parse(r.messages[0]!.content as string).facts as Array<{ id: number }>
  prompts.push(facts)
  return {
    text: JSON.stringify({ answer: "Alice Smith lived in Berlin.", citations: facts.slice(0, 1).map((f) => f.id) })
  }
}

const appLayer = (storage: StorageLayer) =>
  Layer.effect(Seeded, seed).pipe(
    Layer.provideMerge(serveTest(rememberLayer(storage, script)) as Layer.Layer<any, any, never>)
  ) as Layer.Layer<Seeded | HttpServer.HttpServer | HttpClient.HttpClient, never, never>

const ok = (res: TestResponse) => {
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  return res.json
}

const search = (body: Record<string, unknown>) =>
  Effect.map(
    postJson("/v1/gb/search", { user_id: "alice", ...body }),
    (res) => Schema.decodeUnknownSync(SearchResponse)(ok(res))
  )

const ids = (facts: ReadonlyArray<{ readonly id: number }>) => facts.map((f) => f.id).sort((a, b) => a - b)

/** The block literally, as of a time when Berlin held (recent facts, ties newest first). */
const BLOCK_BEFORE = [
  "# Facts",
  "- Alice Smith lives in Berlin (until 2025-01-01)",
  "- Alice Smith works at Acme (since 2020-01-01)",
  "# Entities",
  "- Alice Smith (person): an engineer",
  "- Berlin (place): capital of Germany",
  "- Acme (organization): a rocket maker"
].join("\n")

/** A tool's structured content; its text is what a model reads (issue 40: plain text, not the JSON). */
const callTool = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.map(Effect.promise(() => client.callTool({ name, arguments: { user_id: "alice", ...args } })), (result) => {
    expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false)
    const content = result.content as ReadonlyArray<{ readonly text: string }>
    expect(content[0]!.text.length).toBeGreaterThan(0)
    return result.structuredContent as any
  })

forEachDialect((_dialect, makeLayer) => {
  layer(appLayer(makeLayer()), { excludeTestServices: true })("a fact whose start is unknown", (it) => {
    it.effect("search: true at any time before its end, not at or after it; include_expired keeps it", () =>
      Effect.gen(function*() {
        const { acme, berlin, paris } = yield* Seeded
        const query = "Where did Alice Smith live?"
        const before = yield* search({ query, as_of: BEFORE })
        expect(ids(before.facts)).toEqual(ids([{ id: acme }, { id: berlin }]))
        expect(before.facts.find((f) => f.id === berlin)).toMatchObject({ valid_at: null, invalid_at: MOVED })
        // long before anything with a known start
        expect(ids((yield* search({ query, as_of: "1900-01-01T00:00:00Z" })).facts)).toEqual([berlin])
        // its end is exclusive: at the move Paris holds and Berlin does not
        expect(ids((yield* search({ query, as_of: MOVED })).facts)).toEqual(ids([{ id: acme }, { id: paris }]))
        expect(ids((yield* search({ query, as_of: AFTER })).facts)).toEqual(ids([{ id: acme }, { id: paris }]))
        const history = yield* search({ query, as_of: AFTER, include_expired: true })
        expect(ids(history.facts)).toEqual(ids([{ id: acme }, { id: berlin }, { id: paris }]))
        // the facts around a matched entity (the graph source) pass the same filter
        const around = yield* search({ query: "Alice", as_of: BEFORE, hops: 1 })
        expect(ids(around.facts)).toEqual(ids([{ id: acme }, { id: berlin }]))
        expect(around.facts.find((f) => f.id === berlin)?.found_by).toContain("graph")
      }))

    it.effect("the JSON export says valid_at: null; the GraphML has no valid_at for it, as no invalid_at is an open end", () =>
      Effect.gen(function*() {
        const { berlin, paris } = yield* Seeded
        const doc = ok(yield* get("/v1/gb/graph?user_id=alice&include_expired=true"))
        const edge = doc.edges.find((e: any) => e.id === berlin)
        expect(edge).toMatchObject({ valid_at: null, invalid_at: MOVED })
        expect(Object.keys(edge)).toContain("valid_at")
        // as of now, without include_expired: it had ended
        const now = ok(yield* get("/v1/gb/graph?user_id=alice"))
        expect(now.edges.map((e: any) => e.id)).not.toContain(berlin)
        expect(ok(yield* get(`/v1/gb/graph?user_id=alice&as_of=${BEFORE}`)).edges.map((e: any) => e.id)).toContain(
          berlin
        )

        const res = yield* get("/v1/gb/graph?user_id=alice&include_expired=true&format=graphml")
        expect(res.status).toBe(200)
        const graph = parseXml(res.text).children.find((c) => c.name === "graph")!
        const nodes = new Set(graph.children.filter((c) => c.name === "node").map((n) => n.attributes.id))
        const edges = graph.children.filter((c) => c.name === "edge")
        for (const e of edges) {
          expect([nodes.has(e.attributes.source), nodes.has(e.attributes.target)]).toEqual([true, true])
        }
        const byId = (id: number) => dataOf(edges.find((e) => e.attributes.id === `f${id}`)!)
        expect(byId(berlin)).toMatchObject({ e_kind: "fact", e_invalid_at: MOVED })
        expect(byId(berlin)).not.toHaveProperty("e_valid_at")
        expect(byId(paris)).toMatchObject({ e_valid_at: MOVED })
        expect(byId(paris)).not.toHaveProperty("e_invalid_at")
      }))

    it.effect("the context block says \"until\" its end", () =>
      Effect.gen(function*() {
        const recent = ok(yield* postJson("/v1/gb/context", { user_id: "alice", as_of: BEFORE }))
        expect(recent.context).toBe(BLOCK_BEFORE)
        expect(recent.facts[0]).toMatchObject({ target: "Berlin", valid_at: null, invalid_at: MOVED })
        const relevant = ok(yield* postJson("/v1/gb/context", { user_id: "alice", query: "Berlin", as_of: BEFORE }))
        expect(relevant.context.split("\n")).toContain("- Alice Smith lives in Berlin (until 2025-01-01)")
        const after = ok(yield* postJson("/v1/gb/context", { user_id: "alice", as_of: AFTER }))
        expect(after.context).not.toContain("Berlin")
      }))

    it.effect("query: the model is shown valid_at null, and the answer's facts carry it", () =>
      Effect.gen(function*() {
        const { berlin } = yield* Seeded
        prompts.length = 0
        const answered = ok(
          yield* postJson("/v1/gb/query", { user_id: "alice", query: "Where did Alice Smith live?", as_of: BEFORE })
        )
        expect(prompts).toHaveLength(1)
        expect(prompts[0]!.find((f) => f.id === berlin)).toMatchObject({ valid_at: null, invalid_at: MOVED })
        expect(answered.facts.find((f: any) => f.id === berlin)).toMatchObject({ valid_at: null, invalid_at: MOVED })
      }))

    it.effect("an entity's story puts the unknown start first, on both engines; a fact's view shows it and its statement", () =>
      Effect.gen(function*() {
        const { acme, berlin, moveText, paris } = yield* Seeded
        const story = Schema.decodeUnknownSync(EntityStory)(
          ok(yield* get("/v1/gb/entities?user_id=alice&name=alice%20smith"))
        )
        expect(story.facts.map((f) => [f.id, f.valid_at])).toEqual([
          [berlin, null],
          [acme, "2020-01-01T00:00:00.000Z"],
          [paris, MOVED]
        ])
        const live = Schema.decodeUnknownSync(EntityStory)(
          ok(yield* get("/v1/gb/entities?user_id=alice&name=alice%20smith&include_expired=false"))
        )
        expect(live.facts.map((f) => f.id)).toEqual([acme, paris])

        const view = Schema.decodeUnknownSync(FactView, { onExcessProperty: "error" })(
          ok(yield* get(`/v1/gb/facts/${berlin}?user_id=alice`))
        )
        expect(view.fact).toMatchObject({ id: berlin, valid_at: null, invalid_at: MOVED, target: "Berlin" })
        expect(view.created_by).toMatchObject({
          id: moveText,
          excerpt: MOVE_TEXT,
          statement: { description: "Alice Smith lives in Berlin", valid_at: null, invalid_at: MOVED }
        })
      }))

    it.scoped("the MCP tools: search, get_entity and get_context show it", () =>
      Effect.gen(function*() {
        const { berlin } = yield* Seeded
        const client = yield* mcpClient()
        const found = yield* callTool(client, "search", { query: "Where did Alice Smith live?", as_of: BEFORE })
        expect(found.facts.find((f: any) => f.id === berlin)).toMatchObject({ valid_at: null, invalid_at: MOVED })
        const story = yield* callTool(client, "get_entity", { name: "Alice Smith" })
        expect(story.facts[0]).toMatchObject({ id: berlin, valid_at: null, invalid_at: MOVED })
        const block = yield* callTool(client, "get_context", { as_of: BEFORE })
        expect(block.context).toBe(BLOCK_BEFORE)
      }))
  })
})
