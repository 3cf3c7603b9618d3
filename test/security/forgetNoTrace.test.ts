/**
 * No trace (docs/FORGET.md, docs/SECURITY.md): a marker that was only in one text is, once that
 * text is forgotten, in no table, no vector-store row, and no byte of the SQLite files (database,
 * WAL, shm), with the vectors in sqlite-vec in the same file. The real pipeline, the bench's
 * deterministic model (the marker becomes an entity's name, a fact's description and a chunk).
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect } from "vitest"
import { SqliteLive } from "../../layers/sql/index.js"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { HashEmbeddingsLive } from "../../layers/testing/HashEmbeddings.js"
import { SqliteVecStoreLive } from "../../layers/vectors/SqliteVecStore.js"
import { Forgets } from "../../src/forget/Forgets.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import type { Embeddings } from "../../src/services/Embeddings.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import type { VectorStore } from "../../src/services/VectorStore.js"
import { rememberLayer, textBody, textRequest } from "../support/app.js"
import { markerLocations, newMarker, scanFiles, sqliteFiles } from "../support/noTrace.js"

const DIMENSIONS = 32
const FILLER = "The archive keeps a long note about the harbour, the weather and the ships of that day."

it.live("a forgotten text leaves no trace in any table, the vector store or the SQLite files", () => {
  const dir = mkdtempSync(join(tmpdir(), "gligabao-forget-trace-"))
  const file = join(dir, "gligabao.db")
  const marker = newMarker()
  const name = `Zq${marker}`
  const storage = SqliteLive(file)
  const layer = rememberLayer(storage, (r: LlmRequest) => ({ text: answer(r).text }), {
    embeddings: HashEmbeddingsLive({ dimensions: DIMENSIONS }) as unknown as Layer.Layer<Embeddings>,
    vectors: SqliteVecStoreLive(DIMENSIONS, { filename: file, mmapBytes: 0 }).pipe(
      Layer.provide(storage)
    ) as unknown as Layer.Layer<VectorStore>,
    settings: { chunkSize: 64, chunkOverlapPercent: 0 }
  })
  const remembered = Effect.gen(function*() {
    const manager = yield* RememberManager
    const remember = (text: string) => Effect.map(manager.submit(textRequest(text)), textBody)
    yield* remember("Alice Novak works at Acme in 2019. Alice Novak lives in Berlin in 2020.")
    // the marked text: an entity of that name, facts naming it, a long text (chunks and summaries)
    const marked = yield* remember(
      [`Alice Novak knows ${name} in 2015.`, `${name} lives in Osaka in 2021.`, "Alice Novak lives in Lisbon in 2022."]
        .map((s) => `${s}\n\n${FILLER}`).join("\n\n")
    )
    yield* remember("Bruno Diaz knows Alice Novak in 2016.")
    const sql = yield* SqlClient.SqlClient
    expect((yield* markerLocations(sql, marker)).length).toBeGreaterThan(3)
    const forgets = yield* Forgets
    const forgotten = yield* forgets.forgetArtifact({
      user_id: "alice",
      dataset: "main",
      artifact_id: marked.artifact_id
    })
    expect(forgotten.vectors_pending).toBeUndefined()
    expect(forgotten.reopened_facts).toHaveLength(1)
    return yield* markerLocations(sql, marker)
  })
  return Effect.gen(function*() {
    const inTables = yield* Effect.scoped(
      Effect.flatMap(Layer.build(layer), (context) => Effect.provide(remembered, context))
    )
    expect(inTables).toEqual([])
    // the layer is closed: every connection, the WAL as the last one left it
    expect(scanFiles(sqliteFiles(file), marker)).toEqual([])
    expect(scanFiles(dir, marker)).toEqual([])
  }).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
}, 60_000)
