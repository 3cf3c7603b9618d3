/**
 * `POST /v1/gb/search` and `POST /v1/gb/query` as programs: the same retrieval, then for
 * query one LLM call (stage `query`) that answers from the retrieved facts, citing them.
 */
import { Effect, Either } from "effect"
import { LlmFailed, type LlmUnavailable, ServiceUnavailable } from "../domain/Errors.js"
import { callLlm } from "../pipeline/ModelCalls.js"
import {
  buildQueryPrompt,
  NOTHING_KNOWN,
  parseQueryAnswer,
  QUERY_ANSWER,
  QUERY_MAX_TOKENS,
  QUERY_STAGE
} from "./answer.js"
import type { ReadDeps } from "./deps.js"
import type { QueryRequest, SearchRequest } from "./requests.js"
import type { Echo, QueryResponse, SearchResponse } from "./responses.js"
import { retrieve, type Retrieved } from "./retrieve.js"

export type { QueryInference, QueryResponse, SearchResponse } from "./responses.js"

const echo = (request: SearchRequest, retrieved: Retrieved): Echo => ({
  dataset: request.dataset,
  query: request.query,
  as_of: retrieved.filters.asOf,
  ...(retrieved.filters.knownAt === null ? {} : { known_at: retrieved.filters.knownAt }),
  ...(retrieved.warnings.length === 0 ? {} : { warnings: retrieved.warnings })
})

/** Search with the given dependencies. */
export const runSearch = (deps: ReadDeps, request: SearchRequest): Effect.Effect<SearchResponse> =>
  Effect.map(retrieve(deps, request), (r) => ({
    ...echo(request, r),
    facts: r.facts,
    entities: r.entities,
    chunks: r.chunks
  }))

export type QueryError = LlmFailed | LlmUnavailable | ServiceUnavailable

/**
 * Query with the given dependencies. No facts (a dataset with nothing stored yet included): the
 * answer says nothing is known, and no model is called (there is nothing to answer from, and
 * nothing to pay for).
 */
export const runQuery = (deps: ReadDeps, request: QueryRequest): Effect.Effect<QueryResponse, QueryError> =>
  Effect.gen(function*() {
    const retrieved = yield* retrieve(deps, request)
    const base = {
      ...echo(request, retrieved),
      facts: retrieved.facts,
      entities: retrieved.entities,
      artifacts: retrieved.chunks
    }
    if (retrieved.facts.length === 0) return { ...base, answer: NOTHING_KNOWN, citations: [], inference: null }
    if (deps.llm === null) {
      return yield* new ServiceUnavailable({ message: "query needs an LLM, and none is configured on this server" })
    }
    const prompt = buildQueryPrompt({
      question: request.query,
      asOf: retrieved.filters.asOf,
      facts: retrieved.facts,
      entities: retrieved.entities
    })
    const response = yield* callLlm({
      llm: deps.llm,
      inferences: deps.inferences,
      prices: deps.prices,
      type: "query",
      runId: null,
      datasetId: retrieved.dataset?.id ?? null,
      recorder: null,
      runStage: QUERY_STAGE
    }, {
      stage: QUERY_STAGE,
      model: request.model,
      reasoning: request.reasoning,
      system: prompt.system,
      messages: prompt.messages,
      maxTokens: QUERY_MAX_TOKENS,
      answerSchema: QUERY_ANSWER
    })
    const parsed = parseQueryAnswer(response.text, retrieved.facts.map((f) => f.id))
    if (Either.isLeft(parsed)) return yield* new LlmFailed({ message: parsed.left, stage: QUERY_STAGE })
    if (parsed.right.dropped.length > 0) {
      yield* Effect.logWarning("query: the answer cited facts it was not given; dropped", { ids: parsed.right.dropped })
    }
    return {
      ...base,
      answer: parsed.right.answer,
      citations: parsed.right.citations,
      inference: {
        id: response.inferenceId,
        stage: QUERY_STAGE,
        provider: response.provider,
        model: response.model,
        ...(response.modelId === null ? {} : { model_id: response.modelId }),
        reasoning: response.reasoning,
        input_tokens: response.usage.inputTokens,
        output_tokens: response.usage.outputTokens,
        cost_usd: response.costUsd,
        latency_ms: response.latencyMs
      }
    }
  })
