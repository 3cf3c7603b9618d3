/**
 * The read side over graphs written by the real remember pipeline (scripted LLM), on SQLite and
 * PostgreSQL: the full-text index follows description updates, merged repeats and closes made
 * by the store transaction; datasets, their soft delete and sessions with counts.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { expect } from "vitest"
import { fullTextTable } from "../../layers/sql/FullText.js"
import type { LlmScript } from "../../layers/testing/ScriptedLlm.js"
import { NotFound } from "../../src/domain/Errors.js"
import type { RememberRequest } from "../../src/domain/Remember.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import { runDeleteDataset, runListDatasets, runListSessions } from "../../src/query/datasets.js"
import { readDeps } from "../../src/query/deps.js"
import type { SearchRequest } from "../../src/query/requests.js"
import { runSearch } from "../../src/query/search.js"
import { Database } from "../../src/services/Database.js"
import { graph, rememberLayer, resolution, textBody, textRequest } from "../support/app.js"
import { type Dialect, forEachDialect, type StorageLayer } from "../support/databases.js"
import { expectFullTextConsistent } from "../support/fullText.js"

const remember = (text: string, extra: Partial<RememberRequest> = {}) =>
  Effect.flatMap(RememberManager, (m) => m.submit(textRequest(text, extra)))

/** full text and graph (no embeddings are configured in these tests) */
const search = (query: string, rest: Partial<SearchRequest> = {}) =>
  Effect.flatMap(
    readDeps,
    (deps) =>
      runSearch(deps, { user_id: "alice", dataset: "main", query, include_expired: false, limit: 10, hops: 0, ...rest })
  )

const run = <A, E>(storage: () => StorageLayer, script: LlmScript, program: Effect.Effect<A, E, any>) =>
  program.pipe(Effect.provide(rememberLayer(storage(), script) as Layer.Layer<any, any, never>)) as Effect.Effect<
    A,
    E,
    never
  >

const livesIn = (city: string, description: string, valid_at: string) =>
  graph(
    [{ name: "Alice Smith", type: "person", description }, { name: city, type: "place" }],
    [{
      source: "Alice Smith",
      target: city,
      relation: "lives in",
      description: `Alice Smith lives in ${city}`,
      valid_at
    }]
  )

