/**
 * Names and descriptions over MCP (issue 40, items 5 and 6): `get_entity` by a word of a name,
 * accents aside, the candidates of an ambiguous one, and an entity described by all its texts in
 * `get_entity` and `get_context`. The official SDK client over Streamable HTTP, on both
 * databases, the model answering as one following the extraction prompt does.
 */
import { it } from "@effect/vitest"
import { type Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect, type Layer } from "effect"
import { describe, expect } from "vitest"
import { answer, stageOf } from "../../layers/testing/FactSentenceModel.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { extractionScript, NAMES_TEXTS } from "../http/entityNamesScript.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { serveTest } from "../support/http.js"
import { mcpClient } from "../support/mcp.js"

const model = (r: LlmRequest) => ({
  text: stageOf(r.system) === "extract_graph" ? extractionScript(r) : answer(r).text
})

const withClient = <A, E>(storage: StorageLayer, program: (client: Client) => Effect.Effect<A, E, any>) =>
  Effect.flatMap(mcpClient(), program).pipe(
    Effect.scoped,
    Effect.provide(serveTest(rememberLayer(storage, model)) as Layer.Layer<any, any, never>)
  ) as Effect.Effect<A, E, never>

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: { user_id: "alice", ...args } })) as Effect.Effect<any>

const textOf = (result: any): string => {
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false)
  return result.content[0].text
}

forEachDialect((_dialect, makeLayer) => {
  describe("MCP names and descriptions", () => {
    it.live("get_entity by a word, accents aside; the candidates of an ambiguous name; summaries in the answers", () =>
      withClient(makeLayer(), (client) =>
        Effect.gen(function*() {
          for (const text of [NAMES_TEXTS.engineer, NAMES_TEXTS.payments, NAMES_TEXTS.zoe]) {
            textOf(yield* call(client, "remember", { text }))
          }
          const zoe = textOf(yield* call(client, "get_entity", { name: "zoe" }))
          expect(zoe).toMatch(
            /^\[\d+\] Zoë Martin \(person\)\nlives in Lyon\nFacts:\n\[\d+\] Zoë Martin lives in Lyon\./
          )
          expect(zoe).toMatch(/\nConnected to:\n\[\d+\] Lyon \(place\)$/)
          // the description from both texts, newest first
          const alice = textOf(yield* call(client, "get_entity", { name: "alice" }))
          expect(alice.split("\n").slice(0, 2)).toEqual([
            expect.stringMatching(/^\[\d+\] Alice Smith \(person\)$/),
            "leads the payments team; engineer at Acme"
          ])
          const context = textOf(yield* call(client, "get_context", {}))
          expect(context).toContain("- Alice Smith (person): leads the payments team; engineer at Acme")

          textOf(yield* call(client, "remember", { text: NAMES_TEXTS.jones }))
          const ambiguous = yield* call(client, "get_entity", { name: "Alice" })
          expect(ambiguous.structuredContent).toMatchObject({ name: "Alice", matches: 2 })
          expect(textOf(ambiguous).split("\n")).toEqual([
            `"Alice" may mean 2 entities; call get_entity again with the id of the one you mean:`,
            expect.stringMatching(/^\[\d+\] Alice Smith \(person\), 2 facts: leads the payments team$/),
            expect.stringMatching(/^\[\d+\] Alice Jones \(person\), 1 fact: works at Initech$/)
          ])
          // a name that names nothing is a tool error naming it
          const none = yield* call(client, "get_entity", { name: "Carol" })
          expect(none.isError).toBe(true)
          expect(JSON.parse(none.content[0].text).error).toBe(`no entity named "Carol"`)
        })))
  })
})
