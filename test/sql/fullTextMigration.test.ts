/**
 * Migration 0013 on a SQLite file whose rows the shared full-text tables of 0004 indexed: each
 * dataset gets its own tables holding exactly its rows, the shared ones are gone, and the new
 * triggers queue what is written next.
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
      }).pipe(
        Effect.provide(
          SqliteMigrator.layer({ loader: SqliteMigrator.fromRecord(before13) }).pipe(
            Layer.provideMerge(SqliteClient.layer({ filename: file })),
            Layer.provide(NodeContext.layer)
          )
        ),
        Effect.orDie
      )

      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tables = yield* names(sql)
        expect(tables.filter((t) => /^gb_(entities|edges)_fts/.test(t))).toEqual([])
        expect(tables).toEqual(expect.arrayContaining(["gb_fts_edges_1", "gb_fts_edges_2", "gb_fts_entities_1"]))
        yield* expectFullTextConsistent
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
