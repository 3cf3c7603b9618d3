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
 * What 0.1.9 does and does not do: no UPSERT or INSERT OR REPLACE on vec0 (so an upsert
 * deletes then inserts, in one transaction); a primary key is unique across partitions (hence
 * the composite key); `key IN (...)` is a full scan while `key = ?` is a lookup (hence one
 * delete per existing id); `k` is capped at 4096; every partition allocates a whole chunk
 * (chunk_size x dimensions x 4 bytes) up front, so chunk_size is 64, which searches as fast as
 * the default 1024 for a sixteenth of the memory.
 *
 * That table alone serves fewer than 64 dimensions. A KNN query on it is a brute-force float
 * scan of the partition, too slow for a large index (BENCHMARKS.md), so from 64 dimensions up
 * the vectors are kept differently, in two tables with the same keys:
 *
 *   CREATE VIRTUAL TABLE gb_vectors_1536_codes1 USING vec0(
 *     key text primary key, index_name text partition key, code bit[1536], chunk_size=512)
 *   CREATE TABLE gb_vectors_1536_floats (
 *     key text primary key, index_name text, vector_id text, metadata text, embedding blob)
 *
 * The first holds a binary code of every vector (binaryCodes.ts: a fixed rotation, then one
 * sign bit a coordinate); the second, a plain table, the float vectors. A query takes the
 * `candidatesFor(k)` nearest codes by Hamming distance, then rescores those candidates exactly
 * (`vec_distance_cosine` on their float vectors, fetched by key in the same statement). The
 * floats are not in a vec0 table because rescoring reads them one by one: out of vec0's chunk
 * blobs each read walks a chain of overflow pages to the vector's offset, while a row of its
 * own is an index lookup and two overflow pages (BENCHMARKS.md, third round). vec0's top-k
 * selection costs (rows x k), so the candidates stay few, and the code table's chunk size is
 * 512 (a smaller one costs more CPU a query).
 * Writes and deletes go to both tables in one transaction. At startup the tables are created;
 * a database from before them has its vec0 float table copied into the plain one and dropped,
 * and the codes are put in step with the floats when the two tables' counts differ (two counts
 * when there is nothing to do).
 *
 * On a file, the layers search on a read-only connection in a worker thread (VecReader.ts): a
 * code scan holds its thread, which on the main connection would hold every other request and
 * the pipeline.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient, type SqlError } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import * as sqliteVec from "sqlite-vec"
import { VectorWriteFailed } from "../../src/domain/Errors.js"
import { type VectorItem, type VectorQuery, VectorStore } from "../../src/services/VectorStore.js"
import { outsideTransaction, truncateWal } from "../sql/SqliteCompact.js"
import { binaryCode, codeBits, CODES_VERSION } from "./binaryCodes.js"
import { checkItems, checkQuery, chunksOf, lastPerId, toMetadata } from "./common.js"
import { changedOnly, keyOf, placeholders, toBlob } from "./sqliteRows.js"
import {
  matchesOf,
  MAX_K,
  type SearchRow,
  type SearchStatement,
  searchStatement,
  type SearchTables
} from "./sqliteSearch.js"
import { startVecReader, type VecReader } from "./VecReader.js"

const NAME = "sqlite-vec"
const CHUNK_SIZE = 64
/** 5 parameters a row, well under SQLite's 32766 variables */
const INSERT_BATCH = 500

/** Below this, codes are too short to rank by: the float scan alone (and it is cheap). */
export const MIN_CODE_DIMENSIONS = 64
const CODE_CHUNK_SIZE = 512
/** rows a backfill reads and writes at a time */
const BACKFILL_BATCH = 500

export const vectorTableName = (dimensions: number) => `gb_vectors_${dimensions}`
export const codeTableName = (dimensions: number) => `gb_vectors_${dimensions}_codes${CODES_VERSION}`
/** The float vectors of a coded store (a plain table: rescoring reads them one by one). */
export const floatTableName = (dimensions: number) => `gb_vectors_${dimensions}_floats`

const createTable = (sql: SqlClient.SqlClient, dimensions: number) =>
  sql.unsafe(
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${vectorTableName(dimensions)} USING vec0(` +
      `key text primary key, index_name text partition key, ` +
      `embedding float[${dimensions}] distance_metric=cosine, ` +
      `+vector_id text, +metadata text, chunk_size=${CHUNK_SIZE})`
  )

const createCodeTable = (sql: SqlClient.SqlClient, dimensions: number) =>
  sql.unsafe(
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${codeTableName(dimensions)} USING vec0(` +
      `key text primary key, index_name text partition key, ` +
      `code bit[${codeBits(dimensions)}], chunk_size=${CODE_CHUNK_SIZE})`
  )

