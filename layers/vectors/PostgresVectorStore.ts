/**
 * The VectorStore in the app's own PostgreSQL database (vector_store = "postgres"): one table,
 * `gb_vectors` (migration 0012), next to the graph, so every gligabao process on the database
 * sees the same vectors and a write may join the caller's transaction.
 *
 *   gb_vectors(index_name, vector_id, dimensions, embedding real[], code bit varying,
 *              metadata jsonb, primary key (index_name, vector_id))
 *
 * Two searches, chosen at startup:
 *
 * - pgvector, when `CREATE EXTENSION IF NOT EXISTS vector` succeeds: an HNSW index (cosine) over
 *   `(embedding::vector(n))` for the store's n dimensions (a partial index, `WHERE dimensions =
 *   n`, so vectors of another size never reach it), searched with `<=>`. An expression index
 *   rather than a `vector(n)` column: the table stays the same with and without the extension,
 *   so a database can gain (or lose) pgvector without moving a vector. The index is filtered by
 *   index name after the graph walk, so each search raises `hnsw.ef_search` to its candidate
 *   count and (pgvector 0.8+) turns on iterative scans, in a transaction of its own.
 * - portable, with no extension (PostgreSQL 14+): the binary codes of binaryCodes.ts compared
 *   with `bit_count(code # query)`, the `candidatesFor(k)` nearest rescored by exact cosine, the
 *   same rule as the SQLite store. Below 64 dimensions (codes too short to rank by) the index is
 *   scored exactly.
 *
 * Every row carries its code either way, so the portable search works on any row.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Layer } from "effect"
import { VectorWriteFailed } from "../../src/domain/Errors.js"
import { type VectorItem, type VectorMatch, VectorStore } from "../../src/services/VectorStore.js"
import { binaryCode } from "./binaryCodes.js"
import { byScore, checkItems, checkQuery, chunksOf, cosine, lastPerId, toMetadata } from "./common.js"
import { candidatesFor, MAX_K } from "./sqliteSearch.js"
import { MIN_CODE_DIMENSIONS } from "./SqliteVecStore.js"

const NAME = "postgres"
/** 5 parameters a row, well under PostgreSQL's 65535 */
const WRITE_BATCH = 500
/** pgvector refuses a larger hnsw.ef_search */
const MAX_EF_SEARCH = 1000

export type PostgresSearch = "pgvector hnsw" | "portable binary codes"

export const hnswIndexName = (dimensions: number) => `gb_vectors_hnsw_${dimensions}`

/** `$from, $from+1, ...`: one parameter a value */
const placeholders = (count: number, from = 1) => Array.from({ length: count }, (_, i) => `$${from + i}`).join(", ")

/** A PostgreSQL array literal of the values (cast to real[] in the statement). */
const arrayLiteral = (values: ReadonlyArray<number>) => `{${values.join(",")}}`

/** The code as a hex bit-string literal (`x...`, cast to bit varying): the bit order is the same for every code. */
const codeLiteral = (values: ReadonlyArray<number>, dimensions: number) =>
  `x${binaryCode(values, dimensions).toString("hex")}`

const vectorLiteral = (values: ReadonlyArray<number>) => `[${values.join(",")}]`

/** pgvector, when this database has it (or lets us create it); false otherwise. */
const enablePgvector = (sql: SqlClient.SqlClient) =>
  sql.unsafe(`CREATE EXTENSION IF NOT EXISTS vector`).pipe(
    Effect.as(true),
    Effect.catchAll((error) =>
      Effect.as(
        Effect.logInfo(`${NAME}: pgvector is not available (${messageOf(error)}); using the portable search`),
        false
      )
    )
  )

const messageOf = (error: SqlError.SqlError) => String((error.cause as Error | undefined)?.message ?? error.message)

