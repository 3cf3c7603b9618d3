/**
 * The SQL storage layer on both dialects: schema, repositories, cascades, run log, locks.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { type Context, Deferred, Effect, Fiber, Layer, Option, Ref } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeKeyedLock } from "../layers/sql/Database.js"
import { PgLive, SqliteLive } from "../layers/sql/index.js"
import type { InferenceInput } from "../src/domain/Rows.js"
import { Database } from "../src/services/Database.js"
import { DatasetsRepo } from "../src/services/DatasetsRepo.js"
import { type EntityUpsert, GraphRepo, type NewEdge } from "../src/services/GraphRepo.js"
import { InferencesRepo } from "../src/services/InferencesRepo.js"
import { RunLogRepo } from "../src/services/RunLogRepo.js"
import { forEachDialect, freshPgUrl, pgSkipReason } from "./support/databases.js"

/** a time `seconds` after a fixed origin, in the stored format */
const t = (seconds: number) => new Date(Date.UTC(2025, 0, 1) + seconds * 1000).toISOString()

const entity = (name: string, type: string, description = ""): EntityUpsert => ({
  name,
  name_key: name.toLowerCase().replace(/\s+/g, " ").trim(),
  type,
  description,
  model_id: null,
  created_at: t(0)
})

const edge = (datasetId: number, sourceId: number, targetId: number, relation: string, at: number): NewEdge => ({
  dataset_id: datasetId,
  source_id: sourceId,
  target_id: targetId,
  relation,
  description: `${relation} fact`,
  valid_at: t(at),
  invalid_at: null,
  created_at: t(at),
  expired_at: null,
  artifact_id: null,
  model_id: null
})

const inference = (overrides: Partial<InferenceInput> = {}): InferenceInput => ({
  type: "remember",
  stage: "extract_graph",
  provider: "anthropic",
  model: "claude-haiku-5-5",
  reasoning: "none",
  input_tokens: 100,
  output_tokens: 20,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  web_search_requests: 0,
  cost_usd: 0.0021,
  latency_ms: 12,
  started_at: t(1),
  error: null,
  run_id: null,
  dataset_id: null,
  ...overrides
})

