import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Redacted, Ref, TestClock } from "effect"
import {
  AttemptFailed,
  makeAnthropicLlm,
  makeOpenAiLlm,
  retrySchedule,
  UnconfiguredLlmLive
} from "../layers/llm/index.js"
import { ScriptedLlm } from "../layers/testing/ScriptedLlm.js"
import { LlmFailed, type LlmUnavailable } from "../src/domain/Errors.js"
import { THINKING_BUDGET } from "../src/domain/Stages.js"
import { Llm, type LlmRequest } from "../src/services/Llm.js"
import {
  anthropicError,
  anthropicMessage,
  type FakeAnthropic,
  malformedBody,
  overloaded,
  rateLimited,
  startFakeAnthropic
} from "./support/fakeAnthropic.js"
import {
  chatCompletion,
  type FakeOpenAi,
  openAiError,
  openAiRateLimited,
  startFakeOpenAi
} from "./support/fakeOpenAi.js"

/** The failure of `effect`, which must be an LlmFailed. */
const llmFailed = <A>(effect: Effect.Effect<A, LlmFailed | LlmUnavailable>) =>
  Effect.flip(effect).pipe(
    Effect.map((error) => {
      expect(error).toBeInstanceOf(LlmFailed)
      return error as LlmFailed
    })
  )

const request = (overrides: Partial<LlmRequest> = {}): LlmRequest => ({
  stage: "extract_graph",
  reasoning: "none",
  system: "Answer with JSON only.",
  messages: [{ role: "user", content: "Alice works at Acme. Return json." }],
  maxTokens: 4096,
  ...overrides
})

