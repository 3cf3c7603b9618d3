/**
 * Rows as the read side shows them (the shapes are the schemas of responses.ts). Like the
 * remember response, a field that is null in the row is omitted (invalid_at while a fact
 * holds, model_id when unknown, ...).
 */
import type { ArtifactRow } from "../domain/Rows.js"
import { decodeAttributes } from "../kernel/datasetSchema.js"
import type { Links, ReadEntity, ReadFact } from "../services/SearchRepo.js"
import type { ArtifactOut, ChunkOut, FactOut, LinkedEntityOut, Scored } from "./responses.js"

export type { ArtifactOut, ChunkOut, FactOut, LinkedEntityOut, Scored }

/** A fact as shown, but its links: what a context block's line is made of. */
export type FactItem = Omit<FactOut, keyof Links>
/** An entity as shown, but its links. */
export type EntityItem = Omit<LinkedEntityOut, keyof Links>

const some = <K extends string, V>(key: K, value: V | null): { [P in K]?: V } =>
  (value === null ? {} : { [key]: value }) as { [P in K]?: V }

/**
 * A fact as gligabao knew it at `knownAt`: a close recorded later (expired_at after it) had
 * not happened, so the fact was still open then.
 */
export const factItem = (f: ReadFact, knownAt: string | null): FactItem => {
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
    ...some("model", f.model)
  }
}

export const entityItem = (e: ReadEntity): EntityItem => ({
  id: e.id,
  name: e.name,
  type: e.type,
  description: e.description,
  ...some("attributes", decodeAttributes(e.attributes) ?? null),
  created_at: e.created_at,
  ...some("model_id", e.model_id),
  ...some("model", e.model)
})

/** An item with its links, which come last on the wire. */
export const linked = <A>(item: A, links: Links): A & Links => ({
  ...item,
  artifact_ids: links.artifact_ids,
  session_ids: links.session_ids
})

/** A fact with its links, as search, the export and a story show it. */
export const factOut = (f: ReadFact & Links, knownAt: string | null): FactOut => linked(factItem(f, knownAt), f)

export const entityOut = (e: ReadEntity & Links): LinkedEntityOut => linked(entityItem(e), e)

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
