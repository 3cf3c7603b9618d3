/**
 * `VectorStore.fetch`, which `gligabao dump` reads vectors with, on every store that has it: the
 * memory store, sqlite-vec below 64 dimensions (the vec0 table, key by key) and from 64 up (the
 * plain float table), and PostgreSQL's gb_vectors. Each gives back the vectors it has of the
 * ids asked (values as stored, float32 for the database stores; metadata), and nothing else.
 */
import { it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { describe, expect } from "vitest"
import { SqliteLive } from "../../layers/sql/index.js"
import { MemoryVectorStoreLive } from "../../layers/vectors/MemoryVectorStore.js"
import { PostgresVectorStoreLive } from "../../layers/vectors/PostgresVectorStore.js"
import { SqliteVecStoreLive } from "../../layers/vectors/SqliteVecStore.js"
import { VectorStore } from "../../src/services/VectorStore.js"
import { pgLayer, pgSkipReason } from "../support/databases.js"

const vector = (dimensions: number, seed: number) =>
  Array.from({ length: dimensions }, (_, i) => Math.sin(seed * 7.1 + i * 0.37) / 3)

const fetchBack = (dimensions: number, float32: boolean) =>
  Effect.gen(function*() {
    const store = yield* VectorStore
    const index = "dataset-1-entities"
    yield* store.upsert(index, [
      { id: "entity-1", values: vector(dimensions, 1), metadata: { kind: "entity", entity_id: 1, name: "Alice" } },
      { id: "entity-2", values: vector(dimensions, 2), metadata: { kind: "entity", entity_id: 2, name: "Berlin" } }
    ])
    yield* store.upsert("dataset-2-entities", [{ id: "entity-1", values: vector(dimensions, 9), metadata: {} }])
    const found = yield* store.fetch!(index, ["entity-2", "entity-1", "entity-3", "entity-1"])
    const round = (values: ReadonlyArray<number>) => values.map((v) => (float32 ? Math.fround(v) : v))
    expect([...found].sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      {
        id: "entity-1",
        values: round(vector(dimensions, 1)),
        metadata: { kind: "entity", entity_id: 1, name: "Alice" }
      },
      {
        id: "entity-2",
        values: round(vector(dimensions, 2)),
        metadata: { kind: "entity", entity_id: 2, name: "Berlin" }
      }
    ])
    expect(yield* store.fetch!(index, [])).toEqual([])
  })

describe("VectorStore.fetch", () => {
  it.effect("memory", () => fetchBack(8, false).pipe(Effect.provide(MemoryVectorStoreLive({ dimensions: 8 }))))

  for (const dimensions of [8, 64]) {
    it.effect(`sqlite-vec, ${dimensions} dimensions`, () =>
      fetchBack(dimensions, true).pipe(
        Effect.provide(SqliteVecStoreLive(dimensions).pipe(Layer.provide(SqliteLive(":memory:"))))
      ))
  }

  const reason = pgSkipReason()
  if (reason !== null) console.warn(`!!! SKIPPING the PostgreSQL VectorStore.fetch test: ${reason}`)
  if (reason === null) {
    it.effect("postgres", () =>
      fetchBack(64, true).pipe(Effect.provide(PostgresVectorStoreLive(64).pipe(Layer.provide(pgLayer())))))
  }
})
