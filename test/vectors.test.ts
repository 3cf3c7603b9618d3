import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteLive } from "../layers/sql/index.js"
import { MemoryVectorStore } from "../layers/vectors/MemoryVectorStore.js"
import {
  MAX_UPSERT_BYTES,
  MAX_UPSERT_RECORDS,
  PineconeStoreLive,
  type PineconeStoreOptions,
  upsertBatches
} from "../layers/vectors/PineconeStore.js"
import { PostgresVectorStoreLive } from "../layers/vectors/PostgresVectorStore.js"
import { SqliteVecFileStoreLive, SqliteVecStoreLive, vectorTableName } from "../layers/vectors/SqliteVecStore.js"
import { VectorWriteFailed } from "../src/domain/Errors.js"
import { type VectorItem, VectorStore } from "../src/services/VectorStore.js"
import { pgLayer, pgSkipReason } from "./support/databases.js"
import { type FakePinecone, pineconeError, startFakePinecone } from "./support/fakePinecone.js"

const DIMS = 4
const API_KEY = "pc-test-key"

let counter = 0
/** A fresh index name per test, so the tests of one shared store cannot see each other. */
const freshIndex = (kind = "entities") => `dataset-${++counter}-${kind}`

const item = (
  id: string,
  values: ReadonlyArray<number>,
  metadata: VectorItem["metadata"] = { kind: "entity" }
): VectorItem => ({
  id,
  values,
  metadata
})

const failure = <A, R>(effect: Effect.Effect<A, VectorWriteFailed, R>) =>
  Effect.flip(effect).pipe(
    Effect.tap((error) => expect(error).toBeInstanceOf(VectorWriteFailed))
  )

