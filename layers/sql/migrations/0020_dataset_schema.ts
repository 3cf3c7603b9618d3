/**
 * A dataset's schema (issue 42; docs/SCHEMA.md): the schema's JSON on the dataset (null: none),
 * an entity's attributes (JSON: what its texts stated, the latest value per key), and on each
 * provenance link what that text stated of them, so a forget reads them again from the texts
 * that remain, as it reads descriptions (migration 0009).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const statements = [
    `ALTER TABLE gb_datasets ADD COLUMN schema TEXT`,
    `ALTER TABLE gb_entities ADD COLUMN attributes TEXT`,
    `ALTER TABLE gb_entity_artifacts ADD COLUMN attributes TEXT`
  ]
  for (const statement of statements) yield* sql.unsafe(statement)
})
