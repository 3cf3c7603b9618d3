/**
 * Metadata and filters over MCP (issue 42): `remember` takes `metadata`, and `search` and
 * `get_context` take the same `filters` as HTTP. The official SDK client over Streamable HTTP,
 * on both databases.
 */
import { it } from "@effect/vitest"
import { type Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect, type Layer } from "effect"
import { describe, expect } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { serveTest } from "../support/http.js"
import { mcpClient } from "../support/mcp.js"

/** every prompt the model was sent (system and user), for the instructions check */
const prompts: Array<string> = []

const withClient = <A, E>(storage: StorageLayer, program: (client: Client) => Effect.Effect<A, E, any>) =>
  Effect.flatMap(mcpClient(), program).pipe(
    Effect.scoped,
    Effect.provide(serveTest(rememberLayer(storage, (r: LlmRequest) => {
      prompts.push(`${r.system}\n${r.messages.map((m) => String(m.content)).join("\n")}`)
      return { text: answer(r).text }
    })) as Layer.Layer<any, any, never>)
  ) as Effect.Effect<A, E, never>

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: { user_id: "alice", ...args } })) as Effect.Effect<any>

forEachDialect((_dialect, makeLayer) => {
  describe("MCP metadata and filters", () => {
    it.live("remember takes metadata; search and get_context keep the facts of the texts that pass", () =>
      withClient(makeLayer(), (client) =>
        Effect.gen(function*() {
          const crm = yield* call(client, "remember", {
            text: "Alice Novak works at Acme in 2020.",
            metadata: { source: "crm", priority: 2 }
          })
          expect(crm.isError ?? false, JSON.stringify(crm.content)).toBe(false)
          yield* call(client, "remember", {
            text: "Bob Stone works at Initech in 2021.",
            metadata: { source: "email" }
          })
          const found = yield* call(client, "search", {
            query: "who works where",
            filters: { metadata: { source: "crm", priority: { gte: 2 } } }
          })
          expect(found.isError ?? false).toBe(false)
          expect(found.structuredContent.facts.map((f: any) => f.source)).toEqual(["Alice Novak"])
          const context = yield* call(client, "get_context", { filters: { metadata: { source: "email" } } })
          expect(context.content[0].text).toContain("Bob Stone works at Initech")
          expect(context.content[0].text).not.toContain("Alice")
          const bad = yield* call(client, "search", { query: "x", filters: { colour: "red" } })
          expect(bad.isError).toBe(true)
          expect(JSON.parse(bad.content[0].text).error).toMatch(/filters.*colour/)
          // a remember's own instructions reach its extraction prompt, and only its own
          prompts.length = 0
          const guided = yield* call(client, "remember", {
            text: "Dan Cole works at Globex in 2019.",
            instructions: "Only facts about our customers."
          })
          expect(guided.isError ?? false, JSON.stringify(guided.content)).toBe(false)
          expect(prompts.filter((p) => p.includes("Only facts about our customers.")).length).toBeGreaterThan(0)
          prompts.length = 0
          yield* call(client, "remember", { text: "Eve Park works at Hooli in 2018." })
          expect(prompts.some((p) => p.includes("Only facts about our customers."))).toBe(false)
          const badMetadata = yield* call(client, "remember", {
            text: "Carol Wu lives in Lisbon.",
            metadata: { a: [1] }
          })
          expect(badMetadata.isError).toBe(true)
          expect(JSON.parse(badMetadata.content[0].text).error).toMatch(/^metadata a must be/)
        })))
  })
})
