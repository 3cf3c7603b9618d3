/**
 * `DELETE /v1/gb/users/{user_id}` and `DELETE /v1/gb/datasets/{name}?hard=true` (docs/FORGET.md)
 * over HTTP, on both databases: the removal is complete (every table of the schema is counted
 * for the user's rows: none is left, and nobody else's row went), model calls stay with their
 * references cleared and their error text scrubbed, vectors and image files go; a queued run of
 * the user, or one working ahead, stores nothing; a running one finishes first; validation and
 * scoping (another user's token 403, an admin's allowed, 404 for nothing); the library functions.
 */
import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, Redacted, Stream } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect } from "vitest"
import { LocalImageStoreLive } from "../../layers/files/LocalImageStore.js"
import { SCRUBBED_ERROR } from "../../layers/sql/repositories/Erase.js"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { HashEmbeddingsLive } from "../../layers/testing/HashEmbeddings.js"
import { type ScriptedAnswer, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { MemoryVectorStore, MemoryVectorStoreLive } from "../../layers/vectors/MemoryVectorStore.js"
import { Authentication } from "../../src/auth/Authentication.js"
import { tokenTable } from "../../src/auth/tokens.js"
import type { AuthToken } from "../../src/config/tables.js"
import { VectorWriteFailed } from "../../src/domain/Errors.js"
import { exportMemory, forgetUserMemory, hardDeleteDatasetMemory } from "../../src/operations.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import { drainOutbox } from "../../src/pipeline/vectors.js"
import { Database } from "../../src/services/Database.js"
import type { Embeddings } from "../../src/services/Embeddings.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { VectorOutbox } from "../../src/services/VectorOutbox.js"
import { VectorStore } from "../../src/services/VectorStore.js"
import { rememberLayer, type RememberLayerOptions, textRequest } from "../support/app.js"
import { type Dialect, forEachDialect, sqliteLayer, type StorageLayer } from "../support/databases.js"
import { expectError, postJson, send, serveTest } from "../support/http.js"
import { b64, png } from "../support/images.js"

const FAIL = "Zed Quux knows Mallory Black."

const script = (r: LlmRequest): ScriptedAnswer => {
  if (r.stage === "extract_image") {
    return ScriptedLlm.json({ theme: "Photo", title: "A red square", text_blocks: [{ kind: "caption", text: "red" }] })
  }
  // a failed model call keeps its error text in gb_inferences: the forget scrubs it
  if (r.stage === "extract_graph" && JSON.stringify(r.messages).includes("Mallory")) {
    return { fail: { message: "the model answered about Mallory Black: unusable" } }
  }
  return { text: answer(r).text }
}

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** An app on `storage` with embeddings, vectors in memory and images in a directory of the test's. */
const withApp = <A, E>(
  storage: StorageLayer,
  program: (images: string) => Effect.Effect<A, E, any>,
  options: RememberLayerOptions & { readonly auth?: ReadonlyArray<AuthToken> } = {}
) => {
  const images = mkdtempSync(join(tmpdir(), "gligabao-erase-images-"))
  dirs.push(images)
  const vectors = options.vectors ?? MemoryVectorStoreLive({ dimensions: 32 })
  const embeddings = HashEmbeddingsLive({ dimensions: 32 }) as unknown as Layer.Layer<Embeddings>
  const services = rememberLayer(storage, script, {
    embeddings,
    vectors,
    images: LocalImageStoreLive(images),
    settings: { chunkSize: 80, chunkOverlapPercent: 20 },
    ...options
  })
  const withAuth = options.auth === undefined
    ? services
    : Layer.merge(services, Layer.succeed(Authentication, tokenTable(options.auth)))
  const layer = Layer.merge(withAuth, vectors)
  return program(images).pipe(Effect.provide(serveTest(layer) as Layer.Layer<any, any, never>)) as Effect.Effect<
    A,
    E,
    never
  >
}

const remember = (user: string, text: string, extra: Record<string, unknown> = {}) =>
  Effect.map(postJson("/v1/gb/remember", { user_id: user, text, ...extra }), (res) => {
    expect(res.status, res.text).toBe(200)
    return res.json
  })

const del = (path: string, token?: string) =>
  send(
    token === undefined ? HttpClientRequest.del(path) : HttpClientRequest.del(path).pipe(
      HttpClientRequest.bearerToken(token)
    )
  )

const rows = <A extends object = any>(query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(query)).pipe(Effect.orDie)

const count = (query: string) => Effect.map(rows<{ n: number }>(query), (r) => Number(r[0]!.n))

// a chunked document (chunk_size 80): a parent, chunks and their summaries
const DOCUMENT = [1, 2, 3, 4].map((k) =>
  `Alice Novak visited Porto${k} in 202${k}. This paragraph talks at some length about the harbour, the ships ` +
  `that came and went, and the people who watched them from the quay in the evening light, record ${k}.`
).join("\n\n")

/** Alice's memory in three datasets (one name also soft-deleted once), and Bob's. */
const world = Effect.gen(function*() {
  yield* remember("alice", "Alice Novak lives in Berlin in 2020.", { session_id: "s1" })
  yield* remember("alice", "Alice Novak lives in Lisbon in 2021.", { session_id: "s2" })
  const doc = yield* remember("alice", DOCUMENT)
  expect(doc.chunks?.length, JSON.stringify(doc)).toBeGreaterThan(1)
  const image = yield* postJson("/v1/gb/remember", { user_id: "alice", image: b64(png({ rgb: [200, 10, 10] })) })
  expect(image.status, image.text).toBe(200)
  yield* remember("alice", "Alice Novak works at Acme in 2019.", { dataset: "work" })
  expect((yield* del("/v1/gb/datasets/work?user_id=alice")).status).toBe(200)
  yield* remember("alice", "Alice Novak works at Initech in 2022.", { dataset: "work" })
  const keyed = yield* send(
    HttpClientRequest.post("/v1/gb/remember").pipe(
      HttpClientRequest.setHeader("idempotency-key", "alice-key-1"),
      HttpClientRequest.bodyUnsafeJson({ user_id: "alice", dataset: "notes", text: "Alice Novak knows Bruno Diaz." })
    )
  )
  expect(keyed.status, keyed.text).toBe(200)
  const failed = yield* postJson("/v1/gb/remember", { user_id: "alice", dataset: "notes", text: FAIL })
  expect(failed.status, failed.text).toBe(502)
  // Bob's, which stays
  yield* remember("bob", "Bruno Diaz lives in Paris in 2019.", { session_id: "s1" })
  const bobImage = yield* postJson("/v1/gb/remember", { user_id: "bob", image: b64(png({ rgb: [10, 200, 10] })) })
  expect(bobImage.status, bobImage.text).toBe(200)
  return { imagePath: image.json.path as string, bobImagePath: bobImage.json.path as string }
})

const list = (ids: ReadonlyArray<number>) => (ids.length === 0 ? "(-1)" : `(${ids.join(", ")})`)
const idsOf = (query: string) => Effect.map(rows<{ id: number }>(query), (r) => r.map((x) => Number(x.id)))

/** The tables that hold nobody's data: the model registry and the process heartbeats. */
const NOT_USER_DATA = new Set(["gb_models", "gb_instances"])

/**
 * Every gb_ table of the database. SQLite's full-text index, a table a side shared by the
 * datasets, is counted by gb_fts_lengths (one row per indexed row) and gb_fts_stats; its FTS5
 * tables are left out (test/sql/noTrace.test.ts checks their terms go).
 */
const tablesOf = (dialect: Dialect) =>
  Effect.map(
    rows<{ name: string }>(
      dialect === "sqlite"
        ? `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'gb\\_%' ESCAPE '\\'`
        : `SELECT table_name AS name FROM information_schema.tables
          WHERE table_schema = 'public' AND table_name LIKE 'gb\\_%'`
    ),
    (r) =>
      r.map((x) => x.name).filter((name) =>
        !NOT_USER_DATA.has(name) && !/^gb_fts_(entities|edges)(_\d+)?(_data|_idx|_config)?$/.test(name)
      ).sort()
  )

/**
 * Which rows of each table are the user's, by the ids their datasets, runs and rows had before
 * the forget. A table of the schema missing here fails the test: every table is counted.
 */
const ownership = (user: string, datasets: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const names = datasets.map((n) => `'${n}'`).join(", ")
    const D = list(yield* idsOf(`SELECT id FROM gb_datasets WHERE user_id = '${user}' AND name IN (${names})`))
    const E = list(yield* idsOf(`SELECT id FROM gb_entities WHERE dataset_id IN ${D}`))
    const X = list(yield* idsOf(`SELECT id FROM gb_edges WHERE dataset_id IN ${D}`))
    const I = list(yield* idsOf(`SELECT id FROM gb_image_artifacts WHERE dataset_id IN ${D}`))
    const IX = list(yield* idsOf(`SELECT id FROM gb_image_extractions WHERE image_artifact_id IN ${I}`))
    const S = list(yield* idsOf(`SELECT id FROM gb_series WHERE dataset_id IN ${D}`))
    const R = list(yield* idsOf(`SELECT id FROM gb_remember_runs WHERE user_id = '${user}' AND dataset IN (${names})`))
    const where: Record<string, string> = {
      gb_datasets: `user_id = '${user}' AND name IN (${names})`,
      gb_artifacts: `dataset_id IN ${D}`,
      gb_artifact_metadata: `dataset_id IN ${D}`,
      gb_entities: `dataset_id IN ${D}`,
      gb_edges: `dataset_id IN ${D}`,
      gb_image_artifacts: `dataset_id IN ${D}`,
      gb_series: `dataset_id IN ${D}`,
      gb_vector_outbox: `dataset_id IN ${D}`,
      // PostgreSQL only (vector_store = "postgres"): rows by index name, `dataset-<id>-<kind>`
      gb_vectors: `CAST(split_part(index_name, '-', 2) AS INTEGER) IN ${D}`,
      gb_entity_artifacts: `entity_id IN ${E}`,
      gb_entity_sessions: `entity_id IN ${E}`,
      gb_entity_words: `entity_id IN ${E}`,
      gb_entity_geo: `entity_id IN ${E}`,
      gb_edge_artifacts: `edge_id IN ${X}`,
      gb_edge_sessions: `edge_id IN ${X}`,
      gb_edge_closures: `edge_id IN ${X} OR by_edge_id IN ${X}`,
      gb_image_extractions: `image_artifact_id IN ${I}`,
      gb_image_text_blocks: `extraction_id IN ${IX}`,
      gb_series_points: `series_id IN ${S}`,
      gb_series_anchors: `series_id IN ${S}`,
      gb_remember_runs: `id IN ${R}`,
      gb_remember_run_stages: `run_id IN ${R}`,
      gb_remember_queue: `run_id IN ${R}`,
      gb_remember_idempotency: `run_id IN ${R}`,
      // the model calls stay: counted by their references, which go
      gb_inferences: `run_id IN ${R} OR dataset_id IN ${D}`,
      // SQLite's full-text changes not yet applied (none between requests)
      gb_fts_pending: `dataset_id IN ${D}`,
      gb_fts_lengths: `dataset_id IN ${D}`,
      gb_fts_stats: `dataset_id IN ${D}`,
      // the dataset sides with an FTS5 table of their own (none at these sizes)
      gb_fts_own: `dataset_id IN ${D}`
    }
    const inferences = yield* idsOf(`SELECT id FROM gb_inferences WHERE ${where.gb_inferences}`)
    const datasetIds = yield* idsOf(`SELECT id FROM gb_datasets WHERE ${where.gb_datasets} ORDER BY id`)
    return { where, inferences, datasetIds }
  })

