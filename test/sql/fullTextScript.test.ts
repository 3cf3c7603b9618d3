/**
 * The full-text flush as one script (FullText.ts with sqliteClient.ts's SqliteScript) does what
 * it does one statement at a time: two databases get the same writes, updates and deletes, one
 * flushing through the script and one without it, both with the own-table threshold lowered so
 * that a dataset moves to a table of its own on the way; the index's bookkeeping tables and
 * every search's scores end the same. The script counts as one statement, inside the caller's
 * transaction, and as a transaction of its own outside one.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { makeFullTextIndex } from "../../layers/sql/FullText.js"
import { SqliteLive } from "../../layers/sql/index.js"
import { SqliteScript } from "../../layers/sql/sqliteClient.js"

const THRESHOLD = 20
const WORDS = ["alice", "smith", "works", "paris", "river", "garden", "music", "paint"]
const T0 = "2025-01-01T00:00:00.000Z"
const textOf = (i: number) => [WORDS[i % 8], WORDS[(i * 5 + 3) % 8], i % 3 === 0 ? "alice" : ""].join(" ").trim()

const open = (withScript: boolean) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(SqliteLive(":memory:"))
    const sql = Context.get(context, SqlClient.SqlClient)
    const script = Context.unsafeGet(context, SqliteScript)
    const index = makeFullTextIndex(sql, { ownTableRows: THRESHOLD, ...(withScript ? { script } : {}) })
    return { sql, index, script }
  })

type Db = Effect.Effect.Success<ReturnType<typeof open>>

const write = (db: Db, f: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  db.sql.withTransaction(Effect.zipRight(f(db.sql), db.index.flush)).pipe(Effect.orDie)

const addRows = (sql: SqlClient.SqlClient, datasetId: number, from: number, count: number) =>
  Effect.forEach(Array.from({ length: count }, (_, i) => from + i), (id) =>
    Effect.zipRight(
      sql`INSERT INTO gb_entities ${
        sql.insert({
          id,
          dataset_id: datasetId,
          name: WORDS[id % 8]!,
          name_key: `k${id}`,
          type: "t",
          description: textOf(id + 1),
          created_at: T0,
          updated_at: T0
        })
      }`,
      sql`INSERT INTO gb_edges ${
        sql.insert({
          id,
          dataset_id: datasetId,
          source_id: id,
          target_id: id,
          relation: "r",
          description: textOf(id),
          valid_at: T0,
          created_at: T0
        })
      }`
    ), { discard: true })

/** everything the index keeps beside FTS5's own tables, and what searches answer */
const state = (db: Db) =>
  Effect.gen(function*() {
    const tables = {
      stats: yield* db.sql`SELECT * FROM gb_fts_stats ORDER BY dataset_id, side`,
      lengths: yield* db.sql`SELECT * FROM gb_fts_lengths ORDER BY side, row_id`,
      own: yield* db.sql`SELECT * FROM gb_fts_own ORDER BY dataset_id, side`,
      pending: yield* db.sql`SELECT * FROM gb_fts_pending`
    }
    const answers = []
    for (const datasetId of [1, 2]) {
      for (const side of ["entities", "edges"] as const) {
        for (const terms of [["alice"], ["smith", "paris"], ["music", "river", "alice"]]) {
          const body = yield* db.index.scored(side, datasetId, terms)
          answers.push(
            yield* db.sql<{ id: number; score: number }>`WITH scored AS (${body})
              SELECT id, round(score, 9) AS score FROM scored ORDER BY id`
          )
        }
      }
    }
    return { tables, answers }
  }).pipe(Effect.orDie)

describe("the full-text flush as one script", () => {
  it.scoped("leaves the index as the statements one by one do, through a move to an own table", () =>
    Effect.gen(function*() {
      const scripted = yield* open(true)
      const plain = yield* open(false)
      const both = (f: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
        Effect.forEach([scripted, plain], (db) => write(db, f), { discard: true })
      yield* both((sql) =>
        sql`INSERT INTO gb_datasets (id, user_id, name, created_at) VALUES (1, 'u', 'a', ${T0}), (2, 'u', 'b', ${T0})`
      )
      yield* both((sql) => addRows(sql, 1, 1, 12))
      yield* both((sql) => addRows(sql, 2, 100, 5))
      expect((yield* state(scripted)).tables.own).toEqual([])
      // dataset 1 crosses the threshold: it moves, then changes in its own table
      yield* both((sql) => addRows(sql, 1, 13, 12))
      const moved = yield* state(scripted)
      expect(moved.tables.own.map((o) => o.dataset_id)).toEqual([1, 1])
      yield* both((sql) => sql`UPDATE gb_edges SET description = 'music river' WHERE id IN (2, 101)`)
      yield* both((sql) => sql`DELETE FROM gb_edges WHERE id IN (3, 102)`)
      yield* both((sql) => addRows(sql, 1, 30, 3))
      const a = yield* state(scripted)
      const b = yield* state(plain)
      expect(a.answers.some((rows) => rows.length > 0)).toBe(true)
      expect(a.tables.pending).toEqual([])
      expect(a).toEqual(b)
    }))

  it.scoped("runs inside the caller's transaction, or as one of its own", () =>
    Effect.gen(function*() {
      const { script, sql } = yield* open(true)
      yield* sql`CREATE TABLE t (n INTEGER)`
      // rolled back with the transaction it ran in
      const failed = yield* sql.withTransaction(
        Effect.zipRight(script.exec("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)"), Effect.fail("stop"))
      ).pipe(Effect.flip)
      expect(failed).toBe("stop")
      expect(yield* sql`SELECT n FROM t`).toEqual([])
      // outside one: all or nothing
      const bad = yield* Effect.flip(script.exec("INSERT INTO t VALUES (3); INSERT INTO nope VALUES (4)"))
      expect(bad.cause).toBeDefined()
      expect(yield* sql`SELECT n FROM t`).toEqual([])
      yield* script.exec("INSERT INTO t VALUES (5); INSERT INTO t VALUES (6)")
      expect(yield* sql`SELECT n FROM t ORDER BY n`).toEqual([{ n: 5 }, { n: 6 }])
    }))
})
