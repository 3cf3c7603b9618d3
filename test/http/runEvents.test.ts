/**
 * `GET /v1/gb/runs/{id}/events` (docs/INGESTION.md): the Server-Sent Events of a run from
 * queued to its end, a finished run's final event, a failed run, the scoping (another user's run
 * a 404, the admin token a 403, a bad id a 400), and the poll itself (heartbeat, interruption
 * stops it). Also the scoping of `GET /v1/gb/runs` with `[auth]` tokens.
 */
import { HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Redacted, Stream } from "effect"
import { EventSource } from "eventsource"
import { describe, expect } from "vitest"
import type { LlmScript } from "../../layers/testing/ScriptedLlm.js"
import { Authentication } from "../../src/auth/Authentication.js"
import { tokenTable } from "../../src/auth/tokens.js"
import type { AuthToken } from "../../src/config/tables.js"
import type { RunWithStages } from "../../src/domain/Rows.js"
import { diffRun, RUN_EVENT_NAMES } from "../../src/domain/runEvents.js"
import { runEventFrames } from "../../src/http/RunEventsHandlers.js"
import type { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { graph, rememberLayer, type RememberLayerOptions, resolution } from "../support/app.js"
import { forEachDialect, sqliteLayer, type StorageLayer } from "../support/databases.js"
import { get, postJson, send, serveTest, type TestResponse } from "../support/http.js"

const REMEMBER = "/v1/gb/remember"

const livesIn = graph([{ name: "Alice Smith", type: "person" }, { name: "Berlin", type: "place" }], [{
  source: "Alice Smith",
  target: "Berlin",
  relation: "lives in",
  valid_at: "2024-03-01"
}])

/** Every text the same graph; a text with FAIL in it makes extraction fail. */
const script: LlmScript = (request) => {
  switch (request.stage) {
    case "extract_graph":
      return JSON.stringify(request.messages).includes("FAIL")
        ? { fail: { message: "scripted extraction failure", status: 400 } }
        : livesIn
    case "resolve_edges":
      return resolution([], [])
    default:
      return { fail: { message: `unexpected stage ${request.stage}` } }
  }
}

const withApp = <A, E>(
  storage: StorageLayer,
  program: Effect.Effect<A, E, any>,
  options: RememberLayerOptions & { readonly auth?: ReadonlyArray<AuthToken> } = {}
) => {
  const services = rememberLayer(storage, script, options)
  const layer = options.auth === undefined ? services : Layer.merge(
    services,
    Layer.succeed(Authentication, tokenTable(options.auth))
  )
  return program.pipe(Effect.provide(serveTest(layer) as Layer.Layer<any, any, never>)) as Effect.Effect<A, E, never>
}

interface Sse {
  readonly id: string
  readonly event: string
  readonly data: any
}

/** Opens the stream and reads it to its end (the server ends it with the run). */
const events = (id: number | string, token?: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.get(`/v1/gb/runs/${id}/events`)
    if (token !== undefined) request = HttpClientRequest.bearerToken(request, token)
    const response = yield* client.execute(request)
    const text = yield* response.stream.pipe(Stream.decodeText(), Stream.mkString)
    const frames = text.split("\n\n").filter((f) => f.trim() !== "" && !f.startsWith(":") && !f.startsWith("retry:"))
    const parsed: Array<Sse> = frames.map((frame) => {
      const lines = frame.split("\n")
      const id = lines.find((l) => l.startsWith("id: "))!.slice("id: ".length)
      const event = lines.find((l) => l.startsWith("event: "))!.slice("event: ".length)
      const data = JSON.parse(lines.find((l) => l.startsWith("data: "))!.slice("data: ".length))
      return { id, event, data }
    })
    return { status: response.status, headers: response.headers, text, events: parsed }
  }).pipe(
    Effect.scoped,
    Effect.timeoutFail({ duration: "15 seconds", onTimeout: () => new Error(`the stream of run ${id} never ended`) }),
    Effect.orDie
  )

const names = (es: ReadonlyArray<Sse>) => es.map((e) => e.event)