/** pgvector 0.8 added iterative index scans (hnsw.iterative_scan). */
const hasIterativeScan = (sql: SqlClient.SqlClient) =>
  sql.unsafe<{ version: string }>(`SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'`).pipe(
    Effect.map(([row]) => {
      const [major = 0, minor = 0] = (row?.version ?? "0").split(".").map(Number)
      return major > 0 || minor >= 8
    })
  )

const hasLength = (values: ArrayLike<number>) => {
  for (let i = 0; i < values.length; i++) if (values[i] !== 0) return true
  return false
}

type Row = { vector_id: string; embedding: ReadonlyArray<number>; metadata: unknown }
/**
 * A candidate to rescore: its embedding as `array_send` gives it (see floatsOfArraySend), in
 * base64. A bytea column comes back as hex text, twice its bytes: at 1536 dimensions that was
 * 24 KB a candidate to send, receive and decode on the server's main thread.
 */
type BinaryRow = { vector_id: string; embedding: string; metadata: unknown }

/** A candidate's embedding column in base64 (PostgreSQL breaks its lines every 76 characters; Buffer skips them). */
const embeddingBase64 = (column: string) => `encode(array_send(${column}), 'base64') AS embedding`

/**
 * The float4s of a one-dimensional real[] in PostgreSQL's binary array format (`array_send`):
 * a 20-byte header (dimensions, null flag, element type, length, lower bound), then each element
 * as its byte length and a big-endian float. Candidates come back this way rather than as
 * decimal text, which cost more to parse than the whole rescoring (issue 39, PostgreSQL figures).
 */
export const floatsOfArraySend = (bytes: Uint8Array): Float32Array => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.byteLength < 12 || view.getInt32(0) === 0) return new Float32Array(0)
  const length = view.getInt32(12)
  const floats = new Float32Array(length)
  let at = 20
  for (let i = 0; i < length; i++) {
    const size = view.getInt32(at)
    at += 4
    // a NULL element (size -1) has no bytes; no embedding holds one
    if (size === 4) floats[i] = view.getFloat32(at)
    at += Math.max(0, size)
  }
  return floats
}
type ScoredRow = { vector_id: string; distance: number | string | null; metadata: unknown }

