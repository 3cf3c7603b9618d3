/**
 * Entities found by part of a name (src/kernel/nameWords.ts): gb_entity_words holds each folded
 * word of an entity's name and of its aliases (the spellings its texts gave it under another
 * key, which a merge brings), served by its primary key for a lookup and by its entity index for
 * a cascading delete. Existing entities are filled here, in pages, with a frozen copy of the
 * folding (a migration never changes with the code).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const MARKS = /\p{M}+/gu
const SEPARATORS = /[^\p{L}\p{N}]+/u
const wordsOf = (name: string) =>
  name.normalize("NFKD").replace(MARKS, "").toLowerCase().split(SEPARATORS).filter((w) => w !== "")

const PAGE = 500

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  const ref = pg ? "BIGINT" : "INTEGER"
  yield* sql.unsafe(`CREATE TABLE gb_entity_words (
    dataset_id ${ref} NOT NULL,
    word TEXT NOT NULL,
    entity_id ${ref} NOT NULL REFERENCES gb_entities (id) ON DELETE CASCADE,
    PRIMARY KEY (dataset_id, word, entity_id)
  )`)
  yield* sql.unsafe(`CREATE INDEX gb_entity_words_entity ON gb_entity_words (entity_id)`)
  let after = 0
  for (;;) {
    const entities = yield* sql<{ id: number; dataset_id: number; name: string }>`SELECT id, dataset_id, name
      FROM gb_entities WHERE id > ${after} ORDER BY id LIMIT ${PAGE}`
    if (entities.length === 0) break
    after = Number(entities.at(-1)!.id)
    const ids = entities.map((e) => Number(e.id))
    const spellings = yield* sql<{ entity_id: number; name: string }>`SELECT DISTINCT entity_id, name
      FROM gb_entity_artifacts WHERE entity_id IN ${sql.in(ids)} AND name IS NOT NULL`
    const rows = new Map<string, { dataset_id: number; word: string; entity_id: number }>()
    const add = (entity: { id: number; dataset_id: number }, name: string) => {
      for (const word of wordsOf(name)) {
        const row = { dataset_id: Number(entity.dataset_id), word, entity_id: Number(entity.id) }
        rows.set(JSON.stringify(row), row)
      }
    }
    const byId = new Map(entities.map((e) => [Number(e.id), e] as const))
    for (const e of entities) add(e, e.name)
    for (const s of spellings) add(byId.get(Number(s.entity_id))!, s.name)
    const all = [...rows.values()]
    for (let i = 0; i < all.length; i += PAGE) {
      yield* sql`INSERT INTO gb_entity_words ${sql.insert(all.slice(i, i + PAGE))} ON CONFLICT DO NOTHING`
    }
  }
})
