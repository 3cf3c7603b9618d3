/**
 * VectorOutbox on SQL: vectors waiting for the vector store. A vector is stored as `f64:` and
 * the base64 of its float64 bytes: exact, and far less to write and parse than JSON text,
 * which made most of a long document's garbage (BENCHMARKS.md, memory). Rows queued as JSON
 * by an earlier version are still read.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { type OutboxRow, VectorOutbox } from "../../../src/services/VectorOutbox.js"
import { chunksOf, decodeJson, encodeJson, unique } from "./internal.js"

interface OutboxRecord {
  readonly id: number
  readonly dataset_id: number
  readonly index_name: string
  readonly vector_id: string
  readonly text_or_values: string
  readonly metadata: string | null
  readonly attempts: number
  readonly op: string
}

const F64 = "f64:"

export const encodeValues = (values: ReadonlyArray<number>): string =>
  F64 + Buffer.from(Float64Array.from(values).buffer).toString("base64")

export const decodeValues = (stored: string): Array<number> => {
  if (!stored.startsWith(F64)) return decodeJson<Array<number>>(stored) ?? []
  const bytes = Buffer.from(stored.slice(F64.length), "base64")
  // copied into an aligned buffer: a Buffer's bytes may start at any offset of its pool
  const aligned = new Uint8Array(bytes.length - (bytes.length % 8))
  aligned.set(bytes.subarray(0, aligned.length))
  return Array.from(new Float64Array(aligned.buffer))
}

const decode = (r: OutboxRecord): OutboxRow => ({
  id: r.id,
  dataset_id: r.dataset_id,
  index_name: r.index_name,
  vector_id: r.vector_id,
  values: decodeValues(r.text_or_values),
  metadata: decodeJson<Record<string, string | number | boolean>>(r.metadata) ?? {},
  attempts: r.attempts,
  op: r.op === "delete" ? "delete" : "upsert"
})

// a row holds a whole vector (16 KB at 1536 dimensions): keep statements small
const OUTBOX_BATCH = 50

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const COLUMNS = sql.literal("id, dataset_id, index_name, vector_id, text_or_values, metadata, attempts, op")
  return VectorOutbox.of({
    enqueue: (items, now) =>
      Effect.forEach(
        chunksOf(items, OUTBOX_BATCH),
        (chunk) =>
          sql<{ id: number }>`INSERT INTO gb_vector_outbox ${
            sql.insert(chunk.map((i) => ({
              dataset_id: i.dataset_id,
              index_name: i.index_name,
              vector_id: i.vector_id,
              text_or_values: encodeValues(i.values),
              metadata: encodeJson(i.metadata),
              created_at: now,
              op: i.op ?? "upsert"
            })))
          } RETURNING id`
      ).pipe(
        // RETURNING of a multi-row insert comes back in insert order on both dialects
        Effect.map((chunks) => chunks.flat().map((r) => r.id)),
        Effect.orDie
      ),
    pending: (limit, ids, lock = false) => {
      // SQLite has one writer: its transaction already excludes every other
      const forUpdate = lock && sql.onDialectOrElse({ pg: () => true, orElse: () => false })
        ? sql.literal("FOR UPDATE")
        : sql.literal("")
      const rows: Effect.Effect<ReadonlyArray<OutboxRecord>, unknown> = ids === undefined
        ? sql<OutboxRecord>`SELECT ${COLUMNS} FROM gb_vector_outbox ORDER BY created_at, id LIMIT ${limit} ${forUpdate}`
        : Effect.map(
          Effect.forEach(
            chunksOf(unique(ids)),
            (chunk) =>
              sql<OutboxRecord>`SELECT ${COLUMNS} FROM gb_vector_outbox WHERE id IN ${
                sql.in(chunk)
              } ORDER BY id ${forUpdate}`
          ),
          (chunks) => chunks.flat().slice(0, limit)
        )
      return rows.pipe(Effect.map((rs) => rs.map(decode)), Effect.orDie)
    },
    remove: (ids) =>
      Effect.forEach(chunksOf(unique(ids)), (chunk) => sql`DELETE FROM gb_vector_outbox WHERE id IN ${sql.in(chunk)}`, {
        discard: true
      }).pipe(Effect.orDie),
    // every index in one statement, one OR term each (a remember settles its entities and its
    // facts: one statement instead of two, issue 39)
    settle: (vectors) => {
      const pairs = [...new Map(vectors.map((v) => [JSON.stringify([v.index_name, v.vector_id]), v] as const)).values()]
      return Effect.forEach(
        chunksOf(pairs),
        (chunk) => {
          const byIndex = new Map<string, Array<string>>()
          for (const v of chunk) byIndex.set(v.index_name, [...(byIndex.get(v.index_name) ?? []), v.vector_id])
          const terms = [...byIndex].map(([index, ids]) => sql`(index_name = ${index} AND vector_id IN ${sql.in(ids)})`)
          return sql`DELETE FROM gb_vector_outbox WHERE ${sql.or(terms)}`
        },
        { discard: true }
      ).pipe(Effect.orDie)
    },
    recordFailure: (ids, error) =>
      Effect.forEach(
        chunksOf(unique(ids)),
        (chunk) =>
          sql`UPDATE gb_vector_outbox SET attempts = attempts + 1, last_error = ${error}
          WHERE id IN ${sql.in(chunk)}`,
        { discard: true }
      ).pipe(Effect.orDie),
    count: () =>
      sql<{ n: number }>`SELECT COUNT(*) AS n FROM gb_vector_outbox`.pipe(
        Effect.map((rows) => Number(rows[0]?.n ?? 0)),
        Effect.orDie
      )
  })
})

export const VectorOutboxLive: Layer.Layer<VectorOutbox, never, SqlClient.SqlClient> = Layer.effect(VectorOutbox, make)