/** The behaviour every VectorStore must have (spec/contracts.md section 10). */
const behaviour = (name: string, store: Layer.Layer<VectorStore, unknown>) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    const four = [
      item("entity-a", [1, 0, 0, 0], { kind: "entity", label: "a" }),
      item("entity-b", [1, 1, 0, 0], { kind: "entity", label: "b" }),
      item("entity-c", [0, 1, 0, 0], { kind: "entity", label: "c" }),
      item("entity-d", [-1, 0, 0, 0], { kind: "entity", label: "d" })
    ]

    it.effect("health answers with the search in use (GET /readyz)", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorStore
        const { search } = yield* vectors.health
        expect(search.length).toBeGreaterThan(0)
      }))

    it.effect("returns matches best first with cosine scores (1 = identical)", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorStore
        const index = freshIndex()
        yield* vectors.upsert(index, four)
        const matches = yield* vectors.query(index, [2, 0, 0, 0], 10, -1)
        expect(matches.map((m) => m.id)).toEqual(["entity-a", "entity-b", "entity-c", "entity-d"])
        const scores = matches.map((m) => m.score)
        expect(scores[0]).toBeCloseTo(1, 5)
        expect(scores[1]).toBeCloseTo(Math.SQRT1_2, 5)
        expect(scores[2]).toBeCloseTo(0, 5)
        expect(scores[3]).toBeCloseTo(-1, 5)
        expect(matches[1]!.metadata).toEqual({ kind: "entity", label: "b" })
      }))

    it.effect("keeps only score >= minScore and at most k", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorStore
        const index = freshIndex()
        yield* vectors.upsert(index, four)
        const top2 = yield* vectors.query(index, [1, 0.1, 0, 0], 2, -1)
        expect(top2.map((m) => m.id)).toEqual(["entity-a", "entity-b"])
        const similar = yield* vectors.query(index, [1, 0, 0, 0], 10, 0.5)
        expect(similar.map((m) => m.id)).toEqual(["entity-a", "entity-b"])
        expect(similar.every((m) => m.score >= 0.5)).toBe(true)
        expect(yield* vectors.query(index, [1, 0, 0, 0], 0, -1)).toEqual([])
        expect(yield* vectors.query(index, [0, 0, 1, 0], 10, 0.01)).toEqual([])
      }))

    it.effect("overwrites a vector and its metadata by id", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorStore
        const index = freshIndex()
        yield* vectors.upsert(index, four)
        yield* vectors.upsert(index, [item("entity-a", [0, 0, 1, 0], { kind: "entity", label: "a2" })])
        const matches = yield* vectors.query(index, [0, 0, 1, 0], 10, -1)
        expect(matches).toHaveLength(4)
        expect(matches[0]!.id).toBe("entity-a")
        expect(matches[0]!.score).toBeCloseTo(1, 5)
        expect(matches[0]!.metadata).toEqual({ kind: "entity", label: "a2" })
      }))

    it.effect("keeps the last of two items with one id in a single upsert", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorStore
        const index = freshIndex()
        yield* vectors.upsert(index, [item("edge-1", [1, 0, 0, 0]), item("edge-1", [0, 1, 0, 0], { kind: "edge" })])
        const matches = yield* vectors.query(index, [0, 1, 0, 0], 10, -1)
        expect(matches).toHaveLength(1)
        expect(matches[0]!.score).toBeCloseTo(1, 5)
        expect(matches[0]!.metadata).toEqual({ kind: "edge" })
      }))

    it.effect("keeps indexes (datasets and kinds) apart, even for equal vector ids", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorStore
        const first = freshIndex()
        const second = freshIndex()
        yield* vectors.upsert(first, [item("entity-1", [1, 0, 0, 0], { dataset_id: 1 })])
        yield* vectors.upsert(second, [item("entity-1", [0, 1, 0, 0], { dataset_id: 2 })])
        const fromFirst = yield* vectors.query(first, [0, 1, 0, 0], 10, -1)
        expect(fromFirst).toHaveLength(1)
        expect(fromFirst[0]!.metadata).toEqual({ dataset_id: 1 })
        expect(fromFirst[0]!.score).toBeCloseTo(0, 5)
        yield* vectors.delete(first, ["entity-1"])
        expect(yield* vectors.query(first, [0, 1, 0, 0], 10, -1)).toEqual([])
        const fromSecond = yield* vectors.query(second, [0, 1, 0, 0], 10, -1)
        expect(fromSecond.map((m) => [m.id, m.metadata])).toEqual([["entity-1", { dataset_id: 2 }]])
      }))

    it.effect("deletes by id; unknown ids and an empty list are fine", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorStore
        const index = freshIndex()
        yield* vectors.upsert(index, four)
        yield* vectors.delete(index, ["entity-a", "entity-c", "entity-missing"])
        yield* vectors.delete(index, [])
        yield* vectors.delete(freshIndex(), ["entity-a"])
        const matches = yield* vectors.query(index, [1, 0, 0, 0], 10, -1)
        expect(matches.map((m) => m.id)).toEqual(["entity-b", "entity-d"])
      }))

    it.effect("compacts after deletes (twice is fine) and answers the same afterwards", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorStore
        const index = freshIndex()
        yield* vectors.upsert(index, four)
        yield* vectors.delete(index, ["entity-b"])
        yield* vectors.compact
        yield* vectors.compact
        const matches = yield* vectors.query(index, [1, 0, 0, 0], 10, -1)
        expect(matches.map((m) => m.id)).toEqual(["entity-a", "entity-c", "entity-d"])
      }))

    it.effect("round-trips metadata values: strings, integers, decimals, booleans", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorStore
        const index = freshIndex("chunks")
        const metadata = {
          dataset_id: 42,
          kind: "chunk",
          chunk_id: "7",
          label: "Zoë's \"notes\" — ünïcödé, 東京",
          index: 3,
          weight: 0.125,
          live: true,
          summary: false
        }
        yield* vectors.upsert(index, [item("chunk-7", [0.5, 0.5, 0.5, 0.5], metadata)])
        const [match] = yield* vectors.query(index, [0.5, 0.5, 0.5, 0.5], 1, 0)
        expect(match!.id).toBe("chunk-7")
        expect(match!.metadata).toEqual(metadata)
      }))

    it.effect("finds nothing in an index that was never written; an empty upsert is fine", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorStore
        const index = freshIndex("summaries")
        yield* vectors.upsert(index, [])
        expect(yield* vectors.query(index, [1, 0, 0, 0], 3, 0)).toEqual([])
      }))

    it.effect("stores and searches more vectors than one write batch holds", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorStore
        const index = freshIndex("edges")
        const many = Array.from({ length: 1_200 }, (_, i) => item(`edge-${i}`, [1, i / 1_200, 0, 0], { n: i }))
        yield* vectors.upsert(index, many)
        const matches = yield* vectors.query(index, [1, 0, 0, 0], 2_000, -1)
        expect(matches).toHaveLength(1_200)
        expect(matches[0]!.id).toBe("edge-0")
        expect(matches.at(-1)!.id).toBe("edge-1199")
      }))

    it.effect("refuses a vector of the wrong size with VectorWriteFailed", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorStore
        const index = freshIndex()
        const error = yield* failure(vectors.upsert(index, [item("entity-x", [1, 0, 0])]))
        expect(error.message).toMatch(/entity-x|dimension/i)
        yield* failure(vectors.query(index, [1, 0], 3, 0))
      }))
  })