/** Every stage that started has its start and then its end, in that order, and the run ends last. */
const expectWellFormed = (es: ReadonlyArray<Sse>) => {
  const stages = es.filter((e) => e.event === "stage")
  const byStage = new Map<string, Array<string>>()
  for (const s of stages) byStage.set(s.data.stage, [...(byStage.get(s.data.stage) ?? []), s.data.status])
  expect(byStage.size).toBeGreaterThan(0)
  for (const [stage, statuses] of byStage) {
    expect(statuses[0], stage).toBe("started")
    expect(statuses.length, stage).toBe(2)
    expect(statuses[1], stage).not.toBe("started")
  }
  expect(["succeeded", "failed"]).toContain(es[es.length - 1]!.event)
  expect(names(es).filter((n) => n === "succeeded" || n === "failed")).toHaveLength(1)
}

forEachDialect((_dialect, makeLayer) => {
  describe("GET /v1/gb/runs/{id}/events", () => {
    it.live("a run from queued to succeeded: queued, started, its stages in order, succeeded with the response", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          // the first run holds the dataset (its model calls are slow) and nothing runs ahead
          // (lookahead 1), so the second stays queued
          const first = yield* postJson(REMEMBER, { user_id: "alice", text: "Alice lives in Berlin.", wait: false })
          const second = yield* postJson(REMEMBER, { user_id: "alice", text: "Alice lives in Berlin!", wait: false })
          expect(second.status, second.text).toBe(202)
          const id = second.json.remember_run_id as number
          const stream = yield* events(id)
          expect(stream.status).toBe(200)
          expect(stream.headers["content-type"]).toContain("text/event-stream")
          expect(stream.headers["cache-control"]).toBe("no-cache")
          const es = stream.events
          expect(names(es).slice(0, 2)).toEqual(["queued", "started"])
          expect(es[0]!.data).toMatchObject({ id, status: "queued", user_id: "alice" })
          expect(es[1]!.data).toMatchObject({ id, status: "started" })
          expectWellFormed(es)
          const last = es[es.length - 1]!
          expect(last.event).toBe("succeeded")
          expect(last.data).toMatchObject({ id, status: "succeeded" })
          expect(last.data.response).toMatchObject({
            remember_run_id: id,
            edges: [expect.objectContaining({ relation: "lives_in" })]
          })
          // the stages in the run's order: each start after the previous stage's start
          const starts = es.filter((e) => e.event === "stage" && e.data.status === "started").map((e) => e.data.stage)
          expect(starts).toEqual(Object.keys(last.data.stages).filter((s) => starts.includes(s)))
          expect(starts).toContain("extract_graph")
          // the final state is what GET /v1/gb/runs/{id} shows
          expect((yield* get(`/v1/gb/runs/${id}`)).json).toEqual(last.data)
          expect((yield* get(`/v1/gb/runs/${first.json.remember_run_id}`)).json.status).toBe("succeeded")
        }),
        { llmDelayMs: () => 400, lookahead: 1 }
      ))

    it.live("a finished run: 204 and no body, so an EventSource stops; its state is GET /v1/gb/runs/{id}", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const done = yield* postJson(REMEMBER, { user_id: "alice", text: "Alice lives in Berlin." })
          expect(done.status, done.text).toBe(200)
          const stream = yield* events(done.json.remember_run_id)
          expect(stream.status).toBe(204)
          expect(stream.text).toBe("")
          expect((yield* get(`/v1/gb/runs/${done.json.remember_run_id}`)).json.response).toEqual(done.json)
        })
      ))

    it.live("a standard EventSource gets every event once, and stops after the final one (204 on its reconnect)", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const queued = yield* postJson(REMEMBER, { user_id: "alice", text: "Alice lives in Berlin.", wait: false })
          expect(queued.status, queued.text).toBe(202)
          const server = yield* HttpServer.HttpServer
          const port = (server.address as HttpServer.TcpAddress).port
          const url = `http://127.0.0.1:${port}/v1/gb/runs/${queued.json.remember_run_id}/events`
          const seen = yield* Effect.async<
            { events: Array<{ id: string; event: string }>; opens: number; state: number }
          >(
            (resume) => {
              const source = new EventSource(url)
              const got: Array<{ id: string; event: string }> = []
              let opens = 0
              source.onopen = () => opens++
              for (const name of RUN_EVENT_NAMES) {
                source.addEventListener(name, (e) => got.push({ id: e.lastEventId, event: name }))
              }
              // after the final event the server ends the stream; the client reconnects with
              // Last-Event-ID after `retry`, gets a 204 and closes for good
              const check = setInterval(() => {
                if (source.readyState === EventSource.CLOSED) {
                  clearInterval(check)
                  resume(Effect.succeed({ events: got, opens, state: source.readyState }))
                }
              }, 50)
              return Effect.sync(() => {
                clearInterval(check)
                source.close()
              })
            }
          ).pipe(
            Effect.timeoutFail({ duration: "15 seconds", onTimeout: () => new Error("the EventSource never stopped") })
          )
          expect(seen.state).toBe(EventSource.CLOSED)
          expect(seen.opens).toBe(1)
          expect(seen.events.filter((e) => e.event === "succeeded")).toHaveLength(1)
          expect(seen.events[seen.events.length - 1]!.event).toBe("succeeded")
          expect(new Set(seen.events.map((e) => e.id)).size).toBe(seen.events.length)
          expect(seen.events.map((e) => e.event)).toContain("started")
        }),
        { llmDelayMs: () => 300 }
      ))

    it.live("a failed run ends with failed and its error", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const queued = yield* postJson(REMEMBER, { user_id: "alice", text: "FAIL please.", wait: false })
          expect(queued.status, queued.text).toBe(202)
          const stream = yield* events(queued.json.remember_run_id)
          const es = stream.events
          expect(names(es)).toContain("started")
          expectWellFormed(es)
          const last = es[es.length - 1]!
          expect(last.event).toBe("failed")
          expect(last.data).toMatchObject({ status: "failed", error: expect.stringContaining("scripted extraction") })
          expect(last.data.response).toBeUndefined()
          const failedStage = es.find((e) => e.event === "stage" && e.data.status === "failed")
          expect(failedStage?.data).toMatchObject({ stage: "extract_graph", error: expect.any(String) })
          // and once failed, the stream of that run is a 204
          expect((yield* events(queued.json.remember_run_id)).status).toBe(204)
        }),
        { llmDelayMs: () => 200 }
      ))

    it.live("a missing run is a 404, a bad id a 400, both {error}", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const missing = yield* get("/v1/gb/runs/999999/events")
          expect(missing.status).toBe(404)
          expect(missing.json).toEqual({ error: "no remember run with id 999999" })
          const bad = yield* get("/v1/gb/runs/abc/events")
          expect(bad.status).toBe(400)
          expect(Object.keys(bad.json)).toEqual(["error"])
          expect(bad.json.error).toMatch(/id/)
        })
      ))
  })
})

