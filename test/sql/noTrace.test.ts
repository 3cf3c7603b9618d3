/**
 * No trace on disk (issue 22): rows deleted from a real SQLite file leave no byte of their text
 * in the database, its WAL or its shared memory, once `Database.compact` has run; each half of
 * the mechanism is shown necessary (without secure_delete the deleted cells keep the text;
 * without compact the full-text segments and the WAL do). The same for vectors deleted through
 * the VectorStore port, in the graph's file and in a sqlite-vec file of its own. And the
 * helper the forget tests use (test/support/noTrace.ts) on both dialects.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { type Context, Effect, Exit, Layer } from "effect"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteLive } from "../../layers/sql/index.js"
import { binaryCode } from "../../layers/vectors/binaryCodes.js"
import { makeSqliteVecStore, SqliteVecFileStoreLive, SqliteVecStoreLive } from "../../layers/vectors/SqliteVecStore.js"
import { Database } from "../../src/services/Database.js"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import { type EntityUpsert, GraphRepo } from "../../src/services/GraphRepo.js"
import { type VectorItem, VectorStore } from "../../src/services/VectorStore.js"
import { forEachDialect } from "../support/databases.js"
import { markerLocations, newMarker, scanFiles, sqliteFiles } from "../support/noTrace.js"

const t = (seconds: number) => new Date(Date.UTC(2025, 0, 1) + seconds * 1000).toISOString()

/** filler words: none starts with z, so no term of the full-text index shares a prefix with a marker */
const WORDS =
  "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike oscar papa romeo sierra tango"
    .split(" ")
const words = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => WORDS[(seed * 7 + i * 3) % WORDS.length])
    .join(" ")

const entity = (name: string, description: string): EntityUpsert => ({
  name,
  name_key: name.toLowerCase(),
  type: "person",
  description,
  model_id: null,
  created_at: t(0)
})

/** a temporary directory, removed with the scope */
const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "gligabao-notrace-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/**
 * Filler and marked rows through the repositories, in several transactions with a checkpoint
 * between them (so the marked pages are in the database file, and later ones in the WAL).
 * Marked: entities with the marker in their name and a description longer than a page
 * (overflow pages), facts with it in their description, artifacts with it in their text.
 */
const seedGraph = (marker: string) =>
  Effect.gen(function*() {
    const database = yield* Database
    const datasets = yield* DatasetsRepo
    const graph = yield* GraphRepo
    const sql = yield* SqlClient.SqlClient
    const dataset = yield* datasets.getOrCreate("alice", "notes", t(0))
    const round = (from: number, marked: boolean) =>
      database.withTransaction(Effect.gen(function*() {
        const artifact = yield* graph.insertArtifact({
          dataset_id: dataset.id,
          kind: "knowledge",
          text: marked ? `${words(50, from)} ${marker} ${words(400, from + 1)}` : words(300, from),
          parent_id: null,
          session_id: null,
          valid_at: t(from),
          created_at: t(from),
          inference_id: null,
          query: null,
          metadata: null
        })
        const people = yield* graph.upsertEntities(
          dataset.id,
          Array.from({ length: 100 }, (_, i) =>
            marked && i % 10 === 0
              ? entity(`Person ${from + i} ${marker}`, `${marker} ${words(900, i)}`)
              : entity(`Person ${from + i}`, words(12, i)))
        )
        const edges = yield* graph.insertEdges(
          people.slice(1).map((p, i) => ({
            dataset_id: dataset.id,
            source_id: people[i]!.id,
            target_id: p.id,
            relation: "knows",
            description: marked && i % 7 === 0 ? `${words(6, i)} ${marker} ${words(6, i + 1)}` : words(10, i),
            valid_at: t(from),
            invalid_at: null,
            created_at: t(from),
            expired_at: null,
            artifact_id: artifact.id,
            model_id: null
          }))
        )
        yield* graph.linkEdgeArtifacts(artifact.id, edges.map((e) => e.id))
        yield* graph.linkEntityArtifacts(artifact.id, people.map((p) => p.id))
      }))
    yield* round(0, false)
    yield* round(1000, true)
    yield* round(2000, false)
    yield* sql`PRAGMA wal_checkpoint(TRUNCATE)`
    yield* round(3000, true)
    yield* round(4000, false)
  })

