/**
 * The load program in process (src/transfer/load.ts) over a migrated SQLite database, on dumps
 * written by hand: a fact naming an entity the dump does not hold, a group whose count does not
 * match its end, a record where none belongs. Each fails with a message, and the group it was
 * in leaves nothing behind (one transaction).
 */
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { transferLayerFor } from "../../layers/TransferLive.js"
import { loadConfig } from "../../src/Config.js"
import { FORMAT_VERSION } from "../../src/domain/DumpFormat.js"
import { load } from "../../src/transfer/load.js"
import { TransferFailed } from "../../src/transfer/TransferFailed.js"

const dir = mkdtempSync(join(tmpdir(), "gligabao-load-checks-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const T = "2025-01-01T00:00:00.000Z"
const header = {
  record: "header",
  format: "gligabao-dump",
  format_version: FORMAT_VERSION,
  gligabao_version: "0.1.0",
  created_at: T,
  scope: { user_id: null, dataset: null },
  source: { dialect: "sqlite", vector_store: "sqlite-vec" },
  vectors: { included: false, reason: "dumped with --no-vectors", embedding_model: "m", embedding_dimensions: 8 }
}
const group = (records: number) => [
  { record: "group", user_id: "alice", dataset: "main", dataset_created_at: [T], runs: 0 },
  { record: "dataset", id: 7, user_id: "alice", name: "main", created_at: T, deleted_at: null, schema: null },
  {
    record: "entity",
    id: 3,
    dataset_id: 7,
    name: "Alice",
    name_key: "alice",
    type: "person",
    description: "",
    model_id: null,
    created_at: T,
    updated_at: T,
    embedded_at: null,
    attributes: null
  },
  { record: "group_end", user_id: "alice", dataset: "main", records }
]
const edge = (target: number) => ({
  record: "edge",
  id: 5,
  dataset_id: 7,
  source_id: 3,
  target_id: target,
  relation: "knows",
  description: "Alice knows someone",
  valid_at: T,
  invalid_at: null,
  created_at: T,
  expired_at: null,
  artifact_id: null,
  model_id: null,
  embedded_at: null
})

/** Loads these lines into a fresh SQLite file; what failed (or the summary) and the datasets there after. */
const loadLines = (name: string, lines: ReadonlyArray<unknown>) => {
  const config = join(dir, "empty.toml")
  writeFileSync(config, "")
  const db = join(dir, `${name}.db`)
  const queue = lines.map((l) => JSON.stringify(l))
  const next = Effect.sync(() => Option.fromNullable(queue.shift()))
  return Effect.gen(function*() {
    const loaded = yield* loadConfig({ config, db, imageDir: join(dir, `${name}-images`) }, {
      GLIGABAO_EMBEDDING_DIMENSIONS: "8"
    })
    return yield* Effect.gen(function*() {
      const outcome = yield* Effect.either(load(next, { embeddingDimensions: 8, embeddingModel: "m" }))
      const sql = yield* SqlClient.SqlClient
      const datasets = yield* sql<{ n: number }>`SELECT COUNT(*) AS n FROM gb_datasets`
      const words = yield* sql<{ word: string }>`SELECT word FROM gb_entity_words ORDER BY word`
      return { outcome, datasets: Number(datasets[0]!.n), words: words.map((w) => w.word) }
    }).pipe(Effect.provide(transferLayerFor(loaded)))
  }).pipe(Effect.provide(NodeContext.layer), Effect.scoped, Effect.orDie, Effect.runPromise)
}

const failure = (outcome: Awaited<ReturnType<typeof loadLines>>["outcome"]) =>
  outcome._tag === "Left" && outcome.left instanceof TransferFailed ? outcome.left.message : `not failed: ${outcome}`

describe("a load of a dump that does not hold together", { timeout: 60_000 }, () => {
  it("a fact naming an entity the dump does not hold: nothing of its group is written", async () => {
    const [open, dataset, entity, end] = group(3)
    const { datasets, outcome } = await loadLines("dangling", [
      header,
      open,
      dataset,
      entity,
      edge(4),
      end,
      { record: "end", groups: 1, records: 5 }
    ])
    expect(failure(outcome)).toBe(
      "the batch from line 5: the dump is inconsistent: edge 5 names entities row 4, which the dump does not hold before it"
    )
    expect(datasets).toBe(0)
  })

  it("a group whose count is not its end's is damaged: rolled back", async () => {
    const [open, dataset, entity, end] = group(3)
    const { datasets, outcome } = await loadLines("count", [header, open, dataset, entity, end, { record: "end" }])
    expect(failure(outcome)).toBe(
      "line 5: the group alice/main ends with 2 records where the dump says 3: the file is damaged"
    )
    expect(datasets).toBe(0)
  })

  it("a record outside any group, and a group inside another, are refused", async () => {
    const lines = group(2)
    const outside = await loadLines("outside", [header, edge(3), { record: "end", groups: 0, records: 1 }])
    expect(failure(outside.outcome)).toBe("line 2: a record of kind edge outside any group")
    const nested = await loadLines("nested", [header, lines[0], lines[1], lines[0]])
    expect(failure(nested.outcome)).toBe("line 4: a record of kind group inside the group alice/main")
    expect(nested.datasets).toBe(0)
  })

  it("a whole group loads, its entity's words derived from its name", async () => {
    const { datasets, outcome, words } = await loadLines("whole", [
      header,
      ...group(2),
      { record: "end", groups: 1, records: 4 }
    ])
    expect(outcome._tag).toBe("Right")
    expect(datasets).toBe(1)
    expect(words).toEqual(["alice"])
  })
})