// ---------------------------------------------------------------------------------------------
// with [auth] tokens

const SECRETS = { alice: "alice-token-Q7vX2", bob: "bob-token-M4kP9", admin: "admin-token-Z8rT1" }
const TOKENS: ReadonlyArray<AuthToken> = [
  { kind: "plain", secret: Redacted.make(SECRETS.alice), admin: false, userId: "alice" },
  { kind: "plain", secret: Redacted.make(SECRETS.bob), admin: false, userId: "bob" },
  { kind: "plain", secret: Redacted.make(SECRETS.admin), admin: true }
]

const as = (who: keyof typeof SECRETS | "none", request: HttpClientRequest.HttpClientRequest) =>
  send(who === "none" ? request : HttpClientRequest.bearerToken(request, SECRETS[who]))

const remember = (who: "alice" | "bob") =>
  Effect.map(
    as(who, HttpClientRequest.post(REMEMBER).pipe(HttpClientRequest.bodyUnsafeJson({ user_id: who, text: "Alice." }))),
    (res) => {
      expect(res.status, res.text).toBe(200)
      return res.json.remember_run_id as number
    }
  )

const expectError = (res: TestResponse, status: number, message?: RegExp) => {
  expect(res.status, res.text.slice(0, 300)).toBe(status)
  expect(Object.keys(res.json ?? {})).toEqual(["error"])
  if (message !== undefined) expect(res.json.error).toMatch(message)
}