// ---------------------------------------------------------------------------------------------
// the four stores

behaviour(
  "SqliteVecStore (on the main SQLite database)",
  SqliteVecStoreLive(DIMS).pipe(Layer.provide(SqliteLive(":memory:")))
)

const tempDir = () => mkdtempSync(join(tmpdir(), "gligabao-vectors-"))

behaviour(
  "SqliteVecFileStore (a SQLite file of its own)",
  Layer.unwrapScoped(
    Effect.acquireRelease(
      Effect.sync(tempDir),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    ).pipe(
      Effect.map((dir) => SqliteVecFileStoreLive(join(dir, "nested", "vectors.db"), DIMS))
    )
  )
)

behaviour(
  "SqliteVecStore (on the main SQLite file, searched by a reader in a worker thread)",
  Layer.unwrapScoped(
    Effect.acquireRelease(
      Effect.sync(tempDir),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    ).pipe(
      Effect.map((dir) => {
        const filename = join(dir, "graph.db")
        return SqliteVecStoreLive(DIMS, { filename, mmapBytes: 0 }).pipe(Layer.provide(SqliteLive(filename)))
      })
    )
  )
)

behaviour("MemoryVectorStore", MemoryVectorStore.layer({ dimensions: DIMS }))

// the test cluster has no pgvector: the portable search (pgvector itself: test/vectors/pgvector.test.ts)
if (pgSkipReason() === null) {
  behaviour(
    "PostgresVectorStore (in the app's PostgreSQL database, portable search)",
    PostgresVectorStoreLive(DIMS).pipe(Layer.provide(pgLayer()))
  )
} else {
  console.warn(`!!! SKIPPING the PostgresVectorStore behaviour: ${pgSkipReason()}`)
}

class FakePineconeServer extends Context.Tag("test/FakePinecone")<FakePineconeServer, FakePinecone>() {}

const withFakePinecone = (options: { dimension?: number } = {}) =>
  Layer.scoped(
    FakePineconeServer,
    Effect.acquireRelease(
      Effect.promise(() => startFakePinecone({ apiKey: API_KEY, ...options })),
      (fake) => Effect.promise(() => fake.close())
    )
  )

const pineconeOn = (overrides: Partial<PineconeStoreOptions> = {}) =>
  Layer.unwrapEffect(
    Effect.map(FakePineconeServer, (fake) =>
      PineconeStoreLive({
        apiKey: Redacted.make(API_KEY),
        indexHost: fake.url,
        namespacePrefix: "gb-",
        maxRetries: 2,
        retryBaseDelayMs: 1,
        timeoutMs: 5_000,
        ...overrides
      }))
  )

behaviour(
  "PineconeStore (against a fake index host)",
  pineconeOn().pipe(Layer.provide(withFakePinecone({ dimension: DIMS })))
)

// ---------------------------------------------------------------------------------------------
// store-specific behaviour