type Counts = Record<string, { readonly total: number; readonly owned: number }>

/** A dataset's full-text table (SQLite): its rows are the dataset's, and it goes with it. */
const fullTextDataset = (table: string) => table.match(/^gb_fts_(?:entities|edges)_(\d+)_docsize$/)?.[1]

const countTables = (
  dialect: Dialect,
  tables: ReadonlyArray<string>,
  own: { readonly where: Record<string, string>; readonly datasetIds: ReadonlyArray<number> }
) =>
  Effect.gen(function*() {
    const out: Record<string, { total: number; owned: number }> = {}
    const existing = new Set(yield* tablesOf(dialect))
    for (const table of tables) {
      const dataset = fullTextDataset(table)
      const condition = dataset === undefined
        ? own.where[table]
        : own.datasetIds.includes(Number(dataset))
        ? "1 = 1"
        : "1 = 0"
      expect(condition, `${table}: the test does not know whose rows it holds`).toBeDefined()
      // a deleted dataset's full-text tables are dropped: nothing left in them
      if (!existing.has(table)) {
        out[table] = { total: 0, owned: 0 }
        continue
      }
      out[table] = {
        total: yield* count(`SELECT COUNT(*) AS n FROM ${table}`),
        owned: yield* count(`SELECT COUNT(*) AS n FROM ${table} WHERE ${condition}`)
      }
    }
    return out as Counts
  })