describe("with [auth] tokens", () => {
  it.live("GET /v1/gb/runs/{id}/events: the owner's stream; another user's run 404 like a missing one; admin 403; 401 without a token", () =>
    withApp(
      sqliteLayer(),
      Effect.gen(function*() {
        const bobs = yield* remember("bob")
        const own = yield* events(bobs, SECRETS.bob)
        expect(own.status).toBe(204)
        const asAlice = yield* as("alice", HttpClientRequest.get(`/v1/gb/runs/${bobs}/events`))
        expectError(asAlice, 404)
        const missing = yield* as("alice", HttpClientRequest.get("/v1/gb/runs/999999/events"))
        expectError(missing, 404)
        expect(asAlice.json.error.replace(String(bobs), "N")).toBe(missing.json.error.replace("999999", "N"))
        expectError(yield* as("alice", HttpClientRequest.get("/v1/gb/runs/abc/events")), 400, /id/)
        expectError(
          yield* as("admin", HttpClientRequest.get(`/v1/gb/runs/${bobs}/events`)),
          403,
          /admin token opens the admin UI and API only/
        )
        expectError(yield* as("none", HttpClientRequest.get(`/v1/gb/runs/${bobs}/events`)), 401)
      }),
      { auth: TOKENS }
    ))

  it.live("GET /v1/gb/runs: a user token lists its own runs only; another user_id 403; admin 403; no token 401", () =>
    withApp(
      sqliteLayer(),
      Effect.gen(function*() {
        const alices = [yield* remember("alice"), yield* remember("alice")]
        const bobs = yield* remember("bob")
        const own = yield* as("alice", HttpClientRequest.get("/v1/gb/runs?user_id=alice"))
        expect(own.status, own.text).toBe(200)
        expect(own.json.runs.map((r: any) => r.id)).toEqual([alices[1], alices[0]])
        expect(own.json.runs.every((r: any) => r.user_id === "alice")).toBe(true)
        expect(own.json.runs.map((r: any) => r.id)).not.toContain(bobs)
        expectError(
          yield* as("alice", HttpClientRequest.get("/v1/gb/runs?user_id=bob")),
          403,
          /may not act for that user_id/
        )
        expectError(
          yield* as("admin", HttpClientRequest.get("/v1/gb/runs?user_id=alice")),
          403,
          /admin token opens the admin UI and API only/
        )
        const none = yield* as("none", HttpClientRequest.get("/v1/gb/runs?user_id=alice"))
        expectError(none, 401)
        expect(none.headers["www-authenticate"]).toMatch(/^Bearer realm=/)
        expect((yield* as("bob", HttpClientRequest.get("/v1/gb/runs?user_id=bob"))).json.runs.map((r: any) => r.id))
          .toEqual([bobs])
      }),
      { auth: TOKENS }
    ))
})

// ---------------------------------------------------------------------------------------------
// the poll, without a server

const run = (over: Partial<RunWithStages>): RunWithStages => ({
  id: 7,
  pipeline: "text",
  user_id: "alice",
  dataset: "main",
  dataset_id: null,
  artifact_id: null,
  status: "queued",
  error: null,
  params: {},
  queued_at: "2025-01-01T00:00:00.000Z",
  started_at: null,
  finished_at: null,
  duration_ms: null,
  attempts: 0,
  response: null,
  error_tag: null,
  instance_id: "i",
  stages: [],
  ...over
} as RunWithStages)

const stage = (name: string, status: "started" | "succeeded" | "failed", progress?: [number, number]) => ({
  stage: name,
  status,
  started_at: "2025-01-01T00:00:01.000Z",
  finished_at: status === "started" ? null : "2025-01-01T00:00:02.000Z",
  duration_ms: status === "started" ? null : 1000,
  error: status === "failed" ? "boom" : null,
  inference_ids: [],
  progress: progress === undefined ? null : { chunks_done: progress[0], chunks_total: progress[1] },
  detail: null
})

