/**
 * The SqliteVecStore's binary-code search (layers/vectors/SqliteVecStore.ts): close to the exact
 * scan, rescored to exact cosine, the code table kept in step with the float vectors (writes,
 * deletes, an upgrade of a database from before it) and partitions kept apart.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqliteLive } from "../../layers/sql/index.js"
import { binaryCode, codeBits } from "../../layers/vectors/binaryCodes.js"
import { cosine } from "../../layers/vectors/common.js"
import {
  codeTableName,
  floatTableName,
  SqliteVecStoreLive,
  vectorTableName
} from "../../layers/vectors/SqliteVecStore.js"
import { type VectorItem, VectorStore } from "../../src/services/VectorStore.js"

const DIMS = 384

/** deterministic, so a failure can be replayed */
const generator = (seed: number) => {
  let state = seed
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32
  }
  const gaussian = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next())
  return { next, gaussian }
}

/** `count` vectors around `clusters` random centres: neighbours are close, as real embeddings. */
const clustered = (count: number, clusters: number, seed: number) => {
  const { gaussian, next } = generator(seed)
  const centres = Array.from({ length: clusters }, () => Array.from({ length: DIMS }, gaussian))
  const near = () => {
    const centre = centres[Math.floor(next() * clusters)]!
    const spread = 0.6 + next()
    return centre.map((x) => x + spread * gaussian())
  }
  return { vectors: Array.from({ length: count }, near), near }
}

const items = (vectors: ReadonlyArray<ReadonlyArray<number>>, prefix = "edge"): Array<VectorItem> =>
  vectors.map((values, i) => ({ id: `${prefix}-${i + 1}`, values, metadata: { n: i + 1 } }))

const store = Effect.provide(
  VectorStore,
  SqliteVecStoreLive(DIMS).pipe(Layer.provide(Layer.effect(SqlClient.SqlClient, SqlClient.SqlClient)))
)

/** the keys of the float table and of the code table, sorted */
const keySets = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const keys = (query: string) => Effect.map(sql.unsafe<{ id: string }>(query), (rows) => rows.map((r) => r.id))
  return {
    vectors: yield* keys(`SELECT key AS id FROM ${floatTableName(DIMS)} ORDER BY key`),
    codes: yield* keys(`SELECT id FROM ${codeTableName(DIMS)}_rowids ORDER BY id`)
  }
})

const onSqlite = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  effect.pipe(Effect.provide(SqliteLive(":memory:")))

describe("binaryCode", () => {
  it("is one bit a coordinate (rounded up to 64), and the same for a vector and its multiples", () => {
    expect(codeBits(1536)).toBe(1536)
    expect(codeBits(100)).toBe(128)
    const { gaussian } = generator(3)
    const v = Array.from({ length: DIMS }, gaussian)
    expect(binaryCode(v, DIMS)).toHaveLength(DIMS / 8)
    expect(binaryCode(v.map((x) => x * 7), DIMS)).toEqual(binaryCode(v, DIMS))
    // the opposite vector has every bit flipped (no rotated coordinate is exactly 0 here)
    const flipped = Buffer.from(binaryCode(v, DIMS).map((byte) => ~byte & 0xff))
    expect(binaryCode(v.map((x) => -x), DIMS)).toEqual(flipped)
  })

  it("gives a sparse vector a code with both kinds of bits (the rotation spreads it)", () => {
    const sparse = new Array<number>(DIMS).fill(0)
    sparse[5] = 1
    sparse[200] = -0.5
    const ones = [...binaryCode(sparse, DIMS)].reduce((n, byte) => n + byte.toString(2).replaceAll("0", "").length, 0)
    expect(ones).toBeGreaterThan(DIMS / 4)
    expect(ones).toBeLessThan((DIMS * 3) / 4)
  })
})

