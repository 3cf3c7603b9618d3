/** The response of a remember, from what its stores returned (seed: Response). */
import type { EdgeOut, EntityOut, RememberOutcome } from "../../domain/Responses.js"
import type { ArtifactRow, EdgeWithNames, EntityRow } from "../../domain/Rows.js"
import { decodeAttributes } from "../../kernel/datasetSchema.js"
import type { Stored } from "./store.js"
import type { StoredUnit } from "./unit.js"

export const entityOut = (e: EntityRow): EntityOut => {
  const attributes = decodeAttributes(e.attributes)
  return {
    id: e.id,
    name: e.name,
    type: e.type,
    description: e.description,
    ...(attributes === undefined ? {} : { attributes })
  }
}

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

/** The response's counts of vectors written, present only with embeddings on. */
const embedded = (enabled: boolean, units: ReadonlyArray<Stored>) =>
  enabled
    ? {
      embedded_entities: units.reduce((n, u) => n + u.embeddedEntities, 0),
      embedded_edges: units.reduce((n, u) => n + u.embeddedEdges, 0)
    }
    : {}

/** The response for a text stored as one unit; `final` gives each edge in its end state. */
export const unitOutcome = (
  embeddings: boolean,
  unit: Stored,
  final: (e: EdgeWithNames) => EdgeWithNames
): RememberOutcome => {
  const response = {
    artifact_id: unit.artifact.id,
    kind: unit.artifact.kind,
    valid_at: unit.artifact.valid_at,
    created_at: unit.artifact.created_at,
    ...(unit.artifact.session_id === null ? {} : { session_id: unit.artifact.session_id }),
    entities: unit.entities.map(entityOut),
    edges: unit.edges.map((e) => edgeOut(final(e))),
    invalidated_edges: unit.invalidated,
    ...embedded(embeddings, [unit])
  }
  return { response, dataset_id: unit.dataset.id, artifact_id: unit.artifact.id }
}

/**
 * The response for a chunked text: the document (the first chunk's parent) and its chunks in
 * order. A run that went on after `skipped` chunks an earlier attempt stored reports the
 * chunks it stored itself, under the `document` they share.
 */
export const documentOutcome = (
  embeddings: boolean,
  units: ReadonlyArray<StoredUnit>,
  final: (e: EdgeWithNames) => EdgeWithNames,
  document: ArtifactRow | null = null,
  skipped = 0
): RememberOutcome => {
  const parent = document ?? units[0]!.parent!
  const byId = <A extends { readonly id: number }>(
    rows: ReadonlyArray<A>
  ) => [...new Map(rows.map((r) => [r.id, r])).values()]
  const chunks = units.map((u) => {
    const meta = u.artifact.metadata ?? {}
    const work = u.work.summary
    return {
      artifact_id: u.artifact.id,
      index: meta.index,
      tokens: meta.tokens,
      overlap_tokens: meta.overlap_tokens,
      start_offset: meta.start_offset,
      end_offset: meta.end_offset,
      entities: u.entities.map(entityOut),
      edges: u.edges.map((e) => edgeOut(final(e))),
      summary: u.summary === null || work === null
        ? null
        : {
          artifact_id: u.summary.id,
          text: u.summary.text,
          model: work.response.model,
          reasoning: work.response.reasoning,
          inference_id: work.response.inferenceId
        }
    }
  })
  const response = {
    artifact_id: parent.id,
    kind: parent.kind,
    valid_at: parent.valid_at,
    created_at: parent.created_at,
    ...(parent.session_id === null ? {} : { session_id: parent.session_id }),
    entities: byId(units.flatMap((u) => u.entities)).map(entityOut),
    edges: byId(units.flatMap((u) => u.edges)).map((e) => edgeOut(final(e))),
    invalidated_edges: [...new Set(units.flatMap((u) => u.invalidated))],
    chunks,
    ...(skipped > 0 ? { resumed_after_chunks: skipped } : {}),
    ...embedded(embeddings, units),
    ...(embeddings
      ? {
        embedded_chunks: units.reduce((n, u) => n + u.embeddedChunks, 0),
        embedded_summaries: units.reduce((n, u) => n + u.embeddedSummaries, 0)
      }
      : {})
  }
  return { response, dataset_id: units[0]!.dataset.id, artifact_id: parent.id }
}
