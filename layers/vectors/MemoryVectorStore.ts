/**
 * An in-memory VectorStore (vector_store = "memory"; tests): a Map per index, exact cosine.
 * Its companion tag shows the contents and the options make operations fail on demand.
 */
import { Context, Effect, Layer } from "effect"
import { VectorWriteFailed } from "../../src/domain/Errors.js"
import { type VectorItem, type VectorMatch, VectorStore } from "../../src/services/VectorStore.js"
import { bestMatches, checkItems, checkQuery, cosine, lastPerId } from "./common.js"

export interface MemoryVectorStoreOptions {
  /** when set, vectors of another length are refused (as the real stores do) */
  readonly dimensions?: number
  /** true: this upsert fails with VectorWriteFailed and writes nothing */
  readonly failUpserts?: (index: string, items: ReadonlyArray<VectorItem>) => boolean
  readonly failQueries?: (index: string) => boolean
  readonly failDeletes?: (index: string, ids: ReadonlyArray<string>) => boolean
}

const NAME = "memory"

export class MemoryVectorStore extends Context.Tag("gligabao/testing/MemoryVectorStore")<
  MemoryVectorStore,
  {
    /** the items of one index, in insertion order (an overwrite keeps its place) */
    readonly items: (index: string) => ReadonlyArray<VectorItem>
    /** the indexes that hold at least one vector, sorted */
    readonly indexes: () => ReadonlyArray<string>
    /** every upsert call received, failed ones included */
    readonly upserts: ReadonlyArray<{ readonly index: string; readonly ids: ReadonlyArray<string> }>
  }
>() {
  /** Both services over one shared state (for use outside a Layer too). */
  static make(options: MemoryVectorStoreOptions = {}) {
    const data = new Map<string, Map<string, VectorItem>>()
    const upserts: Array<{ index: string; ids: ReadonlyArray<string> }> = []
    const failed = (operation: string, index: string) =>
      new VectorWriteFailed({ message: `${NAME}: ${operation} on ${index} failed (as the test asked)` })

    const store = VectorStore.of({
      name: NAME,
      upsert: (index, items) =>
        Effect.suspend(() => {
          upserts.push({ index, ids: items.map((item) => item.id) })
          const invalid = checkItems(NAME, index, items, options.dimensions)
          if (invalid !== undefined) return Effect.fail(invalid)
          if (options.failUpserts?.(index, items)) return Effect.fail(failed("upsert", index))
          if (items.length === 0) return Effect.void
          const entries = data.get(index) ?? new Map<string, VectorItem>()
          for (const item of lastPerId(items)) {
            // copies, so a caller mutating its arrays later cannot change what is stored
            entries.set(item.id, { id: item.id, values: [...item.values], metadata: { ...item.metadata } })
          }
          data.set(index, entries)
          return Effect.void
        }),
      query: (index, vector, k, minScore) =>
        Effect.suspend(() => {
          const invalid = checkQuery(NAME, index, vector, options.dimensions)
          if (invalid !== undefined) return Effect.fail(invalid)
          if (options.failQueries?.(index)) return Effect.fail(failed("query", index))
          const matches: Array<VectorMatch> = []
          for (const item of data.get(index)?.values() ?? []) {
            if (item.values.length !== vector.length) {
              return Effect.fail(
                new VectorWriteFailed({
                  message:
                    `${NAME}: the query vector for ${index} has ${vector.length} numbers, vector ${item.id} has ${item.values.length}`
                })
              )
            }
            matches.push({ id: item.id, score: cosine(vector, item.values), metadata: { ...item.metadata } })
          }
          return Effect.succeed(bestMatches(matches, k, minScore))
        }),
      delete: (index, ids) =>
        Effect.suspend(() => {
          if (options.failDeletes?.(index, ids)) return Effect.fail(failed("delete", index))
          const entries = data.get(index)
          for (const id of ids) entries?.delete(id)
          if (entries?.size === 0) data.delete(index)
          return Effect.void
        }),
      fetch: (index, ids) =>
        Effect.sync(() => {
          const entries = data.get(index)
          return [...new Set(ids)].flatMap((id) => {
            const item = entries?.get(id)
            return item === undefined ? [] : [{ id, values: [...item.values], metadata: { ...item.metadata } }]
          })
        }),
      compact: Effect.void,
      health: Effect.succeed({ search: "exact cosine in memory" })
    })

    const contents = MemoryVectorStore.of({
      items: (index) => [...(data.get(index)?.values() ?? [])],
      indexes: () => [...data.keys()].sort(),
      upserts
    })
    return { store, contents }
  }

  /** The VectorStore and this view of it; fresh, empty state per build. */
  static layer(options: MemoryVectorStoreOptions = {}): Layer.Layer<VectorStore | MemoryVectorStore> {
    return Layer.effectContext(
      Effect.sync(() => {
        const { store, contents } = MemoryVectorStore.make(options)
        return Context.make(VectorStore, store).pipe(Context.add(MemoryVectorStore, contents))
      })
    )
  }
}

/** The memory store without failures (vector_store = "memory"). */
export const MemoryVectorStoreLive = (
  options: MemoryVectorStoreOptions = {}
): Layer.Layer<VectorStore | MemoryVectorStore> => MemoryVectorStore.layer(options)
