/**
 * Migration 0014 on both dialects, on a database the previous release made (every migration up
 * to 0013) with facts live and closed, their statements, decisions and sessions: every row keeps
 * its values, the database answers as before, and afterwards a fact may have no start and a
 * decision no end.
 */
import { SqlClient } from "@effect/sql"
import { Effect, type Layer } from "effect"
import { describe, expect, it } from "vitest"
import { PgLive, SqliteLive, type Storage } from "../../layers/sql/index.js"
import { migrations } from "../../layers/sql/migrations/index.js"
import { SearchRepo } from "../../src/services/SearchRepo.js"
import { tempDir } from "../support/cli.js"
import { freshPgUrl, pgSkipReason } from "../support/databases.js"
import { expectFullTextConsistent } from "../support/fullText.js"
import { pgMigratedTo, sqliteMigratedTo } from "../support/migrated.js"

const before14 = Object.fromEntries(Object.entries(migrations).filter(([key]) => key < "0014"))

const T = (year: number) => `${year}-01-01T00:00:00.000Z`
const NOW = { asOf: T(2025), knownAt: null, includeExpired: false, sessionId: null, kind: null }
const THEN = { ...NOW, asOf: T(2021) }

/** The rows the previous release wrote: Berlin closed by Paris, with statements, a decision and a session. */
const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`INSERT INTO gb_datasets (id, user_id, name, created_at) VALUES (1, 'alice', 'main', '${T(2020)}')`)
  yield* sql.unsafe(`INSERT INTO gb_artifacts (id, dataset_id, kind, text, valid_at, created_at) VALUES
    (1, 1, 'knowledge', 'Alice lives in Berlin.', '${T(2020)}', '${T(2020)}'),
    (2, 1, 'knowledge', 'Alice moved to Paris.', '${T(2022)}', '${T(2022)}')`)
  yield* sql.unsafe(`INSERT INTO gb_entities (id, dataset_id, name, name_key, type, description, created_at, updated_at)
    VALUES (1, 1, 'Alice', 'alice', 'person', 'a painter', '${T(2020)}', '${T(2020)}'),
           (2, 1, 'Berlin', 'berlin', 'place', '', '${T(2020)}', '${T(2020)}'),
           (3, 1, 'Paris', 'paris', 'place', '', '${T(2022)}', '${T(2022)}')`)
  yield* sql.unsafe(`INSERT INTO gb_edges
    (id, dataset_id, source_id, target_id, relation, description, valid_at, invalid_at, created_at, expired_at, artifact_id)
    VALUES (1, 1, 1, 2, 'lives_in', 'Alice lives in Berlin', '${T(2020)}', '${T(2022)}', '${T(2020)}', '${T(2022)}', 1),
           (2, 1, 1, 3, 'lives_in', 'Alice lives in Paris', '${T(2022)}', NULL, '${T(2022)}', NULL, 2)`)
  yield* sql.unsafe(`INSERT INTO gb_edge_artifacts (edge_id, artifact_id, description, valid_at, invalid_at) VALUES
    (1, 1, 'Alice lives in Berlin', '${T(2020)}', NULL), (2, 2, 'Alice lives in Paris', '${T(2022)}', NULL)`)
  yield* sql.unsafe(`INSERT INTO gb_edge_closures
    (edge_id, by_edge_id, artifact_id, kind, invalid_at, expired_at, prev_invalid_at, created_at)
    VALUES (1, 2, 2, 'close', '${T(2022)}', '${T(2022)}', NULL, '${T(2022)}')`)
  yield* sql.unsafe(`INSERT INTO gb_edge_sessions (edge_id, session_id) VALUES (1, 's1')`)
})

const tables = ["gb_edges", "gb_edge_artifacts", "gb_edge_closures", "gb_edge_sessions", "gb_entities", "gb_artifacts"]

/** Every row of the tables the migration touches or that hang on them, by table. */
const snapshot = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const out: Record<string, unknown> = {}
  for (const table of tables) {
    const rows = yield* sql.unsafe<Record<string, unknown>>(`SELECT * FROM ${table} ORDER BY 1, 2`)
    // column order changes on SQLite (the column is added anew); values must not
    out[table] = rows.map((r) => Object.fromEntries(Object.entries(r).sort(([a], [b]) => a.localeCompare(b))))
  }
  return out
})

/** `now`'s rows with only the columns `old` had: a column a later migration adds (0020's) is not this one's doing. */
const withColumnsOf = (old: Record<string, unknown>, now: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(now).map(([table, rows]) => {
      const columns = Object.keys((old[table] as Array<Record<string, unknown>>)[0] ?? {})
      return [
        table,
        (rows as Array<Record<string, unknown>>).map((r) =>
          columns.length === 0 ? r : Object.fromEntries(Object.entries(r).filter(([k]) => columns.includes(k)))
        )
      ]
    })
  )

/** What the database answers: full text now and as of 2021. */
const answers = Effect.gen(function*() {
  const search = yield* SearchRepo
  return {
    now: (yield* search.matchFacts(1, ["alice", "lives"], NOW, 10)).map((m) => m.id),
    then: (yield* search.matchFacts(1, ["alice", "lives"], THEN, 10)).map((m) => m.id)
  }
})

/** After the migration: a fact without a start and a decision without an end can be written. */
const nullable = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`INSERT INTO gb_edges (id, dataset_id, source_id, target_id, relation, description, valid_at,
    invalid_at, created_at) VALUES (3, 1, 1, 3, 'visited', 'Alice visited Paris', NULL, '${T(2019)}', '${T(2024)}')`)
  yield* sql.unsafe(`INSERT INTO gb_edge_closures (edge_id, by_edge_id, artifact_id, kind, invalid_at, expired_at,
    created_at) VALUES (3, 2, NULL, 'contradicts', NULL, '${T(2024)}', '${T(2024)}')`)
  return yield* sql.unsafe<{ id: number; valid_at: string | null }>(`SELECT id, valid_at FROM gb_edges WHERE id = 3`)
})

const check = (before: Layer.Layer<SqlClient.SqlClient>, after: Layer.Layer<Storage, unknown>, sqlite: boolean) =>
  Effect.gen(function*() {
    const old = yield* Effect.gen(function*() {
      yield* seed
      return yield* snapshot
    }).pipe(Effect.provide(before))
    yield* Effect.gen(function*() {
      expect(withColumnsOf(old, yield* snapshot)).toEqual(old)
      expect(yield* answers).toEqual({ now: [2], then: [1] })
      if (sqlite) yield* expectFullTextConsistent
      expect((yield* nullable).map((r) => ({ id: Number(r.id), valid_at: r.valid_at }))).toEqual([
        { id: 3, valid_at: null }
      ])
    }).pipe(Effect.provide(after))
  }).pipe(Effect.orDie)

describe("migration 0014: facts with an unknown start", () => {
  it("SQLite: every row keeps its values and the file answers as before", async () => {
    const dir = tempDir("gligabao-0014-")
    const file = `${dir.path}/old.db`
    const before = sqliteMigratedTo(file, before14)
    await Effect.runPromise(check(before, SqliteLive(file), true))
    dir.remove()
  })

  it.skipIf(pgSkipReason() !== null)(
    "PostgreSQL: every row keeps its values and the database answers as before",
    async () => {
      await Effect.runPromise(Effect.gen(function*() {
        const url = yield* freshPgUrl
        const before = pgMigratedTo(url, before14)
        yield* check(before, PgLive(url), false)
      }))
    }
  )
})
