/**
 * The @effect/ai toolkit (src/ai/toolkit.ts) over the real remember machinery and the fake model,
 * on both databases: each tool through the toolkit's `handle` as a model's call reaches it (the
 * arguments as JSON, decoded by the contract), the scope's user and dataset and never the
 * model's, a bad argument answered as the API's error naming it, and a whole turn of
 * `LanguageModel.generateText` with a scripted model that calls the tools.
 */
import { LanguageModel, Tool } from "@effect/ai"
import { it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { describe, expect } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { TOOL_DEFINITIONS } from "../../src/ai/definitions.js"
import { GligabaoToolkit, GligabaoToolkitLive, MemoryScope, SearchTool } from "../../src/ai/toolkit.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"

const memory = (storage: StorageLayer) =>
  GligabaoToolkitLive.pipe(Layer.provideMerge(rememberLayer(storage, (r: LlmRequest) => ({ text: answer(r).text }))))

const as = (user_id: string, dataset?: string) =>
  Effect.provideService(MemoryScope, dataset === undefined ? { user_id } : { user_id, dataset })

/** A tool call as a model makes it: JSON arguments, through the toolkit's decoding. */
const call = (name: keyof typeof GligabaoToolkit.tools, params: Record<string, unknown>) =>
  Effect.flatMap(GligabaoToolkit, (toolkit) => toolkit.handle(name, params as never))

/** A model that calls `calls` in its one turn, then stops. */
const scriptedModel = (calls: ReadonlyArray<{ readonly name: string; readonly params: unknown }>) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: () =>
        Effect.succeed([
          ...calls.map((c, i) => ({ type: "tool-call" as const, id: `call_${i}`, name: c.name, params: c.params })),
          {
            type: "finish" as const,
            reason: "tool-calls" as const,
            usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }
          }
        ]),
      streamText: () => Stream.empty
    })
  )

forEachDialect((_dialect, makeLayer) => {
  describe("the @effect/ai toolkit", () => {
    it.live("remember, search, get_context and correct run the operations for the scope's user", () =>
      Effect.gen(function*() {
        const stored = yield* call("remember", { text: "Alice Novak works at Acme in 2020." }).pipe(as("alice"))
        expect(stored.isFailure).toBe(false)
        const edges = (stored.encodedResult as { edges: Array<{ id: number; description: string }> }).edges
        expect(edges.map((e) => e.description)).toEqual(["Alice Novak works at Acme since 2020"])

        // the model's user_id is not an argument: the scope's user is read, bob's memory is empty
        const found = yield* call("search", { query: "Acme", user_id: "bob" }).pipe(as("alice"))
        expect((found.encodedResult as any).facts.map((f: any) => f.description)).toEqual([
          "Alice Novak works at Acme since 2020"
        ])
        const bobs = yield* call("search", { query: "Acme" }).pipe(as("bob"))
        expect((bobs.encodedResult as any).facts).toEqual([])
        // nor is the dataset: the scope's
        const other = yield* call("search", { query: "Acme", dataset: "main" }).pipe(as("alice", "work"))
        expect((other.encodedResult as any).facts).toEqual([])

        const context = yield* call("get_context", { query: "Alice" }).pipe(as("alice"))
        expect((context.encodedResult as { context: string }).context).toContain("Alice Novak works at Acme")

        const closed = yield* call("correct", {
          action: "close",
          id: edges[0]!.id,
          invalid_at: "2024-01-01T00:00:00Z"
        }).pipe(as("alice"))
        expect(closed.isFailure).toBe(false)
        expect((closed.encodedResult as any).fact.invalid_at).toBe("2024-01-01T00:00:00.000Z")
        const now = yield* call("search", { query: "Acme" }).pipe(as("alice"))
        expect((now.encodedResult as any).facts).toEqual([])
      }).pipe(Effect.provide(memory(makeLayer()))))

    it.live("a bad argument is answered as the API's error, naming it, and nothing is stored", () =>
      Effect.gen(function*() {
        const limit = yield* call("search", { query: "Acme", limit: 500 }).pipe(as("alice"))
        expect(limit).toMatchObject({
          isFailure: true,
          encodedResult: { error: "limit must be an integer from 1 to 100", status: 400 }
        })
        const missing = yield* call("correct", { action: "close" }).pipe(as("alice"))
        expect(missing.encodedResult).toEqual({ error: "id is required for action close", status: 400 })
        const empty = yield* call("remember", {}).pipe(as("alice"))
        expect(empty.isFailure).toBe(true)
        expect((empty.encodedResult as { status: number }).status).toBe(400)
        const none = yield* call("search", { query: "Acme" }).pipe(as("alice"))
        expect((none.encodedResult as any).facts).toEqual([])
        // a scope the API would refuse is refused the same way
        const user = yield* call("search", { query: "Acme" }).pipe(as(""))
        expect(user.encodedResult).toMatchObject({ status: 400, error: expect.stringMatching(/^user_id /) })
      }).pipe(Effect.provide(memory(makeLayer()))))

    it.live("LanguageModel.generateText runs the model's tool calls on the memory", () =>
      Effect.gen(function*() {
        const turn = LanguageModel.generateText({ prompt: "Remember where Alice works.", toolkit: GligabaoToolkit })
        const first = yield* turn.pipe(
          Effect.provide(scriptedModel([{ name: "remember", params: { text: "Alice Novak works at Acme in 2020." } }])),
          as("alice")
        )
        expect(first.toolResults.map((r) => [r.name, r.isFailure])).toEqual([["remember", false]])
        const second = yield* turn.pipe(
          Effect.provide(scriptedModel([{ name: "search", params: { query: "Where does Alice work?" } }])),
          as("alice")
        )
        const [result] = second.toolResults
        expect(result?.name).toBe("search")
        expect((result?.result as any).facts.map((f: any) => f.description)).toEqual([
          "Alice Novak works at Acme since 2020"
        ])
      }).pipe(Effect.provide(memory(makeLayer()))))
  })
})

describe("the toolkit's tools", () => {
  it("show a model MCP's arguments, without user_id and dataset", () => {
    const schema = Tool.getJsonSchemaFromSchemaAst(SearchTool.parametersSchema.ast) as {
      properties: Record<string, unknown>
      required: Array<string>
    }
    expect(schema.properties).toEqual(TOOL_DEFINITIONS.search.inputSchema.properties)
    expect(schema.required).toEqual(["query"])
    expect(Object.keys(schema.properties)).not.toContain("user_id")
    expect(Object.keys(schema.properties)).not.toContain("dataset")
    expect(Object.keys(GligabaoToolkit.tools)).toEqual(["remember", "search", "get_context", "correct"])
  })
})
