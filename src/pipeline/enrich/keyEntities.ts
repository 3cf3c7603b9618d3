/**
 * The key entities of a remembered text (spec/contracts.md section 13): the (at most 3)
 * entities of the text with the most facts in it, ties by order of appearance.
 */
import type { EntityRow } from "../../domain/Rows.js"

export const MAX_KEY_ENTITIES = 3

/** What one stored unit of the text (the text itself, or one chunk) yielded. */
export interface TextPart {
  readonly artifactId: number
  readonly entities: ReadonlyArray<EntityRow>
  readonly edges: ReadonlyArray<{ readonly id: number; readonly source_id: number; readonly target_id: number }>
}

export interface KeyEntity {
  readonly entity: EntityRow
  /** the artifact the entity came from: the first part (chunk) that names it */
  readonly parentArtifactId: number
  /** facts of the text that have it as source or target */
  readonly facts: number
}

/**
 * The entities of the text in order of first appearance, counted by the distinct facts of
 * the whole text that touch them, most first; an entity with no fact still counts (with 0),
 * so a text of bare names searches for its first ones.
 */
export const keyEntities = (
  parts: ReadonlyArray<TextPart>,
  max: number = MAX_KEY_ENTITIES
): ReadonlyArray<KeyEntity> => {
  const facts = new Map<number, Set<number>>()
  for (const part of parts) {
    for (const edge of part.edges) {
      for (const end of new Set([edge.source_id, edge.target_id])) {
        const set = facts.get(end) ?? new Set<number>()
        set.add(edge.id)
        facts.set(end, set)
      }
    }
  }
  const seen = new Map<number, KeyEntity>()
  for (const part of parts) {
    for (const entity of part.entities) {
      if (seen.has(entity.id)) continue
      seen.set(entity.id, { entity, parentArtifactId: part.artifactId, facts: facts.get(entity.id)?.size ?? 0 })
    }
  }
  // Array.prototype.sort is stable: equal counts keep the order of appearance
  return [...seen.values()].sort((a, b) => b.facts - a.facts).slice(0, Math.max(0, max))
}
