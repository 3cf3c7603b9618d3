import { Effect, Layer } from "effect"
import { LlmUnavailable } from "../../src/domain/Errors.js"
import { Llm } from "../../src/services/Llm.js"

export const UNCONFIGURED_LLM_MESSAGE =
  "no LLM is configured: set ANTHROPIC_API_KEY (or llm.provider = \"openai\" with an OpenAI-compatible base URL)"

/** The Llm when no key is configured: the server still starts, and every call is a 503. */
export const UnconfiguredLlmLive = (
  defaultModel: string,
  message: string = UNCONFIGURED_LLM_MESSAGE
): Layer.Layer<Llm> =>
  Layer.succeed(
    Llm,
    Llm.of({
      provider: "none",
      defaultModel,
      unavailable: message,
      complete: () => Effect.fail(new LlmUnavailable({ message }))
    })
  )
