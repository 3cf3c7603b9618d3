// Legacy copy of the read path as of 534360b (issue 38, item 7): test/query/readEquivalence.test.ts
// runs it beside the new one. Deleted once the comparison has passed.
/**
 * Rows as the read side shows them (the shapes are the schemas of responses.ts). Like the
 * remember response, a field that is null in the row is omitted (invalid_at while a fact
 * holds, model_id when unknown, ...).
 */
import type { ArtifactRow } from "../../../src/domain/Rows.js"
import type { ArtifactOut, ChunkOut, FactOut, LinkedEntityOut, Scored } from "../../../src/query/responses.js"
import type { EntityView, FactView } from "./SearchRepo.js"

export type { ArtifactOut, ChunkOut, FactOut, LinkedEntityOut, Scored }

const some = <K extends string, V>(key: K, value: V | null): { [P in K]?: V } =>
  (value === null ? {} : { [key]: value }) as { [P in K]?: V }

/**
 * A fact as gligabao knew it at `knownAt`: a close recorded later (expired_at after it) had
 * not happened, so the fact was still open then.
 */
export const factOut = (f: FactView, knownAt: string | null): FactOut => {
  const closedLater = knownAt !== null && f.expired_at !== null && f.expired_at > knownAt
  return {
    id: f.id,
    source: f.source_name,
    source_id: f.source_id,
    target: f.target_name,
    target_id: f.target_id,
    relation: f.relation,
    description: f.description,
    // kept when null (an unknown start): the wire says so explicitly, unlike an open end
    valid_at: f.valid_at,
    ...some("invalid_at", closedLater ? null : f.invalid_at),
    created_at: f.created_at,
    ...some("expired_at", closedLater ? null : f.expired_at),
    ...some("artifact_id", f.artifact_id),
    ...some("model_id", f.model_id),
    ...some("model", f.model),
    artifact_ids: f.artifact_ids,
    session_ids: f.session_ids
  }
}

/** The links of an entity whose links are not read (yet): empty lists. */
export const NO_LINKS = { artifact_ids: [], session_ids: [] } as const

export const entityOut = (e: EntityView): LinkedEntityOut => ({
  id: e.id,
  name: e.name,
  type: e.type,
  description: e.description,
  created_at: e.created_at,
  ...some("model_id", e.model_id),
  ...some("model", e.model),
  artifact_ids: e.artifact_ids,
  session_ids: e.session_ids
})

export const artifactOut = (a: ArtifactRow): ArtifactOut => ({
  id: a.id,
  kind: a.kind,
  text: a.text,
  ...some("parent_id", a.parent_id),
  ...some("session_id", a.session_id),
  valid_at: a.valid_at,
  created_at: a.created_at,
  ...some("inference_id", a.inference_id),
  ...some("query", a.query),
  ...some("metadata", a.metadata)
})
