/**
 * SQLite: every dataset's full-text index holds exactly its rows' words. Each table is compared,
 * term by term and position by position (fts5vocab 'instance'), with an index built afresh from
 * the dataset's rows; the change queue is empty; FTS5's own structure check passes.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { expect } from "vitest"
import {
  createFullTextStatements,
  FULL_TEXT_COLUMNS,
  FULL_TEXT_SIDES,
  fullTextTable
} from "../../layers/sql/FullText.js"

type Instance = { readonly term: string; readonly doc: number; readonly col: string; readonly offset: number }

const instances = (sql: SqlClient.SqlClient, schema: string, table: string) =>
  Effect.gen(function*() {
    yield* sql.unsafe(`CREATE VIRTUAL TABLE temp.check_vocab USING fts5vocab(${schema}, ${table}, 'instance')`)
    const rows = yield* sql.unsafe<Instance>(
      `SELECT term, doc, col, "offset" AS offset FROM temp.check_vocab ORDER BY doc, col, "offset", term`
    )
    yield* sql.unsafe(`DROP TABLE temp.check_vocab`)
    return rows.map((r) => `${r.doc}:${r.col}:${r.offset}:${r.term}`)
  })

export const expectFullTextConsistent = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [queued] = yield* sql<{ n: number }>`SELECT COUNT(*) AS n FROM gb_fts_pending`
  expect(Number(queued!.n), "changes left in gb_fts_pending").toBe(0)
  const datasets = yield* sql<{ id: number }>`SELECT id FROM gb_datasets ORDER BY id`
  for (const { id } of datasets) {
    for (const side of FULL_TEXT_SIDES) {
      const table = fullTextTable(side, Number(id))
      yield* sql.unsafe(`INSERT INTO ${table} (${table}) VALUES ('integrity-check')`)
      const fresh = createFullTextStatements(Number(id))[FULL_TEXT_SIDES.indexOf(side)]!
        .replace(`IF NOT EXISTS ${table}`, "temp.check_fresh")
      yield* sql.unsafe(fresh)
      const columns = FULL_TEXT_COLUMNS[side]
      yield* sql.unsafe(
        `INSERT INTO temp.check_fresh (rowid, ${columns}) SELECT id, ${columns} FROM ${
          side === "entities" ? "gb_entities" : "gb_edges"
        } WHERE dataset_id = ? ORDER BY id`,
        [id]
      )
      const expected = yield* instances(sql, "temp", "check_fresh")
      const actual = yield* instances(sql, "main", table)
      yield* sql.unsafe(`DROP TABLE temp.check_fresh`)
      expect(actual, `${table} against its rows`).toEqual(expected)
    }
  }
}).pipe(Effect.orDie)
