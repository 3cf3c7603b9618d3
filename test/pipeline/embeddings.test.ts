/**
 * Embeddings in the text pipeline (seed: Embed, Candidate facts; contracts section 10) over a
 * real database (SQLite and PostgreSQL), the scripted LLM, hash embeddings and the memory store.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Schedule } from "effect"
import { expect } from "vitest"
import { hashEmbedding, HashEmbeddings, HashEmbeddingsLive } from "../../layers/testing/HashEmbeddings.js"
import { type LlmScript, type ScriptedAnswer, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { MemoryVectorStore, MemoryVectorStoreLive } from "../../layers/vectors/MemoryVectorStore.js"
import type { RememberRequest } from "../../src/domain/Remember.js"
import { readResolveEdgesPrompt } from "../../src/pipeline/prompts/resolveEdges.js"
import { reembed } from "../../src/pipeline/reembed.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import { type Embeddings } from "../../src/services/Embeddings.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { VectorOutbox } from "../../src/services/VectorOutbox.js"
import { type VectorStore } from "../../src/services/VectorStore.js"
import { graph, rememberLayer, type RememberLayerOptions, resolution, textBody, textRequest } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"

const request = textRequest

const remember = (req: RememberRequest) => Effect.flatMap(RememberManager, (m) => m.submit(req))

const count = (table: string, where = "1 = 1") =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.map(sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`), (r) => Number(r[0]!.n))
  ).pipe(Effect.orDie)

const livesIn = (person: string, city: string, valid_at: string, about = "an engineer at Acme") =>
  graph(
    [{ name: person, type: "person", description: about }, { name: city, type: "place", description: "a city" }],
    [{ source: person, target: city, relation: "lives in", description: `${person} lives in ${city}`, valid_at }]
  )

const run = <A, E>(
  storage: () => StorageLayer,
  script: LlmScript,
  options: RememberLayerOptions & {
    readonly failEmbeddings?: () => boolean
    readonly failUpserts?: () => boolean
    /** hears every embeddings request as it arrives */
    readonly onEmbed?: (texts: ReadonlyArray<string>) => void
  },
  program: Effect.Effect<A, E, any>
) => {
  const embeddings = HashEmbeddingsLive({
    dimensions: 64,
    failWhen: (texts) => {
      options.onEmbed?.(texts)
      return options.failEmbeddings?.() ?? false
    }
  })
  const vectors = MemoryVectorStoreLive({ dimensions: 64, failUpserts: () => options.failUpserts?.() ?? false })
  const layer = rememberLayer(storage(), script, {
    ...options,
    embeddings: embeddings as unknown as Layer.Layer<Embeddings>,
    vectors: vectors as unknown as Layer.Layer<VectorStore>
  })
  // the recorders of the test doubles, next to the services the pipeline uses
  return program.pipe(
    Effect.provide(Layer.mergeAll(layer, embeddings, vectors) as unknown as Layer.Layer<any>)
  ) as Effect.Effect<A, E, never>
}