/** What a forget of the marked rows would delete: artifacts, facts and entities naming the marker. */
const deleteMarked = (marker: string) =>
  Effect.gen(function*() {
    const database = yield* Database
    const sql = yield* SqlClient.SqlClient
    const like = `%${marker}%`
    yield* database.withTransaction(Effect.all([
      sql`DELETE FROM gb_edges WHERE description LIKE ${like}`,
      sql`DELETE FROM gb_entities WHERE name LIKE ${like}`,
      sql`DELETE FROM gb_artifacts WHERE text LIKE ${like}`
    ]))
    const [left] = yield* sql<{ n: number }>`SELECT
      (SELECT count(*) FROM gb_edges WHERE description LIKE ${like}) +
      (SELECT count(*) FROM gb_entities WHERE name LIKE ${like} OR description LIKE ${like}) +
      (SELECT count(*) FROM gb_artifacts WHERE text LIKE ${like}) AS n`
    expect(left!.n).toBe(0)
  })

interface Run {
  readonly secureDelete: boolean
  readonly compact: boolean
}

/** seed, delete, maybe compact, on a fresh file; what is found while it is open and once it is closed */
const graphRun = ({ compact, secureDelete }: Run) =>
  Effect.gen(function*() {
    const file = join(yield* tempDir, "gligabao.db")
    const marker = newMarker()
    const whileOpen = yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [pragma] = yield* sql<{ secure_delete: number }>`PRAGMA secure_delete`
      expect(pragma!.secure_delete).toBe(1)
      if (!secureDelete) yield* sql`PRAGMA secure_delete = OFF`
      yield* seedGraph(marker)
      expect(scanFiles(sqliteFiles(file), marker).length).toBeGreaterThan(0)
      yield* deleteMarked(marker)
      if (compact) yield* (yield* Database).compact
      return { rows: yield* markerLocations(sql, marker), files: scanFiles(sqliteFiles(file), marker) }
    }).pipe(Effect.provide(SqliteLive(file)))
    return {
      whileOpen,
      closed: { rows: yield* markerLocations(file, marker), files: scanFiles(sqliteFiles(file), marker) }
    }
  })

describe("no trace of deleted rows in a SQLite file", () => {
  it.scoped("secure_delete and compact: the marker is in no row and no byte of the db, WAL or shm", () =>
    Effect.gen(function*() {
      const { closed, whileOpen } = yield* graphRun({ secureDelete: true, compact: true })
      expect(whileOpen).toEqual({ rows: [], files: [] })
      expect(closed).toEqual({ rows: [], files: [] })
    }))

  it.scoped("without compact, the full-text segments keep the deleted terms (and the WAL the old pages)", () =>
    Effect.gen(function*() {
      const { closed, whileOpen } = yield* graphRun({ secureDelete: true, compact: false })
      // a delete from FTS5 writes a tombstone: the terms stay in the segments, in the rows of its shadow tables
      expect(whileOpen.rows.length).toBeGreaterThan(0)
      for (const { table } of whileOpen.rows) expect(table).toMatch(/^gb_fts_(entities|edges)(_\d+)?_(data|idx)$/)
      expect(whileOpen.files.map((hit) => hit.file)).toContainEqual(expect.stringMatching(/-wal$/))
      expect(closed.files.length).toBeGreaterThan(0)
    }))

  it.scoped("without secure_delete, compact alone leaves the deleted cells' bytes in the database file", () =>
    Effect.gen(function*() {
      const { closed, whileOpen } = yield* graphRun({ secureDelete: false, compact: true })
      expect(whileOpen.rows).toEqual([])
      expect(whileOpen.files.map((hit) => hit.file)).toContainEqual(expect.stringMatching(/\.db$/))
      expect(closed.rows).toEqual([])
      expect(closed.files.length).toBeGreaterThan(0)
    }))

  it.scoped("compact dies inside a transaction, and is harmless when there is nothing to do", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "gligabao.db")
      yield* Effect.gen(function*() {
        const database = yield* Database
        const exit = yield* Effect.exit(database.withTransaction(database.compact))
        expect(Exit.isFailure(exit) && String(exit.cause)).toMatch(/must not run inside a transaction/)
        yield* database.compact
        yield* database.compact
      }).pipe(Effect.provide(SqliteLive(file)))
    }))

  it.effect("compact on an in-memory database", () =>
    Effect.flatMap(Database, (database) => database.compact).pipe(Effect.provide(SqliteLive(":memory:"))))
})

