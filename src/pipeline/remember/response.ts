import type { EdgeOut, EntityOut } from "../../domain/Responses.js"
import type { EdgeWithNames, EntityRow } from "../../domain/Rows.js"

export const entityOut = (e: EntityRow): EntityOut => ({
  id: e.id,
  name: e.name,
  type: e.type,
  description: e.description
})

/** An edge in its stored state; invalid_at and expired_at are omitted while null (seed: Response). */
export const edgeOut = (e: EdgeWithNames): EdgeOut => ({
  id: e.id,
  source: e.source_name,
  source_id: e.source_id,
  target: e.target_name,
  target_id: e.target_id,
  relation: e.relation,
  description: e.description,
  valid_at: e.valid_at,
  ...(e.invalid_at === null ? {} : { invalid_at: e.invalid_at }),
  created_at: e.created_at,
  ...(e.expired_at === null ? {} : { expired_at: e.expired_at }),
  ...(e.artifact_id === null ? {} : { artifact_id: e.artifact_id }),
  ...(e.model_id === null ? {} : { model_id: e.model_id })
})
