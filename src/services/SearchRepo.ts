import { Context, type Effect, type Option } from "effect"
import type { ReadConditions } from "../domain/Filters.js"
import type { ArtifactRow, DatasetRow, EdgeWithNames, EntityRow } from "../domain/Rows.js"
import type { ArtifactKind } from "../domain/Stages.js"
import type { EdgeClosure } from "./GraphRepo.js"

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
  /**
   * the request's `filters` (src/domain/Filters.ts): on the supporting texts, relations and
   * types; absent or null: none
   */
  readonly conditions?: ReadConditions | null | undefined
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

/**
 * A fact as the read side reads it: its row, its endpoints' names and its model's name. Never
 * its links: those are their own question (`SearchRepo.links`), and a view joins them
 * (src/query/views.ts), so no row carries half-read lists.
 */
export interface ReadFact extends EdgeWithNames {
  readonly model: string | null
}

/** An entity row with the name of its model; its links likewise apart. */
export interface ReadEntity extends EntityRow {
  readonly model: string | null
}

/** A fact with every one of its links (export pages, an entity's story, a fact's view). */
export interface FactView extends ReadFact, Links {}

/** An entity with every one of its links. */
export interface EntityView extends ReadEntity, Links {}

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
  /**
   * event time: the earliest and latest reference time of the session's texts (a conversation's
   * is its last message's created_at, else the request's reference_time or when it was sent);
   * null when its artifacts were deleted
   */
  readonly first_at: string | null
  readonly last_at: string | null
  /** system time: when gligabao stored the session's first and last text */
  readonly first_stored_at: string | null
  readonly last_stored_at: string | null
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
  /** the artifact's metadata (the caller's keys and gligabao's own) */
  readonly metadata: Readonly<Record<string, unknown>> | null
  /**
   * what it stated of the fact: null for a link recorded before migration 0009, or for the
   * fact's creator when it is not linked
   */
  readonly statement_description: string | null
  /** also null when the statement gave an end and no start */
  readonly statement_valid_at: string | null
  readonly statement_invalid_at: string | null
}

/** An entity a name lookup found (src/query/names.ts ranks them): its words hold every asked word. */
export interface NamedEntity {
  readonly id: number
  readonly name: string
  readonly type: string
  readonly description: string
  /** the other spellings its statements give it (a merged entity's names), distinct, case kept */
  readonly aliases: ReadonlyArray<string>
  /** the facts touching it, live or closed (a fact from the entity to itself once) */
  readonly facts: number
}