describe("the run's events", () => {
  it("diffRun: a stage that started and ended between two reads gives its start, then its end; progress once per change", () => {
    const queued = run({})
    const started = run({ status: "started", started_at: "2025-01-01T00:00:01.000Z", attempts: 1 })
    expect(diffRun(undefined, queued).map((e) => e.event)).toEqual(["queued"])
    expect(diffRun(queued, queued)).toEqual([])
    const a = run({ ...started, stages: [stage("chunk", "started", [0, 3])] })
    expect(diffRun(queued, a).map((e) => e.event)).toEqual(["started", "stage", "progress"])
    const b = run({ ...started, stages: [stage("chunk", "started", [1, 3])] })
    expect(diffRun(a, b)).toEqual([{ event: "progress", data: { stage: "chunk", chunks_done: 1, chunks_total: 3 } }])
    const c = run({ ...started, stages: [stage("chunk", "succeeded", [3, 3]), stage("store", "succeeded")] })
    expect(diffRun(b, c).map((e) => [e.event, (e.data as any).stage, (e.data as any).status])).toEqual([
      ["progress", "chunk", undefined],
      ["stage", "chunk", "succeeded"],
      ["stage", "store", "started"],
      ["stage", "store", "succeeded"]
    ])
    const done = run({ ...c, status: "succeeded", finished_at: "2025-01-01T00:00:03.000Z" })
    expect(diffRun(c, done).map((e) => e.event)).toEqual(["succeeded"])
    expect(diffRun(undefined, done).map((e) => e.event)).toEqual(["succeeded"])
    // opened on a started run: its start and the stages so far
    expect(diffRun(undefined, b).map((e) => e.event)).toEqual(["started", "stage", "progress"])
  })

  it.live("the stream sends a keep-alive comment while nothing changes, and interrupting it stops the poll", () =>
    Effect.gen(function*() {
      let reads = 0
      const started = run({ status: "started", started_at: "2025-01-01T00:00:01.000Z", attempts: 1 })
      const log = { get: () => Effect.sync(() => (reads++, Option.some(started))) } as unknown as RunLogRepo["Type"]
      const out: Array<string> = []
      const fiber = yield* runEventFrames(log, started, { poll: "10 millis", heartbeat: "30 millis" }).pipe(
        Stream.runForEach((frame) => Effect.sync(() => out.push(frame))),
        Effect.fork
      )
      yield* Effect.sleep("150 millis")
      yield* Fiber.interrupt(fiber)
      const after = reads
      expect(after).toBeGreaterThan(3)
      expect(out[0]).toBe("retry: 3000\n\n")
      expect(out[1]).toMatch(/^id: 1\.0\.0\.0\nevent: started\ndata: \{.*\}\n\n$/)
      expect(out).toContain(": keep-alive\n\n")
      yield* Effect.sleep("100 millis")
      expect(reads).toBe(after)
    }))

  it.live("the stream ends at the final state", () =>
    Effect.gen(function*() {
      const reads = [
        run({
          status: "started",
          started_at: "2025-01-01T00:00:01.000Z",
          attempts: 1,
          stages: [stage("x", "started")]
        }),
        run({
          status: "failed",
          error: "boom",
          started_at: "2025-01-01T00:00:01.000Z",
          attempts: 1,
          stages: [stage("x", "failed")]
        })
      ]
      let i = 0
      const log = {
        get: () => Effect.sync(() => Option.some(reads[Math.min(i++, 1)]!))
      } as unknown as RunLogRepo["Type"]
      const frames = yield* runEventFrames(log, run({}), { poll: "5 millis" }).pipe(Stream.runCollect)
      expect([...frames].map((f) => f.split("\n").slice(0, 2).join(" "))).toEqual([
        "retry: 3000 ",
        "id: 0.0.0.0 event: queued",
        "id: 1.0.0.0 event: started",
        "id: 1.1.1.0 event: stage",
        "id: 1.1.3.0 event: stage",
        "id: 1.2.0.0 event: failed"
      ])
      // a reconnect after the stage's start is sent the rest only
      i = 0
      const resumed = yield* runEventFrames(log, reads[0]!, { poll: "5 millis", after: "1.1.1.0" }).pipe(
        Stream.runCollect
      )
      expect([...resumed].map((f) => f.split("\n").slice(0, 2).join(" "))).toEqual([
        "retry: 3000 ",
        "id: 1.1.3.0 event: stage",
        "id: 1.2.0.0 event: failed"
      ])
    }))
})
