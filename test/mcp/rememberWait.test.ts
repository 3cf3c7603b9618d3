/**
 * MCP's remember tells the agent what happened (issue 40): without `wait` it waits for its run
 * up to `mcp.remember_wait_ms` and answers what was learned, or the run's error as a tool error;
 * only a run still working after that answers the run id to poll. The official SDK client over
 * Streamable HTTP, with models that take 200 ms a call.
 */
import { it } from "@effect/vitest"
import { type Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect, Layer, Option } from "effect"
import { describe, expect } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { McpSettings } from "../../src/mcp/settings.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { serveTest } from "../support/http.js"
import { mcpClient } from "../support/mcp.js"

const model = (r: LlmRequest) => ({ text: answer(r).text })
/** a model whose extraction is not JSON: the run fails (502) */
const broken = (_: LlmRequest) => ({ text: "I could not find any facts, sorry." })

const withClient = <A, E>(
  options: { readonly waitMs?: number; readonly script?: (r: LlmRequest) => { text: string } },
  program: (client: Client) => Effect.Effect<A, E, any>
) => {
  const services = Layer.merge(
    rememberLayer(sqliteLayer(), options.script ?? model, { llmDelayMs: () => 200 }),
    Layer.succeed(McpSettings, { userId: Option.some("alice"), rememberWaitMs: options.waitMs })
  )
  return Effect.flatMap(mcpClient(), program).pipe(
    Effect.scoped,
    Effect.provide(serveTest(services) as Layer.Layer<any, any, never>)
  ) as Effect.Effect<
    A,
    E,
    never
  >
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: args })) as Effect.Effect<any>

const TEXT = "Alice Novak lives in Berlin in 2020."

describe("MCP remember waits for its run", () => {
  it.live("a short text with 200 ms models answers the learned facts, not a run id", () =>
    withClient({}, (client) =>
      Effect.gen(function*() {
        const result = yield* call(client, "remember", { text: TEXT })
        expect(result.isError ?? false).toBe(false)
        const learned = result.structuredContent
        expect(learned.remember_run_id).toEqual(expect.any(Number))
        expect(learned.status).toBeUndefined()
        expect(learned.edges).toHaveLength(1)
        expect(learned.edges[0]).toMatchObject({ source: "Alice Novak", target: "Berlin" })
        // what the model reads: the learned fact as a line, not the JSON
        expect(result.content[0].text).toMatch(/^Learned:\n\[\d+\] .*Berlin.* \(since 2020-01-01\)$/)
        // and get_context's text is the block itself
        const context = yield* call(client, "get_context", {})
        expect(context.content[0].text).toBe(context.structuredContent.context)
        expect(context.content[0].text).toContain("Berlin")
      })))

  it.live("past mcp.remember_wait_ms it answers the run id and status to poll; the run goes on", () =>
    withClient({ waitMs: 50 }, (client) =>
      Effect.gen(function*() {
        const pending = (yield* call(client, "remember", { text: TEXT })).structuredContent
        expect(pending).toEqual({
          remember_run_id: expect.any(Number),
          status: expect.stringMatching(/^(queued|started)$/)
        })
        let run: any
        for (let i = 0; i < 100; i++) {
          run = (yield* call(client, "remember_status", { remember_run_id: pending.remember_run_id })).structuredContent
          if (run.status === "succeeded" || run.status === "failed") break
          yield* Effect.sleep("50 millis")
        }
        expect(run.status).toBe("succeeded")
        // wait: true still waits however long it takes
        const waited = (yield* call(client, "remember", { text: "Alice Novak works at Acme.", wait: true }))
          .structuredContent
        expect(waited.edges).toHaveLength(1)
      })))

  it.live("a run that fails within the wait is a tool error naming why", () =>
    withClient({ script: broken }, (client) =>
      Effect.gen(function*() {
        const result = yield* call(client, "remember", { text: TEXT })
        expect(result.isError).toBe(true)
        expect(JSON.parse(result.content[0].text).error).toMatch(/extract_graph/)
      })))
})