describe("AnthropicLlm against a fake Messages API", () => {
  let fake: FakeAnthropic
  beforeAll(async () => {
    // an alias is reported back as a dated snapshot, as the real API does
    fake = await startFakeAnthropic({
      reportModel: (m) => (m === "claude-haiku-4-5" ? "claude-haiku-4-5-20251001" : m)
    })
  })
  afterAll(() => fake.close())
  beforeEach(() => fake.reset())

  const llm = (overrides: { maxRetries?: number; timeoutMs?: number } = {}) =>
    makeAnthropicLlm({
      apiKey: Redacted.make("sk-ant-test"),
      baseUrl: fake.url,
      defaultModel: "claude-haiku-4-5",
      timeoutMs: overrides.timeoutMs ?? 5_000,
      maxRetries: overrides.maxRetries ?? 2,
      retryBaseDelayMs: 1
    })

  it.live("returns the text, the model as reported and the mapped usage; sends the auth headers", () =>
    Effect.gen(function*() {
      fake.enqueue(
        anthropicMessage({
          model: "claude-haiku-4-5-20251001",
          content: [
            { type: "thinking", thinking: "hmm", signature: "sig" },
            { type: "text", text: "{\"entities\":", citations: null },
            { type: "text", text: "[],\"edges\":[]}", citations: null }
          ],
          usage: {
            input_tokens: 120,
            output_tokens: 45,
            cache_read_input_tokens: 30,
            cache_creation_input_tokens: 7,
            server_tool_use: { web_search_requests: 2 }
          }
        })
      )
      const response = yield* llm().complete(request({ model: "claude-haiku-4-5" }))
      expect(response.text).toBe("{\"entities\":[],\"edges\":[]}")
      expect(response.model).toBe("claude-haiku-4-5-20251001")
      expect(response.provider).toBe("anthropic")
      expect(response.stopReason).toBe("end_turn")
      expect(response.reasoning).toBe("none")
      expect(response.usage).toEqual({
        inputTokens: 120,
        outputTokens: 45,
        cacheReadTokens: 30,
        cacheWriteTokens: 7,
        webSearchRequests: 2
      })
      expect(response.blocks).toHaveLength(3)

      const sent = fake.requests[0]!
      expect(sent.path).toBe("/v1/messages")
      // @anthropic-ai/sdk 1.x sends the key as a Bearer token and its own API version (2026-10-21)
      expect(sent.headers.authorization).toBe("Bearer sk-ant-test")
      expect(sent.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      expect(sent.body.model).toBe("claude-haiku-4-5")
      expect(sent.body.system).toBe("Answer with JSON only.")
      expect(sent.body.max_tokens).toBe(4096)
      expect(sent.body).not.toHaveProperty("thinking")
      expect(sent.body).not.toHaveProperty("temperature")
    }))

  it.live("uses the default model when the request names none, and reports the dated snapshot", () =>
    Effect.gen(function*() {
      const response = yield* llm().complete(request({ model: "" }))
      expect(fake.requests[0]!.body.model).toBe("claude-haiku-4-5")
      expect(response.model).toBe("claude-haiku-4-5-20251001")
    }))

  it.live("maps missing usage fields to 0", () =>
    Effect.gen(function*() {
      fake.enqueue({
        json: {
          type: "message",
          model: "claude-haiku-4-5",
          content: [{ type: "text", text: "{}" }],
          stop_reason: "end_turn",
          usage: { input_tokens: 3, output_tokens: 4 }
        }
      })
      const response = yield* llm().complete(request())
      expect(response.usage).toEqual({
        inputTokens: 3,
        outputTokens: 4,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        webSearchRequests: 0
      })
    }))

  for (const level of ["low", "medium", "high"] as const) {
    it.live(`sends a ${level} thinking budget on top of max_tokens`, () =>
      Effect.gen(function*() {
        // the default handler rejects a budget the real API would reject
        const response = yield* llm().complete(request({ reasoning: level, maxTokens: 512 }))
        const body = fake.requests[0]!.body
        expect(body.thinking).toEqual({ type: "enabled", budget_tokens: THINKING_BUDGET[level] })
        expect(body.max_tokens).toBe(512 + THINKING_BUDGET[level])
        expect(response.reasoning).toBe(level)
        // the thinking block is not part of the text
        expect(response.text).toBe("{\"entities\":[],\"edges\":[]}")
      }))
  }

  it.live("calls a Claude 3.5 model without thinking and records none", () =>
    Effect.gen(function*() {
      const response = yield* llm().complete(request({ model: "claude-3-5-haiku-20241022", reasoning: "high" }))
      const body = fake.requests[0]!.body
      expect(body).not.toHaveProperty("thinking")
      expect(body.max_tokens).toBe(4096)
      expect(response.reasoning).toBe("none")
    }))

  it.live("keeps thinking for Claude 3.7", () =>
    Effect.gen(function*() {
      const response = yield* llm().complete(request({ model: "claude-3-7-sonnet-20250219", reasoning: "low" }))
      expect(fake.requests[0]!.body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 })
      expect(response.reasoning).toBe("low")
    }))

  it.live("sends images as base64 blocks and passes tools through", () =>
    Effect.gen(function*() {
      const tool = { type: "web_search_20250305", name: "web_search", max_uses: 5 }
      yield* llm().complete(
        request({
          messages: [
            {
              role: "user",
              content: [
                { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" },
                { type: "text", text: "Describe it as json." }
              ]
            }
          ],
          tools: [tool]
        })
      )
      const body = fake.requests[0]!.body
      expect(body.messages[0].content).toEqual([
        { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
        { type: "text", text: "Describe it as json." }
      ])
      expect(body.tools).toEqual([tool])
    }))

  it.live("retries a 429 with retry-after and then succeeds", () =>
    Effect.gen(function*() {
      fake.enqueue(rateLimited(0))
      const response = yield* llm().complete(request())
      expect(fake.requests).toHaveLength(2)
      expect(response.text).toBe("{\"entities\":[],\"edges\":[]}")
    }))

  it.live("retries a 529 overloaded and then succeeds", () =>
    Effect.gen(function*() {
      fake.enqueue(overloaded(), overloaded())
      yield* llm().complete(request())
      expect(fake.requests).toHaveLength(3)
    }))

  it.live("fails with LlmFailed after maxRetries + 1 attempts on a persistent 500", () =>
    Effect.gen(function*() {
      fake.setHandler(() => anthropicError(500, "Internal server error"))
      const error = yield* llmFailed(llm({ maxRetries: 2 }).complete(request({ stage: "resolve_edges" })))
      expect(error).toBeInstanceOf(LlmFailed)
      expect(fake.requests).toHaveLength(3)
      expect(error.stage).toBe("resolve_edges")
      expect(error.status).toBe(500)
      expect(error.message).toContain("HTTP 500")
      expect(error.message).toContain("Internal server error")
      expect(error.message).toContain("after 3 attempts")
    }))

  it.live("does not retry a 400", () =>
    Effect.gen(function*() {
      fake.enqueue(anthropicError(400, "messages: Field required"))
      const error = yield* llmFailed(llm().complete(request()))
      expect(fake.requests).toHaveLength(1)
      expect(error.status).toBe(400)
      expect(error.message).toContain("invalid_request_error: messages: Field required")
    }))

  it.live("surfaces a max_tokens stop reason", () =>
    Effect.gen(function*() {
      fake.enqueue(anthropicMessage({ text: "{\"entities\":[", stopReason: "max_tokens" }))
      const response = yield* llm().complete(request())
      expect(response.stopReason).toBe("max_tokens")
      expect(response.text).toBe("{\"entities\":[")
    }))

  it.live("fails with LlmFailed on a malformed body, without retrying", () =>
    Effect.gen(function*() {
      fake.enqueue(malformedBody())
      const error = yield* llmFailed(llm().complete(request()))
      expect(error._tag).toBe("LlmFailed")
      expect(error.message).toContain("not valid JSON")
      expect(fake.requests).toHaveLength(1)
    }))

  it.live("fails with LlmFailed on a JSON body that is not a message", () =>
    Effect.gen(function*() {
      fake.enqueue({ json: { hello: "world" } })
      const error = yield* llmFailed(llm().complete(request()))
      expect(error.message).toContain("not a Messages response")
    }))

  it.live("times out each attempt and fails with LlmFailed", () =>
    Effect.gen(function*() {
      fake.setLatency(10_000)
      const error = yield* llmFailed(llm({ timeoutMs: 50, maxRetries: 1 }).complete(request()))
      expect(error.message).toContain("timed out after 50ms")
      expect(error.message).toContain("after 2 attempts")
      expect(fake.requests).toHaveLength(2)
    }))

  it.live("retries a refused connection and then fails", () =>
    Effect.gen(function*() {
      const dead = yield* Effect.promise(() => startFakeAnthropic())
      const url = dead.url
      yield* Effect.promise(() => dead.close())
      const error = yield* llmFailed(
        makeAnthropicLlm({
          apiKey: Redacted.make("k"),
          baseUrl: url,
          defaultModel: "claude-haiku-4-5",
          timeoutMs: 5_000,
          maxRetries: 1,
          retryBaseDelayMs: 1
        }).complete(request())
      )
      expect(error.message).toContain("connection failed")
      expect(error.message).toContain("after 2 attempts")
    }))
})

describe("OpenAiLlm against a fake chat completions API", () => {
  let fake: FakeOpenAi
  beforeAll(async () => {
    fake = await startFakeOpenAi()
  })
  afterAll(() => fake.close())
  beforeEach(() => fake.reset())

  const llm = (overrides: { maxRetries?: number; provider?: string } = {}) =>
    makeOpenAiLlm({
      apiKey: Redacted.make("sk-test"),
      baseUrl: fake.url,
      defaultModel: "gpt-4o-mini",
      timeoutMs: 5_000,
      maxRetries: overrides.maxRetries ?? 2,
      retryBaseDelayMs: 1,
      ...(overrides.provider !== undefined ? { provider: overrides.provider } : {})
    })

  it.live("no answer schema: no response_format (see llm-structured.test.ts); system + max_tokens, usage, the model as reported", () =>
    Effect.gen(function*() {
      fake.enqueue(
        chatCompletion({
          text: "{\"entities\":[]}",
          model: "gpt-4o-mini-2024-07-18",
          promptTokens: 100,
          completionTokens: 20,
          cachedTokens: 60
        })
      )
      const response = yield* llm().complete(request({ reasoning: "high" }))
      const sent = fake.requests[0]!
      expect(sent.path).toBe("/v1/chat/completions")
      expect(sent.headers.authorization).toBe("Bearer sk-test")
      expect(sent.body).not.toHaveProperty("response_format")
      expect(sent.body.messages[0]).toEqual({ role: "system", content: "Answer with JSON only." })
      expect(sent.body.max_tokens).toBe(4096)
      expect(sent.body).not.toHaveProperty("reasoning_effort")
      expect(sent.body).not.toHaveProperty("temperature")

      expect(response.text).toBe("{\"entities\":[]}")
      expect(response.model).toBe("gpt-4o-mini-2024-07-18")
      expect(response.provider).toBe("openai")
      expect(response.stopReason).toBe("end_turn")
      // a model without reasoning runs (and is recorded) without it
      expect(response.reasoning).toBe("none")
      // input excludes the cached prompt tokens, as Anthropic's input_tokens does
      expect(response.usage).toEqual({
        inputTokens: 40,
        outputTokens: 20,
        cacheReadTokens: 60,
        cacheWriteTokens: 0,
        webSearchRequests: 0
      })
    }))

  it.live("maps finish_reason length to max_tokens", () =>
    Effect.gen(function*() {
      fake.enqueue(chatCompletion({ text: "{\"ent", finishReason: "length" }))
      const response = yield* llm().complete(request())
      expect(response.stopReason).toBe("max_tokens")
    }))

  it.live("sends reasoning_effort and max_completion_tokens to an o-series model", () =>
    Effect.gen(function*() {
      // the default handler rejects max_tokens for reasoning models, as OpenAI does
      const response = yield* llm().complete(request({ model: "o4-mini", reasoning: "medium", maxTokens: 1000 }))
      const body = fake.requests[0]!.body
      expect(body.reasoning_effort).toBe("medium")
      expect(body.max_completion_tokens).toBe(1000 + THINKING_BUDGET.medium)
      expect(body).not.toHaveProperty("max_tokens")
      expect(response.reasoning).toBe("medium")
    }))

  it.live("runs a reasoning model asked for none at low, and records it", () =>
    Effect.gen(function*() {
      const response = yield* llm().complete(request({ model: "gpt-5-mini", reasoning: "none" }))
      expect(fake.requests[0]!.body.reasoning_effort).toBe("low")
      expect(response.reasoning).toBe("low")
    }))

  it.live("sends images as data URLs and records the configured provider", () =>
    Effect.gen(function*() {
      const response = yield* llm({ provider: "ollama" }).complete(
        request({
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "Describe it as json." },
                { type: "image", mediaType: "image/jpeg", data: "/9j/4AAQ" }
              ]
            }
          ]
        })
      )
      expect(fake.requests[0]!.body.messages[1].content).toEqual([
        { type: "text", text: "Describe it as json." },
        { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/4AAQ" } }
      ])
      expect(response.provider).toBe("ollama")
    }))

  it.live("retries a 429 and then succeeds", () =>
    Effect.gen(function*() {
      fake.enqueue(openAiRateLimited(0))
      yield* llm().complete(request())
      expect(fake.requests).toHaveLength(2)
    }))

  it.live("fails with LlmFailed naming the status and the provider's message", () =>
    Effect.gen(function*() {
      fake.setHandler(() => openAiError(503, "The server is overloaded"))
      const error = yield* llmFailed(llm({ maxRetries: 1 }).complete(request()))
      expect(fake.requests).toHaveLength(2)
      expect(error.status).toBe(503)
      expect(error.message).toContain("HTTP 503")
      expect(error.message).toContain("The server is overloaded")
    }))
})

