/**
 * Exact repeats past the candidate cap (issue 13): under a stream of newer facts about the same
 * entities, an old live fact falls out of the newest `max_candidates`, yet a text repeating it
 * must merge into it (provenance link added) rather than store a second live edge.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { expect } from "vitest"
import { ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { readResolveEdgesPrompt } from "../../src/pipeline/prompts/resolveEdges.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import { GraphRepo } from "../../src/services/GraphRepo.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { graph, rememberLayer, resolution, textBody, textRequest } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"

const MAX_CANDIDATES = 3

const request = textRequest

const worksAtAcme = { source: "Alice Smith", target: "Acme", relation: "works at", valid_at: "2020-01-01" }
const knows = (n: number) => ({ source: "Alice Smith", target: `Friend ${n}`, relation: "knows" })

/** The extraction of each text, by the text itself (the texts below are keys, not prose). */
const EXTRACTIONS: Record<string, ReturnType<typeof graph>> = {
  old: graph([{ name: "Alice Smith", type: "person" }, { name: "Acme", type: "organization" }], [worksAtAcme]),
  newer: graph(
    [{ name: "Alice Smith", type: "person" }, ...[1, 2, 3, 4, 5].map((n) => ({ name: `Friend ${n}`, type: "person" }))],
    [1, 2, 3, 4, 5].map(knows)
  ),
  repeat: graph([{ name: "Alice Smith", type: "person" }, { name: "Acme", type: "organization" }], [worksAtAcme]),
  repeatAndNew: graph(
    [{ name: "Alice Smith", type: "person" }, { name: "Acme", type: "organization" }, { name: "Oslo", type: "place" }],
    [worksAtAcme, { source: "Alice Smith", target: "Oslo", relation: "lives in" }]
  )
}

const textOf = (r: LlmRequest): string => {
  const content = r.messages[0]!.content
  const user = typeof content === "string" ? content : JSON.stringify(content)
  return Object.keys(EXTRACTIONS).find((k) => user.includes(`<text>\n${k}\n</text>`)) ?? ""
}

// The model never finds a duplicate or a contradiction: only code can merge the repeat.
const script = (r: LlmRequest) => r.stage === "extract_graph" ? EXTRACTIONS[textOf(r)]! : resolution([], [])

const count = (query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: number }>(query)).pipe(
    Effect.map((rows) => Number(rows[0]!.n)),
    Effect.orDie
  )

const remember = (text: string) => Effect.flatMap(RememberManager, (m) => m.submit(request(text)))

const run = <A, E>(storage: () => StorageLayer, program: Effect.Effect<A, E, any>) =>
  program.pipe(
    Effect.provide(
      rememberLayer(storage(), script, { settings: { maxCandidates: MAX_CANDIDATES } }) as Layer.Layer<any, any, never>
    )
  ) as Effect.Effect<A, E, never>

const liveWorksAt = "SELECT COUNT(*) AS n FROM gb_edges WHERE relation = 'works_at' AND expired_at IS NULL"

forEachDialect((_dialect, makeLayer) => {
  it.live("merges a repeat of an old fact hidden by more than max_candidates newer ones", () =>
    run(
      makeLayer,
      Effect.gen(function*() {
        const old = textBody(yield* remember("old"))
        const oldEdge = old.edges[0].id
        yield* remember("newer")
        expect(yield* count("SELECT COUNT(*) AS n FROM gb_edges WHERE expired_at IS NULL")).toBeGreaterThan(
          MAX_CANDIDATES + 1
        )
        const calls = (yield* ScriptedLlm).callsFor("resolve_edges").length

        const again = yield* remember("repeat")
        const response = textBody(again)
        expect(response.edges.map((e) => e.id)).toEqual([oldEdge])
        expect(yield* count(liveWorksAt)).toBe(1)
        expect(yield* count(`SELECT COUNT(*) AS n FROM gb_edge_artifacts WHERE edge_id = ${oldEdge}`)).toBe(2)
        expect(
          yield* count(
            `SELECT COUNT(*) AS n FROM gb_edge_artifacts WHERE edge_id = ${oldEdge} AND artifact_id = ${response.artifact_id}`
          )
        ).toBe(1)
        // merged in code: the model was not asked
        expect((yield* ScriptedLlm).callsFor("resolve_edges")).toHaveLength(calls)
      })
    ))

  it.live("merges the repeat in code and shows the model only the other facts", () =>
    run(
      makeLayer,
      Effect.gen(function*() {
        const oldEdge = textBody(yield* remember("old")).edges[0].id
        yield* remember("newer")
        const out = textBody(yield* remember("repeatAndNew"))
        expect(out.edges[0].id).toBe(oldEdge)
        expect(yield* count(liveWorksAt)).toBe(1)
        const [call] = (yield* ScriptedLlm).callsFor("resolve_edges").slice(-1)
        const sent = readResolveEdgesPrompt(call!.messages[0]!.content as string)
        expect(sent.new_facts.map((f) => f.index)).toEqual([1])
        expect(sent.existing_facts.map((f) => f.id)).not.toContain(oldEdge)
        expect(sent.existing_facts.length).toBeLessThanOrEqual(MAX_CANDIDATES)
      })
    ))

  it.effect("loadEdgesByTriples: every edge with the triple, live or closed, whatever its age; no other dataset", () =>
    Effect.gen(function*() {
      const datasets = yield* DatasetsRepo
      const graph = yield* GraphRepo
      const at = (n: number) => `2025-01-${String(n + 1).padStart(2, "0")}T00:00:00.000Z`
      const main = yield* datasets.getOrCreate("u", "main", at(0))
      const other = yield* datasets.getOrCreate("u", "other", at(0))
      const entity = (name: string) => ({
        name,
        name_key: name.toLowerCase(),
        type: "person",
        description: "",
        model_id: null,
        created_at: at(0)
      })
      const [alice, bob] = yield* graph.upsertEntities(main.id, [entity("Alice"), entity("Bob")])
      const [alice2, bob2] = yield* graph.upsertEntities(other.id, [entity("Alice"), entity("Bob")])
      const edge = (
        dataset_id: number,
        source_id: number,
        target_id: number,
        relation: string,
        day: number,
        expired = false
      ) => ({
        dataset_id,
        source_id,
        target_id,
        relation,
        description: "",
        valid_at: at(0),
        invalid_at: null,
        created_at: at(day),
        expired_at: expired ? at(day + 1) : null,
        artifact_id: null,
        model_id: null
      })
      const rows = yield* graph.insertEdges([
        edge(main.id, alice!.id, bob!.id, "knows", 1),
        edge(main.id, alice!.id, bob!.id, "knows", 2, true),
        edge(main.id, bob!.id, alice!.id, "knows", 3),
        edge(main.id, alice!.id, bob!.id, "works_with", 4),
        edge(other.id, alice2!.id, bob2!.id, "knows", 5),
        edge(main.id, alice!.id, bob!.id, "knows", 6)
      ])
      const found = yield* graph.loadEdgesByTriples(main.id, [
        { source_id: alice!.id, target_id: bob!.id, relation: "knows" },
        { source_id: alice!.id, target_id: bob!.id, relation: "knows" },
        { source_id: alice2!.id, target_id: bob2!.id, relation: "knows" }
      ])
      expect(found.map((e) => e.id)).toEqual([rows[5]!.id, rows[1]!.id, rows[0]!.id])
      expect(found[0]).toMatchObject({ source_name: "Alice", target_name: "Bob" })
      expect(yield* graph.loadEdgesByTriples(main.id, [])).toEqual([])
    }).pipe(Effect.provide(makeLayer())))
})
