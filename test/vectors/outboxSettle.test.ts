/**
 * VectorOutbox.settle removes exactly the pending rows of the vectors it is given, whatever
 * their indexes (issue 39: one statement for all of them), on both dialects.
 */
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import { type OutboxItem, VectorOutbox } from "../../src/services/VectorOutbox.js"
import { forEachDialect } from "../support/databases.js"

const NOW = "2026-12-05T00:00:00.000Z"

forEachDialect((_dialect, makeLayer) => {
  it.effect("settles the given vectors of several indexes and leaves every other row", () =>
    Effect.gen(function*() {
      const dataset = yield* (yield* DatasetsRepo).getOrCreate("u", "d", NOW)
      const outbox = yield* VectorOutbox
      const item = (index: string, id: string): OutboxItem => ({
        dataset_id: dataset.id,
        index_name: index,
        vector_id: id,
        values: [0.5, 0.25],
        metadata: { id }
      })
      const rows = [
        item("a", "x-1"),
        item("a", "x-2"),
        item("b", "x-1"),
        item("b", "x-3"),
        item("c", "x-1"),
        item("a", "x-1")
      ]
      yield* outbox.enqueue(rows, NOW)
      // a repeat in the list, an id of another index, a vector with no row
      yield* outbox.settle([item("a", "x-1"), item("b", "x-3"), item("b", "x-3"), item("b", "x-2"), item("d", "x-9")])
      const left = yield* outbox.pending(100)
      expect(left.map((r) => `${r.index_name}/${r.vector_id}`).sort()).toEqual(["a/x-2", "b/x-1", "c/x-1"])
      yield* outbox.settle([])
      expect(yield* outbox.count()).toBe(3)
      // more vectors than one statement's batch
      const many = Array.from({ length: 1200 }, (_, i) => item(i % 2 === 0 ? "e" : "f", `v-${i}`))
      yield* outbox.enqueue(many, NOW)
      yield* outbox.settle(many.slice(0, 1100))
      const rest = yield* outbox.pending(1000)
      expect(rest.map((r) => `${r.index_name}/${r.vector_id}`).sort()).toEqual(
        ["a/x-2", "b/x-1", "c/x-1", ...many.slice(1100).map((r) => `${r.index_name}/${r.vector_id}`)].sort()
      )
    }).pipe(Effect.provide(makeLayer())))
})
