/**
 * What a VectorStore's approximate search must keep of the exact one, at a real embedding size:
 * recall@10 against brute force, exact cosine scores best first, minScore and k, zero vectors,
 * overwrites and deletes, indexes apart. Run on the PostgreSQL store's two searches (portable
 * binary codes on the test cluster, pgvector HNSW on PGlite).
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { cosine } from "../../layers/vectors/common.js"
import { type VectorItem, VectorStore } from "../../src/services/VectorStore.js"

export const SEARCH_DIMS = 384

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
export const clustered = (count: number, clusters: number, seed: number, dims = SEARCH_DIMS) => {
  const { gaussian, next } = generator(seed)
  const centres = Array.from({ length: clusters }, () => Array.from({ length: dims }, gaussian))
  const near = () => {
    const centre = centres[Math.floor(next() * clusters)]!
    const spread = 0.6 + next()
    return centre.map((x) => x + spread * gaussian())
  }
  return { vectors: Array.from({ length: count }, near), near }
}

export const items = (vectors: ReadonlyArray<ReadonlyArray<number>>, prefix = "edge"): Array<VectorItem> =>
  vectors.map((values, i) => ({ id: `${prefix}-${i + 1}`, values, metadata: { n: i + 1 } }))

let counter = 0
const fresh = (kind: string) => `dataset-s${++counter}-${kind}`

export interface EffectTests {
  readonly effect: (name: string, self: () => Effect.Effect<void, unknown, VectorStore>, timeout?: number) => void
}

/** The tests, inside a `layer(...)` block whose store holds SEARCH_DIMS-dimensional vectors. */
export const searchSuite = (test: EffectTests, vectorCount = 3000) => {
  test.effect("finds what the exact scan finds (recall@10 >= 0.95), with exact cosine scores", () =>
    Effect.gen(function*() {
      const vectors = yield* VectorStore
      const index = fresh("edges")
      const data = clustered(vectorCount, 40, 11)
      yield* vectors.upsert(index, items(data.vectors))
      let found = 0
      let wanted = 0
      for (let q = 0; q < 20; q++) {
        const query = data.near()
        const exact = data.vectors
          .map((values, i) => ({ id: `edge-${i + 1}`, score: cosine(query, values) }))
          .sort((a, b) => b.score - a.score)
          .slice(0, 10)
        const matches = yield* vectors.query(index, query, 10, -1)
        expect(matches).toHaveLength(10)
        const ids = new Set(matches.map((m) => m.id))
        wanted += exact.length
        found += exact.filter((e) => ids.has(e.id)).length
        for (const match of matches) {
          const n = Number(match.metadata["n"])
          // float4 storage: exact to about 6 digits
          expect(match.score).toBeCloseTo(cosine(query, data.vectors[n - 1]!), 4)
        }
        expect(matches.map((m) => m.score)).toEqual([...matches.map((m) => m.score)].sort((a, b) => b - a))
      }
      expect(found / wanted).toBeGreaterThanOrEqual(0.95)
    }))

  test.effect("keeps minScore and k, and skips a zero vector", () =>
    Effect.gen(function*() {
      const vectors = yield* VectorStore
      const index = fresh("entities")
      const data = clustered(200, 4, 5)
      const zero = new Array<number>(SEARCH_DIMS).fill(0)
      yield* vectors.upsert(index, [...items(data.vectors, "entity"), { id: "entity-0", values: zero, metadata: {} }])
      const query = data.vectors[0]!
      const top3 = yield* vectors.query(index, query, 3, -1)
      expect(top3).toHaveLength(3)
      expect(top3[0]!.id).toBe("entity-1")
      expect(top3[0]!.score).toBeCloseTo(1, 5)
      const close = yield* vectors.query(index, query, 500, 0.5)
      expect(close.length).toBeGreaterThan(0)
      expect(close.every((m) => m.score >= 0.5 && m.id !== "entity-0")).toBe(true)
      expect(yield* vectors.query(index, zero, 10, -1)).toEqual([])
    }))

  test.effect("follows overwrites and deletes, and keeps indexes apart", () =>
    Effect.gen(function*() {
      const vectors = yield* VectorStore
      const first = fresh("edges")
      const second = fresh("edges")
      const data = clustered(120, 3, 7)
      yield* vectors.upsert(first, items(data.vectors.slice(0, 100)))
      yield* vectors.upsert(
        second,
        items(data.vectors.slice(0, 10)).map((item) => ({ ...item, metadata: { other: 1 } }))
      )
      yield* vectors.upsert(first, [{ id: "edge-1", values: data.vectors[100]!, metadata: { n: 101 } }])
      yield* vectors.delete(first, ["edge-2", "edge-3", "edge-missing"])
      const [best] = yield* vectors.query(first, data.vectors[100]!, 1, -1)
      expect(best).toMatchObject({ id: "edge-1", metadata: { n: 101 } })
      expect(best!.score).toBeCloseTo(1, 5)
      const all = yield* vectors.query(first, data.vectors[1]!, 200, -1)
      expect(all.map((m) => m.id)).not.toContain("edge-2")
      expect(all).toHaveLength(98)
      const fromSecond = yield* vectors.query(second, data.vectors[1]!, 200, -1)
      expect(fromSecond).toHaveLength(10)
      expect(fromSecond[0]).toMatchObject({ id: "edge-2", metadata: { other: 1 } })
    }))
}
