/**
 * The model servers of the bench, in this process: the fake Anthropic Messages API answering as
 * `layers/testing/FactSentenceModel.ts` says, and the fake OpenAI embeddings API (hash
 * embeddings), both after a settable latency and with `usage` counted by the project's tokenizer.
 * Every call is logged with its arrival time, so a scenario can tell which calls a remember made
 * and how they overlapped.
 */
import { answer, type Stage } from "../../layers/testing/FactSentenceModel.js"
import { hashEmbedding } from "../../layers/testing/HashEmbeddings.js"
import { countTokens } from "../../src/kernel/tokenizer.js"
import { promptTokens, startFakeAnthropic } from "../../test/support/fakeAnthropic.js"
import { startFakeOpenAi } from "../../test/support/fakeOpenAi.js"

export interface ModelCall {
  readonly kind: "llm" | "embeddings"
  readonly stage: Stage | "embeddings"
  /** arrival, performance.now() of this process */
  readonly at: number
  /** the latency the fake applied to this call */
  readonly latencyMs: number
  readonly inputTokens: number
  readonly outputTokens: number
  /** texts embedded (embeddings calls) */
  readonly inputs: number
}

export interface Fakes {
  readonly anthropicUrl: string
  readonly openAiUrl: string
  readonly calls: Array<ModelCall>
  /** the latency of every later call, both APIs */
  readonly setLatency: (ms: number) => void
  /** the calls that arrived in [from, to] */
  readonly between: (from: number, to: number) => Array<ModelCall>
  readonly close: () => Promise<void>
}

/**
 * `immediate`: embeddings requests whose every input it accepts are answered at once, whatever
 * the latency (a reader's query embeddings, when only the writers' model calls are to wait).
 */
export const startFakes = async (
  latencyMs: number,
  immediate?: (input: string) => boolean
): Promise<Fakes> => {
  const calls: Array<ModelCall> = []
  let latency = latencyMs
  const anthropic = await startFakeAnthropic({
    latencyMs,
    countTokens,
    text: (request) => {
      const { stage, text } = answer(request.body)
      calls.push({
        kind: "llm",
        stage,
        at: performance.now(),
        latencyMs: latency,
        inputTokens: promptTokens(countTokens, request.body),
        outputTokens: countTokens(text),
        inputs: 0
      })
      return text
    }
  })
  // embeddingFor runs once per input, synchronously within one request: group by request
  let lastRequest = -1
  const openAi = await startFakeOpenAi({
    latencyMs,
    countTokens,
    ...(immediate === undefined ? {} : {
      delayFor: (request) => {
        const input: unknown = request.body?.input
        const texts = typeof input === "string" ? [input] : Array.isArray(input) ? input : []
        return texts.length > 0 && texts.every((t) => typeof t === "string" && immediate(t)) ? 0 : undefined
      }
    }),
    embeddingFor: (text, dimensions) => {
      const index = openAi.requests.length
      if (index !== lastRequest) {
        lastRequest = index
        calls.push({
          kind: "embeddings",
          stage: "embeddings",
          at: performance.now(),
          latencyMs: immediate?.(text) === true ? 0 : latency,
          inputTokens: 0,
          outputTokens: 0,
          inputs: 0
        })
      }
      const call = calls[calls.length - 1]! as { inputTokens: number; inputs: number }
      call.inputTokens += countTokens(text)
      call.inputs += 1
      // the vectors the search seeding writes, so a question finds its words
      return hashEmbedding(text, dimensions)
    }
  })
  return {
    anthropicUrl: anthropic.url,
    openAiUrl: openAi.url,
    calls,
    setLatency: (ms) => {
      latency = ms
      anthropic.setLatency(ms)
      openAi.setLatency(ms)
    },
    between: (from, to) => calls.filter((c) => c.at >= from && c.at <= to),
    close: async () => {
      await anthropic.close()
      await openAi.close()
    }
  }
}

/**
 * The model time of a set of calls that cannot be avoided: the union of their intervals
 * [arrival, arrival + latency]. Calls made one after another add up; calls in flight together
 * count once.
 */
export const criticalPathMs = (calls: ReadonlyArray<ModelCall>): number => {
  const intervals = calls.map((c) => [c.at, c.at + c.latencyMs] as const).sort((a, b) => a[0] - b[0])
  let total = 0
  let end = -Infinity
  for (const [from, to] of intervals) {
    if (to <= end) continue
    total += to - Math.max(from, end)
    end = to
  }
  return total
}
