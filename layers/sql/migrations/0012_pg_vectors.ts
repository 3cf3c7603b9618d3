/**
 * The PostgreSQL vector store's table (layers/vectors/PostgresVectorStore.ts), on PostgreSQL
 * only: SQLite keeps its vectors in sqlite-vec tables the store creates itself.
 *
 * One row a vector of an index (`dataset-<id>-entities`, ...): its float values, its binary code
 * (binaryCodes.ts, as a bit string: `bit_count(code # query)` is the Hamming distance), its
 * metadata. `dimensions` keeps vectors of another embedding size (an old model) out of a search.
 * The codes are scanned per index and dimension count, hence the second index. With pgvector,
 * the store adds an HNSW index over `embedding::vector(n)` at startup (n is known only then).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  if (!pg) return
  yield* sql.unsafe(
    `CREATE TABLE gb_vectors (
      index_name TEXT COLLATE "C" NOT NULL,
      vector_id TEXT COLLATE "C" NOT NULL,
      dimensions INTEGER NOT NULL,
      embedding REAL[] NOT NULL,
      code BIT VARYING NOT NULL,
      metadata JSONB NOT NULL,
      PRIMARY KEY (index_name, vector_id)
    )`
  )
  yield* sql.unsafe(`CREATE INDEX gb_vectors_index_dimensions ON gb_vectors (index_name, dimensions)`)
})
