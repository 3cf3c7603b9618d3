/**
 * Long documents (contracts section 4): chunk artifacts and summaries, in-order reconciliation
 * with concurrent extraction, partial failure, progress; on SQLite and PostgreSQL.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { expect } from "vitest"
import { HashEmbeddingsLive } from "../../layers/testing/HashEmbeddings.js"
import { type ScriptedAnswer, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { MemoryVectorStore, MemoryVectorStoreLive } from "../../layers/vectors/MemoryVectorStore.js"
import type { RememberRequest } from "../../src/domain/Remember.js"
import { chunkText } from "../../src/pipeline/chunking.js"
import { readResolveEdgesPrompt } from "../../src/pipeline/prompts/resolveEdges.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import type { Embeddings } from "../../src/services/Embeddings.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import type { VectorStore } from "../../src/services/VectorStore.js"
import { rememberLayer, textBody } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"

const CHUNK_SIZE = 80
const filler = (n: number) =>
  `This paragraph carries the record number ${n} of the archive. It talks at some length about the weather, the harbour, ` +
  `the ships that came and went, and the people who watched them from the quay in the evening light.`

// paragraph k states fact k; paragraph 4 contradicts paragraph 1
const FACTS: Record<number, { source: string; target: string; relation: string; valid_at: string }> = {
  1: { source: "Alice", target: "Berlin", relation: "lives in", valid_at: "2024-01-01" },
  2: { source: "Bob", target: "Carol", relation: "knows", valid_at: "2024-02-01" },
  3: { source: "Carol", target: "Acme", relation: "works at", valid_at: "2024-03-01" },
  4: { source: "Alice", target: "Paris", relation: "lives in", valid_at: "2025-01-01" },
  5: { source: "Dan", target: "Rome", relation: "visited", valid_at: "2024-05-01" }
}
const DOCUMENT = [1, 2, 3, 4, 5].map((k) => `[F${k}] ${filler(k)}`).join("\n\n")

const userText = (r: LlmRequest) => String(typeof r.messages[0]!.content === "string" ? r.messages[0]!.content : "")

/** The scripted model: facts by the markers a chunk holds; contradictions: same source and relation. */
const script = (failOn?: number, transientOnce = false) => {
  let failed = false
  return (r: LlmRequest): ScriptedAnswer =>
    answerFor(r, failOn, () => {
      if (!transientOnce) return { fail: { message: `HTTP 500 on fact ${failOn}`, status: 500 } }
      if (failed) return undefined
      failed = true
      return { fail: { message: `HTTP 529 on fact ${failOn}`, status: 529, retryable: true } }
    })
}

const answerFor = (r: LlmRequest, failOn: number | undefined, failure: () => ScriptedAnswer | undefined) => {
  const text = userText(r)
  if (r.stage === "summarize_chunk") return { text: `A summary of ${text.match(/\[F\d\]/g)?.join(" ") ?? "filler"}.` }
  if (r.stage === "resolve_edges") {
    const input = readResolveEdgesPrompt(text)
    const contradictions = input.new_facts.flatMap((n: any) => {
      const ids = input.existing_facts
        .filter((e: any) => e.source === n.source && e.relation === n.relation && e.target !== n.target)
        .map((e: any) => e.id)
      return ids.length > 0 ? [{ new: n.index, existing: ids }] : []
    })
    return ScriptedLlm.json({ duplicates: [], contradictions })
  }
  const marks = [...text.matchAll(/\[F(\d)\]/g)].map((m) => Number(m[1]))
  const failed = failOn !== undefined && marks.includes(failOn) ? failure() : undefined
  if (failed !== undefined) return failed
  const facts = marks.map((k) => FACTS[k]!)
  const names = [...new Set(facts.flatMap((f) => [f.source, f.target]))]
  return ScriptedLlm.json({ entities: names.map((name) => ({ name, type: "thing" })), edges: facts })
}

const request = (extra: Partial<RememberRequest> = {}): RememberRequest => ({
  user_id: "alice",
  dataset: "docs",
  text: DOCUMENT,
  kind: "knowledge",
  reference_time: "2025-06-01T00:00:00.000Z",
  models: {},
  reasoning: {},
  web_search: false,
  ...extra
})

const rows = <A extends object>(query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(query)).pipe(Effect.orDie)