const count = (table: string, where = "1=1") =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`).pipe(
        Effect.map((rows) => Number(rows[0]!.n)),
        Effect.orDie
      )
  )

const exec = (statement: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement).pipe(Effect.asVoid, Effect.orDie))

/** a dataset with a text artifact, for the graph tests */
const seedDataset = (name = "main") =>
  Effect.gen(function*() {
    const datasets = yield* DatasetsRepo
    const graph = yield* GraphRepo
    const dataset = yield* datasets.getOrCreate("u1", name, t(0))
    const artifact = yield* graph.insertArtifact({
      dataset_id: dataset.id,
      kind: "knowledge",
      text: "Alice lives in Berlin.",
      parent_id: null,
      session_id: "s1",
      valid_at: t(0),
      created_at: t(0),
      inference_id: null,
      query: null,
      metadata: { source: "test" }
    })
    return { dataset, artifact }
  })

/**
 * Runs `fibers` critical sections under `lock(i)` concurrently and returns the largest number
 * that were ever inside at once. Each section yields and does database round trips, so sections
 * that are not excluded do overlap.
 */
const maxInside = (
  fibers: number,
  lock: (i: number) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
  roundTrip: Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const inside = yield* Ref.make(0)
    const max = yield* Ref.make(0)
    const section = Effect.gen(function*() {
      const now = yield* Ref.updateAndGet(inside, (n) => n + 1)
      yield* Ref.update(max, (m) => Math.max(m, now))
      for (let i = 0; i < 5; i++) {
        yield* Effect.yieldNow()
        yield* roundTrip
      }
      yield* Ref.update(inside, (n) => n - 1)
    })
    yield* Effect.forEach(Array.from({ length: fibers }, (_, i) => i), (i) => lock(i)(section), {
      concurrency: "unbounded",
      discard: true
    })
    return yield* Ref.get(max)
  })

/** the critical sections wait for each other: they only finish if they may all be inside at once */
const allInsideTogether = (
  fibers: number,
  lock: (i: number) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const arrived = yield* Ref.make(0)
    const everyone = yield* Deferred.make<void>()
    yield* Effect.forEach(
      Array.from({ length: fibers }, (_, i) => i),
      (i) =>
        lock(i)(
          Effect.gen(function*() {
            const n = yield* Ref.updateAndGet(arrived, (k) => k + 1)
            if (n === fibers) yield* Deferred.succeed(everyone, undefined)
            yield* Deferred.await(everyone)
          })
        ),
      { concurrency: "unbounded", discard: true }
    )
    return yield* Ref.get(arrived)
  })

describe("SqliteLive on a file", () => {
  it.effect("creates the directory, and the connection has WAL, synchronous NORMAL, foreign keys, busy_timeout and sqlite-vec", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "gligabao-sqlite-test-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const filename = join(dir, "nested", "deeper", "gligabao.db")
      const pragmas = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const one = <A extends object>(statement: string) => Effect.map(sql.unsafe<A>(statement), (rows) => rows[0]!)
        return {
          journal: yield* one<{ journal_mode: string }>("PRAGMA journal_mode"),
          synchronous: yield* one<{ synchronous: number }>("PRAGMA synchronous"),
          foreignKeys: yield* one<{ foreign_keys: number }>("PRAGMA foreign_keys"),
          busy: yield* one<{ timeout: number }>("PRAGMA busy_timeout"),
          vec: yield* one<{ v: string }>("SELECT vec_version() AS v")
        }
      }).pipe(Effect.provide(SqliteLive(filename)))
      expect(pragmas).toEqual({
        journal: { journal_mode: "wal" },
        // 1 = NORMAL
        synchronous: { synchronous: 1 },
        foreignKeys: { foreign_keys: 1 },
        busy: { timeout: 5000 },
        vec: { v: "v0.1.9" }
      })
      expect(existsSync(filename)).toBe(true)
    }).pipe(Effect.scoped))

  it.effect("maps the file only when asked (database.mmap_size)", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "gligabao-sqlite-test-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const mmap = (options?: { mmapBytes: number }) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ mmap_size: number }>("PRAGMA mmap_size")).pipe(
          Effect.map((rows) => rows[0]!.mmap_size),
          Effect.provide(SqliteLive(join(dir, "g.db"), options))
        )
      expect(yield* mmap()).toBe(0)
      expect(yield* mmap({ mmapBytes: 0 })).toBe(0)
      expect(yield* mmap({ mmapBytes: 268435456 })).toBe(268435456)
    }).pipe(Effect.scoped))
})

describe("makeKeyedLock", () => {
  it.effect("forgets a key once nobody holds or awaits it", () =>
    Effect.gen(function*() {
      const lock = makeKeyedLock()
      const gate = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(lock.withLock("k")(Deferred.await(gate)))
      yield* Effect.yieldNow()
      expect(lock.size()).toBe(1)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      expect(lock.size()).toBe(0)
      yield* Effect.exit(lock.withLock("k")(Effect.fail("boom")))
      expect(lock.size()).toBe(0)
    }))
})

forEachDialect((dialect, makeLayer) => {
  const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof makeLayer>>>) =>
    effect.pipe(Effect.provide(makeLayer()))

  it.effect("migrations create the whole gb_ schema", () =>
    run(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql.onDialectOrElse({
          pg: () =>
            sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
              WHERE table_schema = 'public' AND table_name LIKE 'gb_%'`,
          orElse: () => sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'gb_%'`
        })
        const tables = rows.map((r) => r.name)
        for (
          const table of [
            "gb_datasets",
            "gb_models",
            "gb_remember_runs",
            "gb_remember_run_stages",
            "gb_instances",
            "gb_inferences",
            "gb_artifacts",
            "gb_entities",
            "gb_edges",
            "gb_entity_artifacts",
            "gb_edge_artifacts",
            "gb_entity_sessions",
            "gb_edge_sessions",
            "gb_image_artifacts",
            "gb_image_extractions",
            "gb_image_text_blocks",
            "gb_entity_geo",
            "gb_series",
            "gb_series_points",
            "gb_series_anchors",
            "gb_vector_outbox"
          ]
        ) {
          expect(tables).toContain(table)
        }
        expect((yield* Database).dialect).toBe(dialect)
      })
    ))

  it.effect("datasets: get-or-create is idempotent, soft delete frees the name, list counts", () =>
    run(
      Effect.gen(function*() {
        const datasets = yield* DatasetsRepo
        const graph = yield* GraphRepo
        const first = yield* datasets.getOrCreate("u1", "main", t(0))
        const again = yield* datasets.getOrCreate("u1", "main", t(5))
        expect(again).toEqual(first)
        expect(typeof first.id).toBe("number")
        expect(first.created_at).toBe(t(0))
        const other = yield* datasets.getOrCreate("u2", "main", t(0))
        expect(other.id).not.toBe(first.id)

        const [alice, berlin] = yield* graph.upsertEntities(first.id, [
          entity("Alice", "person"),
          entity("Berlin", "place")
        ])
        yield* graph.insertEdges([edge(first.id, alice!.id, berlin!.id, "lives_in", 1)])
        const listed = yield* datasets.list("u1")
        expect(listed).toEqual([
          { ...first, artifacts: 0, entities: 2, edges: 1, live_edges: 1 }
        ])

        expect(yield* datasets.softDelete("u1", "main", t(10))).toBe(true)
        expect(yield* datasets.softDelete("u1", "main", t(11))).toBe(false)
        expect(Option.isNone(yield* datasets.find("u1", "main"))).toBe(true)
        expect(yield* datasets.list("u1")).toEqual([])
        const fresh = yield* datasets.getOrCreate("u1", "main", t(20))
        expect(fresh.id).not.toBe(first.id)
        expect(Option.getOrThrow(yield* datasets.find("u1", "main")).id).toBe(fresh.id)
        expect(yield* count("gb_datasets", `deleted_at = '${t(10)}'`)).toBe(1)
      })
    ))

  it.effect("artifacts round-trip with their JSON metadata", () =>
    run(
      Effect.gen(function*() {
        const graph = yield* GraphRepo
        const { artifact, dataset } = yield* seedDataset()
        expect(artifact).toMatchObject({
          dataset_id: dataset.id,
          kind: "knowledge",
          session_id: "s1",
          metadata: { source: "test" }
        })
        expect(Option.getOrThrow(yield* graph.getArtifact(artifact.id))).toEqual(artifact)
        expect(Option.isNone(yield* graph.getArtifact(artifact.id + 1000))).toBe(true)
      })
    ))

  it.effect("entities: upsert dedups on (name_key, type), keeps a description unless given a new one, keeps input order", () =>
    run(
      Effect.gen(function*() {
        const graph = yield* GraphRepo
        const { dataset } = yield* seedDataset()
        const first = yield* graph.upsertEntities(dataset.id, [
          entity("Berlin", "place", "capital of Germany"),
          entity("Alice", "person", "an engineer"),
          entity("Alice", "company")
        ])
        expect(first.map((e) => [e.name, e.type, e.description])).toEqual([
          ["Berlin", "place", "capital of Germany"],
          ["Alice", "person", "an engineer"],
          ["Alice", "company", ""]
        ])
        const second = yield* graph.upsertEntities(dataset.id, [
          entity("alice", "person"),
          entity("New Entity", "concept", "new"),
          entity("BERLIN", "place", "a city"),
          entity("Berlin", "place")
        ])
        expect(second.map((e) => e.id)).toEqual([first[1]!.id, second[1]!.id, first[0]!.id, first[0]!.id])
        expect(second[0]).toEqual(first[1]) // empty description: unchanged, first spelling kept
        expect(second[2]!.description).toBe("a city")
        expect(second[2]!.name).toBe("Berlin")
        expect(yield* count("gb_entities")).toBe(4)
        const found = yield* graph.findEntitiesByNameKeys(dataset.id, ["alice", "nobody"])
        expect(found.map((e) => e.type).sort()).toEqual(["company", "person"])
        expect(yield* graph.upsertEntities(dataset.id, [])).toEqual([])
      })
    ))

  it.effect("edges: insert returns input order, close only touches live edges, get carries names", () =>
    run(
      Effect.gen(function*() {
        const graph = yield* GraphRepo
        const { artifact, dataset } = yield* seedDataset()
        const [alice, berlin, paris] = yield* graph.upsertEntities(dataset.id, [
          entity("Alice", "person"),
          entity("Berlin", "place"),
          entity("Paris", "place")
        ])
        const inserted = yield* graph.insertEdges([
          { ...edge(dataset.id, alice!.id, paris!.id, "lives_in", 2), artifact_id: artifact.id },
          edge(dataset.id, alice!.id, berlin!.id, "lives_in", 1)
        ])
        expect(inserted.map((e) => e.target_id)).toEqual([paris!.id, berlin!.id])
        expect(inserted[0]!.artifact_id).toBe(artifact.id)
        yield* graph.closeEdges([{ id: inserted[1]!.id, invalid_at: t(2), expired_at: t(3) }])
        yield* graph.closeEdges([{ id: inserted[1]!.id, invalid_at: t(8), expired_at: t(9) }])
        const got = yield* graph.getEdges([inserted[1]!.id, inserted[0]!.id, 99999])
        expect(got.map((e) => e.id)).toEqual([inserted[1]!.id, inserted[0]!.id])
        expect(got[0]).toMatchObject({
          source_name: "Alice",
          target_name: "Berlin",
          invalid_at: t(2),
          expired_at: t(3)
        })
        expect(got[1]).toMatchObject({ source_name: "Alice", target_name: "Paris", invalid_at: null, expired_at: null })
      })
    ))

  it.effect("candidates: live edges of the dataset touching the entities, newest first, capped", () =>
    run(
      Effect.gen(function*() {
        const graph = yield* GraphRepo
        const datasets = yield* DatasetsRepo
        const { dataset } = yield* seedDataset()
        const elsewhere = yield* datasets.getOrCreate("u1", "other", t(0))
        const [alice, berlin, paris, bob, carol] = yield* graph.upsertEntities(dataset.id, [
          entity("Alice", "person"),
          entity("Berlin", "place"),
          entity("Paris", "place"),
          entity("Bob", "person"),
          entity("Carol", "person")
        ])
        const [otherAlice, otherRome] = yield* graph.upsertEntities(elsewhere.id, [
          entity("Alice", "person"),
          entity("Rome", "place")
        ])
        const [livesBerlin, livesParis, bobKnowsAlice, bobLikesParis, carolKnowsBob] = yield* graph.insertEdges([
          edge(dataset.id, alice!.id, berlin!.id, "lives_in", 1),
          edge(dataset.id, alice!.id, paris!.id, "lives_in", 2),
          edge(dataset.id, bob!.id, alice!.id, "knows", 3),
          edge(dataset.id, bob!.id, paris!.id, "likes", 4),
          edge(dataset.id, carol!.id, bob!.id, "knows", 5),
          edge(elsewhere.id, otherAlice!.id, otherRome!.id, "lives_in", 6)
        ])
        yield* graph.closeEdges([{ id: livesParis!.id, invalid_at: t(3), expired_at: t(3) }])

        const byName = yield* graph.loadCandidateEdgesByNameKeys(dataset.id, ["alice"], 50)
        expect(byName.map((e) => e.id)).toEqual([bobKnowsAlice!.id, livesBerlin!.id])
        expect(byName[0]).toMatchObject({ source_name: "Bob", target_name: "Alice" })

        const capped = yield* graph.loadCandidateEdgesByNameKeys(dataset.id, ["alice", "paris"], 2)
        expect(capped.map((e) => e.id)).toEqual([bobLikesParis!.id, bobKnowsAlice!.id])

        const byIds = yield* graph.loadCandidateEdgesByEntityIds(dataset.id, [bob!.id], 50)
        expect(byIds.map((e) => e.id)).toEqual([carolKnowsBob!.id, bobLikesParis!.id, bobKnowsAlice!.id])
        // another dataset's entity id finds nothing here
        expect(yield* graph.loadCandidateEdgesByEntityIds(dataset.id, [otherAlice!.id], 50)).toEqual([])
        expect(yield* graph.loadCandidateEdgesByNameKeys(dataset.id, [], 50)).toEqual([])

        // more keys than one statement takes: chunked, merged, still newest first and capped
        const many = [...Array.from({ length: 1200 }, (_, i) => `nobody ${i}`), "carol", "alice"]
        const merged = yield* graph.loadCandidateEdgesByNameKeys(dataset.id, many, 2)
        expect(merged.map((e) => e.id)).toEqual([carolKnowsBob!.id, bobKnowsAlice!.id])
      })
    ))

  it.effect("links are idempotent", () =>
    run(
      Effect.gen(function*() {
        const graph = yield* GraphRepo
        const { artifact, dataset } = yield* seedDataset()
        const [alice, berlin] = yield* graph.upsertEntities(dataset.id, [
          entity("Alice", "person"),
          entity("Berlin", "place")
        ])
        const [lives] = yield* graph.insertEdges([edge(dataset.id, alice!.id, berlin!.id, "lives_in", 1)])
        for (let i = 0; i < 2; i++) {
          yield* graph.linkEntityArtifacts(artifact.id, [alice!.id, berlin!.id, alice!.id])
          yield* graph.linkEdgeArtifacts(artifact.id, [lives!.id])
          yield* graph.linkEntitySessions("s1", [alice!.id, berlin!.id])
          yield* graph.linkEdgeSessions("s1", [lives!.id, lives!.id])
        }
        yield* graph.linkEntityArtifacts(artifact.id, [])
        expect(yield* count("gb_entity_artifacts")).toBe(2)
        expect(yield* count("gb_edge_artifacts")).toBe(1)
        expect(yield* count("gb_entity_sessions")).toBe(2)
        expect(yield* count("gb_edge_sessions")).toBe(1)
      })
    ))

  it.effect("cascades: an entity takes its edges and links; an artifact nulls edges and drops only its artifact links", () =>
    run(
      Effect.gen(function*() {
        const graph = yield* GraphRepo
        const { artifact, dataset } = yield* seedDataset()
        const [alice, berlin, bob] = yield* graph.upsertEntities(dataset.id, [
          entity("Alice", "person"),
          entity("Berlin", "place"),
          entity("Bob", "person")
        ])
        const [lives, knows] = yield* graph.insertEdges([
          { ...edge(dataset.id, alice!.id, berlin!.id, "lives_in", 1), artifact_id: artifact.id },
          { ...edge(dataset.id, bob!.id, berlin!.id, "visited", 2), artifact_id: artifact.id }
        ])
        yield* graph.linkEntityArtifacts(artifact.id, [alice!.id, berlin!.id, bob!.id])
        yield* graph.linkEdgeArtifacts(artifact.id, [lives!.id, knows!.id])
        yield* graph.linkEntitySessions("s1", [alice!.id, berlin!.id, bob!.id])
        yield* graph.linkEdgeSessions("s1", [lives!.id, knows!.id])

        yield* exec(`DELETE FROM gb_entities WHERE id = ${alice!.id}`)
        expect(yield* graph.getEdges([lives!.id, knows!.id])).toHaveLength(1)
        expect(yield* count("gb_entity_artifacts", `entity_id = ${alice!.id}`)).toBe(0)
        expect(yield* count("gb_entity_sessions", `entity_id = ${alice!.id}`)).toBe(0)
        expect(yield* count("gb_edge_artifacts", `edge_id = ${lives!.id}`)).toBe(0)
        expect(yield* count("gb_edge_sessions", `edge_id = ${lives!.id}`)).toBe(0)

        yield* exec(`DELETE FROM gb_artifacts WHERE id = ${artifact.id}`)
        const [kept] = yield* graph.getEdges([knows!.id])
        expect(kept!.artifact_id).toBeNull()
        expect(yield* count("gb_entity_artifacts")).toBe(0)
        expect(yield* count("gb_edge_artifacts")).toBe(0)
        expect(yield* count("gb_entity_sessions")).toBe(2)
        expect(yield* count("gb_edge_sessions")).toBe(1)
      })
    ))

  it.effect("inferences: recording registers the model once", () =>
    run(
      Effect.gen(function*() {
        const inferences = yield* InferencesRepo
        const runLog = yield* RunLogRepo
        const created = yield* runLog.create({
          pipeline: "text",
          user_id: "u1",
          dataset: "main",
          params: {},
          queued_at: t(0),
          instance_id: "i1"
        })
        const a = yield* inferences.record(inference({ run_id: created.id }))
        const b = yield* inferences.record(inference({ run_id: created.id, stage: "resolve_edges", cost_usd: 0.5 }))
        yield* inferences.record(inference({ model: "gpt-5-mini", provider: "openai" }))
        expect(a.model_id).not.toBeNull()
        expect(b.model_id).toBe(a.model_id)
        expect(yield* count("gb_models")).toBe(2)
        const model = yield* inferences.registerModel("anthropic", "claude-haiku-5-5", t(9))
        expect(model).toEqual({ id: a.model_id, provider: "anthropic", name: "claude-haiku-5-5", created_at: t(1) })
        expect(a).toEqual({
          ...inference({ run_id: created.id }),
          id: a.id,
          model_id: a.model_id,
          structured_mode: null
        })
        const structured = yield* inferences.record(inference({ run_id: created.id, structured_mode: "json_schema" }))
        expect(structured.structured_mode).toBe("json_schema")
        expect(yield* inferences.listByRun(created.id)).toEqual([a, b, structured])
      })
    ))

  it.effect("run log: create, stages, inferences, progress, finish, get, list, counts", () =>
    run(
      Effect.gen(function*() {
        const runLog = yield* RunLogRepo
        const newRun = (user: string, dataset: string, at: number) =>
          runLog.create({
            pipeline: "text",
            user_id: user,
            dataset,
            params: { kind: "knowledge", text_length: 12 },
            queued_at: t(at),
            instance_id: "i1"
          })
        const first = yield* newRun("u1", "main", 1)
        expect(first).toMatchObject({
          status: "started",
          started_at: null,
          params: { kind: "knowledge", text_length: 12 }
        })
        expect(Option.getOrThrow(yield* runLog.get(first.id)).stages).toEqual([])

        yield* runLog.markStarted(first.id, t(2))
        yield* runLog.stageStarted(first.id, "store", t(4))
        yield* runLog.stageStarted(first.id, "extract_graph", t(2))
        yield* runLog.addInference(first.id, "extract_graph", 7)
        yield* runLog.addInference(first.id, "extract_graph", 8)
        yield* runLog.setProgress(first.id, "extract_graph", { chunks_done: 1, chunks_total: 2 })
        yield* runLog.stageFinished(first.id, "extract_graph", {
          status: "succeeded",
          finished_at: t(3),
          duration_ms: 1000,
          error: null,
          detail: { note: "x" }
        })
        yield* runLog.stageFinished(first.id, "store", {
          status: "failed",
          finished_at: t(5),
          duration_ms: 1000,
          error: "boom"
        })
        yield* runLog.finish(first.id, {
          status: "failed",
          error: "boom",
          dataset_id: null,
          artifact_id: null,
          finished_at: t(5),
          duration_ms: 4000
        })
        const got = Option.getOrThrow(yield* runLog.get(first.id))
        expect(got).toMatchObject({
          status: "failed",
          error: "boom",
          started_at: t(2),
          finished_at: t(5),
          duration_ms: 4000
        })
        expect(got.stages).toEqual([
          {
            stage: "extract_graph",
            status: "succeeded",
            started_at: t(2),
            finished_at: t(3),
            duration_ms: 1000,
            error: null,
            inference_ids: [7, 8],
            progress: { chunks_done: 1, chunks_total: 2 },
            detail: { note: "x" }
          },
          {
            stage: "store",
            status: "failed",
            started_at: t(4),
            finished_at: t(5),
            duration_ms: 1000,
            error: "boom",
            inference_ids: [],
            progress: null,
            detail: null
          }
        ])

        // concurrent chunks append to one stage without losing ids
        yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => i), (i) =>
          runLog.addInference(first.id, "summarize_chunk", i), {
          concurrency: "unbounded"
        })
        const summarized = Option.getOrThrow(yield* runLog.get(first.id)).stages.find((s) =>
          s.stage === "summarize_chunk"
        )!
        expect([...summarized.inference_ids].sort((a, b) =>
          a - b
        )).toEqual(Array.from({ length: 20 }, (_, i) => i))

        const second = yield* newRun("u1", "other", 2)
        const third = yield* newRun("u2", "main", 3)
        yield* runLog.finish(third.id, {
          status: "succeeded",
          error: null,
          dataset_id: null,
          artifact_id: null,
          finished_at: t(4),
          duration_ms: 1
        })
        const all = yield* runLog.list({ limit: 2, offset: 0 })
        expect(all.total).toBe(3)
        expect(all.runs.map((r) => r.id)).toEqual([third.id, second.id])
        expect((yield* runLog.list({ limit: 10, offset: 2 })).runs.map((r) => r.id)).toEqual([first.id])
        expect((yield* runLog.list({ limit: 10, offset: 0 })).runs.find((r) => r.id === first.id)!.stages).toHaveLength(
          3
        )
        const filtered = yield* runLog.list({ status: "started", user_id: "u1", limit: 10, offset: 0 })
        expect(filtered).toMatchObject({ total: 1, runs: [{ id: second.id }] })
        expect((yield* runLog.list({ dataset: "main", limit: 10, offset: 0 })).total).toBe(2)
        expect(yield* runLog.counts()).toEqual({
          total: 3,
          queued: 0,
          started: 1,
          succeeded: 1,
          failed: 1,
          cancelled: 0
        })
        expect(Option.isNone(yield* runLog.get(99999))).toBe(true)
      })
    ))

  it.effect("run log: a stage end is held until the run's next write, which writes it with that write", () =>
    run(
      Effect.gen(function*() {
        const runLog = yield* RunLogRepo
        const sql = yield* SqlClient.SqlClient
        const stored = (runId: number) =>
          sql<
            { stage: string; status: string; inference_ids: string; detail: string | null }
          >`SELECT stage, status, inference_ids, detail
            FROM gb_remember_run_stages WHERE run_id = ${runId} ORDER BY stage`
        const run1 = yield* runLog.create({
          pipeline: "text",
          user_id: "u",
          dataset: "held",
          params: {},
          queued_at: t(0),
          instance_id: "i"
        })
        yield* runLog.stageStarted(run1.id, "extract_graph", t(1))
        yield* runLog.addInference(run1.id, "extract_graph", 41)
        yield* runLog.stageFinished(run1.id, "extract_graph", {
          status: "succeeded",
          finished_at: t(2),
          duration_ms: 1000,
          error: null,
          detail: { n: 1 }
        })
        // in the table the running stage is there at once; its end is not yet
        expect(yield* stored(run1.id)).toEqual([{
          stage: "extract_graph",
          status: "started",
          inference_ids: "[]",
          detail: null
        }])
        // the next start writes both
        yield* runLog.stageStarted(run1.id, "load_candidates", t(2))
        expect(yield* stored(run1.id)).toEqual([
          { stage: "extract_graph", status: "succeeded", inference_ids: "[41]", detail: "{\"n\":1}" },
          { stage: "load_candidates", status: "started", inference_ids: "[]", detail: null }
        ])
        // a stage that runs again keeps its first start, its ids and its detail; reads show what is held
        yield* runLog.stageFinished(run1.id, "load_candidates", {
          status: "succeeded",
          finished_at: t(3),
          duration_ms: 1000,
          error: null,
          detail: null
        })
        yield* runLog.stageStarted(run1.id, "extract_graph", t(3))
        yield* runLog.addInference(run1.id, "extract_graph", 42)
        yield* runLog.stageFinished(run1.id, "extract_graph", {
          status: "failed",
          finished_at: t(4),
          duration_ms: 3000,
          error: "boom",
          detail: null
        })
        const read = Option.getOrThrow(yield* runLog.get(run1.id)).stages
        expect(read.map((s) => [s.stage, s.status, s.started_at, s.finished_at, s.error, s.inference_ids])).toEqual([
          ["extract_graph", "failed", t(1), t(4), "boom", [41, 42]],
          ["load_candidates", "succeeded", t(2), t(3), null, []]
        ])
        // held ids alone (no status) leave the stage's status alone
        yield* runLog.addInference(run1.id, "load_candidates", 43)
        yield* runLog.finish(run1.id, {
          status: "failed",
          error: "boom",
          dataset_id: null,
          artifact_id: null,
          finished_at: t(5),
          duration_ms: 5000
        })
        expect((yield* stored(run1.id)).find((s) => s.stage === "load_candidates")).toEqual({
          stage: "load_candidates",
          status: "succeeded",
          inference_ids: "[43]",
          detail: null
        })
      })
    ))

  it.effect("run log: failOrphaned fails the runs of dead processes only; failQueued only queued runs", () =>
    run(
      Effect.gen(function*() {
        const runLog = yield* RunLogRepo
        const newRun = (instance: string) =>
          runLog.create({
            pipeline: "text",
            user_id: "u",
            dataset: "d",
            params: {},
            queued_at: t(0),
            instance_id: instance
          })
        yield* runLog.heartbeat("me", t(10))
        yield* runLog.heartbeat("alive", t(5))
        yield* runLog.heartbeat("alive", t(95))
        yield* runLog.heartbeat("dead", t(10))
        const mine = yield* newRun("me")
        const alive = yield* newRun("alive")
        const dead = yield* newRun("dead")
        const unknown = yield* newRun("never-beat")
        const deadDone = yield* newRun("dead")
        yield* runLog.markStarted(dead.id, t(1))
        yield* runLog.stageStarted(dead.id, "extract_graph", t(1))
        yield* runLog.finish(deadDone.id, {
          status: "succeeded",
          error: null,
          dataset_id: null,
          artifact_id: null,
          finished_at: t(2),
          duration_ms: 1
        })

        expect(yield* runLog.failOrphaned("me", t(60), "interrupted", t(100))).toBe(2)
        const status = (id: number) => runLog.get(id).pipe(Effect.map(Option.getOrThrow))
        expect(yield* status(dead.id)).toMatchObject({ status: "failed", error: "interrupted", finished_at: t(100) })
        expect((yield* status(dead.id)).stages[0]).toMatchObject({ status: "failed", error: "interrupted" })
        expect(yield* status(unknown.id)).toMatchObject({ status: "failed", error: "interrupted" })
        expect((yield* status(mine.id)).status).toBe("started")
        expect((yield* status(alive.id)).status).toBe("started")
        expect((yield* status(deadDone.id)).status).toBe("succeeded")

        yield* runLog.markStarted(mine.id, t(101))
        yield* runLog.failQueued([mine.id, alive.id], "shutting down", t(102))
        expect(yield* status(mine.id)).toMatchObject({ status: "started", error: null })
        expect(yield* status(alive.id)).toMatchObject({ status: "failed", error: "shutting down" })
      })
    ))

  it.live("withLock serializes one key and not different keys", () =>
    run(
      Effect.gen(function*() {
        const db = yield* Database
        const sql = yield* SqlClient.SqlClient
        const roundTrip = sql`SELECT 1`.pipe(Effect.asVoid, Effect.orDie)
        expect(yield* maxInside(4, () => db.withLock("u1/main"), roundTrip)).toBe(1)
        expect(yield* allInsideTogether(4, (i) => db.withLock(`u1/dataset-${i}`))).toBe(4)
        // a failed holder releases the key
        yield* Effect.exit(db.withLock("u1/main")(Effect.fail("boom")))
        expect(yield* db.withLock("u1/main")(Effect.succeed("free"))).toBe("free")
      })
    ))

  it.effect("withTransaction rolls back on failure", () =>
    run(
      Effect.gen(function*() {
        const db = yield* Database
        const datasets = yield* DatasetsRepo
        const exit = yield* Effect.exit(
          db.withTransaction(Effect.zipRight(datasets.getOrCreate("u1", "main", t(0)), Effect.fail("nope")))
        )
        expect(exit._tag).toBe("Failure")
        expect(yield* count("gb_datasets")).toBe(0)
        yield* db.withTransaction(datasets.getOrCreate("u1", "main", t(0)))
        expect(yield* count("gb_datasets")).toBe(1)
      })
    ))
})

describe.skipIf(pgSkipReason() !== null)("pg: the lock across processes", () => {
  /** two independent storage stacks (pools, in-process locks) on one database: two processes */
  const twoProcesses = <A, E>(
    body: (
      a: Context.Tag.Service<Database>,
      b: Context.Tag.Service<Database>,
      roundTrip: Effect.Effect<void>
    ) => Effect.Effect<A, E>
  ) =>
    Effect.gen(function*() {
      const url = yield* freshPgUrl
      const [a, b] = yield* Effect.all([Layer.build(PgLive(url)), Layer.build(PgLive(url))], { concurrency: 2 })
      const sql = yield* SqlClient.SqlClient.pipe(Effect.provide(Layer.succeedContext(a)))
      return yield* body(
        yield* Database.pipe(Effect.provide(Layer.succeedContext(a))),
        yield* Database.pipe(Effect.provide(Layer.succeedContext(b))),
        sql`SELECT pg_sleep(0.01)`.pipe(Effect.asVoid, Effect.orDie)
      )
    }).pipe(Effect.scoped, Effect.orDie)

  it.live("serializes one key across processes and not different keys", () =>
    twoProcesses((a, b, roundTrip) =>
      Effect.gen(function*() {
        expect(yield* maxInside(4, (i) => (i % 2 === 0 ? a : b).withLock("u1/main"), roundTrip)).toBe(1)
        expect(yield* allInsideTogether(2, (i) => (i === 0 ? a : b).withLock(`u1/dataset-${i}`))).toBe(2)
      })
    ))

  it.live("releases the advisory lock on failure and on interruption", () =>
    twoProcesses((a, b) =>
      Effect.gen(function*() {
        yield* Effect.exit(a.withLock("k")(Effect.fail("boom")))
        expect(yield* b.withLock("k")(Effect.succeed(1))).toBe(1)
        const holding = yield* Deferred.make<void>()
        const holder = yield* Effect.fork(
          a.withLock("k")(Effect.zipRight(Deferred.succeed(holding, undefined), Effect.never))
        )
        yield* Deferred.await(holding)
        const waiter = yield* Effect.fork(b.withLock("k")(Effect.succeed(2)))
        yield* Fiber.interrupt(holder)
        expect(yield* Fiber.join(waiter)).toBe(2)
      })
    ))

  it.live("a waiter stays interruptible and leaves nothing held", () =>
    twoProcesses((a, b) =>
      Effect.gen(function*() {
        const holding = yield* Deferred.make<void>()
        const done = yield* Deferred.make<void>()
        const holder = yield* Effect.fork(
          a.withLock("k")(Effect.zipRight(Deferred.succeed(holding, undefined), Deferred.await(done)))
        )
        yield* Deferred.await(holding)
        const waiter = yield* Effect.fork(b.withLock("k")(Effect.succeed("never")))
        yield* Fiber.interrupt(waiter)
        yield* Deferred.succeed(done, undefined)
        yield* Fiber.join(holder)
        expect(yield* b.withLock("k")(a.withLock("other")(Effect.succeed("free")))).toBe("free")
        expect(yield* a.withLock("k")(Effect.succeed("free"))).toBe("free")
      })
    ))
})
