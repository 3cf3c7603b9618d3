/** The SQLite vector store's keys and blobs, and which items of an upsert change a stored row. */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { VectorItem } from "../../src/services/VectorStore.js"
import { chunksOf } from "./common.js"

export const keyOf = (index: string, id: string) => JSON.stringify([index, id])

/** `?, ?, ...`: one parameter a value of a batch */
export const placeholders = (values: ReadonlyArray<unknown>) => values.map(() => "?").join(", ")

/** float32 bytes in the machine's order, which is how sqlite-vec reads a blob. */
export const toBlob = (values: ReadonlyArray<number>): Buffer => Buffer.from(Float32Array.from(values).buffer)

/**
 * Leaves out the items whose float row holds these bytes and metadata already: a remember
 * rewrote every stored entity a text names, a delete and an insert of the same code (issue
 * 39). Codes follow floats (written together, `syncCodes` at open): same float, same code.
 */
export const changedOnly = (
  sql: SqlClient.SqlClient,
  floats: string,
  index: string,
  items: ReadonlyArray<VectorItem>,
  batchSize: number
) =>
  Effect.gen(function*() {
    const stored = new Map<string, { metadata: string | null; embedding: Uint8Array }>()
    for (const batch of chunksOf(items, batchSize)) {
      const keys = batch.map((item) => keyOf(index, item.id))
      const rows = yield* sql.unsafe<{ key: string; metadata: string | null; embedding: Uint8Array }>(
        `SELECT key, metadata, embedding FROM ${floats} WHERE key IN (${placeholders(keys)})`,
        keys
      )
      for (const row of rows) stored.set(row.key, row)
    }
    const changed = items.filter((item) => {
      const row = stored.get(keyOf(index, item.id))
      return row === undefined || row.metadata !== JSON.stringify(item.metadata) ||
        !toBlob(item.values).equals(row.embedding)
    })
    yield* Effect.annotateCurrentSpan({ items: items.length, unchanged: items.length - changed.length })
    return changed
  }).pipe(Effect.withSpan("SqliteVecStore.changedOnly", { attributes: { index } }))
