/**
 * gb_entity_words (migration 0017): the folded words of each entity's name and aliases, which
 * the name lookup (search/names.ts) reads. Written with the entity (GraphRepo.upsertEntities),
 * carried by a merge and rebuilt after a forget took statements away (ForgetRepo), removed with
 * the entity by its foreign key.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { nameWords } from "../../../src/kernel/nameWords.js"
import { nameKey } from "../../../src/kernel/normalize.js"
import { chunksOf, unique } from "./internal.js"

interface Named {
  readonly id: number
  readonly dataset_id: number
  readonly name: string
}

const rowsOf = (named: ReadonlyArray<Named>) => {
  const rows = new Map<string, { dataset_id: number; word: string; entity_id: number }>()
  for (const e of named) {
    for (const word of nameWords(e.name)) {
      rows.set(`${e.id}\u0000${word}`, { dataset_id: Number(e.dataset_id), word, entity_id: Number(e.id) })
    }
  }
  return [...rows.values()]
}

export const makeEntityWords = (sql: SqlClient.SqlClient) => {
  /** the words of these names, each for its entity (kept when already there) */
  const add = (named: ReadonlyArray<Named>) =>
    Effect.forEach(
      chunksOf(rowsOf(named)),
      (chunk) => sql`INSERT INTO gb_entity_words ${sql.insert(chunk)} ON CONFLICT DO NOTHING`,
      { discard: true }
    )

  /** the words of `from` become `into`'s too (a merge, before `from` goes) */
  const copy = (from: ReadonlyArray<number>, into: number) =>
    Effect.forEach(chunksOf(unique(from)), (chunk) =>
      sql`INSERT INTO gb_entity_words (dataset_id, word, entity_id)
        SELECT dataset_id, word, ${into} FROM gb_entity_words WHERE entity_id IN ${sql.in(chunk)}
        ON CONFLICT DO NOTHING`, { discard: true })

  /**
   * The words of each entity anew from its name and the spellings its remaining statements
   * give under another key (its aliases): after a forget, a word only a forgotten text gave goes.
   */
  const rebuild = (ids: ReadonlyArray<number>) =>
    Effect.forEach(chunksOf(unique(ids)), (chunk) =>
      Effect.gen(function*() {
        const entities = yield* sql<Named>`SELECT id, dataset_id, name FROM gb_entities WHERE id IN ${sql.in(chunk)}`
        const spellings = yield* sql<{ entity_id: number; name: string }>`SELECT DISTINCT entity_id, name
          FROM gb_entity_artifacts WHERE entity_id IN ${sql.in(chunk)} AND name IS NOT NULL`
        const byId = new Map(entities.map((e) => [Number(e.id), e] as const))
        const aliases = spellings.flatMap((s) => {
          const entity = byId.get(Number(s.entity_id))
          return entity === undefined || nameKey(s.name) === nameKey(entity.name) ? [] : [{ ...entity, name: s.name }]
        })
        yield* sql`DELETE FROM gb_entity_words WHERE entity_id IN ${sql.in(chunk)}`
        yield* add([...entities, ...aliases])
      }), { discard: true })

  return { add, copy, rebuild }
}
