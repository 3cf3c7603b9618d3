/**
 * `GET /readyz`: 200 `{"status": "ready", database, vector_store, llm}` only when the database
 * answers, every migration of this build is applied and the vector store answers its health
 * call; otherwise 503 `{"error": "not ready: <what>", ...}`. The LLM is reported (provider,
 * configured) and decides nothing. Public like /healthz, and in the OpenAPI document.
 */
import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { it as effectIt, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { describe, expect } from "vitest"
import { LATEST_MIGRATION } from "../../layers/sql/Database.js"
import { MemoryVectorStoreLive } from "../../layers/vectors/MemoryVectorStore.js"
import { PostgresVectorStoreLive } from "../../layers/vectors/PostgresVectorStore.js"
import { SqliteVecStoreLive } from "../../layers/vectors/SqliteVecStore.js"
import { Authentication } from "../../src/auth/Authentication.js"
import { tokenTable } from "../../src/auth/tokens.js"
import { VectorWriteFailed } from "../../src/domain/Errors.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { VectorStore } from "../../src/services/VectorStore.js"
import { rememberLayer, unavailableStorage, withoutStorage } from "../support/app.js"
import { forEachDialect, sqliteLayer } from "../support/databases.js"
import { get, send, serveTest, type TestResponse } from "../support/http.js"

const DIMS = 256

/** A 503 `{"error": "not ready: ...", database, vector_store, llm}`. */
const expectNotReady = (res: TestResponse, message: RegExp) => {
  expect(res.status, res.text).toBe(503)
  expect(Object.keys(res.json ?? {}).sort()).toEqual(["database", "error", "llm", "vector_store"])
  expect(res.json.error).toMatch(message)
}

const noLlm = () => ({ fail: { message: "no LLM in these tests" } })

forEachDialect((dialect, makeLayer) => {
  // the real store of the dialect, over the storage's SqlClient (rememberLayer provides the
  // storage beneath its ports, so the client is there; the option's type does not say so)
  const vectors = Layer.orDie(
    dialect === "pg" ? PostgresVectorStoreLive(DIMS) : SqliteVecStoreLive(DIMS)
  ) as unknown as Layer.Layer<VectorStore>
  effectIt.live(
    "ready: the database answers, the migrations are applied, the vector store is usable",
    () =>
      Effect.gen(function*() {
        const res = yield* get("/readyz")
        expect(res.status, res.text).toBe(200)
        expect(res.json).toEqual({
          status: "ready",
          database: { dialect: dialect === "pg" ? "postgres" : "sqlite", migration: LATEST_MIGRATION },
          vector_store: dialect === "pg"
            ? { name: "postgres", search: expect.stringMatching(/^(pgvector hnsw|portable binary codes)$/) }
            : { name: "sqlite-vec", search: "sqlite-vec binary codes" },
          // the tests' scripted model stands for a configured one
          llm: { provider: "scripted", configured: true }
        })
      }).pipe(Effect.provide(serveTest(rememberLayer(makeLayer(), noLlm, { vectors }))))
  )

  effectIt.live("not ready when the latest migration is not recorded", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`DELETE FROM effect_sql_migrations WHERE migration_id = ${Number.parseInt(LATEST_MIGRATION)}`)
      const res = yield* get("/readyz")
      expectNotReady(res, /^not ready: migrations$/)
      expect(res.json.database.error).toContain(`this build needs ${LATEST_MIGRATION}`)
      expect(res.json.vector_store).toMatchObject({ name: "memory" })
    }).pipe(Effect.provide(serveTest(rememberLayer(makeLayer(), noLlm)))))
})

describe("not ready", () => {
  const failing = Layer.effect(
    VectorStore,
    Effect.map(VectorStore, (store) =>
      VectorStore.of({
        ...store,
        health: Effect.fail(new VectorWriteFailed({ message: "memory: the store is down (as the test asked)" }))
      }))
  ).pipe(Layer.provideMerge(MemoryVectorStoreLive({ dimensions: DIMS })))

  effectIt.live("when the vector store fails its health call: 503 naming it", () =>
    Effect.gen(function*() {
      const res = yield* get("/readyz")
      expectNotReady(res, /^not ready: vector store$/)
      expect(res.json.vector_store).toEqual({ name: "memory", error: "memory: the store is down (as the test asked)" })
      expect(res.json.database).toMatchObject({ dialect: "sqlite", migration: LATEST_MIGRATION })
      // liveness is not readiness
      expect((yield* get("/healthz")).status).toBe(200)
    }).pipe(Effect.provide(serveTest(rememberLayer(sqliteLayer(), noLlm, { vectors: failing })))))

  effectIt.live("without storage or a vector store: 503 naming both", () => {
    const boom = () => Effect.die(new Error("not used"))
    const noStorage = Layer.mergeAll(
      Layer.mock(RememberManager, { submit: boom, enqueue: boom }),
      Layer.mock(RunLogRepo, { get: boom }),
      unavailableStorage(),
      withoutStorage()
    )
    return Effect.gen(function*() {
      const res = yield* get("/readyz")
      expectNotReady(res, /^not ready: database, vector store$/)
      expect(res.json.vector_store).toEqual({ name: "none", error: "not configured on this server" })
      // no LLM either: reported, not a reason of its own
      expect(res.json.llm).toEqual({ provider: "none", configured: false })
    }).pipe(Effect.provide(serveTest(noStorage)))
  })
})

const ADMIN = "admin-token-readyz-1"

layer(
  serveTest(
    Layer.merge(
      rememberLayer(sqliteLayer(), noLlm),
      Layer.succeed(
        Authentication,
        tokenTable([{ kind: "plain", secret: Redacted.make(ADMIN), admin: true }])
      )
    )
  ),
  { excludeTestServices: true }
)("under [auth] tokens", (it) => {
  it.effect("/readyz is public, like /healthz; the API is not", () =>
    Effect.gen(function*() {
      const res = yield* get("/readyz")
      expect(res.status, res.text).toBe(200)
      expect(res.json.status).toBe("ready")
      expect((yield* get("/v1/gb/datasets?user_id=alice")).status).toBe(401)
      const withToken = yield* send(HttpClientRequest.bearerToken(HttpClientRequest.get("/readyz"), ADMIN))
      expect(withToken.status).toBe(200)
    }))

  it.effect("the OpenAPI document has /readyz with its 200 and 503", () =>
    Effect.gen(function*() {
      const doc = (yield* get("/openapi.json")).json
      expect(Object.keys(doc.paths["/readyz"].get.responses)).toEqual(expect.arrayContaining(["200", "503"]))
    }))
})
