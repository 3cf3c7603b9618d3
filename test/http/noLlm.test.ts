/**
 * A server without an LLM (issue 40, "Remember tells the agent what happened"): every remember
 * is refused with a 503 naming what to set, at once and with nothing queued: HTTP with and
 * without `wait`, the batch, eval mode and MCP's remember tool (the official SDK client over
 * Streamable HTTP). Reads still answer, and /readyz reports the LLM as not configured.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { describe, expect } from "vitest"
import { UNCONFIGURED_LLM_MESSAGE, UnconfiguredLlmLive } from "../../layers/llm/UnconfiguredLlm.js"
import { ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { rememberLayer } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { expectError, get, postJson, serveTest } from "../support/http.js"
import { mcpClient } from "../support/mcp.js"

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`)).pipe(
    Effect.map((rows) => Number(rows[0]!.n)),
    Effect.orDie
  )

/** Nothing was written: no run, no queued request, no artifact, no dataset, no model call. */
const nothingStored = Effect.gen(function*() {
  for (const table of ["gb_remember_runs", "gb_remember_queue", "gb_artifacts", "gb_datasets"]) {
    expect(yield* count(table), table).toBe(0)
  }
  expect((yield* ScriptedLlm).calls).toHaveLength(0)
})

const app = serveTest(
  rememberLayer(sqliteLayer(), () => ({ text: "{}" }), { llmLayer: UnconfiguredLlmLive("claude-haiku-5-5") })
) as Layer.Layer<any, any, never>

const NO_KEY = /^no LLM is configured: set ANTHROPIC_API_KEY/

describe("without an LLM", () => {
  it.live("every remember over HTTP is a 503 at once, and nothing is queued", () =>
    Effect.gen(function*() {
      const text = { user_id: "alice", text: "Alice lives in Berlin." }
      expectError(yield* postJson("/v1/gb/remember", text), 503, NO_KEY)
      expectError(yield* postJson("/v1/gb/remember", { ...text, wait: false }), 503, NO_KEY)
      const image = { user_id: "alice", image: "iVBORw0KGgo=" }
      expectError(yield* postJson("/v1/gb/remember", image), 503, NO_KEY)
      expectError(
        yield* postJson("/v1/gb/remember/batch", { user_id: "alice", items: [{ text: "a" }, { text: "b" }] }),
        503,
        /^items\[0\]: no LLM is configured/
      )
      // eval mode: refused before any run, so there is no trajectory
      const evalRes = yield* postJson("/v1/gb/eval/remember", text)
      expectError(evalRes, 503, NO_KEY)
      expect(Object.keys(evalRes.json)).toEqual(["error"])
      yield* nothingStored
      // reads still answer, and readiness says what is missing without failing for it
      const search = yield* postJson("/v1/gb/search", { user_id: "alice", query: "Berlin" })
      expect(search.status).toBe(200)
      const ready = yield* get("/readyz")
      expect(ready.status).toBe(200)
      expect(ready.json.llm).toEqual({ provider: "none", configured: false })
    }).pipe(Effect.provide(app)))

  it.live("MCP remember answers a tool error naming the key, with or without wait, and queues nothing", () =>
    Effect.gen(function*() {
      const client = yield* mcpClient()
      for (const wait of [undefined, true, false]) {
        const result: any = yield* Effect.promise(() =>
          client.callTool({
            name: "remember",
            arguments: { user_id: "alice", text: "Alice lives in Berlin.", ...(wait === undefined ? {} : { wait }) }
          })
        )
        expect(result.isError).toBe(true)
        expect(JSON.parse(result.content[0].text).error).toBe(UNCONFIGURED_LLM_MESSAGE)
      }
      yield* nothingStored
    }).pipe(Effect.scoped, Effect.provide(app)))
})
