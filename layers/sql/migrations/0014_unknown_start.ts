/**
 * A fact's start may be unknown (contracts section 3): "Alice lived in Berlin until 2025" states
 * an end and no start, so `gb_edges.valid_at` becomes nullable. And every contradiction the model
 * reports is kept, also one that ends neither fact yet (kind `contradicts`, no `invalid_at`), so a
 * start learned later decides it (src/pipeline/settle.ts): `gb_edge_closures.invalid_at` becomes
 * nullable. Every existing row keeps its values.
 *
 * PostgreSQL drops the constraint in place. SQLite cannot drop a NOT NULL, and a table rebuild
 * would cascade its children's rows away (foreign keys cannot be switched off inside the
 * migration's transaction), so the column is renamed, a nullable one added and filled, and the
 * old one dropped: no index, trigger or view names either column, which DROP COLUMN requires.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  const nullable = (table: string, column: string) =>
    pg
      ? [`ALTER TABLE ${table} ALTER COLUMN ${column} DROP NOT NULL`]
      : [
        `ALTER TABLE ${table} RENAME COLUMN ${column} TO ${column}_required`,
        `ALTER TABLE ${table} ADD COLUMN ${column} TEXT`,
        `UPDATE ${table} SET ${column} = ${column}_required`,
        `ALTER TABLE ${table} DROP COLUMN ${column}_required`
      ]
  const statements = [...nullable("gb_edges", "valid_at"), ...nullable("gb_edge_closures", "invalid_at")]
  for (const statement of statements) yield* sql.unsafe(statement)
})
