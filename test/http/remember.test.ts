/**
 * The HTTP API in process: the real app on a test server over SQLite and the scripted LLM.
 * Every 400/413 of spec/contracts.md section 9 as a real request (status, an `{"error"}` body
 * naming the field, nothing queued or stored), the remember and run endpoints, error mapping
 * (502, 503, 500 without a stack), unknown routes and the documentation routes.
 */
import { FetchHttpClient, HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { describe, expect } from "vitest"
import { type LlmScript, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { LlmUnavailable } from "../../src/domain/Errors.js"
import { isImageBody } from "../../src/domain/Responses.js"
import { TEXT_STAGES } from "../../src/domain/Stages.js"
import { makeGligabaoClient } from "../../src/http/effectClient.js"
import { IMAGE_BODY_LIMIT, TEXT_BODY_LIMIT } from "../../src/http/Handlers.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { graph, rememberLayer, resolution, unavailableStorage, withoutStorage } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { expectError, get, postChunked, postJson, postRaw, serveTest } from "../support/http.js"

const REMEMBER = "/v1/gb/remember"
const MiB = 1024 * 1024
/** a 1x1 PNG */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`)).pipe(
    Effect.map((rows) => Number(rows[0]!.n)),
    Effect.orDie
  )

/** The one error shape: exactly `{"error": "<message>"}`, served as JSON. */
const livesIn = (city: string, valid_at: string) =>
  graph(
    [{ name: "Alice Smith", type: "person", description: "an engineer" }, { name: city, type: "place" }],
    [{
      source: "Alice Smith",
      target: city,
      relation: "lives in",
      description: `Alice Smith lives in ${city}`,
      valid_at
    }]
  )

/** Runs `program` against a fresh app (its own server and in-memory database). */
const withApp = <A, E>(script: LlmScript, program: Effect.Effect<A, E, any>) =>
  program.pipe(
    Effect.provide(serveTest(rememberLayer(sqliteLayer(), script)) as Layer.Layer<any, any, never>)
  ) as Effect.Effect<A, E, never>

// ---------------------------------------------------------------------------------------------

type Case = readonly [what: string, body: unknown, status: number, message: RegExp]

const valid = { user_id: "alice", text: "Alice lives in Berlin." }
/** base64 of a PNG signature padded to `bytes` (only the type and the size are checked before the model) */
const pngOfBytes = (bytes: number) => {
  const buf = Buffer.alloc(bytes)
  Buffer.from(PNG, "base64").copy(buf)
  return buf.toString("base64")
}
const over1MiBAscii = "a".repeat(MiB + 1)
// 1.2 MB of UTF-8 in 600 000 characters: the limit is in bytes, not characters
const over1MiBUtf8 = "é".repeat(600_000)

const REJECTED: ReadonlyArray<Case> = [
  ["malformed JSON", { raw: "{\"user_id\": \"alice\", \"text\": " }, 400, /JSON/],
  ["a body that is not an object", { raw: "[1, 2]" }, 400, /object/],
  ["user_id missing", { text: "x" }, 400, /user_id/],
  ["user_id empty", { user_id: "", text: "x" }, 400, /user_id/],
  ["user_id blank", { user_id: "   ", text: "x" }, 400, /user_id/],
  ["user_id not a string", { user_id: 7, text: "x" }, 400, /user_id/],
  ["neither text nor image", { user_id: "alice" }, 400, /text/],
  ["text empty", { user_id: "alice", text: "" }, 400, /text/],
  ["text blank", { user_id: "alice", text: " \n\t " }, 400, /text/],
  ["text not a string", { user_id: "alice", text: 42 }, 400, /text/],
  ["text over 1 MiB (ASCII)", { user_id: "alice", text: over1MiBAscii }, 400, /text.*1 MiB/],
  ["text over 1 MiB of UTF-8 bytes", { user_id: "alice", text: over1MiBUtf8 }, 400, /text.*1 MiB/],
  ["image with text", { user_id: "alice", image: PNG, text: "x" }, 400, /text.*image/],
  ["image with kind", { user_id: "alice", image: PNG, kind: "episode" }, 400, /kind.*image/],
  ["image empty", { user_id: "alice", image: "" }, 400, /image/],
  ["timeseries with image", { user_id: "alice", image: PNG, timeseries: { series: [] } }, 400, /timeseries.*image/],
  ["web_search with image", { user_id: "alice", image: PNG, web_search: true }, 400, /web_search.*image/],
  ["unknown kind", { ...valid, kind: "diary" }, 400, /kind/],
  ["kind not a string", { ...valid, kind: 1 }, 400, /kind/],
  ["reference_time not RFC 3339", { ...valid, reference_time: "yesterday" }, 400, /reference_time/],
  ["reference_time with month 13", { ...valid, reference_time: "2025-13-01T00:00:00Z" }, 400, /reference_time/],
  ["reference_time without a zone", { ...valid, reference_time: "2025-01-01T00:00:00" }, 400, /reference_time/],
  ["reference_time a number", { ...valid, reference_time: 1735689600 }, 400, /reference_time/],
  ["session_id over 128 bytes", { ...valid, session_id: "s".repeat(129) }, 400, /session_id.*128/],
  ["session_id over 128 bytes in 65 characters", { ...valid, session_id: "é".repeat(65) }, 400, /session_id.*128/],
  ["session_id with a control character", { ...valid, session_id: "a\u0001b" }, 400, /session_id.*control/],
  ["session_id with a newline", { ...valid, session_id: "a\nb" }, 400, /session_id.*control/],
  ["session_id empty", { ...valid, session_id: "" }, 400, /session_id/],
  ["dataset empty", { ...valid, dataset: "" }, 400, /dataset/],
  ["unknown stage in models", { ...valid, models: { extract: "m" } }, 400, /models\.extract\b/],
  ["a model name with a space", { ...valid, models: { extract_graph: "claude haiku" } }, 400, /models\.extract_graph/],
  [
    "a model name with a control character",
    { ...valid, models: { resolve_edges: "m\u0000" } },
    400,
    /models\.resolve_edges/
  ],
  [
    "a model name over 128 bytes",
    { ...valid, models: { extract_graph: "m".repeat(129) } },
    400,
    /models\.extract_graph/
  ],
  ["models not an object", { ...valid, models: "claude" }, 400, /models/],
  [
    "reasoning for web_search (cannot think)",
    { ...valid, reasoning: { web_search: "low" } },
    400,
    /reasoning\.web_search/
  ],
  ["reasoning for an unknown stage", { ...valid, reasoning: { store: "low" } }, 400, /reasoning\.store/],
  ["an unknown reasoning level", { ...valid, reasoning: { extract_graph: "max" } }, 400, /reasoning\.extract_graph/],
  ["reasoning not an object", { ...valid, reasoning: ["low"] }, 400, /reasoning/],
  ["timeseries not an object", { ...valid, timeseries: 5 }, 400, /timeseries/],
  ["web_search not a boolean", { ...valid, web_search: "yes" }, 400, /web_search/],
  ["image not base64", { user_id: "alice", image: "not base64 at all!" }, 400, /image/],
  [
    "image neither JPEG, PNG, GIF nor WebP",
    { user_id: "alice", image: Buffer.from("%PDF-1.7 a document").toString("base64") },
    400,
    /image.*PDF/
  ],
  [
    "image over 5 MiB decoded",
    { user_id: "alice", image: pngOfBytes(5 * MiB + 1) },
    400,
    /image.*5 MiB|image.*5242880/
  ],
  // a text request: the limit is 2 MiB (1 MiB of text plus the envelope)
  ["a text body over the text limit", { user_id: "alice", text: "a".repeat(TEXT_BODY_LIMIT) }, 413, /body.*limit/],
  ["a body over the image limit", { user_id: "alice", image: "A".repeat(IMAGE_BODY_LIMIT + 1024) }, 413, /body.*limit/]
]

// live services (real clock) for the shared server
layer(serveTest(rememberLayer(sqliteLayer(), {})), { excludeTestServices: true })("rejected requests", (it) => {
  // the block's one database only ever sees rejected requests, so every count stays 0
  const nothingQueuedOrStored = Effect.gen(function*() {
    expect(yield* count("gb_remember_runs")).toBe(0)
    expect(yield* count("gb_datasets")).toBe(0)
    expect(yield* count("gb_artifacts")).toBe(0)
    expect((yield* ScriptedLlm).calls).toHaveLength(0)
  })

  for (const [what, body, status, message] of REJECTED) {
    it.effect(`${status}: ${what}`, () =>
      Effect.gen(function*() {
        const raw = typeof body === "object" && body !== null && "raw" in body
          ? (body as { raw: string }).raw
          : undefined
        const res = raw === undefined ? yield* postJson(REMEMBER, body) : yield* postRaw(REMEMBER, raw)
        expectError(res, status, message)
        yield* nothingQueuedOrStored
      }))
  }

  it.effect("413: a body over the image limit without content-length (chunked)", () =>
    Effect.gen(function*() {
      const chunk = "A".repeat(MiB)
      const chunks = ["{\"user_id\": \"alice\", \"image\": \"", ...Array.from({ length: 8 }, () => chunk), "\"}"]
      expectError(yield* postChunked(REMEMBER, chunks), 413, /body.*limit/)
      yield* nothingQueuedOrStored
    }))

  it.effect("413: a text body over the text limit without content-length (chunked)", () =>
    Effect.gen(function*() {
      const chunks = ["{\"user_id\": \"alice\", \"text\": \"", "a".repeat(TEXT_BODY_LIMIT), "\"}"]
      expectError(yield* postChunked(REMEMBER, chunks), 413, /body.*limit/)
      yield* nothingQueuedOrStored
    }))

  it.effect("the size cases are on the right side of their limits", () =>
    Effect.sync(() => {
      const bytes = (body: unknown) => Buffer.byteLength(JSON.stringify(body))
      // the 400 cases are rejected by validation, not by the body limit
      expect(bytes({ user_id: "alice", text: over1MiBAscii })).toBeLessThan(TEXT_BODY_LIMIT)
      expect(bytes({ user_id: "alice", text: over1MiBUtf8 })).toBeLessThan(TEXT_BODY_LIMIT)
      expect(bytes({ user_id: "alice", image: pngOfBytes(5 * MiB + 1) })).toBeLessThan(IMAGE_BODY_LIMIT)
      expect(TEXT_BODY_LIMIT).toBeGreaterThanOrEqual(2 * MiB)
      expect(IMAGE_BODY_LIMIT).toBeGreaterThanOrEqual(7 * MiB)
    }))

  it.effect("404 with {error} for an unknown route or method", () =>
    Effect.gen(function*() {
      expectError(yield* get("/nope"), 404, /\/nope/)
      expectError(yield* postJson("/v1/gb/unknown", valid), 404, /\/v1\/gb\/unknown/)
      expectError(yield* get(REMEMBER), 404)
      yield* nothingQueuedOrStored
    }))

  it.effect("GET /v1/gb/runs/{id}: 404 for an unknown run, 400 for an id that is not a positive integer", () =>
    Effect.gen(function*() {
      expectError(yield* get("/v1/gb/runs/999"), 404, /999/)
      for (const id of ["abc", "-1", "1.5", "1e3", "%20"]) expectError(yield* get(`/v1/gb/runs/${id}`), 400, /id/)
    }))

  it.effect("GET /healthz", () =>
    Effect.gen(function*() {
      const res = yield* get("/healthz")
      expect(res.status).toBe(200)
      expect(res.json).toEqual({ status: "ok" })
    }))

  it.effect("GET /openapi.json is an OpenAPI 3 document of the API", () =>
    Effect.gen(function*() {
      const res = yield* get("/openapi.json")
      expect(res.status).toBe(200)
      expect(res.json.openapi).toMatch(/^3\./)
      expect(Object.keys(res.json.paths)).toEqual(expect.arrayContaining([REMEMBER, "/v1/gb/runs/{id}", "/healthz"]))
      expect(res.json.paths[REMEMBER].post).toBeDefined()
    }))

  it.effect("GET /docs is an HTML page", () =>
    Effect.gen(function*() {
      const res = yield* get("/docs")
      expect(res.status).toBe(200)
      expect(res.headers["content-type"]).toContain("text/html")
      expect(res.text).toMatch(/<html/i)
    }))
})

// ---------------------------------------------------------------------------------------------

describe("remember over HTTP", () => {
  it.live("200 with the seed's response shape; a contradiction lists the closed edge", () =>
    withApp(
      {
        extract_graph: [livesIn("Berlin", "2024-03-01"), livesIn("Paris", "2025-01-15")],
        resolve_edges: [resolution([], [{ new: 0, existing: [1] }])]
      },
      Effect.gen(function*() {
        const first = yield* postJson(REMEMBER, {
          ...valid,
          reference_time: "2025-02-01T00:00:00Z"
        })
        expect(first.status, first.text).toBe(200)
        expect(first.headers["content-type"]).toContain("application/json")
        expect(Object.keys(first.json).sort()).toEqual(
          ["artifact_id", "created_at", "edges", "entities", "invalidated_edges", "kind", "remember_run_id", "valid_at"]
        )
        expect(first.json).toMatchObject({
          remember_run_id: expect.any(Number),
          artifact_id: expect.any(Number),
          kind: "knowledge",
          valid_at: "2025-02-01T00:00:00.000Z",
          created_at: expect.any(String),
          invalidated_edges: []
        })
        expect(first.json.entities).toEqual([
          { id: expect.any(Number), name: "Alice Smith", type: "person", description: "an engineer" },
          { id: expect.any(Number), name: "Berlin", type: "place", description: "" }
        ])
        expect(first.json.edges).toHaveLength(1)
        const edge = first.json.edges[0]
        expect(edge).toMatchObject({
          id: expect.any(Number),
          source: "Alice Smith",
          target: "Berlin",
          relation: "lives_in",
          valid_at: "2024-03-01T00:00:00.000Z",
          artifact_id: first.json.artifact_id
        })
        // null times are omitted, not sent as null
        expect(edge).not.toHaveProperty("invalid_at")
        expect(edge).not.toHaveProperty("expired_at")

        const second = yield* postJson(REMEMBER, {
          user_id: "alice",
          text: "Alice moved to Paris on 2025-01-15.",
          kind: "episode",
          session_id: "chat-1",
          reference_time: "2025-02-01T12:00:00+02:00"
        })
        expect(second.status, second.text).toBe(200)
        expect(second.json).toMatchObject({
          kind: "episode",
          session_id: "chat-1",
          valid_at: "2025-02-01T10:00:00.000Z",
          invalidated_edges: [edge.id]
        })
        expect(second.json.remember_run_id).not.toBe(first.json.remember_run_id)
      })
    ))

  it.live("GET /v1/gb/runs/{id} shows every text stage keyed by name in pipeline order", () =>
    withApp(
      { extract_graph: [livesIn("Berlin", "2024-03-01")] },
      Effect.gen(function*() {
        const done = yield* postJson(REMEMBER, { ...valid, session_id: "s1" })
        expect(done.status, done.text).toBe(200)
        const res = yield* get(`/v1/gb/runs/${done.json.remember_run_id}`)
        expect(res.status).toBe(200)
        const run = res.json
        expect(run).toMatchObject({
          id: done.json.remember_run_id,
          pipeline: "text",
          user_id: "alice",
          dataset: "main",
          dataset_id: expect.any(Number),
          artifact_id: done.json.artifact_id,
          status: "succeeded",
          error: null,
          queued_at: expect.any(String),
          started_at: expect.any(String),
          finished_at: expect.any(String),
          duration_ms: expect.any(Number)
        })
        expect(run.params).toMatchObject({ kind: "knowledge", session_id: "s1" })
        expect(JSON.stringify(run.params)).not.toContain("Alice lives in Berlin")
        expect(Object.keys(run.stages)).toEqual([...TEXT_STAGES])
        expect(run.stages.extract_graph).toMatchObject({
          status: "succeeded",
          error: null,
          inference_ids: [expect.any(Number)]
        })
        expect(run.stages.load_candidates.status).toBe("succeeded")
        expect(run.stages.store.status).toBe("succeeded")
        for (const unused of ["classify_complexity", "chunk_text", "summarize_chunk", "resolve_edges", "web_search"]) {
          expect(run.stages[unused]).toEqual({
            status: "not_started",
            started_at: null,
            finished_at: null,
            duration_ms: null,
            error: null,
            inference_ids: []
          })
        }
      })
    ))

  it.live("the typed client derived from the contract: a text and an image, and the run", () =>
    withApp(
      {
        extract_graph: [livesIn("Berlin", "2024-03-01")],
        extract_image: [ScriptedLlm.json({ theme: "photo", title: "A dot", text_blocks: [] })]
      },
      Effect.gen(function*() {
        const server = yield* HttpServer.HttpServer
        const client = yield* makeGligabaoClient(`http://127.0.0.1:${(server.address as HttpServer.TcpAddress).port}`)
        // the client takes a request as it goes on the wire: the server's defaults left out
        const text = yield* client.remember.remember({ payload: { ...valid, session_id: "s1" } })
        if (isImageBody(text)) throw new Error("a text answered as an image")
        expect(text).toMatchObject({ kind: "knowledge", session_id: "s1", invalidated_edges: [] })
        expect(text.edges.map((e) => e.relation)).toEqual(["lives_in"])
        const image = yield* client.remember.remember({ payload: { user_id: "alice", image: PNG } })
        if (!isImageBody(image)) throw new Error("an image answered as a text")
        expect(image).toMatchObject({ pipeline: "image", media_type: "image/png", title: "A dot", cached: false })
        const run = yield* client.remember.getRun({ path: { id: String(text.remember_run_id) } })
        expect(run).toMatchObject({ id: text.remember_run_id, pipeline: "text", status: "succeeded" })
        expect(Object.keys(run.stages)).toEqual([...TEXT_STAGES])
      }).pipe(Effect.provide(FetchHttpClient.layer))
    ))

  it.live("502 when the LLM fails; the run is failed and nothing is stored", () =>
    withApp(
      { extract_graph: [{ fail: { message: "HTTP 500 from provider", status: 500 } }] },
      Effect.gen(function*() {
        const res = yield* postJson(REMEMBER, valid)
        expectError(res, 502, /500/)
        expect(yield* count("gb_artifacts")).toBe(0)
        const run = yield* get("/v1/gb/runs/1")
        expect(run.json).toMatchObject({ status: "failed", error: expect.any(String) })
        expect(run.json.stages.extract_graph.status).toBe("failed")
      })
    ))

  it.live("502 when the LLM answer is unusable", () =>
    withApp(
      { extract_graph: [{ text: "I found nothing of interest." }] },
      Effect.gen(function*() {
        expectError(yield* postJson(REMEMBER, valid), 502)
        expect(yield* count("gb_artifacts")).toBe(0)
      })
    ))

  it.live("503 when the LLM is unavailable (no key)", () =>
    withApp(
      { extract_graph: [{ fail: new LlmUnavailable({ message: "no LLM is configured: set ANTHROPIC_API_KEY" }) }] },
      Effect.gen(function*() {
        expectError(yield* postJson(REMEMBER, valid), 503, /ANTHROPIC_API_KEY/)
        expect(yield* count("gb_artifacts")).toBe(0)
      })
    ))

  const later: ReadonlyArray<[string, unknown, RegExp]> = [
    ["timeseries.fetch", { ...valid, timeseries: { fetch: { before: "30d" } } }, /timeseries providers/],
    ["web_search", { ...valid, web_search: true }, /web_search/]
  ]
  for (const [what, body, message] of later) {
    it.live(`503 with a clear message for ${what} (not configured on this server)`, () =>
      withApp(
        {},
        Effect.gen(function*() {
          expectError(yield* postJson(REMEMBER, body), 503, message)
          expect(yield* count("gb_artifacts")).toBe(0)
          expect((yield* ScriptedLlm).calls).toHaveLength(0)
        })
      ))
  }

  it.live("an image request may be larger than the text limit: it reaches the image model", () =>
    withApp(
      {},
      Effect.gen(function*() {
        const image = pngOfBytes(3 * MiB)
        expect(image.length).toBeGreaterThan(TEXT_BODY_LIMIT)
        const res = yield* postJson(REMEMBER, { user_id: "alice", image })
        expect(res.status, res.text.slice(0, 300)).not.toBe(413)
        expect(res.status).not.toBe(400)
        expect((yield* ScriptedLlm).callsFor("extract_image")).toHaveLength(1)
      })
    ))

  it.live("500 naming the stage, without internals, when the pipeline dies; the run log has the failure", () =>
    withApp(
      () => {
        throw new Error("kaboom: secret internals")
      },
      Effect.gen(function*() {
        const res = yield* postJson(REMEMBER, valid)
        // the message names the failing stage, not the defect
        expectError(res, 500, /extract_graph/)
        expect(res.json.error).not.toContain("kaboom")
        const run = yield* get("/v1/gb/runs/1")
        expect(run.json).toMatchObject({ status: "failed", error: expect.stringContaining("extract_graph") })
      })
    ))
})

// ---------------------------------------------------------------------------------------------

describe("defects in handlers", () => {
  const boom = () => Effect.die(new Error("boom: secret internals"))
  // the services the handlers use, every method dying
  const dying = Layer.mergeAll(
    Layer.mock(RememberManager, { submit: boom, enqueue: boom }),
    Layer.mock(RunLogRepo, { get: boom }),
    unavailableStorage(),
    withoutStorage()
  )

  it.live("500 with {error} and no stack trace", () =>
    Effect.gen(function*() {
      for (const res of [yield* postJson(REMEMBER, valid), yield* get("/v1/gb/runs/1")]) {
        expectError(res, 500)
        expect(res.json.error).not.toContain("boom")
      }
      // the server survives its defects
      expect((yield* get("/healthz")).status).toBe(200)
    }).pipe(Effect.provide(serveTest(dying))))
})
