/**
 * An Effect agent with memory: gligabao's @effect/ai toolkit (remember, search, get_context,
 * correct) next to a language model, for the user `MemoryScope` names. The model here is a
 * stand-in that makes the calls a real one would; with a provider's model (for example
 * @effect/ai-anthropic's `AnthropicLanguageModel.model("claude-sonnet-4-5")`) the turn is the same.
 */
import { LanguageModel } from "@effect/ai"
import { Effect, Layer, Stream } from "effect"
import { Gligabao } from "gligabao"
import { GligabaoToolkit, GligabaoToolkitLive, MemoryScope } from "gligabao/ai"

const MemoryLive = Gligabao.layer({
  database: { path: process.env.GLIGABAO_EXAMPLE_DB ?? "memory.db" },
  llm: { apiKey: process.env.ANTHROPIC_API_KEY, baseUrl: process.env.ANTHROPIC_BASE_URL }
})

/** A model whose turn is the given tool calls (a provider's model decides them itself). */
const modelCalling = (name: string, params: Record<string, unknown>) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: () =>
        Effect.succeed([
          { type: "tool-call", id: "call_1", name, params },
          { type: "finish", reason: "tool-calls", usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } }
        ]),
      streamText: () => Stream.empty
    })
  )

const turn = (prompt: string, name: string, params: Record<string, unknown>) =>
  LanguageModel.generateText({ prompt, toolkit: GligabaoToolkit }).pipe(Effect.provide(modelCalling(name, params)))

const program = Effect.gen(function*() {
  const stored = yield* turn("Please remember that I moved to Paris.", "remember", {
    text: "Alice Smith moved from Berlin to Paris in January 2025.",
    reference_time: "2025-02-01T00:00:00Z"
  })
  for (const call of stored.toolResults) console.log(`${call.name}: ${call.isFailure ? "failed" : "stored"}`)

  const found = yield* turn("Where do I live?", "search", { query: "Where does Alice live?" })
  for (const call of found.toolResults) {
    if (call.name === "search" && !call.isFailure) {
      for (const fact of call.result.facts) console.log(`search: ${fact.description}`)
    }
  }
})

program.pipe(
  Effect.provide(GligabaoToolkitLive.pipe(Layer.provide(MemoryLive))),
  Effect.provide(MemoryScope.layer({ user_id: "alice" })),
  Effect.runPromise
)