forEachDialect((_dialect, makeLayer) => {
  it.live("embeds the entities and facts of a text in one request and writes them by id", () =>
    run(
      makeLayer,
      { extract_graph: [livesIn("Alice Smith", "Berlin", "2024-03-01")] },
      {},
      Effect.gen(function*() {
        const result = yield* remember(request("Alice Smith lives in Berlin."))
        const out = textBody(result)
        expect(out).toMatchObject({ embedded_entities: 2, embedded_edges: 1 })
        const calls = (yield* HashEmbeddings).calls
        // a new dataset has nothing to look up by similarity: one request, entities then edges
        expect(calls).toEqual([[
          "Alice Smith (person): an engineer at Acme",
          "Berlin (place): a city",
          "Alice Smith lives in Berlin"
        ]])
        const store = yield* MemoryVectorStore
        const datasetId = (yield* (yield* DatasetsRepo).find("alice", "main")).pipe((
          o
        ) => (o._tag === "Some" ? o.value.id : -1))
        expect(store.items(`dataset-${datasetId}-entities`).map((i) => i.id)).toEqual(
          out.entities.map((e) => `entity-${e.id}`)
        )
        expect(store.items(`dataset-${datasetId}-edges`).map((i) => i.id)).toEqual([`edge-${out.edges[0].id}`])
        expect(store.items(`dataset-${datasetId}-entities`)[0]!.metadata).toMatchObject({
          dataset_id: datasetId,
          kind: "entity",
          entity_id: out.entities[0].id,
          name: "Alice Smith"
        })
        expect(yield* (yield* VectorOutbox).count()).toBe(0)
        expect(yield* count("gb_entities", "embedded_at IS NULL")).toBe(0)
        // the request is one gb_inferences row, filed under the store stage
        const runRow = (yield* (yield* RunLogRepo).get(result.runId)).pipe((
          o
        ) => (o._tag === "Some" ? o.value : undefined))!
        const storeStage = runRow.stages.find((s) => s.stage === "store")!
        expect(storeStage.inference_ids).toHaveLength(1)
        expect(yield* count("gb_inferences", "stage = 'embed' AND model = 'hash-embedding'")).toBe(1)
      })
    ))

  it.live("remembering the same text again overwrites the vectors, and counts repeats too", () =>
    run(
      makeLayer,
      {
        extract_graph: [livesIn("Alice Smith", "Berlin", "2024-03-01"), livesIn("Alice Smith", "Berlin", "2024-03-01")]
      },
      {},
      Effect.gen(function*() {
        yield* remember(request("Alice Smith lives in Berlin."))
        const second = textBody(yield* remember(request("Alice Smith lives in Berlin.")))
        expect(second).toMatchObject({ embedded_entities: 2, embedded_edges: 1 })
        const store = yield* MemoryVectorStore
        expect(store.indexes().map((i) => [i, store.items(i).length])).toEqual([["dataset-1-edges", 1], [
          "dataset-1-entities",
          2
        ]])
        // everything a remember embeds is known from its extraction: one request, made ahead
        // (ahead.ts), which the similarity lookup and the store both reuse
        const calls = (yield* HashEmbeddings).calls
        const texts = [
          "Alice Smith (person): an engineer at Acme",
          "Berlin (place): a city",
          "Alice Smith lives in Berlin"
        ]
        expect(calls).toEqual([texts, texts])
      })
    ))

  it.live("a repeat's stored wording is embedded while resolve_edges runs, not after it", () => {
    // what happened, in order: embeddings requests as they arrive, model answers as they are given
    const events: Array<string> = []
    const answers: Record<string, Array<ScriptedAnswer>> = {
      extract_graph: [
        graph([{ name: "Alice Smith", type: "person" }, { name: "Berlin", type: "place" }, {
          name: "Bob Jones",
          type: "person"
        }], [
          { source: "Alice Smith", target: "Berlin", relation: "lives in", valid_at: "2024-03-01" },
          { source: "Alice Smith", target: "Bob Jones", relation: "knows" }
        ]),
        graph([{ name: "Alice Smith", type: "person" }, { name: "Berlin", type: "place" }, {
          name: "Acme",
          type: "organization"
        }], [
          // the stored fact again (same endpoints, relation and time) in other words: merged in code
          {
            source: "Alice Smith",
            target: "Berlin",
            relation: "lives in",
            description: "Alice has lived in Berlin since March 2024",
            valid_at: "2024-03-01"
          },
          { source: "Alice Smith", target: "Acme", relation: "works at" }
        ])
      ],
      resolve_edges: [resolution([], [])]
    }
    return run(
      makeLayer,
      (request) => {
        events.push(`answered ${request.stage}`)
        return answers[request.stage]!.shift()!
      },
      {
        // the model takes its time; the embeddings answer at once
        llmDelayMs: (request) => (request.stage === "resolve_edges" ? 300 : 0),
        onEmbed: (texts) => events.push(`embedded ${JSON.stringify(texts)}`)
      },
      Effect.gen(function*() {
        const stored = yield* remember(request("Alice Smith lives in Berlin and knows Bob Jones."))
        const first = textBody(stored)
        events.length = 0
        const second = textBody(yield* remember(request("Alice has lived in Berlin since March 2024, at Acme.")))
        // the repeat is the stored edge, embedded with its stored description
        expect(second.edges[0]!.id).toBe(first.edges[0]!.id)
        expect(second.edges[0]!.description).toBe("Alice Smith lives in Berlin")
        expect(events).toEqual([
          "answered extract_graph",
          // ahead: what the extraction says
          `embedded ${
            JSON.stringify([
              "Alice Smith (person): ",
              "Berlin (place): ",
              "Acme (organization): ",
              "Alice has lived in Berlin since March 2024",
              "Alice Smith works at Acme"
            ])
          }`,
          // beside resolve_edges: the stored wording of the repeat
          `embedded ${JSON.stringify(["Alice Smith lives in Berlin"])}`,
          "answered resolve_edges"
        ])
        const store = yield* MemoryVectorStore
        const edges = store.items(`dataset-${stored.dataset_id}-edges`)
        expect(edges.find((i) => i.id === `edge-${first.edges[0]!.id}`)!.values).toEqual(
          hashEmbedding("Alice Smith lives in Berlin", 64)
        )
      })
    )
  })

  it.live("finds an alias by similarity: its facts become candidates (found_by similar)", () =>
    run(
      makeLayer,
      {
        extract_graph: [livesIn("Alice Smith", "Berlin", "2024-03-01"), livesIn("Alice", "Paris", "2025-01-15")],
        resolve_edges: [resolution([], [{ new: 0, existing: [1] }])]
      },
      { settings: { similarityThreshold: 0.5 } },
      Effect.gen(function*() {
        const first = textBody(yield* remember(request("Alice Smith lives in Berlin.")))
        const second = yield* remember(request("Alice moved to Paris."))
        expect(textBody(second).invalidated_edges).toEqual([first.edges[0].id])
        const sent = readResolveEdgesPrompt(
          (yield* ScriptedLlm).callsFor("resolve_edges")[0]!.messages[0]!.content as string
        )
        expect(sent.existing_facts.map((f) => f.source)).toEqual(["Alice Smith"])
        const runRow = (yield* (yield* RunLogRepo).get(second.runId)).pipe((
          o
        ) => (o._tag === "Some" ? o.value : undefined))!
        const load = runRow.stages.find((s) => s.stage === "load_candidates")!
        expect(load.detail).toMatchObject({ candidates: 1, found_by: { [first.edges[0].id]: "similar" } })
        // the lookup's vectors were embedded ahead, in the request filed under store
        expect(load.inference_ids).toHaveLength(0)
        expect(runRow.stages.find((s) => s.stage === "store")!.inference_ids).toHaveLength(1)
      })
    ))

  it.live("a failed similarity lookup falls back to names and is recorded on the stage", () =>
    run(
      makeLayer,
      {
        extract_graph: [livesIn("Alice Smith", "Berlin", "2024-03-01"), livesIn("Alice Smith", "Berlin", "2024-03-01")]
      },
      {
        failEmbeddings: (() => {
          let calls = 0
          // the second remember's requests: ahead (2) and then its own lookup (3) fail, the store's (4) does not
          return () => [2, 3].includes(++calls)
        })()
      },
      Effect.gen(function*() {
        yield* remember(request("Alice Smith lives in Berlin."))
        const second = yield* remember(request("Alice Smith lives in Berlin."))
        const runRow = (yield* (yield* RunLogRepo).get(second.runId)).pipe((
          o
        ) => (o._tag === "Some" ? o.value : undefined))!
        const load = runRow.stages.find((s) => s.stage === "load_candidates")!
        expect(load.status).toBe("succeeded")
        expect(load.detail).toMatchObject({ candidates: 1, similarity_error: expect.any(String) })
        expect(runRow.status).toBe("succeeded")
      })
    ))

  it.live("an embedding failure stores nothing (502)", () =>
    run(
      makeLayer,
      { extract_graph: [livesIn("Alice Smith", "Berlin", "2024-03-01")] },
      { failEmbeddings: () => true },
      Effect.gen(function*() {
        const exit = yield* Effect.exit(remember(request("Alice Smith lives in Berlin.", { dataset: "fresh" })))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit) && exit.cause._tag === "Fail") expect(exit.cause.error._tag).toBe("EmbeddingFailed")
        for (const t of ["gb_datasets", "gb_artifacts", "gb_entities", "gb_edges", "gb_vector_outbox"]) {
          expect(yield* count(t)).toBe(0)
        }
        // the request made ahead, then the store's own
        expect(yield* count("gb_inferences", "stage = 'embed' AND error IS NOT NULL")).toBe(2)
      })
    ))

  it.live("a vector write failure after commit is a 502 with the rows stored; the outbox is drained by the next remember", () => {
    let failing = true
    return run(
      makeLayer,
      {
        extract_graph: [livesIn("Alice Smith", "Berlin", "2024-03-01"), livesIn("Bob", "Rome", "2024-03-01", "baker")]
      },
      { failUpserts: () => failing },
      Effect.gen(function*() {
        const exit = yield* Effect.exit(remember(request("Alice Smith lives in Berlin.")))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
          expect(exit.cause.error).toMatchObject({ _tag: "VectorWriteFailed", artifact_id: expect.any(Number) })
        }
        expect(yield* count("gb_edges")).toBe(1)
        expect(yield* (yield* VectorOutbox).count()).toBe(3)
        const runs = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql`SELECT status, artifact_id FROM gb_remember_runs`
        ).pipe(Effect.orDie)
        expect(runs).toEqual([{ status: "failed", artifact_id: expect.any(Number) }])

        failing = false
        yield* remember(request("Bob lives in Rome."))
        expect(yield* (yield* VectorOutbox).count()).toBe(0)
        const store = yield* MemoryVectorStore
        expect(store.indexes().flatMap((i) => store.items(i)).length).toBe(6)
      })
    )
  })

  it.live("reembed embeds what was stored before embeddings were configured", () => {
    const storage = makeLayer()
    const noEmbeddings = rememberLayer(storage, { extract_graph: [livesIn("Alice Smith", "Berlin", "2024-03-01")] })
    return Effect.gen(function*() {
      const out = textBody(yield* remember(request("Alice Smith lives in Berlin.")))
      expect(out.embedded_entities).toBeUndefined()
      expect(yield* count("gb_entities", "embedded_at IS NULL")).toBe(2)
      const result = yield* Effect.gen(function*() {
        const r = yield* reembed({})
        const store = yield* MemoryVectorStore
        expect(store.indexes().flatMap((i) => store.items(i).map((x) => x.id)).sort()).toEqual(
          [...out.entities.map((e) => `entity-${e.id}`), `edge-${out.edges[0].id}`].sort()
        )
        const again = yield* reembed({})
        expect(again).toEqual({ datasets: 1, entities: 0, edges: 0 })
        return r
      }).pipe(
        Effect.provide(
          Layer.mergeAll(HashEmbeddingsLive({ dimensions: 64 }), MemoryVectorStoreLive({ dimensions: 64 }))
        )
      )
      expect(result).toEqual({ datasets: 1, entities: 2, edges: 1 })
      expect(yield* count("gb_entities", "embedded_at IS NULL")).toBe(0)
      expect(yield* count("gb_edges", "embedded_at IS NULL")).toBe(0)
    }).pipe(Effect.provide(noEmbeddings as unknown as Layer.Layer<any>)) as Effect.Effect<void, unknown, never>
  })
})