layer(SqliteLive(":memory:"), { excludeTestServices: true })("SqliteVecStore in the pipeline's transaction", (it) => {
  it.effect("writes inside a transaction commit with it and roll back with it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const vectors = yield* Effect.provide(
        VectorStore,
        SqliteVecStoreLive(DIMS).pipe(Layer.provide(Layer.succeed(SqlClient.SqlClient, sql)))
      )
      const index = freshIndex()
      yield* vectors.upsert(index, [item("entity-kept", [1, 0, 0, 0])])
      const aborted = yield* Effect.gen(function*() {
        yield* vectors.upsert(index, [item("entity-rolled-back", [1, 0, 0, 0])])
        yield* vectors.delete(index, ["entity-kept"])
        return yield* Effect.fail("abort" as const)
      }).pipe(sql.withTransaction, Effect.flip)
      expect(aborted).toBe("abort")
      const afterRollback = yield* vectors.query(index, [1, 0, 0, 0], 10, -1)
      expect(afterRollback.map((m) => m.id)).toEqual(["entity-kept"])

      yield* vectors.upsert(index, [item("entity-committed", [0, 1, 0, 0])]).pipe(sql.withTransaction)
      const afterCommit = yield* vectors.query(index, [0, 1, 0, 0], 10, 0.5)
      expect(afterCommit.map((m) => m.id)).toEqual(["entity-committed"])
    }))

  it.effect("keeps one vec0 table per dimension count, created once", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const build = (dims: number) =>
        Effect.provide(
          VectorStore,
          SqliteVecStoreLive(dims).pipe(Layer.provide(Layer.succeed(SqlClient.SqlClient, sql)))
        )
      const small = yield* build(3)
      yield* build(3)
      const large = yield* build(8)
      yield* small.upsert("dataset-1-entities", [item("entity-1", [1, 0, 0])])
      yield* large.upsert("dataset-1-entities", [item("entity-1", [1, 0, 0, 0, 0, 0, 0, 0])])
      const tables = yield* sql<
        { name: string }
      >`SELECT name FROM sqlite_master WHERE name LIKE 'gb_vectors_%' AND sql LIKE '%vec0%'`
      expect(tables.map((t) => t.name).sort()).toEqual([vectorTableName(3), vectorTableName(8)])
      expect((yield* small.query("dataset-1-entities", [1, 0, 0], 3, 0)).map((m) => m.id)).toEqual(["entity-1"])
    }).pipe(Effect.provide(SqliteLive(":memory:"))))
})

describe("SqliteVecFileStore", () => {
  it.live("keeps its vectors in the file across openings", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = join(dir, "vectors.db")
      const index = freshIndex()
      yield* Effect.gen(function*() {
        const vectors = yield* VectorStore
        yield* vectors.upsert(index, [item("entity-1", [1, 0, 0, 0], { label: "one" })])
      }).pipe(Effect.provide(SqliteVecFileStoreLive(file, DIMS)))
      const matches = yield* Effect.gen(function*() {
        const vectors = yield* VectorStore
        return yield* vectors.query(index, [1, 0, 0, 0], 3, 0)
      }).pipe(Effect.provide(SqliteVecFileStoreLive(file, DIMS)))
      rmSync(dir, { recursive: true, force: true })
      expect(matches.map((m) => [m.id, m.metadata])).toEqual([["entity-1", { label: "one" }]])
    }))
})

layer(MemoryVectorStore.layer({ failUpserts: (index) => index.endsWith("-edges") }), { excludeTestServices: true })(
  "MemoryVectorStore test controls",
  (it) => {
    it.effect("fails upserts on demand and writes nothing; the companion tag shows the contents", () =>
      Effect.gen(function*() {
        const vectors = yield* VectorStore
        const contents = yield* MemoryVectorStore
        const error = yield* failure(vectors.upsert("dataset-9-edges", [item("edge-1", [1, 0, 0, 0])]))
        expect(error.message).toContain("dataset-9-edges")
        yield* vectors.upsert("dataset-9-entities", [item("entity-1", [1, 0, 0, 0], { label: "x" })])
        expect(contents.indexes()).toEqual(["dataset-9-entities"])
        expect(contents.items("dataset-9-entities")).toEqual([item("entity-1", [1, 0, 0, 0], { label: "x" })])
        expect(contents.upserts.map((u) => u.index)).toEqual(["dataset-9-edges", "dataset-9-entities"])
      }))
  }
)

