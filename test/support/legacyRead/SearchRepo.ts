// Legacy copy of the read path as of 534360b (issue 38, item 7): test/query/readEquivalence.test.ts
// runs it beside the new one. Deleted once the comparison has passed.
import { Context, type Effect, type Option } from "effect"
import type { ArtifactRow, DatasetRow, EdgeWithNames, EntityRow } from "../../../src/domain/Rows.js"
import type { ArtifactKind } from "../../../src/domain/Stages.js"
import type { EdgeClosure } from "../../../src/services/GraphRepo.js"

/**
 * What a read sees. Times are canonical RFC 3339 (see domain/time.ts), compared as text.
 *
 * A fact passes when `valid_at <= asOf` (a null valid_at, an unknown start, always does: it is
 * unbounded below) and, unless `includeExpired`, it had not ended by then
 * (`invalid_at IS NULL OR invalid_at > asOf`). With `knownAt`, only rows stored by then count,
 * and a fact closed later (`expired_at > knownAt`) is seen as it was then: still open.
 */
export interface ReadFilters {
  /** event time */
  readonly asOf: string
  /** ingestion time; null: everything stored */
  readonly knownAt: string | null
  /** keep facts that had ended by `asOf` */
  readonly includeExpired: boolean
  /** only what this session discovered (gb_entity_sessions, gb_edge_sessions, artifacts' session_id) */
  readonly sessionId: string | null
  /** only what artifacts of this kind support (a chunk counts as its document's kind too) */
  readonly kind: ArtifactKind | null
}

/** A full-text match: the row id and the engine's relevance (higher is better). */
export interface TextMatch {
  readonly id: number
  readonly score: number
}

/** A fact's or entity's provenance: the artifacts and sessions it came from (capped in results). */
export interface Links {
  readonly artifact_ids: ReadonlyArray<number>
  readonly session_ids: ReadonlyArray<string>
}

/** A fact with its endpoints and its model's name. */
export interface UnlinkedFactView extends EdgeWithNames {
  readonly model: string | null
}

/** A fact with its endpoints, its model's name and its provenance. */
export interface FactView extends UnlinkedFactView, Links {}

/** An entity row with the name of its model. */
export interface UnlinkedEntityView extends EntityRow {
  readonly model: string | null
}

export interface EntityView extends UnlinkedEntityView, Links {}

/** A fact of an entity's story: a fact view with its endpoints' types. */
export interface EntityFactView extends FactView {
  readonly source_type: string
  readonly target_type: string
}

/** A fact touching an entity (the graph neighbourhood). */
export interface Neighbour {
  readonly id: number
  readonly source_id: number
  readonly target_id: number
}

export interface SessionCounts {
  readonly session_id: string
  readonly artifacts: number
  readonly entities: number
  readonly edges: number
  /** the first and last artifact of the session (null when its artifacts were deleted) */
  readonly first_at: string | null
  readonly last_at: string | null
}

/**
 * An artifact that supports a fact (a fact's view, src/query/fact.ts): its id, kind and times,
 * the start of its text, and what it stated of the fact (gb_edge_artifacts).
 */
export interface FactSourceRow {
  readonly id: number
  readonly kind: string
  readonly valid_at: string
  readonly created_at: string
  /** the text's first characters (as many as asked for) */
  readonly text: string
  /**
   * what it stated of the fact: null for a link recorded before migration 0009, or for the
   * fact's creator when it is not linked
   */
  readonly statement_description: string | null
  /** also null when the statement gave an end and no start */
  readonly statement_valid_at: string | null
  readonly statement_invalid_at: string | null
}

/** A recorded decision that closed a fact (gb_edge_closures where edge_id is the fact; not a mere `contradicts`). */
export interface FactClosureRow {
  readonly id: number
  readonly kind: Exclude<EdgeClosure["kind"], "contradicts">
  /** the fact that caused it, with its description (null: a repeat's end, or by hand) */
  readonly by_edge_id: number | null
  readonly by_description: string | null
  /** the artifact whose store decided it (null: by hand, or that artifact was deleted) */
  readonly artifact_id: number | null
  readonly invalid_at: string
  readonly created_at: string
}

/**
 * Provenance lists of a search result: the most recent links only, so a hub entity mentioned by
 * thousands of artifacts stays a small result. Export pages carry every link.
 */
export const MAX_RESULT_LINKS = 50

/**
 * The read side of the graph tables, always within one dataset. Every lookup is indexed (full
 * text: FTS5 on SQLite, tsvector + GIN on PostgreSQL). Infrastructure errors are defects. It
 * sees committed data only and may run on connections of its own (a SQLite file's reader), so
 * nothing that writes may rely on it to see its own transaction.
 */
