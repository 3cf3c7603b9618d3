/**
 * `GET /metrics` in process: public without `[auth]` (like the rest of the API), admin-only with
 * tokens, whatever spelling of the path the router accepts; the page counts a remember's run.
 */
import { HttpClientRequest } from "@effect/platform"
import { it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { describe, expect } from "vitest"
import { type LlmScript } from "../../layers/testing/ScriptedLlm.js"
import { Authentication } from "../../src/auth/Authentication.js"
import { tokenTable } from "../../src/auth/tokens.js"
import type { AuthToken } from "../../src/Config.js"
import { graph, rememberLayer } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { get, postJson, send, serveTest } from "../support/http.js"
import { samples, sampleValue } from "../support/prometheusText.js"

const script: LlmScript = (request) =>
  request.stage === "extract_graph"
    ? graph([{ name: "Alice Smith", type: "person" }], [])
    : { fail: { message: `unexpected stage ${request.stage}` } }

const TOKENS: ReadonlyArray<AuthToken> = [
  { kind: "plain", secret: Redacted.make("user-tok"), admin: false, userId: "alice" },
  { kind: "plain", secret: Redacted.make("admin-tok"), admin: true }
]

const withToken = (path: string, token: string | undefined) =>
  send(
    token === undefined ? HttpClientRequest.get(path) : HttpClientRequest.get(path).pipe(
      HttpClientRequest.bearerToken(token)
    )
  )

/** promtool: required in CI, where .ci/run installs it; skipped loudly elsewhere when missing */
const PROMTOOL = "/usr/bin/promtool"
if (!existsSync(PROMTOOL) && process.env.CI === "true") {
  throw new Error("promtool is missing (Debian: apt-get install prometheus)")
}

describe("GET /metrics", () => {
  it.live("without auth: public, Prometheus text, counting the remembers", () =>
    Effect.gen(function*() {
      const remembered = yield* postJson("/v1/gb/remember", { user_id: "alice", text: "Alice Smith is here." })
      expect(remembered.status, remembered.text).toBe(200)
      const res = yield* get("/metrics")
      expect(res.status).toBe(200)
      expect(res.headers["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8")
      const all = samples(res.text)
      // metrics are per process: this file's only remember
      expect(sampleValue(all, "gligabao_remembers_total", { status: "succeeded" })).toBe(1)
      expect(sampleValue(all, "gligabao_stage_duration_seconds_count", { stage: "extract_graph" })).toBe(1)
      // Prometheus' own linter accepts the page (Debian's prometheus package; .ci/run installs it)
      const lint = spawnSync(PROMTOOL, ["check", "metrics"], { input: res.text, encoding: "utf8" })
      expect({ status: lint.status, out: `${lint.stdout}${lint.stderr}` }).toEqual({ status: 0, out: "" })
    }).pipe(Effect.provide(serveTest(rememberLayer(sqliteLayer(), script)) as Layer.Layer<any, any, never>)))

  it.live("with tokens: 401 without one, 403 with a user's, 200 with the admin's, however the path is spelled", () =>
    Effect.gen(function*() {
      for (const path of ["/metrics", "/METRICS", "/%6Detrics", "//metrics", "/metrics?x=1"]) {
        expect((yield* withToken(path, undefined)).status, path).toBe(401)
        expect((yield* withToken(path, "user-tok")).status, path).toBe(403)
      }
      const ok = yield* withToken("/metrics", "admin-tok")
      expect(ok.status).toBe(200)
      expect(ok.text).toContain("# TYPE")
    }).pipe(
      Effect.provide(
        serveTest(
          Layer.merge(rememberLayer(sqliteLayer(), script), Layer.succeed(Authentication, tokenTable(TOKENS)))
        ) as Layer.Layer<any, any, never>
      )
    ))
})