forEachDialect((dialect: Dialect, makeLayer) => {
  it.live("the full-text index follows description updates, merged repeats and closes", () =>
    run(
      makeLayer,
      {
        extract_graph: [
          livesIn("Berlin", "an engineer", "2024-03-01T00:00:00Z"),
          livesIn("Berlin", "a painter", "2024-03-01T00:00:00Z"),
          livesIn("Paris", "", "2025-01-15T00:00:00Z")
        ],
        resolve_edges: [resolution([], [{ new: 0, existing: [1] }])]
      },
      Effect.gen(function*() {
        yield* remember("Alice Smith, an engineer, lives in Berlin.", { session_id: "s1" })
        expect((yield* search("engineer")).entities.map((e) => e.name)).toEqual(["Alice Smith"])

        // the upsert replaced the description; the repeat was merged into the stored fact
        const second = yield* remember("Alice Smith, a painter, lives in Berlin.", { session_id: "s2" })
        expect((yield* search("painter")).entities.map((e) => e.name)).toEqual(["Alice Smith"])
        expect((yield* search("engineer")).entities).toEqual([])
        const berlin = yield* search("Berlin")
        expect(berlin.facts).toHaveLength(1)
        expect(berlin.facts[0]!.artifact_ids).toHaveLength(2)
        expect(berlin.facts[0]!.artifact_ids).toContain(textBody(second).artifact_id)
        expect(berlin.facts[0]!.session_ids).toEqual(["s1", "s2"])

        // the move closes the Berlin fact in the store transaction
        yield* remember("Alice Smith moved to Paris in January 2025.", { reference_time: "2025-02-01T00:00:00.000Z" })
        expect((yield* search("Berlin")).facts).toEqual([])
        const history = yield* search("Berlin", { include_expired: true })
        expect(history.facts[0]).toMatchObject({
          description: "Alice Smith lives in Berlin",
          invalid_at: "2025-01-15T00:00:00.000Z"
        })
        expect((yield* search("Berlin", { as_of: "2024-12-01T00:00:00.000Z" })).facts).toHaveLength(1)
        expect((yield* search("Paris")).facts.map((f) => f.target)).toEqual(["Paris"])
        // the entity kept the painter description (an empty one never replaces it)
        expect((yield* search("painter")).entities).toHaveLength(1)

        if (dialect === "sqlite") {
          yield* expectFullTextConsistent
          // cascading deletes queue the rows' deletes too, applied at the commit
          const sql = yield* SqlClient.SqlClient
          const database = yield* Database
          const [dataset] = yield* sql<{ id: number }>`SELECT id FROM gb_datasets`.pipe(Effect.orDie)
          yield* database.withTransaction(sql`DELETE FROM gb_entities`.pipe(Effect.orDie))
          yield* expectFullTextConsistent
          const left = yield* sql.unsafe<{ n: number }>(
            `SELECT COUNT(*) AS n FROM ${fullTextTable("entities")} WHERE ${
              fullTextTable("entities")
            } MATCH 'dataset_id : "${dataset!.id}" AND painter'`
          ).pipe(Effect.orDie)
          expect(Number(left[0]!.n)).toBe(0)
        }
      })
    ))

  it.live("datasets with counts; soft delete frees the name, keeps the rows; sessions with counts", () =>
    run(
      makeLayer,
      {
        extract_graph: [
          livesIn("Berlin", "an engineer", "2024-03-01T00:00:00Z"),
          graph([{ name: "Bob", type: "person" }], []),
          livesIn("Rome", "a traveller", "2024-05-01T00:00:00Z")
        ]
      },
      Effect.gen(function*() {
        const deps = yield* readDeps
        yield* remember("Alice Smith lives in Berlin.", { dataset: "notes", session_id: "s1" })
        yield* remember("Bob.", { dataset: "notes", session_id: "s2" })
        const listed = yield* runListDatasets(deps, "alice")
        expect(listed.datasets).toEqual([
          expect.objectContaining({ name: "notes", artifacts: 2, entities: 3, edges: 1, live_edges: 1 })
        ])
        expect((yield* runListDatasets(deps, "bob")).datasets).toEqual([])

        const sessions = yield* runListSessions(deps, { user_id: "alice", dataset: "notes" })
        expect(sessions.sessions).toEqual([
          expect.objectContaining({
            session_id: "s1",
            artifacts: 1,
            entities: 2,
            edges: 1,
            first_at: expect.any(String)
          }),
          expect.objectContaining({ session_id: "s2", artifacts: 1, entities: 1, edges: 0 })
        ])
        // bob has stored nothing in "notes": no sessions, not an error
        expect(yield* runListSessions(deps, { user_id: "bob", dataset: "notes" })).toEqual({
          dataset: "notes",
          sessions: []
        })

        const oldId = listed.datasets[0]!.id
        // another user cannot delete it
        expect(yield* Effect.flip(runDeleteDataset(deps, { user_id: "bob", dataset: "notes" }))).toBeInstanceOf(
          NotFound
        )
        const deleted = yield* runDeleteDataset(deps, { user_id: "alice", dataset: "notes" })
        expect(deleted).toMatchObject({ dataset: "notes", id: oldId, deleted_at: expect.any(String) })
        expect((yield* runListDatasets(deps, "alice")).datasets).toEqual([])
        // a deleted dataset reads as one with nothing stored
        expect((yield* search("Berlin", { dataset: "notes" })).facts).toEqual([])
        expect(yield* Effect.flip(runDeleteDataset(deps, { user_id: "alice", dataset: "notes" }))).toBeInstanceOf(
          NotFound
        )

        // the name starts afresh; the old rows stay
        yield* remember("Alice Smith lives in Rome.", { dataset: "notes" })
        const fresh = (yield* runListDatasets(deps, "alice")).datasets
        expect(fresh).toHaveLength(1)
        expect(fresh[0]!.id).not.toBe(oldId)
        expect(fresh[0]).toMatchObject({ artifacts: 1, entities: 2, edges: 1 })
        const found = yield* search("Alice Berlin Rome", { dataset: "notes" })
        expect(found.facts.map((f) => f.target)).toEqual(["Rome"])
        const sql = yield* SqlClient.SqlClient
        const old = yield* sql<{ n: number }>`SELECT COUNT(*) AS n FROM gb_entities WHERE dataset_id = ${oldId}`.pipe(
          Effect.orDie
        )
        expect(Number(old[0]!.n)).toBe(3)
      })
    ))
})
