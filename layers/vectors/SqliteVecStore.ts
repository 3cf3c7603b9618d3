/**
 * The embedded VectorStore: sqlite-vec 0.1.9 in a SQLite database (by default the same
 * file as the graph, so the pipeline can write vectors inside its own transaction).
 *
 * One vec0 table per dimension count, every gligabao index a partition of it:
 *
 *   CREATE VIRTUAL TABLE gb_vectors_1536 USING vec0(
 *     key text primary key,              -- JSON ["<index>","<vector id>"]: ids are unique per index only
 *     index_name text partition key,     -- dataset-<id>-entities|edges|chunks|summaries
 *     embedding float[1536] distance_metric=cosine,
 *     +vector_id text, +metadata text,   -- auxiliary columns (metadata as JSON)
 *     chunk_size=64)
 *
 * What 0.1.9 does and does not do (tried before writing this): no UPSERT or INSERT OR
 * REPLACE on vec0 (so an upsert deletes then inserts, in one transaction); a primary key
 * is unique across partitions (hence the composite key); `key IN (...)` is a full scan
 * while `key = ?` is a lookup (hence one delete per existing id); `k` is capped at 4096; every
 * partition allocates a whole chunk (chunk_size x dimensions x 4 bytes) up front: the
 * default 1024 costs 6 MB per index at 1536 dimensions, 64 costs 393 KB and searches as fast.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import * as Reactivity from "@effect/experimental/Reactivity"
import { Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import * as sqliteVec from "sqlite-vec"
import { VectorWriteFailed } from "../../src/domain/Errors.js"
import { type VectorMatch, VectorStore } from "../../src/services/VectorStore.js"
import { checkItems, checkQuery, chunksOf, lastPerId, toMetadata } from "./common.js"

const NAME = "sqlite-vec"
/** sqlite-vec refuses a larger k */
export const MAX_K = 4096
const CHUNK_SIZE = 64
/** 5 parameters a row, well under SQLite's 32766 variables */
const INSERT_BATCH = 500

export const vectorTableName = (dimensions: number) => `gb_vectors_${dimensions}`

const keyOf = (index: string, id: string) => JSON.stringify([index, id])

/** float32 bytes in the machine's order, which is how sqlite-vec reads a blob. */
const toBlob = (values: ReadonlyArray<number>): Buffer => Buffer.from(Float32Array.from(values).buffer)

const parseMetadata = (raw: unknown) => {
  try {
    return toMetadata(typeof raw === "string" ? JSON.parse(raw) : undefined)
  } catch {
    return {}
  }
}

