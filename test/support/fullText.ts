/**
 * SQLite: the full-text index holds exactly the rows' words. Each side's table is compared,
 * term by term and position by position (fts5vocab 'instance'), with an index built afresh from
 * the base table; each row's length and each dataset side's statistics with those counted
 * afresh; the change queue is empty; FTS5's own structure check passes.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { expect } from "vitest"
import { FULL_TEXT_COLUMNS, FULL_TEXT_SIDES, fullTextTable, TOKENIZE } from "../../layers/sql/FullText.js"

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
  for (const side of FULL_TEXT_SIDES) {
    const table = fullTextTable(side)
    const base = side === "entities" ? "gb_entities" : "gb_edges"
    yield* sql.unsafe(`INSERT INTO ${table} (${table}) VALUES ('integrity-check')`)
    const columns = FULL_TEXT_COLUMNS[side]
    yield* sql.unsafe(
      `CREATE VIRTUAL TABLE temp.check_fresh USING fts5(dataset_id, ${columns}, tokenize = '${TOKENIZE}')`
    )
    yield* sql.unsafe(
      `INSERT INTO temp.check_fresh (rowid, dataset_id, ${columns}) SELECT id, dataset_id, ${columns} FROM ${base}
        ORDER BY id`
    )
    const expected = yield* instances(sql, "temp", "check_fresh")
    const actual = yield* instances(sql, "main", table)
    expect(actual, `${table} against its rows`).toEqual(expected)
    // a row's length: its tokens but the dataset's
    yield* sql.unsafe(`CREATE VIRTUAL TABLE temp.check_vocab USING fts5vocab(temp, check_fresh, 'instance')`)
    const lengths = yield* sql.unsafe<{ row_id: number; dataset_id: number; length: number }>(
      `SELECT b.id AS row_id, b.dataset_id AS dataset_id, COALESCE(c.n, 0) AS length FROM ${base} b
        LEFT JOIN (SELECT doc, COUNT(*) AS n FROM temp.check_vocab WHERE col <> 'dataset_id' GROUP BY doc) c
        ON c.doc = b.id ORDER BY b.id`
    )
    yield* sql.unsafe(`DROP TABLE temp.check_vocab`)
    yield* sql.unsafe(`DROP TABLE temp.check_fresh`)
    const stored = yield* sql<{ row_id: number; dataset_id: number; length: number }>`
      SELECT row_id, dataset_id, length FROM gb_fts_lengths WHERE side = ${side} ORDER BY row_id`
    expect(stored, `gb_fts_lengths of ${side}`).toEqual(lengths)
    const stats = yield* sql<{ dataset_id: number; rows: number; tokens: number }>`
      SELECT dataset_id, rows, tokens FROM gb_fts_stats WHERE side = ${side} ORDER BY dataset_id`
    const perDataset = new Map<number, { dataset_id: number; rows: number; tokens: number }>()
    for (const { dataset_id, length } of lengths) {
      const entry = perDataset.get(dataset_id) ?? { dataset_id, rows: 0, tokens: 0 }
      perDataset.set(dataset_id, { dataset_id, rows: entry.rows + 1, tokens: entry.tokens + length })
    }
    expect(stats, `gb_fts_stats of ${side}`).toEqual(
      [...perDataset.values()].sort((a, b) => a.dataset_id - b.dataset_id)
    )
  }
}).pipe(Effect.orDie)
