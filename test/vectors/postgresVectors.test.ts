/**
 * The PostgresVectorStore's portable search (binary codes, bit_count, exact rescoring) on the
 * test cluster, which has no pgvector; and vectors of another size kept out of a search.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { makePostgresVectorStore, PostgresVectorStoreLive } from "../../layers/vectors/PostgresVectorStore.js"
import { VectorStore } from "../../src/services/VectorStore.js"
import { dialects } from "../support/databases.js"
import { clustered, items, SEARCH_DIMS, searchSuite } from "../support/vectorSearchSuite.js"

const pg = dialects.find((d) => d.dialect === "pg")!
const reason = pg.skip()
if (reason !== null) {
  console.warn(`!!! SKIPPING the PostgresVectorStore search tests: ${reason}`)
  describe.skip("PostgresVectorStore, portable binary codes", () => {})
} else {
  layer(Layer.provideMerge(PostgresVectorStoreLive(SEARCH_DIMS), pg.makeLayer()), { excludeTestServices: true })(
    "PostgresVectorStore, portable binary codes",
    (it) => {
      searchSuite(it)

      it.effect("says it searches by binary codes, and keeps vectors of another size out of a search", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const { search, store: small } = yield* makePostgresVectorStore(sql, 64)
          expect(search).toBe("portable binary codes")
          const vectors = yield* VectorStore
          const data = clustered(20, 2, 3)
          yield* vectors.upsert("dataset-mixed-entities", items(data.vectors, "entity"))
          const other = clustered(5, 1, 4, 64)
          yield* small.upsert("dataset-mixed-entities", items(other.vectors, "short"))
          const found = yield* vectors.query("dataset-mixed-entities", data.vectors[0]!, 100, -1)
          expect(found).toHaveLength(20)
          expect((yield* small.query("dataset-mixed-entities", other.vectors[0]!, 100, -1)).map((m) => m.id).sort())
            .toEqual(["short-1", "short-2", "short-3", "short-4", "short-5"])
        }))
    }
  )
}
