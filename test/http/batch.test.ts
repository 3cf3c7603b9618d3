/**
 * `POST /v1/gb/remember/batch` (docs/INGESTION.md): one run per item, queued in item order in
 * one transaction; every item validated first (a 400 naming `items[i].<field>`, nothing queued);
 * the item and body limits; `wait: true` answers each item's response or error; idempotent items.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, type Layer, Schedule } from "effect"
import { describe, expect } from "vitest"
import { type LlmScript, type ScriptedAnswer } from "../../layers/testing/ScriptedLlm.js"
import { graph, rememberLayer } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { get, postJson, postRaw, serveTest } from "../support/http.js"

const BATCH = "/v1/gb/remember/batch"

const livesIn = (city: string) =>
  graph([{ name: "Alice Smith", type: "person" }, { name: city, type: "place" }], [{
    source: "Alice Smith",
    target: city,
    relation: "lives in",
    valid_at: "2024-03-01"
  }])

const withApp = <A, E>(
  storage: StorageLayer,
  answers: ReadonlyArray<ScriptedAnswer> | LlmScript,
  program: Effect.Effect<A, E, any>
) =>
  program.pipe(
    Effect.provide(
      serveTest(
        rememberLayer(storage, Array.isArray(answers) ? { extract_graph: answers } : answers as LlmScript)
      ) as Layer.Layer<any, any, never>
    )
  ) as Effect.Effect<A, E, never>

const answers = (n: number) => Array.from({ length: n }, () => livesIn("Berlin"))

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`)).pipe(
    Effect.map((rows) => Number(rows[0]!.n)),
    Effect.orDie
  )

const awaitFinished = (id: number) =>
  get(`/v1/gb/runs/${id}`).pipe(
    Effect.filterOrFail((res) => ["succeeded", "failed"].includes(res.json?.status), () => "not yet"),
    Effect.retry(Schedule.spaced("20 millis")),
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`run ${id} never finished`) }),
    Effect.orDie
  )

forEachDialect((_dialect, makeLayer) => {
  describe("remember batch", () => {
    it.live("202 with one queued run per item, in item order; each run succeeds", () =>
      withApp(
        makeLayer(),
        answers(3),
        Effect.gen(function*() {
          const res = yield* postJson(BATCH, {
            user_id: "alice",
            dataset: "notes",
            items: [{ text: "Alice lives in Berlin." }, { text: "Alice still lives in Berlin.", kind: "episode" }, {
              text: "Berlin again.",
              reference_time: "2025-01-31T12:00:00Z"
            }]
          })
          expect(res.status, res.text).toBe(202)
          expect(res.json.runs).toHaveLength(3)
          const ids: Array<number> = res.json.runs.map((r: any) => r.remember_run_id)
          expect(res.json.runs.every((r: any) => r.status === "queued")).toBe(true)
          expect([...ids].sort((a, b) => a - b)).toEqual(ids)
          for (const id of ids) {
            const run = yield* awaitFinished(id)
            expect(run.json).toMatchObject({ status: "succeeded", user_id: "alice", dataset: "notes" })
          }
          const runs = yield* Effect.forEach(ids, (id) => get(`/v1/gb/runs/${id}`))
          expect(runs.map((r) => r.json.params.kind)).toEqual(["knowledge", "episode", "knowledge"])
          expect(yield* count("gb_remember_queue")).toBe(0)
        })
      ))

    it.live("wait: true answers each item's response or {error, status}, in order", () =>
      withApp(
        makeLayer(),
        // keyed by the text, not by call order: extractions run ahead concurrently
        (request) =>
          JSON.stringify(request.messages).includes("This one fails.")
            ? { fail: { message: "the model is down" } }
            : livesIn("Berlin"),
        Effect.gen(function*() {
          const res = yield* postJson(BATCH, {
            user_id: "alice",
            wait: true,
            items: [{ text: "Alice lives in Berlin." }, { text: "This one fails." }, { text: "Alice: Berlin." }]
          })
          expect(res.status, res.text).toBe(200)
          expect(res.json.items).toHaveLength(3)
          expect(res.json.items[0]).toMatchObject({
            remember_run_id: expect.any(Number),
            artifact_id: expect.any(Number)
          })
          expect(res.json.items[1]).toEqual({ error: expect.stringContaining("the model is down"), status: 502 })
          expect(res.json.items[2]).toMatchObject({ remember_run_id: expect.any(Number) })
        })
      ))

    it.live("a bad item is a 400 naming items[i].<field>, and nothing is queued", () =>
      withApp(
        makeLayer(),
        answers(3),
        Effect.gen(function*() {
          const res = yield* postJson(BATCH, {
            user_id: "alice",
            items: [{ text: "one" }, { text: "two" }, { text: "" }]
          })
          expect(res.status).toBe(400)
          expect(res.json).toEqual({ error: "items[2].text must not be empty" })
          const missing = yield* postJson(BATCH, { user_id: "alice", items: [{ text: "one" }, { kind: "episode" }] })
          expect(missing.json).toEqual({ error: "items[1].text is required (or image, or messages)" })
          expect((yield* postJson(BATCH, { user_id: "alice", items: [] })).json).toEqual({
            error: "items must not be empty"
          })
          expect(yield* count("gb_remember_runs")).toBe(0)
          expect(yield* count("gb_remember_queue")).toBe(0)
        })
      ))

    it.live("over 1,000 items is a 400; a body over 32 MiB is a 413 before parsing", () =>
      withApp(
        makeLayer(),
        [],
        Effect.gen(function*() {
          const many = yield* postJson(BATCH, {
            user_id: "alice",
            items: Array.from({ length: 1001 }, (_, i) => ({ text: `item ${i}` }))
          })
          expect(many.status).toBe(400)
          expect(many.json).toEqual({ error: "items must have at most 1000 items" })
          // not even JSON: refused for its size alone
          const huge = yield* postRaw(BATCH, new Uint8Array(32 * 1024 * 1024 + 1).fill(0x20))
          expect(huge.status).toBe(413)
          expect(huge.json.error).toMatch(/over the limit of 33554432 bytes/)
          expect(yield* count("gb_remember_runs")).toBe(0)
        })
      ))

    it.live("idempotent items: the same batch again gives the same runs; a key for another request is a 422", () =>
      withApp(
        makeLayer(),
        answers(2),
        Effect.gen(function*() {
          const body = {
            user_id: "alice",
            items: [{ text: "Alice lives in Berlin.", idempotency_key: "a" }, {
              text: "Alice still lives in Berlin.",
              idempotency_key: "b"
            }]
          }
          const first = yield* postJson(BATCH, body)
          expect(first.status, first.text).toBe(202)
          const ids: Array<number> = first.json.runs.map((r: any) => r.remember_run_id)
          for (const id of ids) yield* awaitFinished(id)
          const again = yield* postJson(BATCH, body)
          expect(again.status).toBe(202)
          expect(again.json.runs).toEqual(ids.map((id: number) => ({ remember_run_id: id, status: "succeeded" })))
          const waited = yield* postJson(BATCH, { ...body, wait: true })
          expect(waited.json.items.map((i: any) => i.remember_run_id)).toEqual(ids)
          // the single endpoint's key is the same key
          const single = yield* postJson("/v1/gb/remember", { ...body.items[0], user_id: "alice", wait: false })
          expect(single.json.remember_run_id).toBe(ids[0])
          const conflict = yield* postJson(BATCH, {
            user_id: "alice",
            items: [{ text: "new", idempotency_key: "c" }, { text: "another text", idempotency_key: "b" }]
          })
          expect(conflict.status).toBe(422)
          expect(conflict.json.error).toMatch(/^items\[1\]\.idempotency_key: Idempotency-Key "b"/)
          // rolled back: the first item's run and key were not kept either
          expect(yield* count("gb_remember_runs")).toBe(2)
          expect(yield* count("gb_remember_idempotency")).toBe(2)
        })
      ))
  })
})