/** a vector with a byte pattern of its own: the marked vectors' floats are looked for too */
const markedValues = (dims: number, n: number) => Array.from({ length: dims }, (_, i) => 1000 + n + i / 1024)
const filler = (dims: number, count: number): Array<VectorItem> =>
  Array.from({ length: count }, (_, k) => ({
    id: `entity-${k}`,
    values: Array.from({ length: dims }, (_, i) => Math.sin(k * 31 + i)),
    metadata: { kind: "entity", name: `Person ${k}` }
  }))
const marked = (marker: string, dims: number): Array<VectorItem> =>
  [1, 2, 3].map((n) => ({
    id: `entity-${marker}-${n}`,
    values: markedValues(dims, n),
    metadata: { kind: "entity", name: `Person ${marker}`, name_key: `person ${marker}` }
  }))
const floatBytes = (values: ReadonlyArray<number>) => Buffer.from(Float32Array.from(values).buffer)
const INDEX = "dataset-1-entities"

/** the files' bytes holding the marker, a marked vector's floats or its binary code */
const vectorTraces = (file: string, marker: string, dims: number) => {
  const files = sqliteFiles(file)
  const patterns = [1, 2, 3].flatMap((
    n
  ) => [floatBytes(markedValues(dims, n)), binaryCode(markedValues(dims, n), dims)])
  const vectors = files.filter((f) => {
    const bytes = readFileSync(f)
    return patterns.some((p) => bytes.includes(p))
  })
  return { marker: scanFiles(files, marker).map((hit) => hit.file), vectors }
}

/** upsert filler and marked vectors, checkpoint, more filler, delete the marked ones through the port */
const vectorRound = (
  file: string,
  store: Context.Tag.Service<VectorStore>,
  dims: number,
  marker: string,
  checkpoint: Effect.Effect<unknown, unknown>
) =>
  Effect.gen(function*() {
    const items = marked(marker, dims)
    yield* store.upsert(INDEX, [...filler(dims, 150), ...items])
    yield* checkpoint
    yield* store.upsert(INDEX, filler(dims, 300).slice(150))
    const found = yield* store.query(INDEX, items[0]!.values, 5, -1)
    expect(found.map((m) => m.id)).toContain(items[0]!.id)
    // what is looked for afterwards is there before the delete
    const before = vectorTraces(file, marker, dims)
    expect(before.marker.length).toBeGreaterThan(0)
    expect(before.vectors.length).toBeGreaterThan(0)
    yield* store.delete(INDEX, items.map((item) => item.id))
    const after = yield* store.query(INDEX, items[0]!.values, 5, -1)
    expect(after.map((m) => m.id)).not.toContain(items[0]!.id)
  })

describe("no trace of deleted vectors in sqlite-vec", () => {
  const sameFile = (secureDelete: boolean, compact: boolean) =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "gligabao.db")
      const marker = newMarker()
      return yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        if (!secureDelete) yield* sql`PRAGMA secure_delete = OFF`
        // 256 dimensions: codes in vec0 and floats in a plain table, searched on the reader's
        // worker thread; 8 dimensions: floats in one vec0 table
        const coded = yield* VectorStore
        const exact = yield* makeSqliteVecStore(sql, 8)
        const checkpoint = sql`PRAGMA wal_checkpoint(TRUNCATE)`
        yield* vectorRound(file, coded, 256, marker, checkpoint)
        yield* vectorRound(file, exact, 8, marker, checkpoint)
        if (compact) {
          yield* (yield* Database).compact
          yield* coded.compact
        }
        return {
          rows: yield* markerLocations(sql, marker),
          traces: { coded: vectorTraces(file, marker, 256), exact: vectorTraces(file, marker, 8) }
        }
      }).pipe(
        Effect.provide(
          SqliteVecStoreLive(256, { filename: file, mmapBytes: 0 }).pipe(Layer.provideMerge(SqliteLive(file)))
        )
      )
    })

  it.scoped("in the graph's file: no id, metadata, float or code of a deleted vector is left", () =>
    Effect.gen(function*() {
      const { rows, traces } = yield* sameFile(true, true)
      expect(rows).toEqual([])
      expect(traces).toEqual({ coded: { marker: [], vectors: [] }, exact: { marker: [], vectors: [] } })
    }))

  it.scoped("in the graph's file without secure_delete: the deleted keys and metadata are still in the file", () =>
    Effect.gen(function*() {
      const { rows, traces } = yield* sameFile(false, false)
      expect(rows).toEqual([])
      expect(traces.coded.marker.length).toBeGreaterThan(0)
      expect(traces.exact.marker.length).toBeGreaterThan(0)
    }))

  const ownFile = (compact: boolean) =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "vectors.db")
      const marker = newMarker()
      return yield* Effect.gen(function*() {
        const store = yield* VectorStore
        yield* vectorRound(file, store, 256, marker, store.compact)
        if (compact) yield* store.compact
        return { whileOpen: vectorTraces(file, marker, 256), rows: yield* markerLocations(file, marker) }
      }).pipe(Effect.provide(SqliteVecFileStoreLive(file, 256)))
    })

  it.scoped("in a file of its own (next to PostgreSQL): VectorStore.compact empties the WAL", () =>
    Effect.gen(function*() {
      expect(yield* ownFile(true)).toEqual({ whileOpen: { marker: [], vectors: [] }, rows: [] })
    }))

  it.scoped("in a file of its own without compact: the database file still holds the pages as they were", () =>
    Effect.gen(function*() {
      const { rows, whileOpen } = yield* ownFile(false)
      expect(rows).toEqual([])
      expect(whileOpen.marker).toContainEqual(expect.stringMatching(/vectors\.db$/))
    }))
})

