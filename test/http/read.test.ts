/**
 * The read endpoints over HTTP (the real app on a test server, the seeded world on SQLite, the
 * scripted LLM): search, query, graph export (JSON and GraphML, streamed), datasets and their
 * soft delete, sessions; every bad input a 400 `{"error"}` naming the field; one user never
 * sees another's data; the typed client derived from the contract.
 */
import { FetchHttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { layer } from "@effect/vitest"
import { it as effectIt } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { describe, expect } from "vitest"
import { type LlmScript, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { makeGligabaoClient } from "../../src/http/effectClient.js"
import { READ_BODY_LIMIT } from "../../src/http/ReadHandlers.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import { NOTHING_KNOWN } from "../../src/query/answer.js"
import {
  DatasetsResponse,
  DeletedDataset,
  GraphDocument,
  QueryResponse,
  SearchResponse,
  SessionsResponse
} from "../../src/query/responses.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { World, worldAppLayer } from "../query/world.js"
import { unavailableStorage, withoutStorage } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { expectError, get, postJson, postRaw, send, serveTest, type TestResponse } from "../support/http.js"
import { seedGraph } from "../support/readSeed.js"
import { dataOf, parseXml } from "../support/xml.js"

/** A 200's JSON body read with the contract's schema: no field missing, none extra. */
const bodyOf = <A, I>(schema: Schema.Schema<A, I>, res: TestResponse): A => {
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  return Schema.decodeUnknownSync(schema, { onExcessProperty: "error" })(res.json)
}

const script: LlmScript = (call) => {
  const facts = JSON.parse(call.messages[0]!.content as string).facts as Array<{ id: number }>
  return ScriptedLlm.json({ answer: "Alice lives in Paris.", citations: [facts[0]!.id, 424242] })
}

const AS_OF = "2025-06-01T00:00:00Z"

layer(serveTest(worldAppLayer(sqliteLayer(), script)), { excludeTestServices: true })("read endpoints", (it) => {
  it.effect("POST /v1/gb/search: ranked facts, entities and chunks", () =>
    Effect.gen(function*() {
      const { alice } = yield* World
      const res = yield* postJson("/v1/gb/search", { user_id: "alice", query: "Where does Alice live?", as_of: AS_OF })
      expect(res.status, res.text).toBe(200)
      expect(res.headers["content-type"]).toContain("application/json")
      const found = bodyOf(SearchResponse, res)
      expect(found).toMatchObject({ dataset: "main", as_of: "2025-06-01T00:00:00.000Z" })
      expect(found.facts[0]).toMatchObject({ id: alice.fact("F2"), found_by: expect.stringContaining("fulltext") })
      expect(found.facts.map((f) => f.id)).not.toContain(alice.fact("F1"))
      expect(Array.isArray(found.entities)).toBe(true)
      expect(Array.isArray(found.chunks)).toBe(true)
      const history = yield* postJson("/v1/gb/search", {
        user_id: "alice",
        query: "Alice Berlin",
        as_of: AS_OF,
        include_expired: true,
        kind: "knowledge",
        limit: 3,
        hops: 0
      })
      expect(history.status, history.text).toBe(200)
      const past = bodyOf(SearchResponse, history)
      expect(past.facts.map((f) => f.id)).toContain(alice.fact("F1"))
      expect(past.facts.length).toBeLessThanOrEqual(3)
    }))

  it.effect("search and query: every bad input is a 400 naming the field", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [unknown, RegExp]> = [
        [{ raw: "{\"user_id\": " }, /JSON/],
        [{ raw: "[1]" }, /object/],
        [{ raw: "" }, /JSON/],
        [{ query: "x" }, /user_id is required/],
        [{ user_id: "  ", query: "x" }, /user_id/],
        [{ user_id: 7, query: "x" }, /user_id must be a string/],
        [{ user_id: "alice" }, /query is required/],
        [{ user_id: "alice", query: " " }, /query must not be empty/],
        [{ user_id: "alice", query: "x".repeat(9000) }, /query must be at most/],
        [{ user_id: "alice", query: "x", dataset: "" }, /dataset/],
        [{ user_id: "alice", query: "x", as_of: "yesterday" }, /as_of must be an RFC 3339/],
        [{ user_id: "alice", query: "x", known_at: 5 }, /known_at/],
        [{ user_id: "alice", query: "x", include_expired: "maybe" }, /include_expired must be a boolean/],
        [{ user_id: "alice", query: "x", session_id: "s".repeat(129) }, /session_id must be at most 128 bytes/],
        [{ user_id: "alice", query: "x", session_id: "a\nb" }, /session_id must not contain control/],
        [{ user_id: "alice", query: "x", kind: "poem" }, /kind must be one of/],
        [{ user_id: "alice", query: "x", limit: 0 }, /limit must be an integer from 1 to 100/],
        [{ user_id: "alice", query: "x", limit: 2.5 }, /limit/],
        [{ user_id: "alice", query: "x", hops: 3 }, /hops must be an integer from 0 to 2/]
      ]
      for (const [body, message] of cases) {
        for (const path of ["/v1/gb/search", "/v1/gb/query"]) {
          const res = typeof body === "object" && body !== null && "raw" in body
            ? yield* postRaw(path, (body as { raw: string }).raw)
            : yield* postJson(path, body)
          expectError(res, 400, message)
        }
      }
      const queryOnly: ReadonlyArray<readonly [unknown, RegExp]> = [
        [
          { user_id: "alice", query: "x", models: { extract_graph: "m" } },
          /models.extract_graph is not a stage of query/
        ],
        [{ user_id: "alice", query: "x", models: { query: "two words" } }, /models.query must not contain whitespace/],
        [{ user_id: "alice", query: "x", models: "m" }, /models must be an object/],
        [
          { user_id: "alice", query: "x", reasoning: { query: "max" } },
          /reasoning.query must be one of none, low, medium, high/
        ],
        [
          { user_id: "alice", query: "x", reasoning: { resolve_edges: "low" } },
          /reasoning.resolve_edges is not a stage of query/
        ]
      ]
      for (const [body, message] of queryOnly) expectError(yield* postJson("/v1/gb/query", body), 400, message)
      expectError(
        yield* postRaw(
          "/v1/gb/search",
          JSON.stringify({ user_id: "alice", query: "x", pad: "x".repeat(READ_BODY_LIMIT) })
        ),
        413,
        /over the limit/
      )
    }))

  it.effect("a dataset with nothing stored yet reads empty, whoever else has one of that name", () =>
    Effect.gen(function*() {
      const search = yield* postJson("/v1/gb/search", { user_id: "eve", query: "Alice" })
      expect(search.status).toBe(200)
      expect(search.json).toMatchObject({ dataset: "main", query: "Alice", facts: [], entities: [], chunks: [] })
      const query = yield* postJson("/v1/gb/query", { user_id: "alice", dataset: "work", query: "x" })
      expect(query.status).toBe(200)
      expect(query.json).toMatchObject({
        dataset: "work",
        answer: NOTHING_KNOWN,
        citations: [],
        inference: null,
        facts: []
      })
      const sessions = yield* get("/v1/gb/sessions?user_id=eve&dataset=main")
      expect(sessions.status).toBe(200)
      expect(sessions.json).toEqual({ dataset: "main", sessions: [] })
      const graph = yield* get("/v1/gb/graph?user_id=eve")
      expect(graph.status).toBe(200)
      expect(graph.json).toMatchObject({
        dataset: { id: null, name: "main", created_at: null },
        entities: [],
        edges: [],
        artifacts: []
      })
      const graphml = yield* get("/v1/gb/graph?user_id=eve&format=graphml")
      expect(graphml.status).toBe(200)
      const emptyGraph = parseXml(graphml.text).children.find((c) => c.name === "graph")!
      expect(emptyGraph.attributes.id).toBe("dataset-none")
      expect(emptyGraph.children.filter((c) => c.name === "node" || c.name === "edge")).toEqual([])
    }))

  it.effect("POST /v1/gb/query: an answer with the citations among the returned facts", () =>
    Effect.gen(function*() {
      const res = yield* postJson("/v1/gb/query", {
        user_id: "alice",
        query: "Where does Alice live?",
        as_of: AS_OF,
        models: { query: "answer-model" },
        reasoning: { query: "medium" }
      })
      expect(res.status, res.text).toBe(200)
      const answered = bodyOf(QueryResponse, res)
      const ids = answered.facts.map((f) => f.id)
      expect(answered.answer).toBe("Alice lives in Paris.")
      expect(answered.citations).toEqual([ids[0]])
      expect(answered.inference).toMatchObject({ stage: "query", model: "answer-model", reasoning: "medium" })
      expect(Array.isArray(answered.artifacts)).toBe(true)
      const nothing = yield* postJson("/v1/gb/query", { user_id: "alice", query: "Alice", session_id: "nobody" })
      expect(nothing.status).toBe(200)
      expect(bodyOf(QueryResponse, nothing)).toMatchObject({ facts: [], citations: [], inference: null })
    }))

  it.effect("GET /v1/gb/graph: JSON by default, GraphML on request, both streamed and well-formed", () =>
    Effect.gen(function*() {
      const { alice, mallory } = yield* World
      const json = yield* get("/v1/gb/graph?user_id=alice&include_expired=true")
      expect(json.status, json.text.slice(0, 300)).toBe(200)
      expect(json.headers["content-type"]).toContain("application/json")
      // streamed: no content-length, chunked transfer
      expect(json.headers["content-length"]).toBeUndefined()
      const document = bodyOf(GraphDocument, json)
      expect(document.edges).toHaveLength(7)
      expect(document.edges.map((e) => e.id)).not.toContain(mallory.fact("M1"))

      const xml = yield* get(`/v1/gb/graph?user_id=alice&dataset=main&format=graphml&as_of=${AS_OF}`)
      expect(xml.status).toBe(200)
      expect(xml.headers["content-type"]).toContain("application/graphml+xml")
      expect(xml.headers["content-disposition"]).toBe("attachment; filename=\"main.graphml\"")
      const root = parseXml(xml.text)
      const graph = root.children.find((c) => c.name === "graph")!
      const facts = graph.children.filter((c) => c.name === "edge" && dataOf(c).e_kind === "fact")
      expect(facts.map((f) => f.attributes.id)).not.toContain(`f${alice.fact("F1")}`)
      expect(facts.map((f) => f.attributes.id)).toContain(`f${alice.fact("F2")}`)

      // a repeated parameter is refused: which value was meant is not known
      expectError(
        yield* get("/v1/gb/graph?user_id=alice&user_id=mallory&session_id=s3"),
        400,
        /^user_id is given more than once$/
      )
    }))

  it.effect("GET /v1/gb/graph: bad parameters are 400s naming them", () =>
    Effect.gen(function*() {
      expectError(yield* get("/v1/gb/graph"), 400, /user_id is required/)
      expectError(yield* get("/v1/gb/graph?user_id=alice&format=csv"), 400, /format must be json or graphml/)
      expectError(yield* get("/v1/gb/graph?user_id=alice&as_of=2025-13-01T00:00:00Z"), 400, /as_of/)
      expectError(
        yield* get("/v1/gb/graph?user_id=alice&include_expired=perhaps"),
        400,
        /include_expired must be a boolean/
      )
      expectError(yield* get("/v1/gb/graph?user_id=alice&kind=letter"), 400, /kind must be one of/)
      expectError(yield* get("/v1/gb/datasets"), 400, /user_id is required/)
      expectError(yield* get("/v1/gb/sessions?dataset=main"), 400, /user_id is required/)
      expectError(yield* get("/v1/gb/sessions?user_id=alice&dataset="), 400, /dataset must not be empty/)
      expectError(yield* send(HttpClientRequest.del("/v1/gb/datasets/main")), 400, /user_id is required/)
      expectError(
        yield* send(HttpClientRequest.del("/v1/gb/datasets/a%0Ab?user_id=alice")),
        400,
        /^dataset must not contain control characters$/
      )
      // a repeated parameter and an unknown one are refused, each named
      expectError(
        yield* get("/v1/gb/sessions?user_id=alice&user_id=&dataset=main"),
        400,
        /^user_id is given more than once$/
      )
      expectError(yield* get("/v1/gb/sessions?user_id=alice&dataset=main&extra=1"), 400, /^unknown field "extra"$/)
      expectError(
        yield* get("/v1/gb/sessions?user_id=alice&datset=main"),
        400,
        /^unknown field "datset" \(did you mean "dataset"\?\)$/
      )
    }))

  it.effect("GET /v1/gb/datasets and /v1/gb/sessions: counts, per user", () =>
    Effect.gen(function*() {
      const { alice } = yield* World
      const datasets = yield* get("/v1/gb/datasets?user_id=alice")
      expect(datasets.status).toBe(200)
      expect(bodyOf(DatasetsResponse, datasets).datasets).toEqual([
        {
          id: alice.datasetId,
          name: "main",
          created_at: expect.any(String),
          artifacts: 7,
          entities: 9,
          edges: 7,
          live_edges: 6
        }
      ])
      expect(bodyOf(DatasetsResponse, yield* get("/v1/gb/datasets?user_id=nobody"))).toEqual({ datasets: [] })

      const sessions = yield* get("/v1/gb/sessions?user_id=alice")
      expect(bodyOf(SessionsResponse, sessions)).toEqual({
        dataset: "main",
        sessions: [
          {
            session_id: "s1",
            artifacts: 2,
            entities: 5,
            edges: 3,
            first_at: "2024-01-01T00:00:00.000Z",
            last_at: "2024-01-10T00:00:00.000Z",
            first_stored_at: "2024-01-01T00:00:00.000Z",
            last_stored_at: "2024-01-10T00:00:00.000Z"
          },
          {
            session_id: "s2",
            artifacts: 1,
            entities: 3,
            edges: 2,
            first_at: "2024-02-01T00:00:00.000Z",
            last_at: "2024-02-01T00:00:00.000Z",
            first_stored_at: "2024-02-01T00:00:00.000Z",
            last_stored_at: "2024-02-01T00:00:00.000Z"
          },
          {
            session_id: "s3",
            artifacts: 1,
            entities: 2,
            edges: 1,
            first_at: "2025-05-01T00:00:00.000Z",
            last_at: "2025-05-01T00:00:00.000Z",
            first_stored_at: "2025-05-01T00:00:00.000Z",
            last_stored_at: "2025-05-01T00:00:00.000Z"
          },
          {
            session_id: "s4",
            artifacts: 0,
            entities: 0,
            edges: 1,
            first_at: null,
            last_at: null,
            first_stored_at: null,
            last_stored_at: null
          }
        ]
      })
      const mallorys = yield* get("/v1/gb/sessions?user_id=mallory&dataset=main")
      expect(bodyOf(SessionsResponse, mallorys).sessions).toEqual([
        expect.objectContaining({ session_id: "s1", artifacts: 1, entities: 2, edges: 1 })
      ])
    }))

  it.effect("DELETE /v1/gb/datasets/{name}: soft delete, only the owner's, then 404", () =>
    Effect.gen(function*() {
      yield* seedGraph({
        user: "temp",
        dataset: "scratch pad",
        entities: [{ name: "Thing", at: "2024-01-01T00:00:00.000Z" }]
      })
      const path = "/v1/gb/datasets/scratch%20pad"
      expectError(yield* send(HttpClientRequest.del(`${path}?user_id=alice`)), 404, /scratch pad/)
      const res = yield* send(HttpClientRequest.del(`${path}?user_id=temp`))
      expect(res.status, res.text).toBe(200)
      expect(bodyOf(DeletedDataset, res)).toMatchObject({
        dataset: "scratch pad",
        id: expect.any(Number),
        deleted_at: expect.any(String)
      })
      expectError(yield* send(HttpClientRequest.del(`${path}?user_id=temp`)), 404, /scratch pad/)
      expect(bodyOf(DatasetsResponse, yield* get("/v1/gb/datasets?user_id=temp"))).toEqual({ datasets: [] })
      // a deleted dataset reads as one with nothing stored
      const after = yield* postJson("/v1/gb/search", { user_id: "temp", dataset: "scratch pad", query: "Thing" })
      expect(after.status).toBe(200)
      expect(after.json).toMatchObject({ dataset: "scratch pad", facts: [], entities: [] })
    }))

  it.effect("users never see each other's data through any endpoint", () =>
    Effect.gen(function*() {
      const { alice, mallory } = yield* World
      const aliceIds = new Set([...["F1", "F2", "F3", "F4", "F5", "F6", "F7"].map(alice.fact)])
      const m = yield* postJson("/v1/gb/search", {
        user_id: "mallory",
        query: "Alice Smith Berlin Paris Acme Bob",
        include_expired: true
      })
      expect(bodyOf(SearchResponse, m).facts.map((f) => f.id)).toEqual([mallory.fact("M1")])
      const q = yield* postJson("/v1/gb/query", { user_id: "mallory", query: "Where does Alice live?" })
      for (const f of bodyOf(QueryResponse, q).facts) expect(aliceIds.has(f.id)).toBe(false)
      const g = yield* get("/v1/gb/graph?user_id=mallory&include_expired=true")
      const graph = bodyOf(GraphDocument, g)
      expect(graph.edges.map((e) => e.id)).toEqual([mallory.fact("M1")])
      expect(graph.dataset.id).toBe(mallory.datasetId)
    }))

  it.effect("the typed client derived from the contract", () =>
    Effect.gen(function*() {
      const { alice } = yield* World
      const server = yield* HttpServer.HttpServer
      const address = server.address as HttpServer.TcpAddress
      const client = yield* makeGligabaoClient(`http://127.0.0.1:${address.port}`)
      // the client takes requests as they go on the wire: the server's defaults left out
      const found = yield* client.read.search({
        payload: { user_id: "alice", query: "Where does Alice live?", as_of: AS_OF }
      })
      expect(found.facts[0]!.id).toBe(alice.fact("F2"))
      const answered = yield* client.read.query({
        payload: { user_id: "alice", query: "Where does Alice live?", as_of: AS_OF, reasoning: { query: "none" } }
      })
      expect(answered.citations).toEqual([answered.facts[0]!.id])
      const exported = yield* client.read.graph({
        urlParams: { user_id: "alice", dataset: "main", format: "json", include_expired: true, session_id: "s3" }
      })
      expect(exported.edges.map((e) => e.id)).toEqual([alice.fact("F2")])
      const datasets = yield* client.read.listDatasets({ urlParams: { user_id: "alice" } })
      expect(datasets.datasets.map((d) => d.name)).toEqual(["main"])
      const sessions = yield* client.read.listSessions({ urlParams: { user_id: "alice", dataset: "main" } })
      expect(sessions.sessions).toHaveLength(4)
      const missing = yield* Effect.flip(
        client.read.deleteDataset({ path: { name: "nothing here" }, urlParams: { user_id: "alice" } })
      )
      expect(missing).toMatchObject({ error: expect.stringMatching(/nothing here/) })
      const health = yield* client.health.healthz()
      expect(health).toEqual({ status: "ok" })
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.effect("the OpenAPI document lists the read endpoints", () =>
    Effect.gen(function*() {
      const doc = (yield* get("/openapi.json")).json
      for (
        const path of [
          "/v1/gb/search",
          "/v1/gb/query",
          "/v1/gb/graph",
          "/v1/gb/datasets",
          "/v1/gb/datasets/{name}",
          "/v1/gb/sessions"
        ]
      ) {
        expect(Object.keys(doc.paths)).toContain(path)
      }
    }))
})

describe("without storage", () => {
  const boom = () => Effect.die(new Error("not used"))
  const noStorage = Layer.mergeAll(
    Layer.mock(RememberManager, { submit: boom, enqueue: boom }),
    Layer.mock(RunLogRepo, { get: boom }),
    unavailableStorage(),
    withoutStorage()
  )
  effectIt.live("the read endpoints answer 503 {error}; the server keeps serving", () =>
    Effect.gen(function*() {
      expectError(yield* postJson("/v1/gb/search", { user_id: "alice", query: "x" }), 503, /storage/)
      expectError(yield* get("/v1/gb/datasets?user_id=alice"), 503, /storage/)
      expect((yield* get("/healthz")).status).toBe(200)
    }).pipe(Effect.provide(serveTest(noStorage))))
})