describe("retrySchedule", () => {
  const countAttempts = (failure: AttemptFailed, maxRetries: number, retryBaseDelayMs = 1) =>
    Effect.gen(function*() {
      const attempts = yield* Ref.make(0)
      const fiber = yield* Ref.update(attempts, (n) => n + 1).pipe(
        Effect.zipRight(Effect.fail(failure)),
        Effect.retry(retrySchedule({ maxRetries, retryBaseDelayMs, timeoutMs: 1_000 })),
        Effect.fork
      )
      return { attempts, fiber }
    })

  it.effect("waits for retry-after before the next attempt", () =>
    Effect.gen(function*() {
      const { attempts, fiber } = yield* countAttempts(
        new AttemptFailed({ message: "429", retryable: true, retryAfterMs: 3_000 }),
        1
      )
      yield* TestClock.adjust("2999 millis")
      expect(yield* Ref.get(attempts)).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(yield* Ref.get(attempts)).toBe(2)
      expect(Exit.isFailure(yield* Fiber.await(fiber))).toBe(true)
    }))

  it.effect("caps a long retry-after at 60s", () =>
    Effect.gen(function*() {
      const { attempts } = yield* countAttempts(
        new AttemptFailed({ message: "429", retryable: true, retryAfterMs: 3_600_000 }),
        1
      )
      yield* TestClock.adjust("59999 millis")
      expect(yield* Ref.get(attempts)).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(yield* Ref.get(attempts)).toBe(2)
    }))

  it.effect("caps the backoff at 8s", () =>
    Effect.gen(function*() {
      const { attempts } = yield* countAttempts(new AttemptFailed({ message: "500", retryable: true }), 1, 100_000)
      yield* TestClock.adjust("7999 millis")
      expect(yield* Ref.get(attempts)).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(yield* Ref.get(attempts)).toBe(2)
    }))

  it.effect("does not retry a non-retryable failure", () =>
    Effect.gen(function*() {
      const { attempts, fiber } = yield* countAttempts(new AttemptFailed({ message: "400", retryable: false }), 5)
      yield* Fiber.await(fiber)
      expect(yield* Ref.get(attempts)).toBe(1)
    }))
})

