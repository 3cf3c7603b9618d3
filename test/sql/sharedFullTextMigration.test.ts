/**
 * Migration 0015 on a SQLite file that 0013's engine indexed (two FTS5 tables a dataset): every
 * dataset's search answers the same rows with the same scores after it, the shared index, the
 * lengths and the statistics equal the rows, changes still queued when the old build stopped
 * are in, and no per-dataset table is left. A dataset emptied and one erased leave nothing
 * behind. On PostgreSQL it changes nothing.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { fts5Idf, termIdf } from "../../layers/sql/FullText.js"
import { SqliteLive } from "../../layers/sql/index.js"
import { migrations } from "../../layers/sql/migrations/index.js"
import { WEIGHTED_IDF_ROWS } from "../../layers/sql/repositories/Search.js"
import { SearchRepo, type TextMatch } from "../../src/services/SearchRepo.js"
import { tempDir } from "../support/cli.js"
import { freshPgUrl, pgSkipReason } from "../support/databases.js"
import { expectFullTextConsistent } from "../support/fullText.js"
import { pgMigratedTo, sqliteMigratedTo } from "../support/migrated.js"

const before15 = Object.fromEntries(Object.entries(migrations).filter(([key]) => key < "0015"))

const T0 = "2025-01-01T00:00:00.000Z"
const NOW = { asOf: T0, knownAt: null, includeExpired: false, sessionId: null, kind: null }
const SIDES = [
  { side: "entities", columns: "name, description", base: "gb_entities", weights: ", 4.0, 1.0" },
  { side: "edges", columns: "description", base: "gb_edges", weights: "" }
] as const

const WORDS = ["alice", "paris", "painter", "berlin", "coffee", "rockets", "lives", "knows"]
const QUERIES: ReadonlyArray<ReadonlyArray<string>> = [["alice"], ["painter"], ["alice", "paris"], [
  "coffee",
  "lives",
  "knows"
]]

/** 0013's two tables of a dataset, as its build created them (frozen) */
const createTables = (sql: SqlClient.SqlClient, id: number) =>
  Effect.forEach(
    SIDES,
    ({ base, columns, side }) =>
      sql.unsafe(`CREATE VIRTUAL TABLE gb_fts_${side}_${id} USING fts5(${columns},
      content = '${base}', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2')`)
  )

/** 0013's flush (frozen): the queue applied to the datasets' tables */
const flushOld = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const groups = yield* sql<{ dataset_id: number; side: "entities" | "edges" }>`
      SELECT DISTINCT dataset_id, side FROM gb_fts_pending`
    for (const { dataset_id, side } of groups) {
      const table = `gb_fts_${side}_${Number(dataset_id)}`
      const columns = side === "entities" ? "name, description" : "description"
      yield* sql.unsafe(
        `INSERT INTO ${table} (${table}, rowid, ${columns})
          SELECT CASE op WHEN 'delete' THEN 'delete' END, row_id, ${columns} FROM gb_fts_pending
          WHERE dataset_id = ? AND side = ? ORDER BY id`,
        [dataset_id, side]
      )
    }
    yield* sql`DELETE FROM gb_fts_pending`
  })

/** a few words of WORDS, picked by `k` */
const words = (k: number, n: number) =>
  Array.from({ length: n }, (_, i) => WORDS[(k * 5 + i * 3) % WORDS.length]).join(" ")

/** `count` entities and as many facts in dataset `id`, by plain SQL (queued by 0013's triggers) */
const fill = (sql: SqlClient.SqlClient, id: number, count: number) =>
  Effect.gen(function*() {
    for (let k = 0; k < count; k++) {
      const entity = id * 1000 + k
      yield* sql.unsafe(
        `INSERT INTO gb_entities (id, dataset_id, name, name_key, type, description, created_at, updated_at)
        VALUES (?, ?, ?, ?, 'person', ?, '${T0}', '${T0}')`,
        [
          entity,
          id,
          words(k, 1 + (k % 2)),
          `k${entity}`,
          k % 3 === 0 ? "" : words(k + 1, 2 + (k % 4))
        ]
      )
      yield* sql.unsafe(
        `INSERT INTO gb_edges (id, dataset_id, source_id, target_id, relation, description, valid_at, created_at)
        VALUES (?, ?, ?, ?, 'r', ?, '${T0}', '${T0}')`,
        [entity, id, entity, entity, words(k + 2, 1 + (k % 6))]
      )
    }
  })