export class SearchRepo extends Context.Tag("test/LegacySearchRepo")<
  SearchRepo,
  {
    /** the user's live dataset of that name */
    readonly dataset: (userId: string, name: string) => Effect.Effect<Option.Option<DatasetRow>>
    /**
     * entities whose name or description matches any of `terms` (words; the engine stems them),
     * best first, at most `limit`
     */
    readonly matchEntities: (
      datasetId: number,
      terms: ReadonlyArray<string>,
      filters: ReadFilters,
      limit: number
    ) => Effect.Effect<ReadonlyArray<TextMatch>>
    /** facts whose description matches any of `terms`, best first, at most `limit` */
    readonly matchFacts: (
      datasetId: number,
      terms: ReadonlyArray<string>,
      filters: ReadFilters,
      limit: number
    ) => Effect.Effect<ReadonlyArray<TextMatch>>
    /** facts touching the entity (as source or target), newest first (created_at), at most `limit` */
    readonly factsAround: (
      datasetId: number,
      entityId: number,
      filters: ReadFilters,
      limit: number
    ) => Effect.Effect<ReadonlyArray<Neighbour>>
    /** those of `ids` that pass the filters: ids only (no names, no links), for ranking before the rows are read */
    readonly passingFacts: (
      datasetId: number,
      ids: ReadonlyArray<number>,
      filters: ReadFilters
    ) => Effect.Effect<ReadonlySet<number>>
    readonly passingEntities: (
      datasetId: number,
      ids: ReadonlyArray<number>,
      filters: ReadFilters
    ) => Effect.Effect<ReadonlySet<number>>
    /** those of `ids` that pass the filters, in no particular order; links capped (MAX_RESULT_LINKS) */
    readonly facts: (
      datasetId: number,
      ids: ReadonlyArray<number>,
      filters: ReadFilters
    ) => Effect.Effect<ReadonlyArray<FactView>>
    readonly entities: (
      datasetId: number,
      ids: ReadonlyArray<number>,
      filters: ReadFilters
    ) => Effect.Effect<ReadonlyArray<EntityView>>
    /** `facts` without the links: for a caller that reads the links of only some of them */
    readonly unlinkedFacts: (
      datasetId: number,
      ids: ReadonlyArray<number>,
      filters: ReadFilters
    ) => Effect.Effect<ReadonlyArray<UnlinkedFactView>>
    /** `entities` without the links, likewise */
    readonly unlinkedEntities: (
      datasetId: number,
      ids: ReadonlyArray<number>,
      filters: ReadFilters
    ) => Effect.Effect<ReadonlyArray<UnlinkedEntityView>>
    /** the capped links of these facts or entities (as `facts` and `entities` read them), an entry for every id */
    readonly links: (
      owner: "fact" | "entity",
      ids: ReadonlyArray<number>,
      filters: ReadFilters
    ) => Effect.Effect<ReadonlyMap<number, Links>>
    /** artifacts of `ids` that pass the known_at, session and kind filters */
    readonly artifacts: (
      datasetId: number,
      ids: ReadonlyArray<number>,
      filters: ReadFilters
    ) => Effect.Effect<ReadonlyArray<ArtifactRow>>
    /** the chunk_summary children of these chunks */
    readonly summariesOf: (
      datasetId: number,
      chunkIds: ReadonlyArray<number>
    ) => Effect.Effect<ReadonlyArray<ArtifactRow>>
    /** export: the next page by id (ids greater than `afterId`), every link included */
    readonly entityPage: (
      datasetId: number,
      filters: ReadFilters,
      afterId: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<EntityView>>
    readonly factPage: (
      datasetId: number,
      filters: ReadFilters,
      afterId: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<FactView>>
    readonly artifactPage: (
      datasetId: number,
      filters: ReadFilters,
      afterId: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<ArtifactRow>>
    /** an entity's story (src/query/entity.ts): the entity `id` if it is of the dataset, every link */
    readonly entityById: (datasetId: number, id: number) => Effect.Effect<Option.Option<EntityView>>
    /**
     * the entity whose `name_key` this is (names of several types share one): the one touched by
     * the most facts, live or closed, ties by lowest id; every link
     */
    readonly entityByNameKey: (datasetId: number, nameKey: string) => Effect.Effect<Option.Option<EntityView>>
    /**
     * every fact touching the entity, as source or target, by valid_at (an unknown start first)
     * then id, every link;
     * with `openAt`, only those that had not ended by then (`invalid_at` null or later)
     */
    readonly entityFacts: (
      datasetId: number,
      entityId: number,
      openAt: string | null
    ) => Effect.Effect<ReadonlyArray<EntityFactView>>
    /**
     * the `limit` most recently stored facts that pass the filters, newest first (id descending:
     * ids grow in storage order), without their links; one backward walk of the
     * `(dataset_id, id)` index that stops at `limit`
     */
    readonly recentFacts: (
      datasetId: number,
      filters: ReadFilters,
      limit: number
    ) => Effect.Effect<ReadonlyArray<UnlinkedFactView>>
    /** the dataset's sessions with counts, by session id */
    readonly sessions: (datasetId: number) => Effect.Effect<ReadonlyArray<SessionCounts>>
    /** a fact's view (src/query/fact.ts): the fact `id` if it is of the dataset, with its endpoints' types, every link */
    readonly factById: (datasetId: number, id: number) => Effect.Effect<Option.Option<EntityFactView>>
    /**
     * every artifact linked to the fact (gb_edge_artifacts) with its statement, and its creator
     * (`artifact_id`) when that one is not linked, oldest first (created_at, then id); each
     * text cut to its first `textChars` characters (code points)
     */
    readonly factSources: (
      datasetId: number,
      fact: { readonly id: number; readonly artifact_id: number | null },
      textChars: number
    ) => Effect.Effect<ReadonlyArray<FactSourceRow>>
    /** the recorded decisions that closed the fact (edge_id = it), by created_at then id */
    readonly factClosures: (factId: number) => Effect.Effect<ReadonlyArray<FactClosureRow>>
  }
>() {}
