/**
 * Two gligabao app layers (two "processes", each with its own pool) on one PostgreSQL database,
 * vector_store = "postgres" as the configuration picks it there: each sees the other's vectors,
 * writes and deletes alike, with no outbox drain or file of its own in between.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { appLayerFor } from "../../layers/App.js"
import { type AppConfig, defaultConfig } from "../../src/Config.js"
import { VectorStore } from "../../src/services/VectorStore.js"
import { freshPgUrl, pgSkipReason } from "../support/databases.js"
import { clustered, items } from "../support/vectorSearchSuite.js"

const DIMS = 64
const reason = pgSkipReason()
if (reason !== null) console.warn(`!!! SKIPPING the two-apps PostgreSQL vector test: ${reason}`)
const suite = reason === null ? describe : describe.skip

suite("two app layers on one PostgreSQL database", () => {
  it.live("see each other's vectors through vector_store = \"postgres\"", () =>
    Effect.gen(function*() {
      const url = yield* freshPgUrl
      const config: AppConfig = {
        ...defaultConfig,
        database: { ...defaultConfig.database, url: Option.some(url) },
        vectorStore: "postgres",
        embeddingDimensions: DIMS
      }
      const first = Context.get(yield* Layer.build(appLayerFor(config)), VectorStore)
      const second = Context.get(yield* Layer.build(appLayerFor(config)), VectorStore)
      expect(first.name).toBe("postgres")
      expect(first).not.toBe(second)

      const data = clustered(30, 3, 17, DIMS)
      yield* first.upsert("dataset-1-entities", items(data.vectors, "entity"))
      const seen = yield* second.query("dataset-1-entities", data.vectors[4]!, 3, -1)
      expect(seen[0]).toMatchObject({ id: "entity-5", metadata: { n: 5 } })
      expect(seen[0]!.score).toBeCloseTo(1, 5)

      yield* second.upsert("dataset-1-entities", [{ id: "entity-5", values: data.vectors[0]!, metadata: { n: 1 } }])
      yield* second.delete("dataset-1-entities", ["entity-1"])
      const [best] = yield* first.query("dataset-1-entities", data.vectors[0]!, 1, -1)
      expect(best).toMatchObject({ id: "entity-5", metadata: { n: 1 } })
      expect((yield* first.query("dataset-1-entities", data.vectors[0]!, 100, -1)).map((m) => m.id))
        .not.toContain("entity-1")
    }).pipe(Effect.scoped), 60_000)
})
