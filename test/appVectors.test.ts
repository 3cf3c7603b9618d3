/**
 * The vector store the app composes on SQLite (layers/App.ts, vectorStoreFor): with embeddings,
 * searches run on the worker-thread reader (a connection of its own: it does not see what an
 * open transaction wrote); without them there is nothing to search and no reader is started.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted, type Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { vectorStoreFor } from "../layers/App.js"
import { SqliteLive } from "../layers/sql/index.js"
import { type AppConfig, defaultConfig } from "../src/Config.js"
import { VectorStore } from "../src/services/VectorStore.js"

const DIMS = 64

/** what a query inside an open transaction sees of a vector that transaction wrote */
const seenInsideTransaction = (config: AppConfig) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(vectorStoreFor(config))
    const vectors = Context.get(context, VectorStore)
    const sql = yield* SqlClient.SqlClient
    const v = Array.from({ length: DIMS }, (_, i) => Math.sin(i + 1))
    return yield* Effect.gen(function*() {
      yield* vectors.upsert("dataset-1-entities", [{ id: "entity-1", values: v, metadata: {} }])
      return (yield* vectors.query("dataset-1-entities", v, 3, 0.5)).map((m) => m.id)
    }).pipe(sql.withTransaction)
  })

const onFile = <A, E>(run: (path: string) => Effect.Effect<A, E, SqlClient.SqlClient | Scope.Scope>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "gligabao-appvectors-"))),
    (dir) => {
      const path = join(dir, "graph.db")
      return Effect.scoped(run(path)).pipe(Effect.provide(SqliteLive(path)))
    },
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

const configFor = (path: string, openaiKey: boolean): AppConfig => ({
  ...defaultConfig,
  database: { ...defaultConfig.database, path },
  embeddingDimensions: DIMS,
  openaiApiKey: openaiKey ? Option.some(Redacted.make("sk-test")) : Option.none(),
  embeddingBaseUrl: Option.none()
})

describe("vectorStoreFor on SQLite", () => {
  it.live("with embeddings, searches on the reader: an open transaction's vectors are not seen", () =>
    onFile((path) => seenInsideTransaction(configFor(path, true))).pipe(Effect.map((ids) => expect(ids).toEqual([]))))

  it.live("without embeddings, no reader: the main connection sees its own transaction", () =>
    onFile((path) => seenInsideTransaction(configFor(path, false))).pipe(
      Effect.map((ids) => expect(ids).toEqual(["entity-1"]))
    ))
})
