/** Stage summarize_chunk: a chunk's summary, an artifact of its own (seed: step 1b). */
import { Effect, Either } from "effect"
import { LlmFailed } from "../../domain/Errors.js"
import { callLlm, type RecordedResponse } from "../ModelCalls.js"
import { buildSummarizeChunkPrompt, parseSummary, SUMMARIZE_CHUNK_MAX_TOKENS } from "../prompts/summarizeChunk.js"
import { callContext, type RunContext } from "./RunContext.js"

export interface Summary {
  readonly text: string
  readonly response: RecordedResponse
}

const summarize = Effect.fnUntraced(function*(ctx: RunContext, text: string) {
  const prompt = buildSummarizeChunkPrompt({ referenceTime: ctx.referenceTime, text })
  const response = yield* callLlm(callContext(ctx, "summarize_chunk"), {
    stage: "summarize_chunk",
    model: ctx.request.models.summarize_chunk,
    reasoning: ctx.request.reasoning.summarize_chunk ?? "none",
    system: prompt.system,
    messages: [{ role: "user", content: prompt.user }],
    maxTokens: SUMMARIZE_CHUNK_MAX_TOKENS
  })
  const parsed = parseSummary(response.text)
  if (Either.isLeft(parsed)) {
    return yield* new LlmFailed({
      message: `summarize_chunk: unusable answer from the model: ${parsed.left}`,
      stage: "summarize_chunk"
    })
  }
  return { text: parsed.right, response } satisfies Summary
})

export const summarizeChunk = Effect.fn("remember.summarize_chunk")(function*(ctx: RunContext, text: string) {
  return yield* ctx.recorder.stage(
    "summarize_chunk",
    summarize(ctx, text),
    (x) => ({ model: x.response.model }),
    (x) => ({ observation: { summary: x.text } })
  )
})
