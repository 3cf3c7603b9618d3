/**
 * Every foreign key a forget's delete follows leads an index of its table, on both databases:
 * deleting a dataset or a run then cascades (or sets NULL) by index, never by scanning the
 * child table (migration 0010). The parents a forget never deletes (the model registry, and
 * the model calls, kept for cost accounting) need none.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { expect } from "vitest"
import { type Dialect, forEachDialect } from "../support/databases.js"

const NEVER_DELETED = new Set(["gb_models", "gb_inferences"])

interface ForeignKey {
  readonly child: string
  readonly column: string
  readonly parent: string
  readonly indexed: boolean
}

const foreignKeys = (dialect: Dialect) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    dialect === "sqlite"
      ? sql.unsafe<ForeignKey>(`SELECT m.name AS child, f."from" AS "column", f."table" AS parent,
          EXISTS (SELECT 1 FROM pragma_index_list(m.name) il JOIN pragma_index_info(il.name) ii
              WHERE ii.seqno = 0 AND ii.name = f."from")
            OR EXISTS (SELECT 1 FROM pragma_table_info(m.name) t WHERE t.name = f."from" AND t.pk = 1
              AND upper(t.type) = 'INTEGER' AND (SELECT COUNT(*) FROM pragma_table_info(m.name) WHERE pk > 0) = 1)
            AS indexed
        FROM sqlite_master m, pragma_foreign_key_list(m.name) f
        WHERE m.type = 'table' AND m.name LIKE 'gb\\_%' ESCAPE '\\'`)
      : sql.unsafe<ForeignKey>(`SELECT c.conrelid::regclass::text AS child, a.attname AS "column",
          c.confrelid::regclass::text AS parent,
          EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1]) AS indexed
        FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
        WHERE c.contype = 'f' AND c.conrelid::regclass::text LIKE 'gb\\_%'`)).pipe(
      Effect.map((rows) => rows.map((r) => ({ ...r, indexed: Boolean(r.indexed) }))),
      Effect.orDie
    )

forEachDialect((dialect, makeLayer) => {
  it.effect("every foreign key a forget's delete follows leads an index of its table", () =>
    Effect.gen(function*() {
      const keys = yield* foreignKeys(dialect)
      const followed = keys.filter((k) => !NEVER_DELETED.has(k.parent))
      expect(followed.map((k) => `${k.child}.${k.column}`)).toEqual(expect.arrayContaining([
        "gb_artifacts.dataset_id",
        "gb_remember_runs.dataset_id",
        "gb_inferences.dataset_id",
        "gb_inferences.run_id",
        "gb_remember_idempotency.run_id",
        "gb_edge_closures.by_edge_id"
      ]))
      expect(followed.filter((k) => !k.indexed).map((k) => `${k.child}.${k.column} -> ${k.parent}`)).toEqual([])
    }).pipe(Effect.provide(makeLayer())))
})
