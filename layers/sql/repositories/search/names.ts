/**
 * The name lookup and the entity statements of SearchRepo: entities by the folded words of
 * their names and aliases (gb_entity_words, by its primary key), and what each entity's most
 * recent texts stated of it (gb_entity_artifacts, one backward walk of its primary key each).
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { nameKey } from "../../../../src/kernel/normalize.js"
import type { EntityStatement, NamedEntity } from "../../../../src/services/SearchRepo.js"
import { chunksOf, unique } from "../internal.js"

/** an entity many words name is counted once per word; a lookup looks at no more than these */
const MATCHES_READ = 500

export const makeNames = (sql: SqlClient.SqlClient) => {
  /**
   * Each entity's aliases: its statements' spellings under another key than its name's (most
   * statements spell it as the name does, so those are left out in SQL first), distinct, sorted.
   */
  const entityAliases = (entityIds: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      const out = new Map<number, Array<string>>()
      if (entityIds.length === 0) return out
      const spellings = yield* sql<{ entity_id: number; name: string; entity_name: string }>`SELECT DISTINCT
          ea.entity_id, ea.name, n.name AS entity_name
        FROM gb_entity_artifacts ea JOIN gb_entities n ON n.id = ea.entity_id
        WHERE ea.entity_id IN ${sql.in(unique(entityIds))} AND ea.name IS NOT NULL AND ea.name <> n.name`
      for (const s of spellings) {
        if (nameKey(s.name) === nameKey(s.entity_name)) continue
        const id = Number(s.entity_id)
        out.set(id, [...(out.get(id) ?? []), s.name])
      }
      for (const names of out.values()) names.sort()
      return out
    }).pipe(Effect.orDie)

  const entitiesNamed = (datasetId: number, words: ReadonlyArray<string>, limit: number) =>
    Effect.gen(function*() {
      const asked = unique(words)
      if (asked.length === 0) return []
      const found = yield* sql<Omit<NamedEntity, "aliases">>`SELECT n.id, n.name, n.type, n.description,
          (SELECT COUNT(*) FROM gb_edges e WHERE e.source_id = n.id)
            + (SELECT COUNT(*) FROM gb_edges e WHERE e.target_id = n.id AND e.source_id <> n.id) AS facts
        FROM gb_entities n
        WHERE n.dataset_id = ${datasetId} AND n.id IN (
          SELECT w.entity_id FROM gb_entity_words w
          WHERE w.dataset_id = ${datasetId} AND w.word IN ${sql.in(asked)}
          GROUP BY w.entity_id HAVING COUNT(*) = ${asked.length}
          LIMIT ${MATCHES_READ})
        ORDER BY facts DESC, n.id
        LIMIT ${limit}`
      if (found.length === 0) return []
      const aliases = yield* entityAliases(found.map((f) => Number(f.id)))
      return found.map((f): NamedEntity => ({
        id: Number(f.id),
        name: f.name,
        type: f.type,
        description: f.description,
        aliases: aliases.get(Number(f.id)) ?? [],
        facts: Number(f.facts)
      }))
    }).pipe(Effect.orDie)

  const entityStatements = (
    entityIds: ReadonlyArray<number>,
    filters: { readonly asOf: string; readonly knownAt: string | null },
    perEntity: number
  ) =>
    Effect.forEach(chunksOf(unique(entityIds), 100), (chunk) => {
      const one = (id: number) =>
        sql`SELECT * FROM (SELECT ea.entity_id, ea.artifact_id, ea.description, a.valid_at, a.created_at
          FROM gb_entity_artifacts ea JOIN gb_artifacts a ON a.id = ea.artifact_id
          WHERE ea.entity_id = ${id} AND ea.description IS NOT NULL AND ea.description <> ''
            AND a.valid_at <= ${filters.asOf}
            ${filters.knownAt === null ? sql`` : sql`AND a.created_at <= ${filters.knownAt}`}
          ORDER BY ea.artifact_id DESC
          LIMIT ${perEntity}) said`
      return sql<EntityStatement>`${sql.join(" UNION ALL ", false)(chunk.map(one))}`
    }).pipe(
      Effect.map((chunks) =>
        chunks.flat().map((s) => ({ ...s, entity_id: Number(s.entity_id), artifact_id: Number(s.artifact_id) }))
      ),
      Effect.orDie
    )

  return { entitiesNamed, entityAliases, entityStatements }
}