/** What one text stated of an entity (gb_entity_artifacts), with the text's times. */
export interface EntityStatement {
  readonly entity_id: number
  readonly artifact_id: number
  readonly description: string
  /** the text's reference (event) time */
  readonly valid_at: string
  readonly created_at: string
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

/** What a row check, a row read or a link read is about. */
export type ReadKind = "fact" | "entity"

/** An export page's rows by what is exported: every link included. */
export interface PageRows {
  readonly entities: EntityView
  readonly facts: FactView
  readonly artifacts: ArtifactRow
}

/**
 * The read side's questions to storage, always within one dataset: the retrieval boundary
 * (docs/READ.md). The read programs ask what they want (ranked full-text candidates, which ids
 * pass the filters, rows, their links, a neighbourhood, a story, a page); an adapter decides how
 * (statement shapes, caps, fallbacks, full-text statistics) and gives each method a span
 * (`SearchRepo.<method>`). Infrastructure errors are defects. It sees committed data only and
 * may run on connections of its own (a SQLite file's reader), so nothing that writes may rely
 * on it to see its own transaction.
 */
export class SearchRepo extends Context.Tag("gligabao/SearchRepo")<
  SearchRepo,
  {
    /**
     * whether independent reads gain from running side by side (a pool of connections, each a
     * round trip); false when one connection answers each in a synchronous call, where running
     * them in fibers adds only the fibers' cost. Absent: true.
     */
    readonly parallel?: boolean
    /** the user's live dataset of that name */
    readonly dataset: (userId: string, name: string) => Effect.Effect<Option.Option<DatasetRow>>
    /**
     * full-text candidates: entities whose name or description matches any of `terms` (words;
     * the engine stems them) and that pass the filters, best first, at most `limit`
     */
    readonly matchEntities: (
      datasetId: number,
      terms: ReadonlyArray<string>,
      filters: ReadFilters,
      limit: number
    ) => Effect.Effect<ReadonlyArray<TextMatch>>
    /** full-text candidates: facts whose description matches any of `terms`, likewise */
    readonly matchFacts: (
      datasetId: number,
      terms: ReadonlyArray<string>,
      filters: ReadFilters,
      limit: number
    ) => Effect.Effect<ReadonlyArray<TextMatch>>
    /** those of `ids` that pass the filters (a vector hit is checked so before it is ranked) */
    readonly passing: (
      kind: ReadKind,
      datasetId: number,
      ids: ReadonlyArray<number>,
      filters: ReadFilters
    ) => Effect.Effect<ReadonlySet<number>>
    /** the neighbourhood: facts touching the entity (as source or target), newest first (created_at), at most `limit` */
    readonly factsAround: (
      datasetId: number,
      entityId: number,
      filters: ReadFilters,
      limit: number
    ) => Effect.Effect<ReadonlyArray<Neighbour>>
    /** the rows of those of `ids` that pass the filters, in no particular order */
    readonly facts: (
      datasetId: number,
      ids: ReadonlyArray<number>,
      filters: ReadFilters
    ) => Effect.Effect<ReadonlyArray<ReadFact>>
    readonly entities: (
      datasetId: number,
      ids: ReadonlyArray<number>,
      filters: ReadFilters
    ) => Effect.Effect<ReadonlyArray<ReadEntity>>
    /**
     * the links of these facts or entities, each list its MAX_RESULT_LINKS most recent, ascending;
     * links to artifacts stored after known_at hidden; an entry for every id
     */
    readonly links: (
      kind: ReadKind,
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
    /**
     * the `limit` most recently stored facts that pass the filters, newest first (id descending:
     * ids grow in storage order)
     */
    readonly recentFacts: (
      datasetId: number,
      filters: ReadFilters,
      limit: number
    ) => Effect.Effect<ReadonlyArray<ReadFact>>
    /** an export page: the rows with ids greater than `afterId` that pass the filters, by id, every link */
    readonly page: <K extends keyof PageRows>(
      kind: K,
      datasetId: number,
      filters: ReadFilters,
      afterId: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<PageRows[K]>>
    /**
     * an entity's story (src/query/entity.ts): the entity if it is of the dataset, every link (a
     * name is looked up with `entitiesNamed`)
     */
    readonly entity: (datasetId: number, by: { readonly id: number }) => Effect.Effect<Option.Option<EntityView>>
    /**
     * every fact touching the entity, as source or target, by valid_at (an unknown start first)
     * then id, every link; with `openAt`, only those that had not ended by then
     */
    readonly entityFacts: (
      datasetId: number,
      entityId: number,
      openAt: string | null
    ) => Effect.Effect<ReadonlyArray<EntityFactView>>
    /**
     * a name lookup's candidates: the dataset's entities among whose name and alias words
     * (gb_entity_words) is every one of `words` (folded, src/kernel/nameWords.ts), the most facts
     * first, then lowest id, at most `limit`
     */
    readonly entitiesNamed: (
      datasetId: number,
      words: ReadonlyArray<string>,
      limit: number
    ) => Effect.Effect<ReadonlyArray<NamedEntity>>
    /** each entity's aliases (NamedEntity.aliases); an entity without any is absent */
    readonly entityAliases: (
      entityIds: ReadonlyArray<number>
    ) => Effect.Effect<ReadonlyMap<number, ReadonlyArray<string>>>
    /**
     * what each entity's texts stated of it (non-empty descriptions): the `perEntity` most recently
     * stored statements of each, of texts stored by `knownAt` (null: all) whose reference time is
     * not after `asOf`, in no order
     */
    readonly entityStatements: (
      entityIds: ReadonlyArray<number>,
      filters: { readonly asOf: string; readonly knownAt: string | null },
      perEntity: number
    ) => Effect.Effect<ReadonlyArray<EntityStatement>>
    /** the dataset's sessions with counts, by session id */
    readonly sessions: (datasetId: number) => Effect.Effect<ReadonlyArray<SessionCounts>>
    /** a fact's view (src/query/fact.ts): the fact if it is of the dataset, with its endpoints' types, every link */
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

/** How a read runs the independent lookups of `repo`: side by side only where that gains. */
export const lookupConcurrency = (repo: { readonly parallel?: boolean | undefined }): "unbounded" | undefined =>
  repo.parallel === false ? undefined : "unbounded"