/** The store over `sql` (a migrated PostgreSQL database). */
export const makePostgresVectorStore = (sql: SqlClient.SqlClient, dimensions: number) =>
  Effect.gen(function*() {
    if (!Number.isInteger(dimensions) || dimensions <= 0) {
      return yield* Effect.dieMessage(`${NAME}: dimensions must be a positive integer (got ${dimensions})`)
    }
    const pgvector = yield* enablePgvector(sql)
    if (pgvector) {
      // n is ours (an integer), not input: an index expression cannot take a parameter
      yield* sql.unsafe(
        `CREATE INDEX IF NOT EXISTS ${hnswIndexName(dimensions)} ON gb_vectors ` +
          `USING hnsw ((embedding::vector(${dimensions})) vector_cosine_ops) WHERE dimensions = ${dimensions}`
      )
    }
    const iterative = pgvector ? yield* hasIterativeScan(sql) : false
    const search: PostgresSearch = pgvector ? "pgvector hnsw" : "portable binary codes"
    yield* Effect.logInfo(`${NAME}: vector search: ${search}`, { dimensions })

    const failed = (operation: string, index: string) => (error: SqlError.SqlError) =>
      new VectorWriteFailed({ message: `${NAME}: ${operation} on ${index} failed: ${messageOf(error)}` })

    const write = (index: string, items: ReadonlyArray<VectorItem>) =>
      Effect.forEach(
        chunksOf(items, WRITE_BATCH),
        (batch) =>
          sql.unsafe(
            `INSERT INTO gb_vectors (index_name, vector_id, dimensions, embedding, code, metadata) VALUES ` +
              batch.map((_, i) =>
                `($1, $${2 + 4 * i}, ${dimensions}, $${3 + 4 * i}::real[], $${4 + 4 * i}::bit varying, $${
                  5 + 4 * i
                }::jsonb)`
              ).join(", ") +
              ` ON CONFLICT (index_name, vector_id) DO UPDATE SET dimensions = excluded.dimensions, ` +
              `embedding = excluded.embedding, code = excluded.code, metadata = excluded.metadata`,
            [
              index,
              ...batch.flatMap((item) => [
                item.id,
                arrayLiteral(item.values),
                codeLiteral(item.values, dimensions),
                JSON.stringify(item.metadata)
              ])
            ]
          ),
        { discard: true }
      )

    const rescore = (
      vector: ReadonlyArray<number>,
      rows: ReadonlyArray<BinaryRow>,
      limit: number,
      minScore: number
    ) => {
      const matches: Array<VectorMatch> = []
      // a zero vector has no direction: nothing is near it, and it is near nothing (as sqlite-vec and pgvector)
      if (!hasLength(vector)) return matches
      for (const row of rows) {
        const embedding = floatsOfArraySend(Buffer.from(row.embedding, "base64"))
        if (!hasLength(embedding)) continue
        const score = cosine(vector, embedding)
        if (score >= minScore) matches.push({ id: row.vector_id, score, metadata: toMetadata(row.metadata) })
      }
      return matches.sort(byScore).slice(0, limit)
    }

    /** Every vector of the index, scored exactly (codes too short to rank by). */
    const exact = (index: string, vector: ReadonlyArray<number>, limit: number, minScore: number) =>
      sql.unsafe<BinaryRow>(
        `SELECT vector_id, ${embeddingBase64("embedding")}, metadata FROM gb_vectors ` +
          `WHERE index_name = $1 AND dimensions = ${dimensions}`,
        [index]
      ).pipe(Effect.map((rows) => rescore(vector, rows, limit, minScore)))

    /** The nearest codes by Hamming distance, then their float vectors by key, rescored. */
    const coded = (index: string, vector: ReadonlyArray<number>, limit: number, minScore: number) =>
      sql.unsafe<BinaryRow>(
        `WITH candidates AS MATERIALIZED (` +
          `SELECT vector_id FROM gb_vectors WHERE index_name = $1 AND dimensions = ${dimensions} ` +
          `ORDER BY bit_count(code # $2::bit varying), vector_id LIMIT $3) ` +
          `SELECT v.vector_id, ${embeddingBase64("v.embedding")}, v.metadata FROM candidates ` +
          `JOIN gb_vectors AS v ON v.index_name = $1 AND v.vector_id = candidates.vector_id`,
        [index, codeLiteral(vector, dimensions), candidatesFor(limit)]
      ).pipe(Effect.map((rows) => rescore(vector, rows, limit, minScore)))

    const hnsw = (index: string, vector: ReadonlyArray<number>, limit: number, minScore: number) => {
      const expression = `embedding::vector(${dimensions})`
      const settings = [
        `SET LOCAL hnsw.ef_search = ${Math.min(MAX_EF_SEARCH, Math.max(40, candidatesFor(limit)))}`,
        ...(iterative ? [`SET LOCAL hnsw.iterative_scan = relaxed_order`] : [])
      ]
      return Effect.gen(function*() {
        for (const setting of settings) yield* sql.unsafe(setting)
        return yield* sql.unsafe<ScoredRow>(
          `SELECT vector_id, metadata, ${expression} <=> $2::vector(${dimensions}) AS distance FROM gb_vectors ` +
            `WHERE index_name = $1 AND dimensions = ${dimensions} ` +
            `ORDER BY ${expression} <=> $2::vector(${dimensions}) LIMIT $3`,
          [index, vectorLiteral(vector), limit]
        )
      }).pipe(
        sql.withTransaction,
        Effect.map((rows) => {
          const matches: Array<VectorMatch> = []
          for (const row of rows) {
            // a zero vector has no direction: pgvector gives it NaN
            const distance = row.distance === null ? Number.NaN : Number(row.distance)
            if (Number.isNaN(distance)) continue
            const score = 1 - distance
            if (score >= minScore) matches.push({ id: row.vector_id, score, metadata: toMetadata(row.metadata) })
          }
          // relaxed_order: the index's order may be slightly off; the distances are exact
          return matches.sort(byScore)
        })
      )
    }

    const searchWith = pgvector ? hnsw : dimensions >= MIN_CODE_DIMENSIONS ? coded : exact

    return {
      search,
      store: VectorStore.of({
        name: NAME,
        // the graph's own SqlClient: a write in the store transaction joins it (a savepoint)
        transactional: true,
        upsert: (index, items) =>
          Effect.suspend(() => {
            const invalid = checkItems(NAME, index, items, dimensions)
            if (invalid !== undefined) return Effect.fail(invalid)
            const unique = lastPerId(items)
            if (unique.length === 0) return Effect.void
            // a savepoint when the caller's transaction is open: the vectors commit with its rows
            return sql.withTransaction(write(index, unique)).pipe(Effect.mapError(failed("upsert", index)))
          }),
        query: (index, vector, k, minScore) =>
          Effect.suspend(() => {
            const invalid = checkQuery(NAME, index, vector, dimensions)
            if (invalid !== undefined) return Effect.fail(invalid)
            const limit = Math.min(MAX_K, Math.floor(k))
            if (!(limit > 0)) return Effect.succeed([])
            return searchWith(index, vector, limit, minScore).pipe(Effect.mapError(failed("query", index)))
          }),
        delete: (index, ids) =>
          Effect.suspend(() => {
            const unique = [...new Set(ids)]
            if (unique.length === 0) return Effect.void
            return Effect.forEach(
              chunksOf(unique, WRITE_BATCH),
              (batch) =>
                sql.unsafe(
                  `DELETE FROM gb_vectors WHERE index_name = $1 AND vector_id IN (${placeholders(batch.length, 2)})`,
                  [index, ...batch]
                ),
              { discard: true }
            ).pipe(sql.withTransaction, Effect.mapError(failed("delete", index)))
          }),
        // vectors of another size (an older model's) are never searched, so they are not given back either
        fetch: (index, ids) =>
          Effect.suspend(() => {
            const unique = [...new Set(ids)]
            return Effect.forEach(chunksOf(unique, WRITE_BATCH), (batch) =>
              sql.unsafe<Row>(
                `SELECT vector_id, embedding, metadata FROM gb_vectors WHERE index_name = $1 ` +
                  `AND dimensions = ${dimensions} AND vector_id IN (${placeholders(batch.length, 2)})`,
                [index, ...batch]
              )).pipe(
                Effect.map((pages) =>
                  pages.flat().map((row): VectorItem => ({
                    id: row.vector_id,
                    // real[] comes back as decimal text: the float32 each one names
                    values: row.embedding.map((v) => Math.fround(Number(v))),
                    metadata: toMetadata(row.metadata)
                  }))
                ),
                Effect.mapError(failed("fetch", index))
              )
          }),
        // a deleted row's tuple stays in the heap until VACUUM reuses its space (without zeroing
        // it), as the graph's rows do: the database's compaction is the operator's (docs/FORGET.md)
        compact: Effect.void,
        // the table the store reads, touched without reading a row
        health: sql.unsafe(`SELECT 1 FROM gb_vectors LIMIT 0`).pipe(
          Effect.as({ search }),
          Effect.mapError(failed("health check", "gb_vectors"))
        )
      })
    }
  })

/**
 * The store in the provided (migrated PostgreSQL) SqlClient, which must be the graph's own: the
 * store says it is transactional, so the pipeline writes its vectors in its store transaction.
 */
export const PostgresVectorStoreLive = (
  dimensions: number
): Layer.Layer<VectorStore, SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.effect(
    VectorStore,
    Effect.flatMap(SqlClient.SqlClient, (sql) => makePostgresVectorStore(sql, dimensions)).pipe(
      Effect.map(({ store }) => store)
    )
  )