describe("UnconfiguredLlm", () => {
  it.effect("fails every call with LlmUnavailable", () =>
    Effect.gen(function*() {
      const llm = yield* Llm
      const error = yield* Effect.flip(llm.complete(request()))
      expect(error._tag).toBe("LlmUnavailable")
      expect(error.message).toContain("ANTHROPIC_API_KEY")
      expect(llm.defaultModel).toBe("claude-haiku-5-5")
    }).pipe(Effect.provide(UnconfiguredLlmLive("claude-haiku-5-5"))))
})

describe("ScriptedLlm", () => {
  it.effect("answers per stage in order, records the calls, and fails when the script runs out", () =>
    Effect.gen(function*() {
      const llm = yield* Llm
      const first = yield* llm.complete(request({ reasoning: "low" }))
      expect(first.text).toBe("{\"entities\":[],\"edges\":[]}")
      expect(first.model).toBe(ScriptedLlm.DEFAULT_MODEL)
      expect(first.reasoning).toBe("low")
      expect(first.usage.inputTokens).toBe(5)
      expect(first.usage.cacheReadTokens).toBe(0)

      const second = yield* llm.complete(request({ model: "m2" }))
      expect(second.model).toBe("m2")
      expect(second.stopReason).toBe("max_tokens")

      const failed = yield* Effect.flip(llm.complete(request({ stage: "resolve_edges" })))
      expect(failed).toBeInstanceOf(LlmFailed)
      expect(failed.message).toBe("boom")
      expect((failed as LlmFailed).stage).toBe("resolve_edges")

      const exhausted = yield* Effect.flip(llm.complete(request()))
      expect(exhausted.message).toContain("no scripted answer left for stage extract_graph")

      const scripted = yield* ScriptedLlm
      expect(scripted.calls.map((call) => call.stage)).toEqual([
        "extract_graph",
        "extract_graph",
        "resolve_edges",
        "extract_graph"
      ])
      expect(scripted.callsFor("resolve_edges")).toHaveLength(1)
    }).pipe(
      Effect.provide(
        ScriptedLlm.layer({
          extract_graph: [
            ScriptedLlm.json({ entities: [], edges: [] }, { usage: { inputTokens: 5 } }),
            { text: "{", stopReason: "max_tokens" }
          ],
          resolve_edges: [{ fail: { message: "boom" } }]
        })
      )
    ))

  it.effect("answers from a function of the request and the call index", () =>
    Effect.gen(function*() {
      const llm = yield* Llm
      const a = yield* llm.complete(request({ stage: "summarize_chunk" }))
      const b = yield* llm.complete(request({ stage: "extract_graph" }))
      expect([a.text, b.text]).toEqual(["summarize_chunk#0", "extract_graph#1"])
    }).pipe(Effect.provide(ScriptedLlm.layer((req, index) => ({ text: `${req.stage}#${index}` })))))
})
