/**
 * Durable, asynchronous, idempotent ingestion over HTTP (docs/INGESTION.md): `"wait": false`
 * (202, Location, the response on the run), Idempotency-Key (same run, one artifact; a
 * conflicting body is a 422; a bad key a 400) and `GET /v1/gb/runs` (filters, order, paging,
 * scoping).
 */
import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, type Layer, Schedule } from "effect"
import { describe, expect } from "vitest"
import { graph, rememberLayer } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { get, postJson, send, serveTest } from "../support/http.js"

const REMEMBER = "/v1/gb/remember"

const livesIn = (city: string) =>
  graph([{ name: "Alice Smith", type: "person" }, { name: city, type: "place" }], [{
    source: "Alice Smith",
    target: city,
    relation: "lives in",
    valid_at: "2024-03-01"
  }])

const withApp = <A, E>(storage: StorageLayer, answers: number, program: Effect.Effect<A, E, any>) =>
  program.pipe(
    Effect.provide(
      serveTest(
        rememberLayer(storage, { extract_graph: Array.from({ length: answers }, () => livesIn("Berlin")) })
      ) as Layer.Layer<any, any, never>
    )
  ) as Effect.Effect<A, E, never>

const postWithKey = (body: unknown, key: string) =>
  send(
    HttpClientRequest.post(REMEMBER).pipe(
      HttpClientRequest.setHeader("idempotency-key", key),
      HttpClientRequest.bodyText(JSON.stringify(body), "application/json")
    )
  )

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`)).pipe(
    Effect.map((rows) => Number(rows[0]!.n)),
    Effect.orDie
  )

const awaitSucceeded = (id: number) =>
  get(`/v1/gb/runs/${id}`).pipe(
    Effect.filterOrFail((res) => res.json?.status === "succeeded", () => "not yet"),
    Effect.retry(Schedule.spaced("20 millis")),
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`run ${id} never succeeded`) }),
    Effect.orDie
  )

forEachDialect((_dialect, makeLayer) => {
  describe("asynchronous remember", () => {
    it.live("wait: false answers 202 with Location; the run then shows the synchronous response", () =>
      withApp(
        makeLayer(),
        2,
        Effect.gen(function*() {
          const queued = yield* postJson(REMEMBER, { user_id: "alice", text: "Alice lives in Berlin.", wait: false })
          expect(queued.status, queued.text).toBe(202)
          expect(queued.json).toEqual({ remember_run_id: expect.any(Number), status: "queued" })
          expect(queued.headers["location"]).toBe(`/v1/gb/runs/${queued.json.remember_run_id}`)
          const run = yield* awaitSucceeded(queued.json.remember_run_id)
          expect(run.json).toMatchObject({ attempts: 1, status: "succeeded" })
          expect(run.json.response).toMatchObject({
            remember_run_id: queued.json.remember_run_id,
            artifact_id: run.json.artifact_id,
            edges: [expect.objectContaining({ relation: "lives_in" })]
          })
          // the synchronous call answers as before, and its run carries the same body
          const sync = yield* postJson(REMEMBER, { user_id: "alice", text: "Alice lives in Berlin again." })
          expect(sync.status).toBe(200)
          expect((yield* get(`/v1/gb/runs/${sync.json.remember_run_id}`)).json.response).toEqual(sync.json)
          expect(yield* count("gb_remember_queue")).toBe(0)
        })
      ))

    it.live("a validation error is a 400 before anything is queued", () =>
      withApp(
        makeLayer(),
        0,
        Effect.gen(function*() {
          const res = yield* postJson(REMEMBER, { user_id: "alice", wait: false })
          expect(res.status).toBe(400)
          expect(yield* count("gb_remember_runs")).toBe(0)
        })
      ))
  })

  describe("Idempotency-Key", () => {
    it.live("the same key and body twice: the same run, one artifact", () =>
      withApp(
        makeLayer(),
        2,
        Effect.gen(function*() {
          const body = { user_id: "alice", text: "Alice lives in Berlin." }
          const first = yield* postWithKey(body, "k-1")
          expect(first.status, first.text).toBe(200)
          const second = yield* postWithKey(body, "k-1")
          expect(second.status).toBe(200)
          expect(second.json).toEqual(first.json)
          // the key in the body, and without waiting: still that run
          const third = yield* postJson(REMEMBER, { ...body, idempotency_key: "k-1", wait: false })
          expect(third.status).toBe(202)
          expect(third.json).toEqual({ remember_run_id: first.json.remember_run_id, status: "succeeded" })
          expect(yield* count("gb_remember_runs")).toBe(1)
          expect(yield* count("gb_artifacts")).toBe(1)
        })
      ))

    it.live("two submissions at the same moment with one key give one run", () =>
      withApp(
        makeLayer(),
        4,
        Effect.gen(function*() {
          const body = { user_id: "alice", text: "Alice lives in Berlin." }
          const answers = yield* Effect.all([postWithKey(body, "same"), postWithKey(body, "same")], {
            concurrency: "unbounded"
          })
          expect(answers.map((a) => a.status)).toEqual([200, 200])
          expect(answers[0]!.json.remember_run_id).toBe(answers[1]!.json.remember_run_id)
          expect(yield* count("gb_remember_runs")).toBe(1)
          expect(yield* count("gb_artifacts")).toBe(1)
        })
      ))

    it.live("the same key with another body is a 422 naming the key; a bad key is a 400", () =>
      withApp(
        makeLayer(),
        2,
        Effect.gen(function*() {
          expect((yield* postWithKey({ user_id: "alice", text: "one" }, "k-2")).status).toBe(200)
          const conflict = yield* postWithKey({ user_id: "alice", text: "two" }, "k-2")
          expect(conflict.status).toBe(422)
          expect(Object.keys(conflict.json)).toEqual(["error"])
          expect(conflict.json.error).toContain("k-2")
          const long = yield* postWithKey({ user_id: "alice", text: "one" }, "x".repeat(129))
          expect(long.status).toBe(400)
          expect(long.json.error).toMatch(/Idempotency-Key/)
          const control = yield* postJson(REMEMBER, { user_id: "alice", text: "one", idempotency_key: "a\u0001b" })
          expect(control.status).toBe(400)
          expect(control.json.error).toMatch(/idempotency_key/)
          // another user's same key is another run
          expect((yield* postWithKey({ user_id: "bob", text: "two" }, "k-2")).status).toBe(200)
          expect(yield* count("gb_remember_runs")).toBe(2)
        })
      ))
  })

  describe("GET /v1/gb/runs", () => {
    it.live("lists a user's runs newest first, filtered, paged by before_id", () =>
      withApp(
        makeLayer(),
        4,
        Effect.gen(function*() {
          const ids: Array<number> = []
          for (const [user, dataset] of [["alice", "a"], ["alice", "b"], ["alice", "a"], ["bob", "a"]]) {
            const res = yield* postJson(REMEMBER, { user_id: user, dataset, text: "Alice lives in Berlin." })
            expect(res.status, res.text).toBe(200)
            ids.push(res.json.remember_run_id)
          }
          const all = yield* get("/v1/gb/runs?user_id=alice")
          expect(all.status).toBe(200)
          expect(all.json.runs.map((r: any) => r.id)).toEqual([ids[2], ids[1], ids[0]])
          expect(all.json.next_before_id).toBeNull()
          const page = yield* get("/v1/gb/runs?user_id=alice&limit=2")
          expect(page.json.runs.map((r: any) => r.id)).toEqual([ids[2], ids[1]])
          expect(page.json.next_before_id).toBe(ids[1])
          const next = yield* get(`/v1/gb/runs?user_id=alice&limit=2&before_id=${page.json.next_before_id}`)
          expect(next.json).toMatchObject({ runs: [{ id: ids[0] }], next_before_id: null })
          const a = yield* get("/v1/gb/runs?user_id=alice&dataset=a&status=succeeded")
          expect(a.json.runs.map((r: any) => r.id)).toEqual([ids[2], ids[0]])
          expect((yield* get("/v1/gb/runs?user_id=alice&status=queued")).json.runs).toEqual([])
          expect((yield* get("/v1/gb/runs?user_id=bob")).json.runs.map((r: any) => r.id)).toEqual([ids[3]])
          expect((yield* get("/v1/gb/runs?user_id=alice&status=nope")).status).toBe(400)
          expect((yield* get("/v1/gb/runs")).status).toBe(400)
        })
      ))
  })
})
