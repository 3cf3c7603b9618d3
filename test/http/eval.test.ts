/**
 * `POST /v1/gb/eval/remember` in process: the remember response plus a valid ATIF trajectory;
 * a failure after the run started answers its status with `{error, trajectory}`; a request
 * rejected before any run is a plain `{error}`; the public endpoint never turns eval mode on.
 */
import { it } from "@effect/vitest"
import { Effect, Either, type Layer, Option, Schema } from "effect"
import { expect } from "vitest"
import type { LlmScript } from "../../layers/testing/ScriptedLlm.js"
import { validateTrajectory } from "../../src/domain/Atif.js"
import { EvalRememberResponse } from "../../src/domain/Responses.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { graph } from "../support/app.js"
import { rememberLayer } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { get, postJson, serveTest } from "../support/http.js"

const EVAL = "/v1/gb/eval/remember"

const withApp = <A, E>(script: LlmScript, program: Effect.Effect<A, E, any>) =>
  program.pipe(
    Effect.provide(serveTest(rememberLayer(sqliteLayer(), script)) as Layer.Layer<any, any, never>)
  ) as Effect.Effect<A, E, never>

const ALICE = graph(
  [{ name: "Alice Smith", type: "person" }, { name: "Berlin", type: "place" }],
  [{ source: "Alice Smith", target: "Berlin", relation: "lives in", valid_at: "2024-03-01" }]
)

const expectValid = (trajectory: unknown) => {
  const valid = validateTrajectory(trajectory)
  if (Either.isLeft(valid)) expect.fail(valid.left)
  return valid.right
}

const runParams = (runId: number) =>
  Effect.flatMap(RunLogRepo, (log) => log.get(runId)).pipe(Effect.map((r) => Option.getOrThrow(r).params))

it.live("answers the remember response plus the trajectory of the call", () =>
  withApp(
    { extract_graph: [{ ...ALICE, usage: { inputTokens: 80, outputTokens: 12 } }] },
    Effect.gen(function*() {
      const res = yield* postJson(EVAL, {
        user_id: "alice",
        text: "Alice Smith lives in Berlin.",
        models: { extract_graph: "m1" }
      })
      expect(res.status, res.text.slice(0, 300)).toBe(200)
      const { trajectory, ...response } = Schema.decodeUnknownSync(EvalRememberResponse)(res.json)
      expect(response).toMatchObject({
        remember_run_id: expect.any(Number),
        artifact_id: expect.any(Number),
        kind: "knowledge",
        entities: [expect.objectContaining({ name: "Alice Smith" }), expect.objectContaining({ name: "Berlin" })],
        edges: [expect.objectContaining({ relation: "lives_in" })],
        invalidated_edges: []
      })
      const t = expectValid(trajectory)
      expect(t.steps.map((s) => s.extra?.step)).toEqual(["input", "extract_graph", "load_candidates", "store"])
      expect(t.steps[1]).toMatchObject({ model_name: "m1", metrics: { prompt_tokens: 80, completion_tokens: 12 } })
      expect(t.extra).toMatchObject({
        run_id: response.remember_run_id,
        status: "succeeded",
        input: { models: { extract_graph: "m1" } }
      })
      expect(yield* runParams(response.remember_run_id)).toMatchObject({ eval: true })
    })
  ))

it.live("a run that fails answers its status with the error and the trajectory up to the failure", () =>
  withApp(
    { extract_graph: [{ fail: { message: "HTTP 529 overloaded", status: 529 } }] },
    Effect.gen(function*() {
      const res = yield* postJson(EVAL, { user_id: "alice", text: "Alice Smith lives in Berlin." })
      expect(res.status).toBe(502)
      expect(Object.keys(res.json).sort()).toEqual(["error", "trajectory"])
      expect(res.json.error).toMatch(/extract_graph: HTTP 529/)
      const t = expectValid(res.json.trajectory)
      expect(t.steps.map((s) => s.extra?.step)).toEqual(["input", "extract_graph"])
      expect(t.extra).toMatchObject({ status: "failed", error: { type: "LlmFailed", status: 502 } })
    })
  ))

it.live("a request rejected before any run is a plain {error}, as for remember", () =>
  withApp(
    {},
    Effect.gen(function*() {
      const res = yield* postJson(EVAL, { user_id: "alice", text: "x", models: { nope: "m" } })
      expect(res.status).toBe(400)
      expect(Object.keys(res.json)).toEqual(["error"])
      expect(res.json.error).toMatch(/models\.nope/)
    })
  ))

it.live("the public endpoint refuses an `eval` field: no trajectory, no eval run, nothing stored", () =>
  withApp(
    { extract_graph: [ALICE] },
    Effect.gen(function*() {
      const res = yield* postJson("/v1/gb/remember", {
        user_id: "alice",
        text: "Alice Smith lives in Berlin.",
        eval: true
      })
      expect(res.status).toBe(400)
      expect(res.json).toEqual({ error: "unknown field \"eval\"" })
      expect(res.json).not.toHaveProperty("trajectory")
    })
  ))

it.live("the endpoint is in the OpenAPI document", () =>
  withApp(
    {},
    Effect.gen(function*() {
      const res = yield* get("/openapi.json")
      expect(res.status).toBe(200)
      expect(Object.keys(res.json.paths)).toContain("/v1/gb/eval/remember")
    })
  ))
