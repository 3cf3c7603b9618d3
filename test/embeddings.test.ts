import { afterAll, beforeAll, beforeEach, describe, expect, it, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import OpenAI from "openai"
import {
  decodeEmbedding,
  DisabledEmbeddingsLive,
  makeOpenAiEmbeddings,
  type OpenAiEmbeddingsOptions
} from "../layers/embeddings/OpenAiEmbeddings.js"
import { hashEmbedding, HashEmbeddings } from "../layers/testing/HashEmbeddings.js"
import { cosine } from "../layers/vectors/common.js"
import { EmbeddingFailed } from "../src/domain/Errors.js"
import { Embeddings } from "../src/services/Embeddings.js"
import {
  embeddingsList,
  type FakeOpenAi,
  openAiError,
  openAiRateLimited,
  startFakeOpenAi,
  toBase64Float32
} from "./support/fakeOpenAi.js"

const embeddingFailed = <A>(effect: Effect.Effect<A, EmbeddingFailed>) =>
  Effect.flip(effect).pipe(
    Effect.map((error) => {
      expect(error).toBeInstanceOf(EmbeddingFailed)
      return error
    })
  )

/** float32 precision: what survives the base64 wire */
const asFloat32 = (vector: ReadonlyArray<number>) => Array.from(new Float32Array(vector))

describe("OpenAiEmbeddings against a fake embeddings API", () => {
  let fake: FakeOpenAi
  beforeAll(async () => {
    fake = await startFakeOpenAi()
  })
  afterAll(() => fake.close())
  beforeEach(() => fake.reset())

  const embeddings = (overrides: Partial<OpenAiEmbeddingsOptions> = {}) =>
    makeOpenAiEmbeddings({
      apiKey: Redacted.make("sk-test"),
      baseUrl: fake.url,
      model: "text-embedding-3-small",
      dimensions: 8,
      timeoutMs: 5_000,
      maxRetries: 2,
      retryBaseDelayMs: 1,
      ...overrides
    })

  it.live("sends one request with the texts, the model, dimensions and base64; decodes the vectors", () =>
    Effect.gen(function*() {
      const texts = ["Alice Smith (person): an engineer", "Acme (organization): a company", "Alice works at Acme"]
      const batch = yield* embeddings().embed(texts)
      expect(fake.requests).toHaveLength(1)
      const sent = fake.requests[0]!
      expect(sent.path).toBe("/v1/embeddings")
      expect(sent.headers.authorization).toBe("Bearer sk-test")
      expect(sent.body).toEqual({
        model: "text-embedding-3-small",
        input: texts,
        dimensions: 8,
        encoding_format: "base64"
      })
      expect(batch.vectors).toEqual(texts.map((text) => asFloat32(hashEmbedding(text, 8))))
      expect(batch.model).toBe("text-embedding-3-small")
      // the fake counts 4 characters a token, per input
      expect(batch.inputTokens).toBe(texts.reduce((sum, t) => sum + Math.ceil(t.length / 4), 0))
    }))

  it.live("decodes JSON floats from a server that ignores encoding_format", () =>
    Effect.gen(function*() {
      const vectors = [
        [0.5, -0.25, 0.125, 1, 0, 0, 0, 0.1],
        [1, 2, 3, 4, 5, 6, 7, 8]
      ]
      fake.enqueue(embeddingsList({ vectors, encoding: "float", model: "text-embedding-3-small", promptTokens: 11 }))
      const batch = yield* embeddings().embed(["a", "b"])
      expect(batch.vectors).toEqual(vectors)
      expect(batch.inputTokens).toBe(11)
    }))

  it.live("returns the vectors in input order when the data comes back shuffled", () =>
    Effect.gen(function*() {
      const vectors = [0, 1, 2, 3].map((i) => Array.from({ length: 8 }, (_, j) => (i === j ? 1 : 0)))
      fake.enqueue(embeddingsList({ vectors, encoding: "base64", order: [2, 0, 3, 1] }))
      const batch = yield* embeddings().embed(["t0", "t1", "t2", "t3"])
      expect(batch.vectors).toEqual(vectors)
    }))

  it.live("reports the model as the API names it", () =>
    Effect.gen(function*() {
      fake.enqueue(
        embeddingsList({ vectors: [Array(8).fill(0.1)], encoding: "base64", model: "text-embedding-3-small-v2" })
      )
      const batch = yield* embeddings().embed(["x"])
      expect(batch.model).toBe("text-embedding-3-small-v2")
    }))

  it.live("sends no dimensions for a model that cannot shorten its vectors", () =>
    Effect.gen(function*() {
      const batch = yield* embeddings({ model: "text-embedding-ada-002", dimensions: 1536 }).embed(["Alice"])
      expect(fake.requests[0]!.body).not.toHaveProperty("dimensions")
      expect(batch.vectors[0]).toHaveLength(1536)
    }))

  it.live("an empty input makes no request", () =>
    Effect.gen(function*() {
      const batch = yield* embeddings().embed([])
      expect(batch).toEqual({ vectors: [], model: "text-embedding-3-small", inputTokens: 0 })
      expect(fake.requests).toHaveLength(0)
    }))

  it.live("retries a 429, then succeeds", () =>
    Effect.gen(function*() {
      fake.enqueue(openAiRateLimited(0))
      const batch = yield* embeddings().embed(["Alice"])
      expect(fake.requests).toHaveLength(2)
      expect(batch.vectors).toHaveLength(1)
    }))

  it.live("a 500 that persists becomes EmbeddingFailed with the status and the provider's message", () =>
    Effect.gen(function*() {
      fake.setHandler(() => openAiError(500, "The server had an error while processing your request."))
      const error = yield* embeddingFailed(embeddings({ maxRetries: 1 }).embed(["Alice"]))
      expect(fake.requests).toHaveLength(2)
      expect(error.message).toContain("text-embedding-3-small")
      expect(error.message).toContain("after 2 attempts")
      expect(error.message).toContain("HTTP 500 The server had an error while processing your request.")
    }))

  it.live("a 400 fails at once", () =>
    Effect.gen(function*() {
      fake.enqueue(openAiError(400, "This model's maximum context length is 8192 tokens"))
      const error = yield* embeddingFailed(embeddings().embed(["a very long text"]))
      expect(fake.requests).toHaveLength(1)
      expect(error.message).toContain("HTTP 400 This model's maximum context length is 8192 tokens")
    }))

  it.live("a timeout is retried and then reported", () =>
    Effect.gen(function*() {
      fake.setLatency(500)
      const error = yield* embeddingFailed(embeddings({ timeoutMs: 50, maxRetries: 1 }).embed(["slow"]))
      expect(fake.requests).toHaveLength(2)
      expect(error.message).toMatch(/timed out after 50ms/)
    }))

  describe("refuses an unusable answer without retrying", () => {
    const cases: ReadonlyArray<readonly [string, () => void, RegExp]> = [
      [
        "fewer vectors than texts",
        () => fake.enqueue(embeddingsList({ vectors: [Array(8).fill(0.1)] })),
        /1 embeddings for 2 inputs/
      ],
      [
        "vectors of the wrong size",
        () => fake.enqueue(embeddingsList({ vectors: [Array(8).fill(0.1), Array(4).fill(0.1)], encoding: "base64" })),
        /embedding 1 has 4 dimensions, 8 are configured/
      ],
      [
        "an index out of range",
        () =>
          fake.enqueue({
            json: {
              object: "list",
              data: [0, 5].map((index) => ({
                object: "embedding",
                index,
                embedding: toBase64Float32(Array(8).fill(0))
              })),
              model: "text-embedding-3-small",
              usage: { prompt_tokens: 2, total_tokens: 2 }
            }
          }),
        /index 5/
      ],
      [
        "an embedding that is not base64 float32",
        () =>
          fake.enqueue({
            json: {
              object: "list",
              data: [0, 1].map((index) => ({ object: "embedding", index, embedding: { values: [] } })),
              model: "text-embedding-3-small",
              usage: { prompt_tokens: 2, total_tokens: 2 }
            }
          }),
        /embedding 0 is neither base64 float32 nor a list of numbers/
      ],
      ["no data at all", () => fake.enqueue({ json: { object: "list", model: "m" } }), /no data array/]
    ]
    for (const [name, script, message] of cases) {
      it.live(name, () =>
        Effect.gen(function*() {
          script()
          const error = yield* embeddingFailed(embeddings().embed(["a", "b"]))
          expect(error.message).toMatch(message)
          expect(fake.requests).toHaveLength(1)
        }))
    }
  })

  it("the fake honours encoding_format float and base64 for any OpenAI client", async () => {
    const client = new OpenAI({ apiKey: "sk-test", baseURL: fake.url, maxRetries: 0 })
    const asFloat = await client.embeddings.create({
      model: "text-embedding-3-small",
      input: ["hello"],
      dimensions: 4,
      encoding_format: "float"
    })
    // no encoding_format: the SDK asks for base64 and decodes it itself
    const sdkDecoded = await client.embeddings.create({
      model: "text-embedding-3-small",
      input: ["hello"],
      dimensions: 4
    })
    expect(fake.requests.map((r) => r.body.encoding_format)).toEqual(["float", "base64"])
    expect(asFloat.data[0]!.embedding).toEqual(hashEmbedding("hello", 4))
    expect(sdkDecoded.data[0]!.embedding).toEqual(asFloat32(hashEmbedding("hello", 4)))
  })
})

describe("decodeEmbedding", () => {
  it("reads little-endian float32 base64 and plain number lists; refuses anything else", () => {
    expect(decodeEmbedding(Buffer.from([0, 0, 128, 63, 0, 0, 0, 192]).toString("base64"))).toEqual([1, -2])
    expect(decodeEmbedding([0.25, 1])).toEqual([0.25, 1])
    expect(decodeEmbedding(Buffer.from([0, 0, 128]).toString("base64"))).toBeUndefined()
    expect(decodeEmbedding(["1"])).toBeUndefined()
    expect(decodeEmbedding(null)).toBeUndefined()
  })
})

describe("DisabledEmbeddings", () => {
  it.effect("is not enabled and fails every call", () =>
    Effect.gen(function*() {
      const embeddings = yield* Embeddings
      expect(embeddings.enabled).toBe(false)
      const error = yield* embeddingFailed(embeddings.embed(["Alice"]))
      expect(error.message).toBe("embeddings are not configured")
    }).pipe(Effect.provide(DisabledEmbeddingsLive())))
})

describe("hashEmbedding", () => {
  const sim = (a: string, b: string, dims = 1536) => cosine(hashEmbedding(a, dims), hashEmbedding(b, dims))

  it("is deterministic and of unit length", () => {
    const vector = hashEmbedding("Alice Smith (person): an engineer", 64)
    expect(vector).toEqual(hashEmbedding("Alice Smith (person): an engineer", 64))
    expect(vector).toHaveLength(64)
    expect(Math.hypot(...vector)).toBeCloseTo(1, 10)
    expect(hashEmbedding("ALICE smith", 64)).toEqual(hashEmbedding("alice Smith", 64))
    expect(hashEmbedding("  ", 8)).toEqual(Array(8).fill(0))
  })

  it("makes similar texts similar and unrelated ones not", () => {
    const alias = sim("Alicia (person): ", "Alice Smith (person): an engineer")
    const unrelated = sim("Alicia (person): ", "Berlin (place): the capital of Germany")
    expect(sim("Alice Smith (person): an engineer", "Alice Smith (person): an engineer at Acme")).toBeGreaterThan(0.8)
    expect(alias).toBeGreaterThan(0.4)
    expect(unrelated).toBeLessThan(0.15)
    expect(alias).toBeGreaterThan(unrelated + 0.3)
  })
})

layer(HashEmbeddings.layer({ dimensions: 16, failWhen: (texts) => texts.includes("boom") }))("HashEmbeddings", (it) => {
  it.effect("embeds in input order, records the calls, fails when told to", () =>
    Effect.gen(function*() {
      const embeddings = yield* Embeddings
      const recorder = yield* HashEmbeddings
      expect(embeddings).toMatchObject({ enabled: true, provider: "hash", model: "hash-embedding", dimensions: 16 })
      const batch = yield* embeddings.embed(["one", "two"])
      expect(batch.vectors).toEqual([hashEmbedding("one", 16), hashEmbedding("two", 16)])
      expect(batch.inputTokens).toBe(2)
      yield* embeddings.embed([])
      const error = yield* embeddingFailed(embeddings.embed(["x", "boom"]))
      expect(error.message).toContain("as the test asked")
      expect(recorder.calls).toEqual([["one", "two"], ["x", "boom"]])
    }))
})
