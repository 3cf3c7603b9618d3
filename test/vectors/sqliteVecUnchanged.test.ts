/**
 * The SqliteVecStore leaves a vector whose bytes and metadata are stored already as it is
 * (issue 39: a remember rewrote every stored entity a text names), and still writes every
 * change: other values, other metadata, a new id, in a transaction or not.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqliteLive } from "../../layers/sql/index.js"
import { codeTableName, floatTableName, SqliteVecStoreLive } from "../../layers/vectors/SqliteVecStore.js"
import { type VectorItem, VectorStore } from "../../src/services/VectorStore.js"

const DIMS = 384

const vector = (seed: number) => Array.from({ length: DIMS }, (_, i) => Math.sin(seed * 7.3 + i * 0.37))

const item = (n: number, seed = n, metadata: VectorItem["metadata"] = { n }): VectorItem => ({
  id: `entity-${n}`,
  values: vector(seed),
  metadata
})

const store = Effect.provide(
  VectorStore,
  SqliteVecStoreLive(DIMS).pipe(Layer.provide(Layer.effect(SqlClient.SqlClient, SqlClient.SqlClient)))
)

/** vec0's rowid of each code: a rewrite (delete, then insert) gives the key a new one */
const codeRowids = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql.unsafe<{ id: string; rowid: number }>(
    `SELECT id, rowid FROM ${codeTableName(DIMS)}_rowids ORDER BY id`
  )
  return new Map(rows.map((r) => [JSON.parse(r.id)[1] as string, Number(r.rowid)] as const))
})

const storedMetadata = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql.unsafe<{ vector_id: string; metadata: string }>(
    `SELECT vector_id, metadata FROM ${floatTableName(DIMS)} ORDER BY vector_id`
  )
  return Object.fromEntries(rows.map((r) => [r.vector_id, JSON.parse(r.metadata)]))
})

const onSqlite = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  effect.pipe(Effect.provide(SqliteLive(":memory:")))

describe("SqliteVecStore: an unchanged vector is not rewritten", () => {
  for (const inTransaction of [false, true]) {
    it.effect(`keeps unchanged rows, writes changed and new ones (${inTransaction ? "in" : "outside"} a transaction)`, () =>
      onSqlite(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const vectors = yield* store
          const index = "dataset-1-entities"
          yield* vectors.upsert(index, [item(1), item(2), item(3)])
          const before = yield* codeRowids
          // entity-1 the same, entity-2 other values, entity-3 other metadata, entity-4 new
          const write = vectors.upsert(index, [item(1), item(2, 20), item(3, 3, { n: 33 }), item(4)])
          yield* inTransaction ? sql.withTransaction(write) : write
          const after = yield* codeRowids
          expect([...after.keys()]).toEqual(["entity-1", "entity-2", "entity-3", "entity-4"])
          expect(after.get("entity-1")).toBe(before.get("entity-1"))
          expect(after.get("entity-2")).not.toBe(before.get("entity-2"))
          expect(after.get("entity-3")).not.toBe(before.get("entity-3"))
          expect(yield* storedMetadata).toEqual({
            "entity-1": { n: 1 },
            "entity-2": { n: 2 },
            "entity-3": { n: 33 },
            "entity-4": { n: 4 }
          })
          // every vector answers as written, the changed one with its new values
          for (const [id, seed] of [["entity-1", 1], ["entity-2", 20], ["entity-3", 3], ["entity-4", 4]] as const) {
            const [best] = yield* vectors.query(index, vector(seed), 1, -1)
            expect(best!.id).toBe(id)
            expect(best!.score).toBeCloseTo(1, 5)
          }
          const [old] = yield* vectors.query(index, vector(2), 4, -1)
          expect(old!.score).toBeLessThan(0.999)
          // the same vector in another index is a write of its own
          yield* vectors.upsert("dataset-2-entities", [item(1)])
          const other = yield* vectors.query("dataset-2-entities", vector(1), 5, -1)
          expect(other.map((m) => m.id)).toEqual(["entity-1"])
        })
      ))
  }

  it.effect("rolls an upsert back with the caller's transaction", () =>
    onSqlite(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const vectors = yield* store
        const index = "dataset-1-entities"
        yield* vectors.upsert(index, [item(1), item(2)])
        const failed = yield* sql.withTransaction(
          Effect.zipRight(vectors.upsert(index, [item(1), item(2, 20)]), Effect.fail("rollback" as const))
        ).pipe(Effect.flip)
        expect(failed).toBe("rollback")
        const [best] = yield* vectors.query(index, vector(2), 1, -1)
        expect(best!.id).toBe("entity-2")
        expect(best!.score).toBeCloseTo(1, 5)
      })
    ))
})