forEachDialect((dialect, makeLayer) => {
  const seedOne = (marker: string) =>
    Effect.gen(function*() {
      const database = yield* Database
      const graph = yield* GraphRepo
      const dataset = yield* (yield* DatasetsRepo).getOrCreate("bob", "notes", t(0))
      yield* database.withTransaction(Effect.gen(function*() {
        const [a, b] = yield* graph.upsertEntities(dataset.id, [
          entity(`Ann ${marker}`, `a friend of ${marker}`),
          entity("Ben", "a neighbour")
        ])
        yield* graph.insertEdges([{
          dataset_id: dataset.id,
          source_id: a!.id,
          target_id: b!.id,
          relation: "knows",
          description: `Ann ${marker} knows Ben`,
          valid_at: t(0),
          invalid_at: null,
          created_at: t(0),
          expired_at: null,
          artifact_id: null,
          model_id: null
        }])
      }))
    })

  it.effect("markerLocations names every table and column holding the marker, then none once deleted", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const database = yield* Database
      const marker = newMarker()
      yield* seedOne(marker)
      const found = (yield* markerLocations(sql, marker)).map(({ column, table }) => `${table}.${column}`)
      expect(found).toEqual(
        expect.arrayContaining(["gb_entities.name", "gb_entities.description", "gb_edges.description"])
      )
      // the full-text index holds the (lowercase) marker too: FTS5 segments, or the tsvector column
      expect(found).toContainEqual(
        dialect === "pg" ? "gb_entities.search_tsv" : expect.stringMatching(/^gb_fts_entities(_\d+)?_(data|idx)\./)
      )
      expect(yield* markerLocations(sql, "zqnotthere")).toEqual([])
      yield* sql`DELETE FROM gb_entities WHERE name LIKE ${`%${marker}%`}`
      yield* database.compact
      expect(yield* markerLocations(sql, marker)).toEqual([])
      // on PostgreSQL compact does nothing, and dies inside a transaction as on SQLite
      const exit = yield* Effect.exit(database.withTransaction(database.compact))
      expect(Exit.isFailure(exit)).toBe(true)
    }).pipe(Effect.provide(makeLayer())))
})

describe("scanFiles", () => {
  it.scoped("walks a directory tree and finds the marker whole, lowercased, or without its first letters", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const marker = newMarker()
      mkdirSync(join(dir, "1", "deep"), { recursive: true })
      writeFileSync(join(dir, "1", "clean.png"), "nothing here")
      writeFileSync(join(dir, "1", "deep", "whole.bin"), Buffer.concat([Buffer.alloc(10), Buffer.from(marker)]))
      writeFileSync(join(dir, "upper.txt"), `say ${marker.toUpperCase()}`)
      // FTS5 stores a term after a term sharing its first letters as their count and the rest
      writeFileSync(join(dir, "tail.bin"), `\x02${marker.slice(2)}`)
      const hits = scanFiles([dir, join(dir, "missing")], marker)
      expect(hits.map((hit) => [hit.file.slice(dir.length), hit.offset])).toEqual([
        ["/1/deep/whole.bin", 10],
        ["/tail.bin", 1]
      ])
      expect(scanFiles(join(dir, "upper.txt"), marker.toUpperCase()).map((hit) => hit.found)).toEqual([
        marker.toUpperCase()
      ])
      expect(sqliteFiles(join(dir, "none.db"))).toEqual([])
    }))
})
