/**
 * A Vercel AI SDK agent with memory: gligabao's tools (remember, search, get_context, correct)
 * call a gligabao server through the plain client, for the user the application names. The model
 * here is the SDK's mock, making the calls a real one would; with a provider's model (for example
 * `anthropic("claude-sonnet-4-5")` from @ai-sdk/anthropic) the calls are the same. No Effect needed.
 * The server: GLIGABAO_URL (default http://127.0.0.1:8080) and GLIGABAO_TOKEN when it has tokens.
 */
import { generateText } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import { gligabaoTools } from "gligabao/ai/vercel"
import { Gligabao } from "gligabao/client"

const client = new Gligabao({
  baseUrl: process.env.GLIGABAO_URL ?? "http://127.0.0.1:8080",
  token: process.env.GLIGABAO_TOKEN
})
const tools = gligabaoTools(client, { user_id: "alice" })

/** A model whose one step is a call of `toolName` with `input`. */
const modelCalling = (toolName: string, input: Record<string, unknown>) =>
  new MockLanguageModelV3({
    doGenerate: {
      content: [{ type: "tool-call", toolCallId: "call_1", toolName, input: JSON.stringify(input) }],
      finishReason: { unified: "tool-calls", raw: undefined },
      usage: {
        inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 0, text: 0, reasoning: 0 }
      },
      warnings: []
    }
  })

const stored = await generateText({
  model: modelCalling("remember", {
    text: "Alice Smith moved from Berlin to Paris in January 2025.",
    reference_time: "2025-02-01T00:00:00Z"
  }),
  tools,
  prompt: "Please remember that I moved to Paris."
})
for (const result of stored.toolResults) {
  // a dynamic tool's result (one defined at run time) has no known type; these are static
  if (result.dynamic) continue
  console.log(`${result.toolName}: ${"error" in result.output ? result.output.error : "stored"}`)
}

const found = await generateText({
  model: modelCalling("search", { query: "Where does Alice live?" }),
  tools,
  prompt: "Where do I live?"
})
for (const result of found.toolResults) {
  if (!result.dynamic && result.toolName === "search" && !("error" in result.output)) {
    for (const fact of result.output.facts) console.log(`search: ${fact.description}`)
  }
}
