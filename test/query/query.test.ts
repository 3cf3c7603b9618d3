/**
 * Query on the seeded world with the scripted LLM, on SQLite and PostgreSQL: one `query` call
 * given the retrieved facts, its citations kept only when they are among them, the call
 * recorded in gb_inferences (type query), model and reasoning as asked; no facts, no call.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { type LlmScript, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { LlmFailed, ServiceUnavailable } from "../../src/domain/Errors.js"
import { NOTHING_KNOWN } from "../../src/query/answer.js"
import { type ReadDeps, readDeps } from "../../src/query/deps.js"
import type { QueryRequest } from "../../src/query/requests.js"
import { runQuery } from "../../src/query/search.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { forEachDialect } from "../support/databases.js"
import { TODAY, World, worldLayer } from "./world.js"

const payload = (call: LlmRequest) => JSON.parse(call.messages[0]!.content as string)

/**
 * Cites the first two facts it is given plus one it was not (99999), or answers garbage when
 * the question asks for it.
 */
const script: LlmScript = (call) => {
  const data = payload(call)
  if (String(data.question).includes("garbage")) return { text: "I think Alice lives somewhere." }
  const ids = (data.facts as Array<{ id: number }>).slice(0, 2).map((f) => f.id)
  return ScriptedLlm.json(
    { answer: `From what is stored: [${ids.join("], [")}]`, citations: [...ids.map(String), 99999] },
    { usage: { inputTokens: 1200, outputTokens: 80 } }
  )
}

const request = (query: string, rest: Partial<QueryRequest> = {}): QueryRequest => ({
  user_id: "alice",
  dataset: "main",
  query,
  include_expired: false,
  limit: 20,
  hops: 1,
  reasoning: "none",
  ...rest
})

const ask = (query: string, rest: Partial<QueryRequest> = {}, edit: (deps: ReadDeps) => ReadDeps = (d) => d) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(Date.parse(TODAY))
    return yield* runQuery(edit(yield* readDeps), request(query, rest))
  })

const inference = (id: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<Record<string, unknown>>`SELECT * FROM gb_inferences WHERE id = ${id}`
  ).pipe(
    Effect.map((rows) => rows[0]),
    Effect.orDie
  )

forEachDialect((_dialect, makeLayer) => {
  layer(worldLayer(makeLayer(), script))("query", (it) => {
    it.effect("answers from the retrieved facts with one query call; citations map to returned facts", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        const llm = yield* ScriptedLlm
        const before = llm.callsFor("query").length
        const out = yield* ask("Where does Alice live?")
        expect(llm.callsFor("query").length).toBe(before + 1)
        const call = llm.callsFor("query").at(-1)!
        expect(call.reasoning).toBe("none")
        expect(call.model).toBeUndefined()
        expect(call.system).toMatch(/only JSON/)
        const given = payload(call)
        expect(given.question).toBe("Where does Alice live?")
        expect(given.as_of).toBe(TODAY)
        // the model is given exactly the facts returned, in order, and nothing closed
        expect(given.facts.map((f: { id: number }) => f.id)).toEqual(out.facts.map((f) => f.id))
        expect(given.facts.map((f: { id: number }) => f.id)).not.toContain(alice.fact("F1"))
        expect(given.facts[0]).toMatchObject({ statement: expect.any(String), valid_at: expect.any(String) })

        const factIds = out.facts.map((f) => f.id)
        expect(out.citations).toEqual(factIds.slice(0, 2))
        for (const id of out.citations) expect(factIds).toContain(id)
        expect(out.citations).not.toContain(99999)
        expect(out.answer).toContain(`[${factIds[0]}]`)
        expect(out.artifacts.length).toBeGreaterThan(0)
        expect(out.entities.map((e) => e.name)).toContain("Alice Smith")

        expect(out.inference).toMatchObject({
          stage: "query",
          provider: "scripted",
          model: "scripted-model",
          reasoning: "none",
          input_tokens: 1200,
          output_tokens: 80
        })
        const row = yield* inference(out.inference!.id)
        expect(row).toMatchObject({
          type: "query",
          stage: "query",
          model: "scripted-model",
          dataset_id: alice.datasetId
        })
        expect(row!.run_id).toBeNull()
      }))

    it.effect("the model and reasoning level are the request's", () =>
      Effect.gen(function*() {
        const out = yield* ask("Where does Alice live?", { model: "big-model", reasoning: "low" })
        const call = (yield* ScriptedLlm).callsFor("query").at(-1)!
        expect(call.model).toBe("big-model")
        expect(call.reasoning).toBe("low")
        expect(out.inference).toMatchObject({ model: "big-model", reasoning: "low", model_id: expect.any(Number) })
      }))

    it.effect("no facts found: the answer says so, no model call, no inference", () =>
      Effect.gen(function*() {
        const llm = yield* ScriptedLlm
        const before = llm.calls.length
        const out = yield* ask("Who is Zebedee?", {}, (deps) => ({ ...deps, embeddings: null }))
        expect(out.facts).toEqual([])
        expect(out.answer).toBe(NOTHING_KNOWN)
        expect(out.citations).toEqual([])
        expect(out.inference).toBeNull()
        expect(llm.calls.length).toBe(before)
        // a filter that leaves nothing is the same case, even without an LLM
        const filtered = yield* ask(
          "Where does Alice live?",
          { session_id: "nobody" },
          (deps) => ({ ...deps, llm: null })
        )
        expect(filtered.inference).toBeNull()
      }))

    it.effect("an answer that is not JSON is a 502 (LlmFailed), and the call is still recorded", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(ask("garbage: where does Alice live?"))
        expect(error).toBeInstanceOf(LlmFailed)
        expect(error.message).toMatch(/^query answer is not JSON/)
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<
          { n: number }
        >`SELECT COUNT(*) AS n FROM gb_inferences WHERE type = 'query' AND stage = 'query'`.pipe(
          Effect.orDie
        )
        expect(Number(rows[0]!.n)).toBeGreaterThanOrEqual(3)
      }))

    it.effect("facts but no LLM configured: 503 (ServiceUnavailable)", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(ask("Where does Alice live?", {}, (deps) => ({ ...deps, llm: null })))
        expect(error).toBeInstanceOf(ServiceUnavailable)
      }))

    it.effect("the query embeds the question once, recorded as a query inference", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const count = sql<
          { n: number }
        >`SELECT COUNT(*) AS n FROM gb_inferences WHERE type = 'query' AND stage = 'embed'`.pipe(
          Effect.map((rows) => Number(rows[0]!.n)),
          Effect.orDie
        )
        const before = yield* count
        yield* ask("Where does Alice live?")
        expect(yield* count).toBe(before + 1)
      }))
  })
})