forEachDialect((_dialect, makeLayer) => {
  it.live("vectors left in the outbox are written when the server starts", () => {
    const vectors = MemoryVectorStoreLive({ dimensions: 2 })
    const item = {
      dataset_id: 1,
      index_name: "dataset-1-entities",
      vector_id: "entity-1",
      values: [1, 0],
      metadata: { kind: "entity" }
    }
    // the database as a failing (or crashed) process left it: a vector waiting in the outbox
    const leftBehind = makeLayer().pipe(
      Layer.tap((ctx) => Effect.asVoid(Context.get(ctx, VectorOutbox).enqueue([item], "2025-01-01T00:00:00.000Z")))
    ) as unknown as StorageLayer
    // then a server starts on it (building the pipeline drains the outbox in the background)
    return Effect.gen(function*() {
      const outbox = yield* VectorOutbox
      yield* outbox.count().pipe(
        Effect.repeat({ until: (n) => n === 0, schedule: Schedule.spaced("20 millis") }),
        Effect.timeout("5 seconds")
      )
      const store = yield* MemoryVectorStore
      expect(store.items("dataset-1-entities").map((i) => i.id)).toEqual(["entity-1"])
    }).pipe(
      Effect.provide(
        Layer.merge(
          rememberLayer(leftBehind, {}, { vectors: vectors as unknown as Layer.Layer<VectorStore> }),
          vectors
        ) as unknown as Layer.Layer<any>
      )
    ) as Effect.Effect<void, unknown, never>
  })
})