const withLayer = <A, E>(
  storage: StorageLayer,
  options: {
    readonly concurrency?: number
    readonly failOn?: number
    /** the failure on `failOn` is a transient one, once: the run is retried and goes on */
    readonly transientOnce?: boolean
    readonly embeddings?: boolean
    readonly llmDelayMs?: (r: LlmRequest) => number
  },
  program: Effect.Effect<A, E, any>
) => {
  const extra = options.embeddings
    ? Layer.mergeAll(HashEmbeddingsLive({ dimensions: 32 }), MemoryVectorStoreLive({ dimensions: 32 }))
    : MemoryVectorStoreLive()
  const layer = rememberLayer(storage, script(options.failOn, options.transientOnce), {
    retryDelay: "5 millis",
    settings: { chunkSize: CHUNK_SIZE, chunkOverlapPercent: 20, chunkConcurrency: options.concurrency ?? 4 },
    ...(options.llmDelayMs === undefined ? {} : { llmDelayMs: options.llmDelayMs }),
    ...(options.embeddings
      ? {
        embeddings: extra as unknown as Layer.Layer<Embeddings>,
        vectors: extra as unknown as Layer.Layer<VectorStore>
      }
      : {})
  })
  return program.pipe(Effect.provide(Layer.merge(layer, extra) as unknown as Layer.Layer<any>)) as Effect.Effect<
    A,
    E,
    never
  >
}

const EXPECTED_CHUNKS = chunkText(DOCUMENT, { chunkSize: CHUNK_SIZE, overlapPercent: 20 })

