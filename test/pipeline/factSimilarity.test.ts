/**
 * Candidates found by meaning (issue 25, part 5): with embeddings, load_candidates also
 * searches the dataset's edge index with the new facts' descriptions (found_by similar_fact),
 * reusing the vectors embedded ahead for the store; the cap keeps the most relevant
 * candidates by fused rank. Over both databases, the scripted LLM, and embeddings that give
 * chosen texts chosen vectors (hash embeddings for the rest: paraphrases that share few words
 * are not close under hashing).
 */
import { it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { expect } from "vitest"
import { hashEmbedding, roughTokenCount } from "../../layers/testing/HashEmbeddings.js"
import { ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { MemoryVectorStoreLive } from "../../layers/vectors/MemoryVectorStore.js"
import type { RememberRequest } from "../../src/domain/Remember.js"
import { readResolveEdgesPrompt } from "../../src/pipeline/prompts/resolveEdges.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import { Embeddings } from "../../src/services/Embeddings.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import type { VectorStore } from "../../src/services/VectorStore.js"
import { graph, rememberLayer, resolution, textBody, textRequest } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"

const DIMENSIONS = 64

/** A unit vector mostly along axis `axis`, turned a little towards axis `axis + 1` by `turn`. */
const near = (axis: number, turn: number): Array<number> => {
  const v = new Array<number>(DIMENSIONS).fill(0)
  v[axis] = Math.cos(turn)
  v[axis + 1] = Math.sin(turn)
  return v
}

/**
 * Embeddings that give the texts of `chosen` their vectors and hash the rest; every request
 * is recorded in `calls`.
 */
const chosenEmbeddings = (chosen: Record<string, ReadonlyArray<number>>, calls: Array<ReadonlyArray<string>>) =>
  Layer.succeed(
    Embeddings,
    Embeddings.of({
      enabled: true,
      provider: "chosen",
      model: "chosen-embedding",
      dimensions: DIMENSIONS,
      embed: (texts) =>
        Effect.sync(() => {
          if (texts.length > 0) calls.push([...texts])
          return {
            vectors: texts.map((t) => chosen[t] ?? hashEmbedding(t, DIMENSIONS)),
            model: "chosen-embedding",
            inputTokens: roughTokenCount(texts)
          }
        })
    })
  )

const remember = (req: RememberRequest) => Effect.flatMap(RememberManager, (m) => m.submit(req))

const stageOf = (runId: number, stage: string) =>
  Effect.map(Effect.flatMap(RunLogRepo, (r) => r.get(runId)), (o) => {
    if (o._tag === "None") throw new Error(`no run ${runId}`)
    return o.value.stages.find((s) => s.stage === stage)
  })

const run = <A, E>(
  storage: () => StorageLayer,
  script: (r: LlmRequest) => ReturnType<typeof resolution>,
  chosen: Record<string, ReadonlyArray<number>>,
  calls: Array<ReadonlyArray<string>>,
  program: Effect.Effect<A, E, any>
) =>
  program.pipe(
    Effect.provide(
      rememberLayer(storage(), script, {
        embeddings: chosenEmbeddings(chosen, calls),
        vectors: MemoryVectorStoreLive({ dimensions: DIMENSIONS }) as unknown as Layer.Layer<VectorStore>
      }) as unknown as Layer.Layer<any>
    )
  ) as Effect.Effect<A, E, never>

// the stored fact and its paraphrase: close in meaning (cosine 0.95), no word of a name in common
const EMPLOYED = "Robert Jones is employed by Acme Corporation"
const WORKS_FOR = "Bobby works for ACME as an engineer"
const ALLERGIC = "Alice Smith is allergic to peanuts"
const ALLERGY = "Alice Smith has a severe peanut allergy"
const CHOSEN = {
  [EMPLOYED]: near(0, 0),
  [WORKS_FOR]: near(0, 0.3),
  // the aliases are not similar entities either ("ACME" and "Acme Corporation" hash close)
  "Bobby (person): ": near(20, 0),
  "ACME (organization): ": near(30, 0),
  [ALLERGIC]: near(10, 0),
  [ALLERGY]: near(10, 0.3)
}

const employed = graph(
  [{ name: "Robert Jones", type: "person", description: "an engineer" }, {
    name: "Acme Corporation",
    type: "organization",
    description: "a company"
  }],
  [{ source: "Robert Jones", target: "Acme Corporation", relation: "works at", description: EMPLOYED }]
)
const worksFor = graph(
  [{ name: "Bobby", type: "person" }, { name: "ACME", type: "organization" }],
  [{ source: "Bobby", target: "ACME", relation: "works for", description: WORKS_FOR }]
)

forEachDialect((_dialect, makeLayer) => {
  it.live("a paraphrase between aliases that share no name is compared and merged (found_by similar_fact)", () => {
    const calls: Array<ReadonlyArray<string>> = []
    const extractions = [employed, worksFor]
    let oldId = -1
    return run(
      makeLayer,
      (r) => (r.stage === "extract_graph" ? extractions.shift()! : resolution([{ new: 0, existing: oldId }], [])),
      CHOSEN,
      calls,
      Effect.gen(function*() {
        const first = textBody(yield* remember(textRequest("Robert Jones is employed by Acme Corporation.")))
        oldId = first.edges[0].id
        const perRemember = [calls.length]
        const second = yield* remember(textRequest("Bobby works for ACME as an engineer."))
        perRemember.push(calls.length - perRemember[0]!)
        // the model saw the old fact and called it a duplicate: merged into the stored edge
        const resolveCalls = (yield* ScriptedLlm).callsFor("resolve_edges")
        expect(resolveCalls).toHaveLength(1)
        const sent = readResolveEdgesPrompt(resolveCalls[0]!.messages[0]!.content as string)
        expect(sent.existing_facts.map((f) => f.id)).toEqual([oldId])
        expect(textBody(second).edges.map((e) => e.id)).toEqual([oldId])
        const load = (yield* stageOf(second.runId, "load_candidates"))!
        expect(load.detail).toMatchObject({ candidates: 1, found_by: { [oldId]: "similar_fact" } })
        // no request of its own: the descriptions were embedded ahead, for the store
        expect(load.inference_ids).toHaveLength(0)
        expect(perRemember).toEqual([1, 1])
      })
    )
  })

  it.live("the relevant old fact of an entity with 200 newer facts is kept in the cap", () => {
    const calls: Array<ReadonlyArray<string>> = []
    const cities = Array.from({ length: 200 }, (_, i) => `City ${i}`)
    const extractions = [
      graph([{ name: "Alice Smith", type: "person", description: "an engineer" }, {
        name: "Peanuts",
        type: "other"
      }], [{ source: "Alice Smith", target: "Peanuts", relation: "is allergic to", description: ALLERGIC }]),
      graph(
        [{ name: "Alice Smith", type: "person", description: "an engineer" }, ...cities.map((c) => ({ name: c }))],
        cities.map((c) => ({
          source: "Alice Smith",
          target: c,
          relation: "visited",
          description: `Alice Smith visited ${c}`
        }))
      ),
      graph([{ name: "Alice Smith", type: "person", description: "an engineer" }, {
        name: "peanut allergy",
        type: "other"
      }], [{ source: "Alice Smith", target: "peanut allergy", relation: "has", description: ALLERGY }])
    ]
    let oldId = -1
    return run(
      makeLayer,
      (r) => {
        if (r.stage === "extract_graph") return extractions.shift()!
        const sent = readResolveEdgesPrompt(r.messages[0]!.content as string)
        return sent.new_facts.some((f) => f.description === ALLERGY || f.relation === "has")
          ? resolution([{ new: 0, existing: oldId }], [])
          : resolution([], [])
      },
      CHOSEN,
      calls,
      Effect.gen(function*() {
        oldId = textBody(yield* remember(textRequest("Alice Smith is allergic to peanuts."))).edges[0].id
        yield* remember(textRequest("Alice Smith visited 200 cities."))
        const before = calls.length
        const again = yield* remember(textRequest("Alice Smith has a severe peanut allergy."))
        expect(calls.length - before).toBe(1)
        const load = (yield* stageOf(again.runId, "load_candidates"))!
        const foundBy = (load.detail as { found_by: Record<string, string> }).found_by
        expect(Object.keys(foundBy)).toHaveLength(50)
        expect(foundBy[oldId]).toBe("similar_fact")
        // the model saw it first (most relevant), and merged the new wording into it
        const last = (yield* ScriptedLlm).callsFor("resolve_edges").at(-1)!
        expect(readResolveEdgesPrompt(last.messages[0]!.content as string).existing_facts[0]!.id).toBe(oldId)
        expect(textBody(again).edges.map((e) => e.id)).toEqual([oldId])
      })
    )
  })

  it.live("the embeddings requests per remember do not grow: the same text, one request each", () => {
    const calls: Array<ReadonlyArray<string>> = []
    const extractions = [employed, employed, worksFor]
    return run(
      makeLayer,
      (r) => (r.stage === "extract_graph" ? extractions.shift()! : resolution([], [])),
      CHOSEN,
      calls,
      Effect.gen(function*() {
        const counts: Array<number> = []
        const foundBy: Array<unknown> = []
        for (const text of ["Robert Jones is employed.", "Robert Jones is employed.", "Bobby works for ACME."]) {
          const before = calls.length
          const result = yield* remember(textRequest(text))
          counts.push(calls.length - before)
          const load = yield* stageOf(result.runId, "load_candidates")
          expect(load?.inference_ids ?? []).toHaveLength(0)
          foundBy.push(Object.values((load?.detail as { found_by?: object } | undefined)?.found_by ?? {}))
        }
        // the lookup by meaning ran (the repeat is found by name and by meaning, the paraphrase by meaning)
        expect(foundBy).toEqual([[], ["name+similar_fact"], ["similar_fact"]])
        // as before the fact lookup: the extraction's texts, embedded once, ahead of the store
        expect(counts).toEqual([1, 1, 1])
        expect(calls[1]).toEqual(calls[0])
      })
    )
  })
})