/** What 0013's engine answered: bm25 in the dataset's own table, scaled to `termIdf` for several terms */
const oldAnswer = (sql: SqlClient.SqlClient, side: "entities" | "edges", id: number, terms: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { base, weights } = SIDES.find((s) => s.side === side)!
    const table = `gb_fts_${side}_${id}`
    const [{ n }] =
      (yield* sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${base} WHERE dataset_id = ?`, [id])) as [
        { n: number }
      ]
    const scores = new Map<number, number>()
    for (const term of terms) {
      const hits = yield* sql.unsafe<{ id: number; b: number }>(
        `SELECT rowid AS id, -bm25(${table}${weights}) AS b FROM ${table} WHERE ${table} MATCH ?`,
        [`"${term}"`]
      )
      const weight = terms.length === 1 || n > WEIGHTED_IDF_ROWS ? 1 : termIdf(n, hits.length) / fts5Idf(n, hits.length)
      for (const hit of hits) scores.set(hit.id, (scores.get(hit.id) ?? 0) + hit.b * weight)
    }
    return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || a.id - b.id)
  })

const expectSame = (actual: ReadonlyArray<TextMatch>, expected: ReadonlyArray<TextMatch>, label: string) => {
  expect(actual.map((m) => m.id), label).toEqual(expected.map((m) => m.id))
  actual.forEach((m, i) => expect(m.score, label).toBeCloseTo(expected[i]!.score, 9))
}

describe("migration 0015: one full-text table a side, scores per dataset", () => {
  it(
    "SQLite: every dataset answers the same rows and scores, the index equals the rows, no per-dataset table is left",
    async () => {
      const dir = tempDir("gligabao-0015-")
      const file = `${dir.path}/old.db`
      const before = sqliteMigratedTo(file, before15)
      const expected = await Effect.runPromise(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql.unsafe(`INSERT INTO gb_datasets (id, user_id, name, created_at) VALUES
        (1, 'alice', 'main', '${T0}'), (2, 'bob', 'main', '${T0}'), (3, 'carol', 'main', '${T0}'),
        (4, 'dan', 'main', '${T0}')`)
          for (const id of [1, 2, 3, 4]) yield* createTables(sql, id)
          yield* fill(sql, 1, 40)
          yield* fill(sql, 2, 12)
          yield* fill(sql, 3, 10)
          yield* fill(sql, 4, 25)
          yield* flushOld(sql)
          // dataset 2 emptied; dataset 3 erased as 0013's build erased (its tables dropped, its queue gone)
          yield* sql.unsafe(`DELETE FROM gb_edges WHERE dataset_id = 2`)
          yield* sql.unsafe(`DELETE FROM gb_entities WHERE dataset_id = 2`)
          yield* sql.unsafe(`DELETE FROM gb_datasets WHERE id = 3`)
          yield* sql.unsafe(`DELETE FROM gb_fts_pending WHERE dataset_id = 3`)
          for (const { side } of SIDES) yield* sql.unsafe(`DROP TABLE gb_fts_${side}_3`)
          yield* flushOld(sql)
          // changes the old build queued and never applied (it stopped first): 0015 takes them from the rows
          yield* sql.unsafe(`UPDATE gb_edges SET description = 'alice drinks coffee in paris' WHERE id = 1001`)
          yield* sql.unsafe(`DELETE FROM gb_edges WHERE id = 1002`)
          yield* sql.unsafe(`UPDATE gb_entities SET description = 'painter of rockets' WHERE id = 1003`)
          const queued = sql<{ n: number }>`SELECT COUNT(*) AS n FROM gb_fts_pending`.pipe(
            Effect.map((rows) => Number(rows[0]!.n))
          )
          // an update queues a delete and an insert
          expect(yield* queued).toBe(5)
          // the old engine's answers with them applied, in a transaction rolled back: they stay queued
          const answers = yield* sql.withTransaction(Effect.gen(function*() {
            yield* flushOld(sql)
            const out: Record<string, ReadonlyArray<TextMatch>> = {}
            for (const id of [1, 2, 4]) {
              for (const { side } of SIDES) {
                for (const terms of QUERIES) {
                  out[`${id} ${side} ${terms.join(" ")}`] = yield* oldAnswer(sql, side, id, terms)
                }
              }
            }
            return yield* Effect.fail(out)
          })).pipe(Effect.flip)
          expect(yield* queued).toBe(5)
          return answers
        }).pipe(Effect.provide(before))
      )
      expect(Object.values(expected).filter((a) => a.length > 0).length).toBeGreaterThan(10)

      await Effect.runPromise(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const search = yield* SearchRepo
          yield* expectFullTextConsistent
          const left = yield* sql<{ name: string }>`SELECT name FROM sqlite_schema WHERE name GLOB 'gb_fts_*'`
          expect(left.map((r) => r.name).filter((name) => /^gb_fts_(entities|edges)_\d/.test(name))).toEqual([])
          const stats = yield* sql<
            { dataset_id: number }
          >`SELECT DISTINCT dataset_id FROM gb_fts_stats ORDER BY dataset_id`
          expect(stats.map((r) => Number(r.dataset_id))).toEqual([1, 4])
          for (const [key, answer] of Object.entries(expected)) {
            const [id, side, ...terms] = key.split(" ")
            const match = side === "entities" ? search.matchEntities : search.matchFacts
            expectSame(yield* match(Number(id), terms, NOW, 1000), answer, key)
          }
          // the change queued last is in: the entity's new words match
          expect((yield* search.matchEntities(1, ["rockets"], NOW, 1000)).map((m) => m.id)).toContain(1003)
        }).pipe(Effect.provide(SqliteLive(file)), Effect.orDie)
      )
      dir.remove()
    },
    60_000
  )

  it.skipIf(pgSkipReason() !== null)("PostgreSQL: nothing changes (no table, the tsvector as it was)", async () => {
    await Effect.runPromise(Effect.gen(function*() {
      const url = yield* freshPgUrl
      const tables = Effect.map(
        SqlClient.SqlClient,
        (sql) =>
          sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
            WHERE table_schema = 'public' ORDER BY table_name`
      ).pipe(Effect.flatten)
      const before = yield* tables.pipe(
        Effect.provide(
          pgMigratedTo(url, before15)
        )
      )
      // migration 0015 itself (later ones add tables of their own)
      const through15 = Object.fromEntries(Object.entries(migrations).filter(([key]) => key < "0016"))
      const after = yield* tables.pipe(
        Effect.provide(
          pgMigratedTo(url, through15)
        )
      )
      expect(after).toEqual(before)
      expect(after.map((r) => r.name).filter((name) => name.startsWith("gb_fts"))).toEqual([])
    }))
  })
})
