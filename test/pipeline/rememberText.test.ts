/**
 * The text pipeline end to end over a real database (SQLite and PostgreSQL) and the scripted
 * LLM: every branch of the seed's reconciliation, the run log, inferences, and failures that
 * must store nothing.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { expect } from "vitest"
import { type LlmScript, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import type { RememberRequest } from "../../src/domain/Remember.js"
import { readResolveEdgesPrompt } from "../../src/pipeline/prompts/resolveEdges.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import { GraphRepo } from "../../src/services/GraphRepo.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { graph, rememberLayer, resolution, textBody, textRequest } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"

const request = textRequest

const count = (table: string, where = "1 = 1") =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.map(sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`), (rows) =>
        Number(rows[0]!.n))
  ).pipe(Effect.orDie)

const rows = <A extends object>(query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(query)).pipe(Effect.orDie)

const remember = (req: RememberRequest) => Effect.flatMap(RememberManager, (m) => m.submit(req))

const livesIn = (city: string, valid_at?: string) =>
  graph(
    [{ name: "Alice Smith", type: "Person", description: "an engineer" }, { name: city, type: "place" }],
    [{
      source: "Alice Smith",
      target: city,
      relation: "lives in",
      description: `Alice Smith lives in ${city}`,
      valid_at: valid_at ?? null
    }]
  )

const run = <A, E>(storage: () => StorageLayer, script: LlmScript, program: Effect.Effect<A, E, any>) =>
  program.pipe(Effect.provide(rememberLayer(storage(), script) as Layer.Layer<any, any, never>)) as Effect.Effect<
    A,
    E,
    never
  >

const ALL_TABLES = [
  "gb_datasets",
  "gb_artifacts",
  "gb_entities",
  "gb_edges",
  "gb_entity_artifacts",
  "gb_edge_artifacts",
  "gb_entity_sessions",
  "gb_edge_sessions"
]

forEachDialect((_dialect, makeLayer) => {
  it.live("remembers a text into a new dataset", () =>
    run(
      makeLayer,
      { extract_graph: [livesIn("Berlin", "2024-03-01")] },
      Effect.gen(function*() {
        const out = yield* remember(request("Alice Smith lives in Berlin since March 2024."))
        const response = textBody(out)
        expect(response).toMatchObject({
          artifact_id: expect.any(Number),
          kind: "knowledge",
          valid_at: "2025-02-01T00:00:00.000Z",
          invalidated_edges: []
        })
        expect(response.session_id).toBeUndefined()
        expect(response.entities.map((e) => [e.name, e.type])).toEqual([["Alice Smith", "person"], [
          "Berlin",
          "place"
        ]])
        expect(response.edges).toHaveLength(1)
        expect(response.edges[0]).toMatchObject({
          source: "Alice Smith",
          target: "Berlin",
          relation: "lives_in",
          valid_at: "2024-03-01T00:00:00.000Z",
          artifact_id: response.artifact_id
        })
        expect(response.edges[0]).not.toHaveProperty("invalid_at")
        expect(response.edges[0]).not.toHaveProperty("expired_at")
        expect(yield* count("gb_datasets")).toBe(1)
        expect(yield* count("gb_entity_artifacts")).toBe(2)
        expect(yield* count("gb_edge_artifacts")).toBe(1)

        const runRow = (yield* (yield* RunLogRepo).get(out.runId)).pipe((
          o
        ) => (o._tag === "Some" ? o.value : undefined))!
        expect(runRow.status).toBe("succeeded")
        expect(runRow.artifact_id).toBe(response.artifact_id)
        const stages = Object.fromEntries(runRow.stages.map((s) => [s.stage, s]))
        expect(stages.extract_graph!.status).toBe("succeeded")
        expect(stages.extract_graph!.inference_ids).toHaveLength(1)
        expect(stages.load_candidates!.status).toBe("succeeded")
        expect(stages.store!.status).toBe("succeeded")
        expect(stages.resolve_edges).toBeUndefined() // nothing to compare with: no model call

        const inferences = yield* rows<any>("SELECT * FROM gb_inferences")
        expect(inferences).toHaveLength(1)
        expect(inferences[0]).toMatchObject({
          type: "remember",
          stage: "extract_graph",
          model: ScriptedLlm.DEFAULT_MODEL,
          reasoning: "none",
          run_id: out.runId
        })
        // the prompt carried the reference time
        const [call] = (yield* ScriptedLlm).callsFor("extract_graph")
        expect(JSON.stringify(call!.messages)).toContain("2025-02-01T00:00:00.000Z")
      })
    ))

  it.live("the same text twice adds an artifact and links, but no duplicate entities or edges", () =>
    run(
      makeLayer,
      { extract_graph: [livesIn("Berlin"), livesIn("Berlin")] },
      Effect.gen(function*() {
        const first = textBody(yield* remember(request("Alice lives in Berlin.")))
        const second = textBody(yield* remember(request("Alice lives in Berlin.", { session_id: "s2" })))
        expect(second.artifact_id).not.toBe(first.artifact_id)
        expect(second.edges[0].id).toBe(first.edges[0].id)
        expect(second.entities.map((e) => e.id)).toEqual(first.entities.map((e) => e.id))
        expect(second.invalidated_edges).toEqual([])
        expect(yield* count("gb_artifacts")).toBe(2)
        expect(yield* count("gb_entities")).toBe(2)
        expect(yield* count("gb_edges")).toBe(1)
        expect(yield* count("gb_edge_artifacts")).toBe(2)
        expect(yield* count("gb_entity_artifacts")).toBe(4)
        // the duplicate is still recorded against the second call's session
        expect(yield* count("gb_edge_sessions", "session_id = 's2'")).toBe(1)
        expect(yield* count("gb_entity_sessions", "session_id = 's2'")).toBe(2)
        // an exact repeat is found in code: no resolve_edges call
        expect((yield* ScriptedLlm).callsFor("resolve_edges")).toHaveLength(0)
      })
    ))

  it.live("a paraphrase the model flags as a duplicate is merged into the stored edge", () =>
    run(
      makeLayer,
      {
        extract_graph: [
          livesIn("Berlin"),
          graph([{ name: "Alice Smith", type: "person" }, { name: "Berlin", type: "place" }], [
            { source: "Alice Smith", target: "Berlin", relation: "resides in", description: "Alice resides in Berlin" }
          ])
        ],
        resolve_edges: [resolution([{ new: 0, existing: 1 }], [])]
      },
      Effect.gen(function*() {
        const first = textBody(yield* remember(request("Alice lives in Berlin.")))
        const edgeId = first.edges[0].id
        const script = yield* ScriptedLlm
        const second = textBody(yield* remember(request("Alice resides in Berlin.", { session_id: "s9" })))
        // the scripted answer named existing id 1; make sure that is the stored edge
        expect(edgeId).toBe(1)
        expect(second.edges.map((e) => e.id)).toEqual([edgeId])
        expect(second.edges[0].relation).toBe("lives_in")
        expect(yield* count("gb_edges")).toBe(1)
        expect(yield* count("gb_edge_artifacts", `edge_id = ${edgeId}`)).toBe(2)
        expect(yield* count("gb_edge_sessions", `edge_id = ${edgeId} AND session_id = 's9'`)).toBe(1)
        const [call] = script.callsFor("resolve_edges")
        const sent = readResolveEdgesPrompt(call!.messages[0]!.content as string)
        expect(sent.new_facts).toEqual([expect.objectContaining({ index: 0, relation: "resides_in" })])
        expect(sent.existing_facts).toEqual([expect.objectContaining({ id: edgeId, relation: "lives_in" })])
      })
    ))

  it.live("a newer contradiction closes the stored edge", () =>
    run(
      makeLayer,
      {
        extract_graph: [livesIn("Berlin", "2024-03-01"), livesIn("Paris", "2025-01-15")],
        resolve_edges: [resolution([], [{ new: 0, existing: [1] }])]
      },
      Effect.gen(function*() {
        const first = textBody(yield* remember(request("Alice lives in Berlin.")))
        const second = textBody(yield* remember(request("Alice moved to Paris in January.")))
        expect(second.invalidated_edges).toEqual([first.edges[0].id])
        const [old] = yield* (yield* GraphRepo).getEdges([first.edges[0].id])
        expect(old!.invalid_at).toBe("2025-01-15T00:00:00.000Z")
        expect(old!.expired_at).not.toBeNull()
        expect(old!.valid_at).toBe("2024-03-01T00:00:00.000Z")
        expect(second.edges[0]).not.toHaveProperty("expired_at")
        // a contradiction is not a restatement: the old edge is not linked to the new artifact
        expect(yield* count("gb_edge_artifacts", `edge_id = ${first.edges[0].id}`)).toBe(1)
      })
    ))

  it.live("an older contradiction is stored already closed and leaves the stored edge live", () =>
    run(
      makeLayer,
      {
        extract_graph: [livesIn("Paris", "2025-01-15"), livesIn("Berlin", "2024-03-01")],
        resolve_edges: [resolution([], [{ new: 0, existing: [1] }])]
      },
      Effect.gen(function*() {
        const first = textBody(yield* remember(request("Alice lives in Paris.")))
        const second = textBody(yield* remember(request("In March 2024 Alice lived in Berlin.")))
        expect(second.invalidated_edges).toEqual([])
        expect(second.edges[0]).toMatchObject({
          invalid_at: "2025-01-15T00:00:00.000Z",
          expired_at: expect.any(String)
        })
        const [stored] = yield* (yield* GraphRepo).getEdges([first.edges[0].id])
        expect(stored!.expired_at).toBeNull()
        expect(stored!.invalid_at).toBeNull()
      })
    ))

  it.live("contradicting facts at non-overlapping times both stay", () =>
    run(
      makeLayer,
      {
        extract_graph: [
          graph([{ name: "Alice Smith", type: "person" }, { name: "Berlin", type: "place" }], [
            {
              source: "Alice Smith",
              target: "Berlin",
              relation: "lives in",
              valid_at: "2020-01-01",
              invalid_at: "2021-01-01"
            }
          ]),
          livesIn("Paris", "2023-01-01")
        ],
        resolve_edges: [resolution([], [{ new: 0, existing: [1] }])]
      },
      Effect.gen(function*() {
        yield* remember(request("Alice lived in Berlin in 2020."))
        const second = textBody(yield* remember(request("Alice lives in Paris since 2023.")))
        expect(second.invalidated_edges).toEqual([])
        expect(yield* count("gb_edges", "expired_at IS NULL")).toBe(2)
      })
    ))

  it.live("a repeat that says the fact ended closes the stored edge at that time, without the model", () =>
    run(
      makeLayer,
      {
        extract_graph: [
          livesIn("Berlin", "2024-03-01"),
          graph([{ name: "Alice Smith", type: "person" }, { name: "Berlin", type: "place" }], [
            {
              source: "Alice Smith",
              target: "Berlin",
              relation: "lives in",
              valid_at: "2024-03-01",
              invalid_at: "2025-01-10"
            }
          ])
        ]
      },
      Effect.gen(function*() {
        const first = textBody(yield* remember(request("Alice lives in Berlin.")))
        const second = textBody(yield* remember(request("Alice lived in Berlin until 10 January 2025.")))
        expect(second.invalidated_edges).toEqual([first.edges[0].id])
        expect(second.edges).toEqual([
          expect.objectContaining({ id: first.edges[0].id, invalid_at: "2025-01-10T00:00:00.000Z" })
        ])
        expect(yield* count("gb_edges")).toBe(1)
        expect((yield* ScriptedLlm).callsFor("resolve_edges")).toHaveLength(0)
      })
    ))

  it.live("an endpoint no entity names becomes an entity of type other; a stored name of another type is reused", () =>
    run(
      makeLayer,
      {
        extract_graph: [
          graph([{ name: "Acme", type: "organization" }], []),
          graph([{ name: "Alice", type: "person" }], [
            { source: "Alice", target: "ACME", relation: "works at" },
            { source: "Alice", target: "Bob", relation: "knows" }
          ])
        ]
      },
      Effect.gen(function*() {
        const first = textBody(yield* remember(request("Acme is a company.")))
        const second = textBody(yield* remember(request("Alice works at ACME and knows Bob.")))
        const acmeId = first.entities[0].id
        expect(second.edges[0]).toMatchObject({ target_id: acmeId, target: "Acme" })
        const bob = yield* rows<any>("SELECT * FROM gb_entities WHERE name_key = 'bob'")
        expect(bob).toEqual([expect.objectContaining({ type: "other", name: "Bob" })])
        // both endpoints are linked to the artifact even though the extraction did not list them
        expect(yield* count("gb_entity_artifacts", `artifact_id = ${second.artifact_id}`)).toBe(3)
        // the response lists what the text's extraction listed
        expect(second.entities.map((e) => e.name)).toEqual(["Alice"])
      })
    ))

  it.live("per-stage models and reasoning are used and recorded; the extract model is the model of the knowledge", () =>
    run(
      makeLayer,
      {
        extract_graph: [livesIn("Berlin", "2024-01-01"), {
          ...livesIn("Paris", "2025-01-01"),
          model: "extractor-2025-01-01"
        }],
        resolve_edges: [resolution([], [{ new: 0, existing: [1] }])]
      },
      Effect.gen(function*() {
        yield* remember(request("Alice lives in Berlin."))
        const out = textBody(
          yield* remember(request("Alice lives in Paris.", {
            models: { extract_graph: "extractor", resolve_edges: "resolver" },
            reasoning: { extract_graph: "high" }
          }))
        )
        const script = yield* ScriptedLlm
        expect(script.callsFor("extract_graph")[1]).toMatchObject({ model: "extractor", reasoning: "high" })
        expect(script.callsFor("resolve_edges")[0]).toMatchObject({ model: "resolver", reasoning: "none" })
        const inferences = yield* rows<any>("SELECT stage, model, reasoning, model_id FROM gb_inferences ORDER BY id")
        expect(inferences.map((i: any) => [i.stage, i.model, i.reasoning])).toEqual([
          ["extract_graph", ScriptedLlm.DEFAULT_MODEL, "none"],
          ["extract_graph", "extractor-2025-01-01", "high"],
          ["resolve_edges", "resolver", "none"]
        ])
        const models = yield* rows<any>("SELECT id, name FROM gb_models ORDER BY id")
        const extractor = models.find((m: any) => m.name === "extractor-2025-01-01")
        expect(out.edges[0].model_id).toBe(extractor.id)
        const alice = yield* rows<any>("SELECT model_id FROM gb_entities WHERE name_key = 'alice smith'")
        // a stored entity keeps its own model
        expect(alice[0].model_id).toBe(models.find((m: any) => m.name === ScriptedLlm.DEFAULT_MODEL).id)
      })
    ))

  const failures: ReadonlyArray<[string, LlmScript, string, number]> = [
    [
      "the extraction call fails",
      { extract_graph: [{ fail: { message: "HTTP 500 from provider", status: 500 } }] },
      "extract_graph",
      1
    ],
    [
      "the extraction is cut by max_tokens",
      { extract_graph: [{ ...livesIn("Berlin"), stopReason: "max_tokens" }] },
      "extract_graph",
      1
    ],
    ["the extraction is not JSON", { extract_graph: [{ text: "I could not find anything." }] }, "extract_graph", 1],
    [
      "an edge has an empty endpoint",
      { extract_graph: [graph([], [{ source: "", target: "B", relation: "r" }])] },
      "extract_graph",
      1
    ]
  ]
  for (const [what, script, stage, inferenceRows] of failures) {
    it.live(`stores nothing when ${what}`, () =>
      run(
        makeLayer,
        script,
        Effect.gen(function*() {
          const exit = yield* Effect.exit(remember(request("Alice lives in Berlin.", { dataset: "fresh" })))
          expect(Exit.isFailure(exit)).toBe(true)
          if (Exit.isFailure(exit) && exit.cause._tag === "Fail") expect(exit.cause.error._tag).toBe("LlmFailed")
          for (const table of ALL_TABLES) expect(yield* count(table)).toBe(0)
          expect(yield* count("gb_inferences")).toBe(inferenceRows)
          const runs = yield* rows<any>("SELECT status, error FROM gb_remember_runs")
          expect(runs).toEqual([{ status: "failed", error: expect.stringContaining(stage) }])
          const stages = yield* rows<any>(`SELECT stage, status FROM gb_remember_run_stages WHERE stage = '${stage}'`)
          expect(stages).toEqual([{ stage, status: "failed" }])
        })
      ))
  }

  it.live("stores nothing new when resolve_edges fails, and the run names the stage", () =>
    run(
      makeLayer,
      {
        extract_graph: [livesIn("Berlin"), livesIn("Paris")],
        resolve_edges: [{ text: "{\"duplicates\": 5}" }]
      },
      Effect.gen(function*() {
        yield* remember(request("Alice lives in Berlin."))
        const before = yield* Effect.forEach(ALL_TABLES, (t) => count(t))
        const exit = yield* Effect.exit(remember(request("Alice lives in Paris.")))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(yield* Effect.forEach(ALL_TABLES, (t) => count(t))).toEqual(before)
        const runs = yield* rows<any>("SELECT status, error FROM gb_remember_runs ORDER BY id")
        expect(runs[1]).toEqual({ status: "failed", error: expect.stringContaining("resolve_edges") })
      })
    ))

  it.live("a failure inside the store transaction rolls everything back, dataset included", () => {
    const storage = () =>
      Layer.effect(
        GraphRepo,
        Effect.map(GraphRepo, (repo) => ({
          ...repo,
          linkEdgeStatements: () => Effect.die(new Error("disk full"))
        }))
      ).pipe(Layer.provideMerge(makeLayer())) as unknown as StorageLayer
    return run(
      storage,
      { extract_graph: [livesIn("Berlin")] },
      Effect.gen(function*() {
        const exit = yield* Effect.exit(remember(request("Alice lives in Berlin.", { dataset: "new-one" })))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
          expect(exit.cause.error).toMatchObject({
            _tag: "InternalFailure",
            message: "store failed with an internal error"
          })
        }
        for (const table of ALL_TABLES) expect(yield* count(table)).toBe(0)
      })
    )
  })
})