const KINDS = ["entities", "edges", "chunks", "summaries"] as const

const vectorCounts = (datasetIds: ReadonlyArray<number>) =>
  Effect.map(MemoryVectorStore, (store) =>
    Object.fromEntries(
      KINDS.map((kind) => [kind, datasetIds.reduce((n, id) => n + store.items(`dataset-${id}-${kind}`).length, 0)])
    ))

forEachDialect((dialect, makeLayer) => {
  describe("DELETE /v1/gb/users/{user_id}", () => {
    it.live("forgets every row of the user in every table, their vectors and image files; nobody else's", () =>
      withApp(makeLayer(), (images) =>
        Effect.gen(function*() {
          const { bobImagePath, imagePath } = yield* world
          const allNames = (yield* rows<{ name: string }>(
            `SELECT DISTINCT dataset AS name FROM gb_remember_runs WHERE user_id = 'alice'`
          )).map((r) => r.name)
          expect(allNames.sort()).toEqual(["main", "notes", "work"])
          const own = yield* ownership("alice", allNames)
          const tables = yield* tablesOf(dialect)
          const before = yield* countTables(dialect, tables, own)
          // the world fills every table a remember writes (series and geo: not configured)
          for (
            const table of [
              "gb_datasets",
              "gb_artifacts",
              "gb_entities",
              "gb_edges",
              "gb_entity_artifacts",
              "gb_edge_artifacts",
              "gb_entity_sessions",
              "gb_edge_sessions",
              "gb_edge_closures",
              "gb_image_artifacts",
              "gb_image_extractions",
              "gb_image_text_blocks",
              "gb_remember_runs",
              "gb_remember_run_stages",
              "gb_remember_idempotency",
              "gb_inferences"
            ]
          ) {
            expect(before[table]!.owned, table).toBeGreaterThan(0)
          }
          const vectorsBefore = yield* vectorCounts(own.datasetIds)
          for (const kind of KINDS) expect(vectorsBefore[kind], kind).toBeGreaterThan(0)
          const ownFullText = tables.filter((t) => t === "gb_fts_lengths" || t === "gb_fts_stats")
          if (dialect === "sqlite") expect(ownFullText.filter((t) => before[t]!.owned > 0).length).toBeGreaterThan(1)
          const expectedVectors = yield* count(
            `SELECT (SELECT COUNT(*) FROM gb_entities WHERE ${own.where.gb_entities} AND embedded_at IS NOT NULL)
              + (SELECT COUNT(*) FROM gb_edges WHERE ${own.where.gb_edges} AND embedded_at IS NOT NULL)
              + (SELECT COUNT(*) FROM gb_artifacts WHERE ${own.where.gb_artifacts}
                AND kind IN ('chunk', 'chunk_summary')) AS n`
          )
          expect(existsSync(join(images, imagePath))).toBe(true)

          const res = yield* del("/v1/gb/users/alice")
          expect(res.status, res.text).toBe(200)
          expect(res.json).toEqual({
            user_id: "alice",
            deleted: {
              datasets: 4,
              artifacts: before.gb_artifacts!.owned,
              entities: before.gb_entities!.owned,
              facts: before.gb_edges!.owned,
              vectors: expectedVectors,
              images: 1,
              runs: before.gb_remember_runs!.owned
            }
          })

          const after = yield* countTables(dialect, tables, own)
          for (const table of tables) {
            const kept = table === "gb_inferences" ? before[table]!.total : before[table]!.total - before[table]!.owned
            expect({ table, ...after[table] }).toEqual({ table, total: kept, owned: 0 })
          }
          // the datasets' full-text tables are gone, shadow tables and all
          if (dialect === "sqlite") {
            const left = (yield* rows<{ name: string }>(`SELECT name FROM sqlite_master WHERE name GLOB 'gb_fts_*'`))
              .map((r) => r.name)
              .filter((name) =>
                own.datasetIds.some((id) =>
                  name.startsWith(`gb_fts_entities_${id}_`) || name.startsWith(`gb_fts_edges_${id}_`) ||
                  name === `gb_fts_entities_${id}` || name === `gb_fts_edges_${id}`
                )
              )
            expect(left).toEqual([])
          }
          // the model calls stay, without their references and the words of the failed one
          const calls = yield* rows<{ run_id: number | null; dataset_id: number | null; error: string | null }>(
            `SELECT run_id, dataset_id, error FROM gb_inferences WHERE id IN ${list(own.inferences)}`
          )
          expect(calls).toHaveLength(own.inferences.length)
          for (const call of calls) expect([call.run_id, call.dataset_id]).toEqual([null, null])
          expect(calls.filter((c) => c.error !== null).map((c) => c.error)).toEqual([SCRUBBED_ERROR])
          expect(yield* count(`SELECT COUNT(*) AS n FROM gb_inferences WHERE error LIKE '%Mallory%'`)).toBe(0)

          expect(yield* vectorCounts(own.datasetIds)).toEqual({ entities: 0, edges: 0, chunks: 0, summaries: 0 })
          expect(yield* count("SELECT COUNT(*) AS n FROM gb_vector_outbox")).toBe(0)
          expect(existsSync(join(images, imagePath))).toBe(false)
          expect(existsSync(join(images, bobImagePath))).toBe(true)
          // Bob reads his memory as before
          const found = yield* postJson("/v1/gb/search", { user_id: "bob", query: "Paris" })
          expect(found.status, found.text).toBe(200)
          expect(found.json.facts.map((f: { target: string }) => f.target)).toEqual(["Paris"])
          // nothing is left to forget; Alice's Idempotency-Key names nothing any more
          expectError(yield* del("/v1/gb/users/alice"), 404, /nothing stored/)
          const again = yield* send(
            HttpClientRequest.post("/v1/gb/remember").pipe(
              HttpClientRequest.setHeader("idempotency-key", "alice-key-1"),
              HttpClientRequest.bodyUnsafeJson({ user_id: "alice", dataset: "notes", text: "Alice Novak knows Ann." })
            )
          )
          expect(again.status, again.text).toBe(200)
          expect(again.json.remember_run_id).toBeGreaterThan(before.gb_remember_runs!.total)
        })))

    it.live("a run of the user working ahead or queued stores nothing; its waiter is answered 404", () =>
      withApp(
        makeLayer(),
        () =>
          Effect.gen(function*() {
            yield* remember("alice", "Alice Novak lives in Berlin in 2020.")
            const manager = yield* RememberManager
            // taken at once, its extraction slow (lookahead 1: the next one waits, still queued)
            const ahead = yield* manager.enqueue(textRequest("Alice Novak lives in Lisbon in 2021."))
            const queued = yield* manager.enqueue(textRequest("Alice Novak works at Acme in 2022."))
            const elsewhere = yield* manager.enqueue(textRequest("Alice Novak knows Bruno Diaz.", { dataset: "work" }))
            const waiter = yield* Effect.fork(
              postJson("/v1/gb/remember", { user_id: "alice", dataset: "work", text: "Alice Novak visited Rome." })
            )
            yield* Effect.sleep("100 millis")
            expect((yield* (yield* RunLogRepo).get(queued.runId)).pipe((o) => o._tag === "Some" && o.value.status))
              .toBe("queued")
            const res = yield* del("/v1/gb/users/alice")
            expect(res.status, res.text).toBe(200)
            for (const run of [ahead, queued, elsewhere]) {
              const error = yield* Effect.flip(run.await)
              expect(error._tag).toBe("NotFound")
              expect(error.message).toMatch(/remember run \d+ was removed: its user or dataset was forgotten/)
            }
            expectError(yield* Fiber.join(waiter), 404, /was removed/)
            // nothing of theirs was stored after the forget, not even a dataset
            expect(yield* count("SELECT COUNT(*) AS n FROM gb_datasets")).toBe(0)
            expect(yield* count("SELECT COUNT(*) AS n FROM gb_artifacts")).toBe(0)
            expect(yield* count("SELECT COUNT(*) AS n FROM gb_remember_runs")).toBe(0)
            expect(yield* count("SELECT COUNT(*) AS n FROM gb_vector_outbox")).toBe(0)
            // the queued one never called the model; the calls made are kept, for their cost, without references
            const calls = (yield* ScriptedLlm).calls
            expect(calls.filter((c) => JSON.stringify(c.messages).includes("Acme"))).toEqual([])
            expect(yield* count("SELECT COUNT(*) AS n FROM gb_inferences WHERE stage <> 'embed'")).toBe(calls.length)
            expect(
              yield* count(
                "SELECT COUNT(*) AS n FROM gb_inferences WHERE run_id IS NOT NULL OR dataset_id IS NOT NULL"
              )
            ).toBe(0)
            const runs = yield* send(HttpClientRequest.get(`/v1/gb/runs/${queued.runId}`))
            expect(runs.status).toBe(404)
          }),
        { lookahead: 1, llmDelayMs: (r) => (r.stage === "extract_graph" ? 400 : 0) }
      ))

    it.live("a running remember holds the dataset's lock: it finishes first, then goes with the rest", () =>
      withApp(
        makeLayer(),
        () =>
          Effect.gen(function*() {
            yield* remember("alice", "Alice Novak lives in Berlin in 2020.")
            // resolve_edges runs under the lock, late
            const running = yield* Effect.fork(remember("alice", "Alice Novak lives in Lisbon in 2021."))
            yield* Effect.sleep("150 millis")
            const res = yield* del("/v1/gb/users/alice")
            expect(res.status, res.text).toBe(200)
            const stored = yield* Fiber.join(running)
            expect(stored.artifact_id).toBeGreaterThan(0)
            expect(res.json.deleted).toMatchObject({ datasets: 1, artifacts: 2, runs: 2 })
            expect(yield* count("SELECT COUNT(*) AS n FROM gb_artifacts")).toBe(0)
            expect(yield* count("SELECT COUNT(*) AS n FROM gb_remember_runs")).toBe(0)
          }),
        { llmDelayMs: (r) => (r.stage === "resolve_edges" ? 500 : 0) }
      ))

    it.live("bad user ids are a 400 naming user_id; a user with nothing is a 404", () =>
      withApp(makeLayer(), () =>
        Effect.gen(function*() {
          yield* remember("alice", "Alice Novak lives in Berlin in 2020.")
          expectError(yield* del(`/v1/gb/users/${"x".repeat(257)}`), 400, /^user_id must be at most 256 bytes/)
          expectError(yield* del("/v1/gb/users/a%01b"), 400, /^user_id must not contain control characters/)
          expectError(yield* del("/v1/gb/users/%20%20"), 400, /^user_id must not be empty/)
          expectError(yield* del("/v1/gb/users/nobody"), 404, /nothing stored/)
          // a user id is taken as written, URL-decoded
          yield* remember("ann lee/2", "Ann Lee lives in Oslo in 2020.")
          const res = yield* del(`/v1/gb/users/${encodeURIComponent("ann lee/2")}`)
          expect(res.status, res.text).toBe(200)
          expect(res.json.user_id).toBe("ann lee/2")
          expect(yield* count("SELECT COUNT(*) AS n FROM gb_datasets")).toBe(1)
        })))
  })

  describe("DELETE /v1/gb/datasets/{name}?hard=true", () => {
    it.live("removes every dataset of the name (soft-deleted ones too) and its runs; the user's other datasets stay", () =>
      withApp(makeLayer(), (images) =>
        Effect.gen(function*() {
          const { imagePath } = yield* world
          const own = yield* ownership("alice", ["work"])
          const tables = yield* tablesOf(dialect)
          const before = yield* countTables(dialect, tables, own)
          expect(before.gb_datasets!.owned).toBe(2)
          // a pending upsert of the dataset is dropped; a pending delete (an earlier forget's) stays
          const datasetId = own.datasetIds[0]!
          yield* rows(`INSERT INTO gb_vector_outbox (dataset_id, index_name, vector_id, text_or_values, created_at, op)
            VALUES (${datasetId}, 'dataset-${datasetId}-edges', 'edge-999', '[]', '2025-01-01T00:00:00.000Z', 'upsert'),
              (${datasetId}, 'dataset-${datasetId}-edges', 'edge-998', '[]', '2025-01-01T00:00:00.000Z', 'delete')`)

          const res = yield* del("/v1/gb/datasets/work?user_id=alice&hard=true")
          expect(res.status, res.text).toBe(200)
          expect(res.json).toEqual({
            user_id: "alice",
            dataset: "work",
            dataset_ids: own.datasetIds,
            deleted: {
              datasets: 2,
              artifacts: 2,
              entities: before.gb_entities!.owned,
              facts: 2,
              vectors: before.gb_entities!.owned + 2,
              images: 0,
              runs: 2
            }
          })
          const after = yield* countTables(dialect, tables, own)
          for (const table of tables) {
            const pendingDelete = table === "gb_vector_outbox" ? 1 : 0
            const kept = table === "gb_inferences"
              ? before[table]!.total
              : before[table]!.total - before[table]!.owned + pendingDelete
            expect({ table, ...after[table] }).toEqual({ table, total: kept, owned: pendingDelete })
          }
          expect(yield* rows("SELECT vector_id, op FROM gb_vector_outbox")).toEqual([
            { vector_id: "edge-998", op: "delete" }
          ])
          expect(yield* vectorCounts(own.datasetIds)).toEqual({ entities: 0, edges: 0, chunks: 0, summaries: 0 })
          // main and notes are untouched
          const datasets = yield* send(HttpClientRequest.get("/v1/gb/datasets?user_id=alice"))
          expect(datasets.json.datasets.map((d: { name: string }) => d.name)).toEqual(["main", "notes"])
          expect(existsSync(join(images, imagePath))).toBe(true)
          expectError(yield* del("/v1/gb/datasets/work?user_id=alice&hard=true"), 404, /no dataset "work"/)
        })))

    it.live("without hard: today's soft delete; hard must be a flag (400 naming it); nothing there is a 404", () =>
      withApp(makeLayer(), () =>
        Effect.gen(function*() {
          yield* remember("alice", "Alice Novak lives in Berlin in 2020.", { dataset: "scratch" })
          expectError(yield* del("/v1/gb/datasets/scratch?user_id=alice&hard=maybe"), 400, /^hard must be a boolean/)
          // the document's boolean is the words true and false: a bare flag or 1 is a 400 too
          expectError(yield* del("/v1/gb/datasets/scratch?user_id=alice&hard"), 400, /^hard must be a boolean/)
          expectError(yield* del("/v1/gb/datasets/scratch?user_id=alice&hard=1"), 400, /^hard must be a boolean/)
          expectError(yield* del("/v1/gb/datasets/scratch?hard=true"), 400, /^user_id /)
          expectError(yield* del("/v1/gb/datasets/nothing?user_id=alice&hard=true"), 404, /no dataset "nothing"/)
          const soft = yield* del("/v1/gb/datasets/scratch?user_id=alice&hard=false")
          expect(soft.status, soft.text).toBe(200)
          expect(Object.keys(soft.json).sort()).toEqual(["dataset", "deleted_at", "id"])
          expect(yield* count("SELECT COUNT(*) AS n FROM gb_artifacts")).toBe(1)
          // the soft-deleted dataset is still there to be deleted for good
          const hard = yield* del("/v1/gb/datasets/scratch?user_id=alice&hard=true")
          expect(hard.status, hard.text).toBe(200)
          expect(hard.json.deleted).toMatchObject({ datasets: 1, artifacts: 1, runs: 1 })
          expect(yield* count("SELECT COUNT(*) AS n FROM gb_artifacts")).toBe(0)
        })))
  })

  describe("a forgotten run's store", () => {
    it.live("committed and chunkStored die when the run's row is gone, which rolls the store back", () =>
      Effect.gen(function*() {
        const runLog = yield* RunLogRepo
        const database = yield* Database
        const run = yield* runLog.create({
          pipeline: "text",
          user_id: "alice",
          dataset: "main",
          params: {},
          queued_at: "2025-01-01T00:00:00.000Z",
          instance_id: "test"
        })
        const store = (hook: Effect.Effect<void>) =>
          database.withTransaction(Effect.zipRight(
            rows(`INSERT INTO gb_datasets (user_id, name, created_at) VALUES ('alice', 'main', '2025-01-01')`),
            hook
          ))
        yield* store(runLog.committed(run.id))
        expect(yield* count("SELECT COUNT(*) AS n FROM gb_datasets")).toBe(1)
        yield* rows(`DELETE FROM gb_datasets`)
        yield* rows(`DELETE FROM gb_remember_runs WHERE id = ${run.id}`)
        for (const hook of [runLog.committed(run.id), runLog.chunkStored(run.id, 1, 1)]) {
          const exit = yield* Effect.exit(store(hook))
          expect(exit._tag).toBe("Failure")
          expect(JSON.stringify(exit)).toMatch(/"_tag":"RunRemoved"/)
          expect(yield* count("SELECT COUNT(*) AS n FROM gb_datasets")).toBe(0)
        }
        expect(yield* runLog.exists(run.id)).toBe(false)
      }).pipe(Effect.provide(makeLayer())))
  })
})