describe("SqliteVecStore with binary codes", () => {
  it.effect("finds what the exact scan finds (recall@10 >= 0.95), with exact cosine scores", () =>
    onSqlite(
      Effect.gen(function*() {
        const vectors = yield* store
        const data = clustered(3000, 40, 11)
        yield* vectors.upsert("dataset-1-edges", items(data.vectors))
        let found = 0
        let wanted = 0
        for (let q = 0; q < 40; q++) {
          const query = data.near()
          const exact = data.vectors
            .map((values, i) => ({ id: `edge-${i + 1}`, score: cosine(query, values) }))
            .sort((a, b) => b.score - a.score)
            .slice(0, 10)
          const matches = yield* vectors.query("dataset-1-edges", query, 10, -1)
          expect(matches).toHaveLength(10)
          const ids = new Set(matches.map((m) => m.id))
          wanted += exact.length
          found += exact.filter((e) => ids.has(e.id)).length
          for (const match of matches) {
            const n = Number(match.metadata["n"])
            expect(match.score).toBeCloseTo(cosine(query, data.vectors[n - 1]!), 5)
          }
          expect(matches.map((m) => m.score)).toEqual([...matches.map((m) => m.score)].sort((a, b) => b - a))
        }
        expect(found / wanted).toBeGreaterThanOrEqual(0.95)
      })
    ))

  it.effect("keeps minScore and k, and skips a zero vector", () =>
    onSqlite(
      Effect.gen(function*() {
        const vectors = yield* store
        const data = clustered(200, 4, 5)
        const zero = new Array<number>(DIMS).fill(0)
        yield* vectors.upsert("dataset-1-entities", [...items(data.vectors, "entity"), {
          id: "entity-0",
          values: zero,
          metadata: {}
        }])
        const query = data.vectors[0]!
        const top3 = yield* vectors.query("dataset-1-entities", query, 3, -1)
        expect(top3).toHaveLength(3)
        expect(top3[0]!.id).toBe("entity-1")
        expect(top3[0]!.score).toBeCloseTo(1, 5)
        const close = yield* vectors.query("dataset-1-entities", query, 500, 0.5)
        expect(close.length).toBeGreaterThan(0)
        expect(close.every((m) => m.score >= 0.5 && m.id !== "entity-0")).toBe(true)
        expect(yield* vectors.query("dataset-1-entities", zero, 10, -1)).toEqual([])
      })
    ))

  it.effect("keeps the code table in step through upserts, overwrites and deletes", () =>
    onSqlite(
      Effect.gen(function*() {
        const vectors = yield* store
        const data = clustered(120, 3, 7)
        yield* vectors.upsert("dataset-1-edges", items(data.vectors.slice(0, 100)))
        yield* vectors.upsert("dataset-2-edges", items(data.vectors.slice(0, 10)))
        // an overwrite moves edge-1 to edge-101's place: the codes must follow
        yield* vectors.upsert("dataset-1-edges", [{ id: "edge-1", values: data.vectors[100]!, metadata: { n: 101 } }])
        yield* vectors.delete("dataset-1-edges", ["edge-2", "edge-3", "edge-missing"])
        const keys = yield* keySets
        expect(keys.codes).toEqual(keys.vectors)
        expect(keys.vectors).toHaveLength(100 - 2 + 10)
        const [best] = yield* vectors.query("dataset-1-edges", data.vectors[100]!, 1, -1)
        expect(best!.id).toBe("edge-1")
        expect(best!.score).toBeCloseTo(1, 5)
        const gone = yield* vectors.query("dataset-1-edges", data.vectors[1]!, 200, -1)
        expect(gone.map((m) => m.id)).not.toContain("edge-2")
        expect(gone).toHaveLength(98)
      })
    ))

  it.effect("keeps partitions apart, even for equal ids and vectors", () =>
    onSqlite(
      Effect.gen(function*() {
        const vectors = yield* store
        const data = clustered(300, 5, 9)
        yield* vectors.upsert("dataset-1-chunks", items(data.vectors.slice(0, 150), "chunk"))
        yield* vectors.upsert(
          "dataset-2-chunks",
          items(data.vectors.slice(150), "chunk").map((item) => ({ ...item, metadata: { dataset: 2 } }))
        )
        // the same vector in both: each index answers with its own
        yield* vectors.upsert("dataset-2-chunks", [{
          id: "chunk-1",
          values: data.vectors[0]!,
          metadata: { dataset: 2 }
        }])
        const fromFirst = yield* vectors.query("dataset-1-chunks", data.vectors[0]!, 200, -1)
        expect(fromFirst).toHaveLength(150)
        expect(fromFirst.every((m) => m.metadata["dataset"] === undefined)).toBe(true)
        const fromSecond = yield* vectors.query("dataset-2-chunks", data.vectors[0]!, 5, -1)
        expect(fromSecond[0]).toMatchObject({ id: "chunk-1", metadata: { dataset: 2 } })
        expect(fromSecond.every((m) => m.metadata["dataset"] === 2)).toBe(true)
      })
    ))

  it.effect("moves the floats of a database from before the plain table out of vec0, backfills their codes once, and drops stray codes", () =>
    onSqlite(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const data = clustered(700, 6, 13)
        // the float table as the store wrote it before the code table and the plain float table existed
        const table = vectorTableName(DIMS)
        yield* sql.unsafe(
          `CREATE VIRTUAL TABLE ${table} USING vec0(key text primary key, index_name text partition key, ` +
            `embedding float[${DIMS}] distance_metric=cosine, +vector_id text, +metadata text, chunk_size=64)`
        )
        for (const [i, values] of data.vectors.entries()) {
          const index = i < 600 ? "dataset-1-edges" : "dataset-1-entities"
          const id = `vector-${i + 1}`
          yield* sql.unsafe(
            `INSERT INTO ${table}(key, index_name, embedding, vector_id, metadata) VALUES (?, ?, ?, ?, ?)`,
            [
              JSON.stringify([index, id]),
              index,
              Buffer.from(Float32Array.from(values).buffer),
              id,
              JSON.stringify({ n: i + 1 })
            ]
          )
        }
        const vectors = yield* store
        // the vec0 table and its shadow tables are gone; what is left is the two new tables'
        const left = yield* sql.unsafe<{ name: string }>(`SELECT name FROM sqlite_master WHERE name LIKE ?`, [
          `${table}%`
        ])
        expect(left.map((row) => row.name).filter((name) => !name.startsWith(codeTableName(DIMS)))).toEqual([
          floatTableName(DIMS)
        ])
        const keys = yield* keySets
        expect(keys.vectors).toHaveLength(700)
        expect(keys.codes).toEqual(keys.vectors)
        const [best] = yield* vectors.query("dataset-1-entities", data.vectors[650]!, 1, -1)
        expect(best).toMatchObject({ id: "vector-651", metadata: { n: 651 } })
        expect(best!.score).toBeCloseTo(1, 5)

        // a stray code (no vector) is dropped, a missing code is written, at the next start
        yield* sql.unsafe(`INSERT INTO ${codeTableName(DIMS)}(key, index_name, code) VALUES (?, ?, vec_bit(?))`, [
          JSON.stringify(["dataset-1-edges", "stray"]),
          "dataset-1-edges",
          binaryCode(data.vectors[0]!, DIMS)
        ])
        yield* store
        expect(yield* keySets).toEqual(keys)
        yield* sql.unsafe(`DELETE FROM ${codeTableName(DIMS)} WHERE key = ?`, [
          JSON.stringify(["dataset-1-edges", "vector-1"])
        ])
        yield* store
        expect(yield* keySets).toEqual(keys)
        const [first] = yield* vectors.query("dataset-1-edges", data.vectors[0]!, 1, -1)
        expect(first!.id).toBe("vector-1")
      })
    ))
})
