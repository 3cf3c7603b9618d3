/**
 * Migration 0013 on a SQLite file whose rows the shared full-text tables of 0004 indexed: each
 * dataset gets its own tables holding exactly its rows, the shared ones are gone, and the new
 * triggers queue what is written next. The tables are checked as 0013 and 0014 leave them (0015
 * replaces them, test/sql/sharedFullTextMigration.test.ts); the searches and the write, by this
 * build, after 0015.
 */
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient, SqliteMigrator } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqliteLive } from "../../layers/sql/index.js"
import { migrations } from "../../layers/sql/migrations/index.js"
import { Database } from "../../src/services/Database.js"
import { SearchRepo } from "../../src/services/SearchRepo.js"
import { tempDir } from "../support/cli.js"
import { expectFullTextConsistent } from "../support/fullText.js"

const before13 = Object.fromEntries(Object.entries(migrations).filter(([key]) => key < "0013"))
const before15 = Object.fromEntries(Object.entries(migrations).filter(([key]) => key < "0015"))

type Instance = { readonly term: string; readonly doc: number; readonly col: string; readonly offset: number }

/**
 * 0013's index: each dataset's tables hold exactly its rows (an index built afresh from them,
 * compared term by term and position by position), the queue is empty, FTS5's check passes.
 * Frozen from test/support/fullText.ts as it was for 0013's engine.
 */
const expectPerDatasetFullTextConsistent = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const instances = (schema: string, table: string) =>
    Effect.gen(function*() {
      yield* sql.unsafe(`CREATE VIRTUAL TABLE temp.check_vocab USING fts5vocab(${schema}, ${table}, 'instance')`)
      const rows = yield* sql.unsafe<Instance>(
        `SELECT term, doc, col, "offset" AS offset FROM temp.check_vocab ORDER BY doc, col, "offset", term`
      )
      yield* sql.unsafe(`DROP TABLE temp.check_vocab`)
      return rows.map((r) => `${r.doc}:${r.col}:${r.offset}:${r.term}`)
    })
  const [queued] = yield* sql<{ n: number }>`SELECT COUNT(*) AS n FROM gb_fts_pending`
  expect(Number(queued!.n), "changes left in gb_fts_pending").toBe(0)
  for (const { id } of yield* sql<{ id: number }>`SELECT id FROM gb_datasets ORDER BY id`) {
    for (
      const [side, columns, base] of [["entities", "name, description", "gb_entities"], [
        "edges",
        "description",
        "gb_edges"
      ]]
    ) {
      const table = `gb_fts_${side}_${Number(id)}`
      yield* sql.unsafe(`INSERT INTO ${table} (${table}) VALUES ('integrity-check')`)
      yield* sql.unsafe(`CREATE VIRTUAL TABLE temp.check_fresh USING fts5(${columns},
        content = '${base}', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2')`)
      yield* sql.unsafe(
        `INSERT INTO temp.check_fresh (rowid, ${columns}) SELECT id, ${columns} FROM ${base} WHERE dataset_id = ? ORDER BY id`,
        [id]
      )
      const expected = yield* instances("temp", "check_fresh")
      const actual = yield* instances("main", table)
      yield* sql.unsafe(`DROP TABLE temp.check_fresh`)
      expect(actual, `${table} against its rows`).toEqual(expected)
    }
  }
}).pipe(Effect.orDie)

const migratedUpTo = (file: string, record: typeof migrations | typeof before13) =>
  SqliteMigrator.layer({ loader: SqliteMigrator.fromRecord(record) }).pipe(
    Layer.provideMerge(SqliteClient.layer({ filename: file })),
    Layer.provide(NodeContext.layer)
  )

const T0 = "2025-01-01T00:00:00.000Z"
const NOW = { asOf: T0, knownAt: null, includeExpired: false, sessionId: null, kind: null }

const names = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ name: string }>`SELECT name FROM sqlite_schema WHERE name LIKE '%fts%' AND type = 'table' ORDER BY name`,
    (rows) => rows.map((r) => r.name)
  )

describe("migration 0013: SQLite's full-text index per dataset", () => {
  it.effect("moves every dataset's rows into tables of its own", () =>
    Effect.gen(function*() {
      const dir = tempDir("gligabao-fts-migration-")
      const file = `${dir.path}/old.db`
      // the file as a build before 0013 left it, rows indexed by the shared tables' triggers
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`INSERT INTO gb_datasets (id, user_id, name, created_at) VALUES
          (1, 'alice', 'main', '${T0}'), (2, 'bob', 'main', '${T0}')`)
        yield* sql.unsafe(
          `INSERT INTO gb_entities (id, dataset_id, name, name_key, type, description, created_at, updated_at)
          VALUES (1, 1, 'Alice', 'alice', 'person', 'a painter', '${T0}', '${T0}'),
                 (2, 1, 'Paris', 'paris', 'place', '', '${T0}', '${T0}'),
                 (3, 2, 'Bob', 'bob', 'person', 'a painter too', '${T0}', '${T0}')`
        )
        yield* sql.unsafe(
          `INSERT INTO gb_edges (id, dataset_id, source_id, target_id, relation, description, valid_at, created_at)
          VALUES (1, 1, 1, 2, 'lives_in', 'Alice lives in Paris', '${T0}', '${T0}'),
                 (2, 2, 3, 3, 'paints', 'Bob paints', '${T0}', '${T0}')`
        )
        expect(yield* names(sql)).toContain("gb_edges_fts")
      }).pipe(Effect.provide(migratedUpTo(file, before13)), Effect.orDie)

      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tables = yield* names(sql)
        expect(tables.filter((t) => /^gb_(entities|edges)_fts/.test(t))).toEqual([])
        expect(tables).toEqual(expect.arrayContaining(["gb_fts_edges_1", "gb_fts_edges_2", "gb_fts_entities_1"]))
        yield* expectPerDatasetFullTextConsistent
      }).pipe(Effect.provide(migratedUpTo(file, before15)), Effect.orDie)

      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const search = yield* SearchRepo
        expect((yield* search.matchFacts(1, ["paris", "paint"], NOW, 10)).map((m) => m.id)).toEqual([1])
        expect((yield* search.matchEntities(2, ["painter"], NOW, 10)).map((m) => m.id)).toEqual([3])
        // what is written next is queued by the new triggers and indexed at the commit
        const database = yield* Database
        yield* database.withTransaction(
          sql`UPDATE gb_entities SET description = 'a sculptor' WHERE id = 1`.pipe(Effect.orDie)
        )
        expect(yield* search.matchEntities(1, ["painter"], NOW, 10)).toEqual([])
        expect((yield* search.matchEntities(1, ["sculptor"], NOW, 10)).map((m) => m.id)).toEqual([1])
        yield* expectFullTextConsistent
      }).pipe(Effect.provide(SqliteLive(file)), Effect.orDie)
      dir.remove()
    }))
})