const SECRETS = { alice: "alice-token-Q2w8e", bob: "bob-token-K7z1x", admin: "admin-token-M4n5b" }
const TOKENS: ReadonlyArray<AuthToken> = [
  { kind: "plain", secret: Redacted.make(SECRETS.alice), admin: false, userId: "alice" },
  { kind: "plain", secret: Redacted.make(SECRETS.bob), admin: false, userId: "bob" },
  { kind: "plain", secret: Redacted.make(SECRETS.admin), admin: true }
]

describe("erasing with tokens, vectors failing, the library", () => {
  it.live("another user's token is a 403 (nothing goes); the user's own and an admin's forget", () =>
    withApp(
      sqliteLayer(),
      () =>
        Effect.gen(function*() {
          const as = (token: string, text: string, user: string, dataset = "main") =>
            send(
              HttpClientRequest.post("/v1/gb/remember").pipe(
                HttpClientRequest.bearerToken(token),
                HttpClientRequest.bodyUnsafeJson({ user_id: user, dataset, text })
              )
            )
          expect((yield* as(SECRETS.alice, "Alice Novak lives in Berlin in 2020.", "alice")).status).toBe(200)
          expect((yield* as(SECRETS.alice, "Alice Novak works at Acme.", "alice", "work")).status).toBe(200)
          expect((yield* as(SECRETS.bob, "Bruno Diaz lives in Paris in 2019.", "bob")).status).toBe(200)
          const refused = /may not act for that user_id/
          expectError(yield* del("/v1/gb/users/alice", SECRETS.bob), 403, refused)
          expectError(yield* del("/v1/gb/datasets/work?user_id=alice&hard=true", SECRETS.bob), 403, refused)
          expectError(yield* del("/v1/gb/users/alice"), 401, /authentication required/)
          expect(yield* count("SELECT COUNT(*) AS n FROM gb_datasets")).toBe(3)
          // the soft delete stays the user's alone, as before
          expectError(yield* del("/v1/gb/datasets/work?user_id=alice", SECRETS.admin), 403, /admin token/)
          const hard = yield* del("/v1/gb/datasets/work?user_id=alice&hard=true", SECRETS.admin)
          expect(hard.status, hard.text).toBe(200)
          const own = yield* del("/v1/gb/users/alice", SECRETS.alice)
          expect(own.status, own.text).toBe(200)
          expect(own.json.deleted).toMatchObject({ datasets: 1, runs: 1 })
          const byAdmin = yield* del("/v1/gb/users/bob", SECRETS.admin)
          expect(byAdmin.status, byAdmin.text).toBe(200)
          expectError(yield* del("/v1/gb/users/bob", SECRETS.admin), 404, /nothing stored/)
          expect(yield* count("SELECT COUNT(*) AS n FROM gb_datasets")).toBe(0)
        }),
      { auth: TOKENS }
    ))

  it.live("a vector store that fails: the deletes wait in the outbox (vectors_pending) and converge", () => {
    let failing = false
    const memory = MemoryVectorStoreLive({ dimensions: 32 })
    const flaky = Layer.effect(
      VectorStore,
      Effect.map(VectorStore, (store) =>
        VectorStore.of({
          ...store,
          delete: (index, ids) =>
            failing ? Effect.fail(new VectorWriteFailed({ message: "vector store down" })) : store.delete(index, ids)
        }))
    ).pipe(Layer.provideMerge(memory))
    return withApp(
      sqliteLayer(),
      () =>
        Effect.gen(function*() {
          yield* remember("alice", "Alice Novak lives in Berlin in 2020.")
          const store = yield* MemoryVectorStore
          const id = (yield* rows<{ id: number }>("SELECT id FROM gb_datasets"))[0]!.id
          expect(store.items(`dataset-${id}-edges`)).toHaveLength(1)
          failing = true
          const res = yield* del("/v1/gb/users/alice")
          expect(res.status, res.text).toBe(200)
          expect(res.json.vectors_pending).toBe(res.json.deleted.vectors)
          expect(store.items(`dataset-${id}-edges`)).toHaveLength(1)
          failing = false
          const outbox = yield* VectorOutbox
          yield* drainOutbox({ database: yield* Database, outbox, vectors: yield* VectorStore })
          expect(yield* outbox.count()).toBe(0)
          expect(store.items(`dataset-${id}-edges`)).toHaveLength(0)
          expect(store.items(`dataset-${id}-entities`)).toHaveLength(0)
        }),
      { vectors: flaky as unknown as Layer.Layer<VectorStore> }
    )
  })

  it.live("the library functions run the same programs, with the endpoints' validation", () =>
    withApp(sqliteLayer(), () =>
      Effect.gen(function*() {
        yield* remember("alice", "Alice Novak lives in Berlin in 2020.", { dataset: "work" })
        yield* remember("alice", "Alice Novak lives in Lisbon in 2021.")
        // the export's own option beside the scope (it was refused as an unknown field)
        const berlin = yield* remember("alice", "Alice Novak lives in Berlin in 2022.")
        const history = yield* exportMemory({ user_id: "alice", include_expired: true })
        expect(history.format).toBe("json")
        const text = (yield* Stream.runCollect(history.body)).pipe(Chunk.join(""))
        expect(JSON.parse(text).edges).toHaveLength(2)
        expect(JSON.parse(text).include_expired).toBe(true)
        expect(berlin.invalidated_edges).toHaveLength(1)
        const invalid = yield* Effect.flip(hardDeleteDatasetMemory({ user_id: "alice", dataset: "" }))
        expect(invalid).toMatchObject({ _tag: "InvalidRequest", message: "dataset must not be empty" })
        const work = yield* hardDeleteDatasetMemory({ user_id: "alice", dataset: "work" })
        expect(work).toMatchObject({ dataset: "work", deleted: { datasets: 1, artifacts: 1, runs: 1 } })
        const user = yield* forgetUserMemory({ user_id: "alice" })
        expect(user).toMatchObject({ user_id: "alice", deleted: { datasets: 1, artifacts: 2, runs: 2 } })
        expect(yield* Effect.flip(forgetUserMemory({ user_id: "alice" }))).toMatchObject({ _tag: "NotFound" })
      })))
})