forEachDialect((_dialect, makeLayer) => {
  it.live("a document becomes a parent, chunks and summaries; a later chunk closes an earlier chunk's fact", () =>
    withLayer(
      makeLayer(),
      { embeddings: true },
      Effect.gen(function*() {
        expect(EXPECTED_CHUNKS.length).toBeGreaterThanOrEqual(5)
        const out = yield* Effect.flatMap(RememberManager, (m) => m.submit(request({ session_id: "s1" })))
        const response = textBody(out)
        expect(response.chunks).toHaveLength(EXPECTED_CHUNKS.length)
        expect(response.chunks!.map((c) => [c.index, c.start_offset, c.end_offset, c.tokens])).toEqual(
          EXPECTED_CHUNKS.map((c) => [c.index, c.start_offset, c.end_offset, c.tokens])
        )
        const artifacts = yield* rows<any>(
          "SELECT id, kind, parent_id, inference_id, session_id FROM gb_artifacts ORDER BY id"
        )
        const parent = artifacts.find((a: any) => a.kind === "knowledge")
        expect(parent.id).toBe(response.artifact_id)
        const chunks = artifacts.filter((a: any) => a.kind === "chunk")
        const summaries = artifacts.filter((a: any) => a.kind === "chunk_summary")
        expect(chunks).toHaveLength(EXPECTED_CHUNKS.length)
        expect(chunks.every((c: any) => c.parent_id === parent.id && c.session_id === "s1")).toBe(true)
        expect(summaries.map((s: any) => s.parent_id)).toEqual(chunks.map((c: any) => c.id))
        expect(summaries.every((s: any) => typeof s.inference_id === "number")).toBe(true)
        expect(response.chunks![0].summary).toMatchObject({
          text: expect.stringContaining("A summary of"),
          model: ScriptedLlm.DEFAULT_MODEL,
          reasoning: "none"
        })

        // Alice lives in Berlin (chunk of F1) is closed by Alice lives in Paris (chunk of F4)
        const berlin = response.edges.find((e) => e.target === "Berlin")
        expect(response.invalidated_edges).toEqual([berlin!.id])
        expect(berlin).toMatchObject({ invalid_at: "2025-01-01T00:00:00.000Z", expired_at: expect.any(String) })
        // each fact once, although overlapping chunks state some twice
        expect(yield* rows<any>("SELECT COUNT(*) AS n FROM gb_edges")).toEqual([{ n: 5 }])

        expect(response).toMatchObject({
          embedded_chunks: EXPECTED_CHUNKS.length,
          embedded_summaries: EXPECTED_CHUNKS.length
        })
        const store = yield* MemoryVectorStore
        const datasetId = (yield* rows<any>("SELECT id FROM gb_datasets"))[0].id
        expect(store.items(`dataset-${datasetId}-chunks`).map((i) => i.id)).toEqual(
          chunks.map((c: any) => `chunk-${c.id}`)
        )
        expect(store.items(`dataset-${datasetId}-summaries`).map((i) => i.id)).toEqual(
          summaries.map((s: any) => `summary-${s.id}`)
        )

        const run = (yield* (yield* RunLogRepo).get(out.runId)).pipe((o) => (o._tag === "Some" ? o.value : undefined))!
        const chunkStage = run.stages.find((s) => s.stage === "chunk_text")!
        expect(chunkStage.progress).toEqual({
          chunks_done: EXPECTED_CHUNKS.length,
          chunks_total: EXPECTED_CHUNKS.length
        })
        expect(run.stages.find((s) => s.stage === "summarize_chunk")!.inference_ids).toHaveLength(
          EXPECTED_CHUNKS.length
        )
        expect(run.stages.find((s) => s.stage === "extract_graph")!.status).toBe("succeeded")
      })
    ))

  it.live("the graph is the same whether chunks are extracted one at a time or eight at once", () => {
    // earlier chunks answer later, so concurrent extractions finish in reverse order
    const slowFirst = (r: LlmRequest) => {
      const first = Number(/\[F(\d)\]/.exec(userText(r))?.[1] ?? 9)
      return r.stage === "extract_graph" ? (6 - first) * 15 : 0
    }
    const snapshot = (concurrency: number) =>
      withLayer(
        makeLayer(),
        { concurrency, llmDelayMs: slowFirst },
        Effect.gen(function*() {
          yield* Effect.flatMap(RememberManager, (m) => m.submit(request()))
          return yield* rows<any>(`SELECT s.name AS source, t.name AS target, e.relation, e.valid_at, e.invalid_at,
            e.expired_at IS NULL AS live, a.metadata AS chunk
          FROM gb_edges e JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id
          JOIN gb_artifacts a ON a.id = e.artifact_id ORDER BY e.id`)
        })
      )
    return Effect.gen(function*() {
      const one = yield* snapshot(1)
      const eight = yield* snapshot(8)
      expect(eight).toEqual(one)
      expect(one).toHaveLength(5)
    })
  })

  it.live("a failure in chunk 3 keeps the chunks before it and nothing after it", () =>
    withLayer(
      makeLayer(),
      { failOn: 3 },
      Effect.gen(function*() {
        const failing = EXPECTED_CHUNKS.findIndex((c) => c.text.includes("[F3]"))
        const exit = yield* Effect.exit(Effect.flatMap(RememberManager, (m) => m.submit(request())))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
          expect(exit.cause.error).toMatchObject({ _tag: "LlmFailed", message: expect.stringContaining("fact 3") })
        }
        const chunks = yield* rows<any>("SELECT metadata FROM gb_artifacts WHERE kind = 'chunk' ORDER BY id")
        expect(chunks.map((c: any) => JSON.parse(c.metadata).index)).toEqual([...Array(failing).keys()])
        expect((yield* rows<any>("SELECT COUNT(*) AS n FROM gb_artifacts WHERE kind = 'knowledge'"))[0].n).toBe(
          failing > 0 ? 1 : 0
        )
        const runs = yield* rows<any>("SELECT status, error FROM gb_remember_runs")
        expect(runs).toEqual([{ status: "failed", error: expect.stringContaining("fact 3") }])
      })
    ))

  it.live("a transient failure in chunk 3: the run goes on after the chunks stored, each chunk once, the same graph", () =>
    Effect.gen(function*() {
      const failing = EXPECTED_CHUNKS.findIndex((c) => c.text.includes("[F3]"))
      expect(failing).toBeGreaterThan(0)
      const graphOf = rows<any>(`SELECT s.name AS source, t.name AS target, e.relation, e.valid_at, e.invalid_at,
          e.expired_at IS NULL AS live, a.metadata AS chunk
        FROM gb_edges e JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id
        JOIN gb_artifacts a ON a.id = e.artifact_id ORDER BY e.id`)
      const clean = yield* withLayer(
        makeLayer(),
        {},
        Effect.zipRight(Effect.flatMap(RememberManager, (m) => m.submit(request())), graphOf)
      )
      yield* withLayer(
        makeLayer(),
        { failOn: 3, transientOnce: true },
        Effect.gen(function*() {
          const out = yield* Effect.flatMap(RememberManager, (m) => m.submit(request()))
          const response = textBody(out)
          expect(response.resumed_after_chunks).toBe(failing)
          expect(response.chunks!.map((c) => c.index)).toEqual(
            EXPECTED_CHUNKS.slice(failing).map((c) => c.index)
          )
          const artifacts = yield* rows<any>("SELECT id, kind, parent_id, metadata FROM gb_artifacts ORDER BY id")
          const documents = artifacts.filter((a: any) => a.kind === "knowledge")
          expect(documents.map((d: any) => d.id)).toEqual([response.artifact_id])
          const chunks = artifacts.filter((a: any) => a.kind === "chunk")
          expect(chunks.map((c: any) => JSON.parse(c.metadata).index)).toEqual(EXPECTED_CHUNKS.map((c) => c.index))
          expect(chunks.every((c: any) => c.parent_id === response.artifact_id)).toBe(true)
          // the chunks stored before the failure were not extracted again
          const extractions = (yield* ScriptedLlm).callsFor("extract_graph").map(userText)
          for (const chunk of EXPECTED_CHUNKS.slice(0, failing)) {
            expect(extractions.filter((t) => t.includes(chunk.text))).toHaveLength(1)
          }
          expect(yield* graphOf).toEqual(clean)
          const runs = yield* rows<any>("SELECT status, attempts FROM gb_remember_runs")
          expect(runs.map((r: any) => [r.status, Number(r.attempts)])).toEqual([["succeeded", 2]])
          expect(yield* rows<any>("SELECT run_id FROM gb_remember_queue")).toEqual([])
          const run = (yield* (yield* RunLogRepo).get(out.runId)).pipe((
            o
          ) => (o._tag === "Some" ? o.value : undefined))!
          expect(run.stages.find((s) => s.stage === "chunk_text")!.progress).toEqual({
            chunks_done: EXPECTED_CHUNKS.length,
            chunks_total: EXPECTED_CHUNKS.length
          })
        })
      )
    }))
})