// ---------------------------------------------------------------------------------------------
// Pinecone specifics: the wire, the batches, the errors

describe("upsertBatches", () => {
  const record = (i: number, dims: number) => ({
    id: `entity-${i}`,
    values: Array.from({ length: dims }, (_, j) => Math.sin(i * 31 + j) / 3),
    metadata: { n: i }
  })

  it("splits by record count (1000) and by size (2 MB), keeping the order", () => {
    const small = Array.from({ length: 2_500 }, (_, i) => record(i, 2))
    expect(upsertBatches(small).map((b) => b.length)).toEqual([1_000, 1_000, 500])

    const large = Array.from({ length: 300 }, (_, i) => record(i, 1536))
    const batches = upsertBatches(large)
    expect(batches.length).toBeGreaterThan(1)
    for (const batch of batches) {
      expect(batch.length).toBeLessThanOrEqual(MAX_UPSERT_RECORDS)
      expect(Buffer.byteLength(JSON.stringify({ vectors: batch, namespace: "gb-dataset-1-entities" })))
        .toBeLessThanOrEqual(
          MAX_UPSERT_BYTES + 1024
        )
    }
    expect(batches.flat().map((r) => r.id)).toEqual(large.map((r) => r.id))
  })
})

layer(Layer.provideMerge(pineconeOn(), withFakePinecone()), { excludeTestServices: true })(
  "PineconeStore on the wire",
  (it) => {
    it.effect("uses one namespace per index (prefix + index), sends the Api-Key and the API version", () =>
      Effect.gen(function*() {
        const fake = yield* FakePineconeServer
        fake.reset()
        const vectors = yield* VectorStore
        yield* vectors.upsert("dataset-3-entities", [item("entity-1", [1, 0, 0, 0], { dataset_id: 3, kind: "entity" })])
        yield* vectors.query("dataset-3-entities", [1, 0, 0, 0], 3, 0.5)
        yield* vectors.delete("dataset-3-entities", ["entity-1"])
        expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
          "POST /vectors/upsert",
          "POST /query",
          "POST /vectors/delete"
        ])
        const [upsert, query, del] = fake.requests
        expect(upsert!.headers["api-key"]).toBe(API_KEY)
        expect(upsert!.headers["x-pinecone-api-version"]).toBeTruthy()
        expect(upsert!.body).toEqual({
          namespace: "gb-dataset-3-entities",
          vectors: [{ id: "entity-1", values: [1, 0, 0, 0], metadata: { dataset_id: 3, kind: "entity" } }]
        })
        expect(query!.body).toMatchObject({
          namespace: "gb-dataset-3-entities",
          topK: 3,
          includeMetadata: true,
          includeValues: false,
          vector: [1, 0, 0, 0]
        })
        expect(del!.body).toEqual({ namespace: "gb-dataset-3-entities", ids: ["entity-1"] })
      }))

    it.effect("upserts 1536-dimensional vectors in requests under 2 MB and deletes in batches of 1000 ids", () =>
      Effect.gen(function*() {
        const fake = yield* FakePineconeServer
        fake.reset()
        const vectors = yield* VectorStore
        const many = Array.from(
          { length: 150 },
          (_, i) => item(`chunk-${i}`, Array.from({ length: 1536 }, (_, j) => Math.cos(i + j * 0.37)), { n: i })
        )
        yield* vectors.upsert("dataset-4-chunks", many)
        const upserts = fake.requests.filter((r) => r.path === "/vectors/upsert")
        expect(upserts.length).toBeGreaterThan(1)
        for (const request of upserts) expect(Buffer.byteLength(request.rawBody)).toBeLessThanOrEqual(2 * 1024 * 1024)
        expect(fake.namespaces.get("gb-dataset-4-chunks")?.size).toBe(150)

        fake.reset()
        yield* vectors.delete("dataset-4-chunks", Array.from({ length: 2_500 }, (_, i) => `chunk-${i}`))
        expect(fake.requests.map((r) => r.body.ids.length)).toEqual([1_000, 1_000, 500])
      }))

    it.effect("a 400 fails at once with the status and Pinecone's message", () =>
      Effect.gen(function*() {
        const fake = yield* FakePineconeServer
        fake.reset()
        const vectors = yield* VectorStore
        fake.enqueue(pineconeError(400, "Vector dimension 4 does not match the dimension of the index 1536"))
        const error = yield* failure(vectors.upsert("dataset-5-edges", [item("edge-1", [1, 0, 0, 0])]))
        expect(error.message).toContain("HTTP 400 Vector dimension 4 does not match the dimension of the index 1536")
        expect(error.message).toContain("upsert in namespace gb-dataset-5-edges")
        expect(fake.requests).toHaveLength(1)
      }))

    it.effect("retries a 429 and a 503, then succeeds", () =>
      Effect.gen(function*() {
        const fake = yield* FakePineconeServer
        fake.reset()
        const vectors = yield* VectorStore
        fake.enqueue(
          pineconeError(429, "Request rate limit exceeded for namespace", { "retry-after": "0" }),
          pineconeError(503, "Service unavailable")
        )
        yield* vectors.upsert("dataset-6-entities", [item("entity-1", [1, 0, 0, 0])])
        expect(fake.requests).toHaveLength(3)
        expect(fake.namespaces.get("gb-dataset-6-entities")?.has("entity-1")).toBe(true)
      }))

    it.effect("a 500 that persists fails after the retries with the status and message", () =>
      Effect.gen(function*() {
        const fake = yield* FakePineconeServer
        fake.reset()
        const vectors = yield* VectorStore
        fake.setHandler(() => pineconeError(500, "internal error while querying"))
        const error = yield* failure(vectors.query("dataset-7-entities", [1, 0, 0, 0], 3, 0))
        fake.setHandler(undefined)
        expect(error.message).toBe(
          "pinecone query in namespace gb-dataset-7-entities failed after 3 attempts: HTTP 500 internal error while querying (code 13)"
        )
        expect(fake.requests).toHaveLength(3)
      }))
  }
)