const createFloatTable = (sql: SqlClient.SqlClient, dimensions: number) =>
  sql.unsafe(
    `CREATE TABLE IF NOT EXISTS ${floatTableName(dimensions)} (` +
      `key TEXT NOT NULL PRIMARY KEY, index_name TEXT NOT NULL, vector_id TEXT NOT NULL, ` +
      `metadata TEXT, embedding BLOB NOT NULL)`
  )

/**
 * A coded store written before the plain float table existed kept its floats in the vec0 table
 * (`vectorTableName`): they move to the plain table, in one statement, and the vec0 table goes.
 */
const moveLegacyFloats = (sql: SqlClient.SqlClient, dimensions: number) =>
  Effect.gen(function*() {
    const legacy = vectorTableName(dimensions)
    const found = yield* sql.unsafe<{ name: string }>(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?`,
      [legacy]
    )
    if (found.length === 0) return
    yield* Effect.logInfo(`${NAME}: moving float vectors out of ${legacy}`)
    yield* sql.withTransaction(
      Effect.zipRight(
        sql.unsafe(
          `INSERT INTO ${floatTableName(dimensions)}(key, index_name, vector_id, metadata, embedding) ` +
            `SELECT key, index_name, vector_id, metadata, embedding FROM ${legacy} WHERE true ON CONFLICT(key) DO NOTHING`
        ),
        sql.unsafe(`DROP TABLE ${legacy}`)
      )
    )
  })

/**
 * Makes the code table hold a code for every float vector and nothing else (a database written
 * before the code table existed, or by a version that did not keep it). Cheap when in step: the
 * two tables are counted, and only differing counts make it look at keys.
 */
const syncCodes = (sql: SqlClient.SqlClient, dimensions: number) =>
  Effect.gen(function*() {
    const floats = floatTableName(dimensions)
    const codes = codeTableName(dimensions)
    const [counts] = yield* sql.unsafe<{ vectors: number; codes: number }>(
      `SELECT (SELECT count(*) FROM ${floats}) AS vectors, (SELECT count(*) FROM ${codes}_rowids) AS codes`
    )
    if (counts === undefined || counts.vectors === counts.codes) return
    yield* Effect.logInfo(`${NAME}: backfilling binary codes`, { vectors: counts.vectors, codes: counts.codes })
    yield* sql.withTransaction(
      Effect.gen(function*() {
        const orphans = yield* sql.unsafe<{ id: string }>(
          `SELECT id FROM ${codes}_rowids WHERE id NOT IN (SELECT key FROM ${floats})`
        )
        for (const row of orphans) yield* sql.unsafe(`DELETE FROM ${codes} WHERE key = ?`, [row.id])
        const missing = yield* sql.unsafe<{ key: string }>(
          `SELECT key FROM ${floats} WHERE key NOT IN (SELECT id FROM ${codes}_rowids)`
        )
        // a batch of vectors at a time: a large index's floats at once would be hundreds of MB
        for (const batch of chunksOf(missing, BACKFILL_BATCH)) {
          const rows = yield* sql.unsafe<{ key: string; index_name: string; embedding: Uint8Array }>(
            `SELECT key, index_name, embedding FROM ${floats} WHERE key IN (${placeholders(batch)})`,
            batch.map((row) => row.key)
          )
          if (rows.length === 0) continue
          yield* sql.unsafe(
            `INSERT INTO ${codes}(key, index_name, code) VALUES ` + rows.map(() => "(?, ?, vec_bit(?))").join(", "),
            rows.flatMap((row) => [row.key, row.index_name, binaryCode(floatsOf(row.embedding), dimensions)])
          )
        }
      })
    )
  })

/** A float32 blob as numbers (copied: the blob's offset need not be aligned). */
const floatsOf = (blob: Uint8Array): Float32Array => new Float32Array(Uint8Array.from(blob).buffer)

/**
 * The store over `sql` (sqlite-vec must be loaded into it); creates its tables if needed. With
 * `startReader` (a connection to the same file in a worker thread, VecReader.ts, started once
 * the tables exist), queries run there and writes here; a reader that fails leaves the queries
 * to `sql`.
 */
export const makeSqliteVecStore = <E = never, R = never>(
  sql: SqlClient.SqlClient,
  dimensions: number,
  startReader?: Effect.Effect<VecReader, E, R>
) =>
  Effect.gen(function*() {
    if (!Number.isInteger(dimensions) || dimensions <= 0) {
      return yield* Effect.dieMessage(`${NAME}: dimensions must be a positive integer (got ${dimensions})`)
    }
    const coded = dimensions >= MIN_CODE_DIMENSIONS
    if (coded) {
      yield* createFloatTable(sql, dimensions)
      yield* moveLegacyFloats(sql, dimensions)
      yield* createCodeTable(sql, dimensions)
      yield* syncCodes(sql, dimensions)
    } else {
      yield* createTable(sql, dimensions)
    }
    const table = vectorTableName(dimensions)
    const codes = codeTableName(dimensions)
    const floats = floatTableName(dimensions)
    // a reader that cannot start leaves the queries here, as one that dies later does
    const reader = startReader === undefined
      ? undefined
      : yield* startReader.pipe(
        Effect.catchAllCause((cause) =>
          Effect.as(
            Effect.logWarning(`${NAME}: the reader did not start; querying on the main connection`, { cause }),
            undefined
          )
        )
      )
    const failed = (operation: string, index: string) => (error: SqlError.SqlError) =>
      new VectorWriteFailed({
        message: `${NAME}: ${operation} on ${index} failed: ${
          String((error.cause as Error | undefined)?.message ?? error.message)
        }`
      })

    // `key IN (...)` on the vec0 table is a full scan, so deletes go one key at a time, and
    // only for the keys that exist: vec0's own key map (its `_rowids` shadow table, indexed
    // on id) tells which, so writing new vectors costs no delete at all.
    const deleteKeysFrom = (target: string, keys: ReadonlyArray<string>) =>
      Effect.forEach(
        chunksOf(keys, INSERT_BATCH),
        (batch) =>
          sql
            .unsafe<{ id: string }>(
              `SELECT id FROM ${target}_rowids WHERE id IN (${placeholders(batch)})`,
              batch
            )
            .pipe(
              Effect.flatMap((existing) =>
                Effect.forEach(existing, (row) => sql.unsafe(`DELETE FROM ${target} WHERE key = ?`, [row.id]), {
                  discard: true
                })
              )
            ),
        { discard: true }
      )
    const deleteFloats = (keys: ReadonlyArray<string>) =>
      Effect.forEach(
        chunksOf(keys, INSERT_BATCH),
        (batch) => sql.unsafe(`DELETE FROM ${floats} WHERE key IN (${placeholders(batch)})`, batch),
        { discard: true }
      )
    const deleteKeys = (keys: ReadonlyArray<string>) =>
      coded ? Effect.zipRight(deleteKeysFrom(codes, keys), deleteFloats(keys)) : deleteKeysFrom(table, keys)

    const tables: SearchTables = { coded, dimensions, table, codes, floats }
    /** the rows of each search, in one message to the reader when there is one */
    const readAll = (
      searches: ReadonlyArray<SearchStatement>
    ): Effect.Effect<ReadonlyArray<ReadonlyArray<SearchRow>>, SqlError.SqlError> => {
      const here = Effect.forEach(searches, (s) => sql.unsafe<SearchRow>(s.sql, s.params as Array<unknown>))
      if (reader === undefined || !reader.alive()) return here
      const there = reader.allMany !== undefined
        ? reader.allMany<SearchRow>(searches)
        : Effect.forEach(searches, (s) => reader.all<SearchRow>(s.sql, s.params))
      return there.pipe(
        Effect.catchAll((error) =>
          Effect.zipRight(
            Effect.logWarning(`${NAME}: the reader failed, querying on the main connection`, { error: error.message }),
            here
          )
        )
      )
    }
    const queryMany = (queries: ReadonlyArray<VectorQuery>) =>
      Effect.suspend(() => {
        const searches: Array<{ readonly search: SearchStatement; readonly minScore: number } | null> = []
        for (const q of queries) {
          const invalid = checkQuery(NAME, q.index, q.vector, dimensions)
          if (invalid !== undefined) return Effect.fail(invalid)
          const limit = Math.min(MAX_K, Math.floor(q.k))
          searches.push(
            limit > 0 ? { search: searchStatement(tables, q.index, q.vector, limit), minScore: q.minScore } : null
          )
        }
        const sent = searches.flatMap((s) => (s === null ? [] : [s.search]))
        return readAll(sent).pipe(
          Effect.map((rows) => {
            let at = 0
            return searches.map((s) => (s === null ? [] : matchesOf(s.search, rows[at++]!, s.minScore)))
          }),
          Effect.mapError(failed("query", queries.map((q) => q.index).join(", ")))
        )
      })

    /** vec0 has no upsert: the existing keys are deleted, then every item inserted */
    const writeExact = (index: string, items: ReadonlyArray<VectorItem>) =>
      Effect.gen(function*() {
        yield* deleteKeysFrom(table, items.map((item) => keyOf(index, item.id)))
        for (const batch of chunksOf(items, INSERT_BATCH)) {
          yield* sql.unsafe(
            `INSERT INTO ${table}(key, index_name, embedding, vector_id, metadata) VALUES ` +
              batch.map(() => "(?, ?, ?, ?, ?)").join(", "),
            batch.flatMap((
              item
            ) => [keyOf(index, item.id), index, toBlob(item.values), item.id, JSON.stringify(item.metadata)])
          )
        }
      })
    /** the codes as above; the floats' plain table takes an upsert */
    const writeCoded = (index: string, items: ReadonlyArray<VectorItem>) =>
      Effect.gen(function*() {
        yield* deleteKeysFrom(codes, items.map((item) => keyOf(index, item.id)))
        for (const batch of chunksOf(items, INSERT_BATCH)) {
          yield* sql.unsafe(
            `INSERT INTO ${codes}(key, index_name, code) VALUES ` + batch.map(() => "(?, ?, vec_bit(?))").join(", "),
            batch.flatMap((item) => [keyOf(index, item.id), index, binaryCode(item.values, dimensions)])
          )
          yield* sql.unsafe(
            `INSERT INTO ${floats}(key, index_name, vector_id, metadata, embedding) VALUES ` +
              batch.map(() => "(?, ?, ?, ?, ?)").join(", ") +
              ` ON CONFLICT(key) DO UPDATE SET index_name = excluded.index_name, vector_id = excluded.vector_id, ` +
              `metadata = excluded.metadata, embedding = excluded.embedding`,
            batch.flatMap((
              item
            ) => [keyOf(index, item.id), index, item.id, JSON.stringify(item.metadata), toBlob(item.values)])
          )
        }
      })

    // in the caller's transaction no savepoint opens when nothing changed; outside one, the
    // read and the write share a transaction
    const writeChanged = (index: string, items: ReadonlyArray<VectorItem>) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (tx) => {
        const write = (inner: boolean) =>
          Effect.flatMap(changedOnly(sql, floats, index, items, INSERT_BATCH), (changed) =>
            changed.length === 0
              ? Effect.void
              : inner
              ? sql.withTransaction(writeCoded(index, changed))
              : writeCoded(index, changed))
        return tx._tag === "Some" ? write(true) : sql.withTransaction(write(false))
      })

    type StoredRow = { vector_id: string; metadata: string | null; embedding: Uint8Array }
    const itemOf = (row: StoredRow): VectorItem => ({
      id: row.vector_id,
      values: Array.from(floatsOf(row.embedding)),
      metadata: toMetadata(row.metadata === null ? {} : JSON.parse(row.metadata))
    })
    /** by key: the floats' plain table takes `IN`, the vec0 table one key at a time (its `IN` is a scan) */
    const fetch = (index: string, ids: ReadonlyArray<string>) => {
      const keys = [...new Set(ids)].map((id) => keyOf(index, id))
      const pages = coded
        ? Effect.forEach(chunksOf(keys, INSERT_BATCH), (batch) =>
          sql.unsafe<StoredRow>(
            `SELECT vector_id, metadata, embedding FROM ${floats} WHERE key IN (${placeholders(batch)})`,
            batch
          ))
        : Effect.forEach(keys, (key) =>
          sql.unsafe<StoredRow>(`SELECT vector_id, metadata, embedding FROM ${table} WHERE key = ?`, [key]))
      return pages.pipe(
        Effect.map((found) =>
          found.flat().map(itemOf)
        ),
        Effect.mapError(failed("fetch", index))
      )
    }

    return VectorStore.of({
      name: NAME,
      upsert: (index, items) =>
        Effect.suspend(() => {
          const invalid = checkItems(NAME, index, items, dimensions)
          if (invalid !== undefined) {
            return Effect.fail(invalid)
          }
          const unique = lastPerId(items)
          if (unique.length === 0) return Effect.void
          // a savepoint when the caller's transaction is open: the vectors commit with its rows
          const write = coded ? writeChanged(index, unique) : sql.withTransaction(writeExact(index, unique))
          return write.pipe(Effect.mapError(failed("upsert", index)))
        }),
      query: (index, vector, k, minScore) =>
        Effect.map(queryMany([{ index, vector, k, minScore }]), (matches) => matches[0] ?? []),
      queryMany,
      fetch,
      delete: (index, ids) =>
        ids.length === 0
          ? Effect.void
          : sql
            .withTransaction(deleteKeys([...new Set(ids)].map((id) => keyOf(index, id))))
            .pipe(Effect.mapError(failed("delete", index))),
      // a deleted row is zeroed in the file by secure_delete (and sqlite-vec 0.1.9 zeroes a
      // deleted vector's slot in its chunk itself), but the WAL still holds the pages as they
      // were: in the graph's own file Database.compact truncates it too, harmlessly twice
      compact: outsideTransaction("VectorStore.compact").pipe(
        Effect.zipRight(truncateWal(sql)),
        Effect.asVoid,
        Effect.mapError(failed("compact", "the store"))
      ),
      // sqlite-vec is loaded in the connection: its own function answers
      health: sql.unsafe(`SELECT vec_version() AS version`).pipe(
        Effect.as({ search: coded ? "sqlite-vec binary codes" : "sqlite-vec exact" }),
        Effect.mapError(failed("health check", "the store"))
      )
    })
  })

/** Where the store's worker-thread reader connects (VecReader.ts); omitted: queries on the main connection. */
export interface SqliteVecReaderOptions {
  /** the SQLite file the provided SqlClient has open (a file, not `:memory:`) */
  readonly filename: string
  /** PRAGMA mmap_size of the reader's connection, in bytes (0: none) */
  readonly mmapBytes: number
}

/**
 * sqlite-vec in the SqlClient that is provided (gligabao on SQLite: the main database), so it is
 * transactional: the pipeline writes its vectors in the store transaction, not through the
 * outbox. With `reader`, vector searches run on a second connection to that file in a worker
 * thread, in parallel with the main connection's work (they see what is committed).
 */
export const SqliteVecStoreLive = (
  dimensions: number,
  reader?: SqliteVecReaderOptions
): Layer.Layer<VectorStore, SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.scoped(
    VectorStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* reader === undefined || isMemory(reader.filename)
        ? makeSqliteVecStore(sql, dimensions)
        : makeSqliteVecStore(sql, dimensions, startVecReader(reader.filename, reader))
      // the graph's own (single) connection writes the vectors: they join its store transaction
      return VectorStore.of({ ...store, transactional: true })
    })
  )

const isMemory = (filename: string) => filename === ":memory:" || filename === ""
const VECTOR_FILE_MMAP = 1024 * 1024 * 1024

/**
 * sqlite-vec in a SQLite file of its own (gligabao on PostgreSQL without Pinecone): one
 * connection with WAL and sqlite-vec loaded, closed with the layer, and (unless `reader` is
 * false) searches on a reader in a worker thread. Its directory is created.
 */
export const SqliteVecFileStoreLive = (
  filename: string,
  dimensions: number,
  options: { readonly reader: boolean } = { reader: true }
): Layer.Layer<VectorStore, SqlError.SqlError> =>
  Layer.scoped(
    VectorStore,
    Effect.gen(function*() {
      const memory = isMemory(filename)
      if (!memory) yield* Effect.sync(() => mkdirSync(dirname(filename), { recursive: true }))
      const client = yield* SqliteClient.make({ filename, disableWAL: memory })
      yield* client`PRAGMA busy_timeout = 5000`
      // deleted vectors and their metadata (entity names) are zeroed, as in the graph's file
      yield* client`PRAGMA secure_delete = ON`
      // this file holds vectors only: mapped, the code scans and rescoring reads cost about half
      // the CPU they do through read calls, and no graph shares its pages
      if (!memory) yield* client.unsafe(`PRAGMA mmap_size = ${VECTOR_FILE_MMAP}`)
      yield* client.loadExtension(sqliteVec.getLoadablePath())
      return yield* memory || !options.reader
        ? makeSqliteVecStore(client, dimensions)
        : makeSqliteVecStore(client, dimensions, startVecReader(filename, { mmapBytes: VECTOR_FILE_MMAP }))
    })
  ).pipe(Layer.provide(Reactivity.layer))