const createTable = (sql: SqlClient.SqlClient, dimensions: number) =>
  sql.unsafe(
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${vectorTableName(dimensions)} USING vec0(` +
      `key text primary key, index_name text partition key, ` +
      `embedding float[${dimensions}] distance_metric=cosine, ` +
      `+vector_id text, +metadata text, chunk_size=${CHUNK_SIZE})`
  )

/** The store over `sql` (sqlite-vec must be loaded into it); creates its table if needed. */
export const makeSqliteVecStore = (sql: SqlClient.SqlClient, dimensions: number) =>
  Effect.gen(function* () {
    if (!Number.isInteger(dimensions) || dimensions <= 0)
      return yield* Effect.dieMessage(`${NAME}: dimensions must be a positive integer (got ${dimensions})`)
    yield* createTable(sql, dimensions)
    const table = vectorTableName(dimensions)
    const failed = (operation: string, index: string) => (error: SqlError.SqlError) =>
      new VectorWriteFailed({
        message: `${NAME}: ${operation} on ${index} failed: ${String((error.cause as Error | undefined)?.message ?? error.message)}`
      })

    // `key IN (...)` on the vec0 table is a full scan, so deletes go one key at a time, and
    // only for the keys that exist: vec0's own key map (its `_rowids` shadow table, indexed
    // on id) tells which, so writing new vectors costs no delete at all.
    const deleteKeys = (keys: ReadonlyArray<string>) =>
      Effect.forEach(
        chunksOf(keys, INSERT_BATCH),
        (batch) =>
          sql
            .unsafe<{ id: string }>(
              `SELECT id FROM ${table}_rowids WHERE id IN (${batch.map(() => "?").join(", ")})`,
              batch
            )
            .pipe(
              Effect.flatMap((existing) =>
                Effect.forEach(existing, (row) => sql.unsafe(`DELETE FROM ${table} WHERE key = ?`, [row.id]), {
                  discard: true
                })
              )
            ),
        { discard: true }
      )

    return VectorStore.of({
      name: NAME,
      upsert: (index, items) =>
        Effect.suspend(() => {
          const invalid = checkItems(NAME, index, items, dimensions)
          if (invalid !== undefined) return Effect.fail(invalid)
          const unique = lastPerId(items)
          if (unique.length === 0) return Effect.void
          const write = Effect.gen(function* () {
            yield* deleteKeys(unique.map((item) => keyOf(index, item.id)))
            for (const batch of chunksOf(unique, INSERT_BATCH)) {
              yield* sql.unsafe(
                `INSERT INTO ${table}(key, index_name, embedding, vector_id, metadata) VALUES ` +
                  batch.map(() => "(?, ?, ?, ?, ?)").join(", "),
                batch.flatMap((item) => [
                  keyOf(index, item.id),
                  index,
                  toBlob(item.values),
                  item.id,
                  JSON.stringify(item.metadata)
                ])
              )
            }
          })
          // a savepoint when the caller's transaction is open: the vectors commit with its rows
          return sql.withTransaction(write).pipe(Effect.mapError(failed("upsert", index)))
        }),
      query: (index, vector, k, minScore) =>
        Effect.suspend(() => {
          const invalid = checkQuery(NAME, index, vector, dimensions)
          if (invalid !== undefined) return Effect.fail(invalid)
          const limit = Math.min(MAX_K, Math.floor(k))
          if (!(limit > 0)) return Effect.succeed([])
          return sql
            .unsafe<{ vector_id: string; distance: number | null; metadata: string | null }>(
              `SELECT vector_id, distance, metadata FROM ${table} ` +
                `WHERE embedding MATCH ? AND k = ? AND index_name = ? ORDER BY distance`,
              [toBlob(vector), limit, index]
            )
            .pipe(
              Effect.map((rows) => {
                const matches: Array<VectorMatch> = []
                for (const row of rows) {
                  // a zero vector has no direction: sqlite-vec gives it no distance
                  if (row.distance === null) continue
                  const score = 1 - row.distance
                  if (score >= minScore)
                    matches.push({ id: row.vector_id, score, metadata: parseMetadata(row.metadata) })
                }
                return matches
              }),
              Effect.mapError(failed("query", index))
            )
        }),
      delete: (index, ids) =>
        ids.length === 0
          ? Effect.void
          : sql
              .withTransaction(deleteKeys([...new Set(ids)].map((id) => keyOf(index, id))))
              .pipe(Effect.mapError(failed("delete", index)))
    })
  })

/** sqlite-vec in the SqlClient that is provided (gligabao on SQLite: the main database). */
export const SqliteVecStoreLive = (
  dimensions: number
): Layer.Layer<VectorStore, SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.effect(
    VectorStore,
    Effect.flatMap(SqlClient.SqlClient, (sql) => makeSqliteVecStore(sql, dimensions))
  )

/**
 * sqlite-vec in a SQLite file of its own (gligabao on PostgreSQL without Pinecone): one
 * connection with WAL and sqlite-vec loaded, closed with the layer. Its directory is created.
 */
export const SqliteVecFileStoreLive = (
  filename: string,
  dimensions: number
): Layer.Layer<VectorStore, SqlError.SqlError> =>
  Layer.scoped(
    VectorStore,
    Effect.gen(function* () {
      const memory = filename === ":memory:" || filename === ""
      if (!memory) yield* Effect.sync(() => mkdirSync(dirname(filename), { recursive: true }))
      const client = yield* SqliteClient.make({ filename, disableWAL: memory })
      yield* client`PRAGMA busy_timeout = 5000`
      yield* client.loadExtension(sqliteVec.getLoadablePath())
      return yield* makeSqliteVecStore(client, dimensions)
    })
  ).pipe(Layer.provide(Reactivity.layer))
