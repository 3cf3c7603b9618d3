/**
 * The PostgresVectorStore's pgvector search (HNSW, `<=>`) against real pgvector: PGlite (PostgreSQL
 * compiled to WebAssembly) with its `vector` extension, served over the PostgreSQL wire protocol
 * by @electric-sql/pglite-socket, so the same adapter runs through @effect/sql-pg as on a server.
 *
 * PGlite is one backend: pglite-socket multiplexes connections onto it query by query, so the
 * tests here use one store at a time (no concurrent transactions from two connections).
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { vector } from "@electric-sql/pglite/vector"
import { Effect, Layer, Redacted } from "effect"
import { PgMigratedLive } from "../../layers/sql/Pg.js"
import { hnswIndexName, makePostgresVectorStore } from "../../layers/vectors/PostgresVectorStore.js"
import { VectorStore } from "../../src/services/VectorStore.js"
import { clustered, items, SEARCH_DIMS, searchSuite } from "../support/vectorSearchSuite.js"

/** PGlite with pgvector in memory, listening on a free loopback port; its URL. */
const pgliteUrl = Effect.acquireRelease(
  Effect.promise(async () => {
    const db = await PGlite.create({ extensions: { vector } })
    const server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1", maxConnections: 20 })
    await server.start()
    return { db, server }
  }),
  ({ db, server }) =>
    Effect.promise(async () => {
      await server.stop()
      await db.close()
    })
).pipe(
  Effect.map(({ server }) =>
    Redacted.make(`postgres://postgres:postgres@${server.getServerConn()}/postgres?sslmode=disable`)
  )
)

const database = Layer.unwrapScoped(Effect.map(pgliteUrl, PgMigratedLive))

const store = Layer.effect(
  VectorStore,
  Effect.flatMap(SqlClient.SqlClient, (sql) => makePostgresVectorStore(sql, SEARCH_DIMS)).pipe(
    Effect.map(({ search, store }) => {
      if (search !== "pgvector hnsw") throw new Error(`expected the pgvector search, got ${search}`)
      return store
    })
  )
)

layer(Layer.provideMerge(store, database), { excludeTestServices: true, timeout: 120_000 })(
  "PostgresVectorStore on pgvector (PGlite over the wire protocol)",
  (it) => {
    searchSuite(it, 1500)

    it.effect("creates the extension and one HNSW index per dimension count, and searches through it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [extension] = yield* sql<
          { extversion: string }
        >`SELECT extversion FROM pg_extension WHERE extname = 'vector'`
        expect(extension?.extversion).toMatch(/^\d+\.\d+/)
        const indexes = yield* sql<{ indexname: string; indexdef: string }>`
          SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'gb_vectors' AND indexdef LIKE '%hnsw%'`
        expect(indexes.map((i) => i.indexname)).toEqual([hnswIndexName(SEARCH_DIMS)])
        expect(indexes[0]!.indexdef).toMatch(/vector_cosine_ops/)
        // a small index is read by the btree on (index_name, dimensions) and sorted, exactly; with
        // sorts and sequential scans off, the plan the search's shape allows is the HNSW index's
        const data = clustered(50, 2, 21)
        const vectors = yield* VectorStore
        // what GET /readyz reports of this store
        expect(yield* vectors.health).toEqual({ search: "pgvector hnsw" })
        yield* vectors.upsert("dataset-plan-edges", items(data.vectors))
        const plan = yield* Effect.gen(function*() {
          yield* sql`SET LOCAL enable_seqscan = off`
          yield* sql`SET LOCAL enable_sort = off`
          return yield* sql.unsafe<{ "QUERY PLAN": string }>(
            `EXPLAIN SELECT vector_id FROM gb_vectors WHERE index_name = 'dataset-plan-edges' ` +
              `AND dimensions = ${SEARCH_DIMS} ORDER BY embedding::vector(${SEARCH_DIMS}) <=> ` +
              `'[${data.vectors[0]!.join(",")}]'::vector(${SEARCH_DIMS}) LIMIT 5`
          )
        }).pipe(sql.withTransaction)
        expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toContain(hnswIndexName(SEARCH_DIMS))
        const [best] = yield* vectors.query("dataset-plan-edges", data.vectors[0]!, 1, -1)
        expect(best?.id).toBe("edge-1")
        expect(best!.score).toBeCloseTo(1, 5)
      }))
  }
)