layer(Layer.provideMerge(pineconeOn({ apiKey: Redacted.make("wrong-key"), maxRetries: 0 }), withFakePinecone()), {
  excludeTestServices: true
})("PineconeStore with a rejected key", (it) => {
  it.effect("fails with the 401 and Pinecone's message", () =>
    Effect.gen(function*() {
      const vectors = yield* VectorStore
      const error = yield* failure(vectors.delete("dataset-8-entities", ["entity-1"]))
      expect(error.message).toContain("HTTP 401 Invalid API Key")
    }))

  it.effect("health fails too: the store is not usable (GET /readyz is 503)", () =>
    Effect.gen(function*() {
      const vectors = yield* VectorStore
      const error = yield* failure(vectors.health)
      expect(error.message).toContain("HTTP 401 Invalid API Key")
    }))
})

describe("PineconeStore without a server", () => {
  it.live("a refused connection is retried, then fails naming the connection problem", () =>
    Effect.gen(function*() {
      const fake = yield* Effect.promise(() => startFakePinecone())
      const url = fake.url
      yield* Effect.promise(() => fake.close())
      const error = yield* failure(
        Effect.flatMap(VectorStore, (vectors) => vectors.upsert("dataset-1-entities", [item("entity-1", [1, 0, 0, 0])]))
          .pipe(
            Effect.provide(
              PineconeStoreLive({
                apiKey: Redacted.make(API_KEY),
                indexHost: url,
                namespacePrefix: "",
                maxRetries: 1,
                retryBaseDelayMs: 1
              })
            )
          )
      )
      expect(error.message).toMatch(/failed after 2 attempts: connection failed: .*ECONNREFUSED/)
    }))
})
