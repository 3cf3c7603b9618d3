import { Context, type Effect, type Option } from "effect"
import type { ArtifactRow, EdgeRow, EdgeWithNames, EntityRow } from "../domain/Rows.js"
import type { ArtifactKind } from "../domain/Stages.js"

export interface NewArtifact {
  readonly dataset_id: number
  readonly kind: ArtifactKind
  readonly text: string
  readonly parent_id: number | null
  readonly session_id: string | null
  readonly valid_at: string
  readonly created_at: string
  readonly inference_id: number | null
  readonly query: string | null
  readonly metadata: Record<string, unknown> | null
}

export interface EntityUpsert {
  readonly name: string
  readonly name_key: string
  readonly type: string
  readonly description: string
  readonly model_id: number | null
  readonly created_at: string
  /** a new entity's attributes as stored (JSON text); a stored entity's are set by setEntityAttributes */
  readonly attributes?: string | null | undefined
}

export interface NewEdge {
  readonly dataset_id: number
  readonly source_id: number
  readonly target_id: number
  readonly relation: string
  readonly description: string
  readonly valid_at: string | null
  readonly invalid_at: string | null
  readonly created_at: string
  readonly expired_at: string | null
  readonly artifact_id: number | null
  readonly model_id: number | null
}

/** the identity of an exact repeat (contracts section 3): same source, target and relation */
export interface EdgeTriple {
  readonly source_id: number
  readonly target_id: number
  readonly relation: string
}

/** edges with this entity as their source (or target) and this relation: an exclusive relation's (docs/SCHEMA.md) */
export interface EdgeEnd {
  readonly side: "source" | "target"
  readonly entity_id: number
  readonly relation: string
}

/** which edges a candidate lookup wants: live ones, or those already closed */
export type EdgeState = "live" | "closed"

/** a stored edge's start, made known or earlier by a repeat */
export interface EdgeRestart {
  readonly id: number
  readonly valid_at: string
}

export interface EdgeClose {
  readonly id: number
  readonly invalid_at: string
  /** null: an end its statements gave, the edge stays live */
  readonly expired_at: string | null
}

/** A closing decision: `edge_id` was closed at `invalid_at` because of `by_edge_id` (or by hand). */
export interface EdgeClosure {
  readonly edge_id: number
  /** the fact whose arrival (close, repeat_end: null) or presence (born_closed) closed it */
  readonly by_edge_id: number | null
  /** the artifact whose store decided it; null: by hand */
  readonly artifact_id: number | null
  /** contradicts: the model said the two contradict, and their times ended neither when it was decided */
  readonly kind: "close" | "born_closed" | "repeat_end" | "inherited" | "hand" | "contradicts"
  /** null for `contradicts` */
  readonly invalid_at: string | null
  readonly expired_at: string
  /** the invalid_at it replaced */
  readonly prev_invalid_at: string | null
  readonly created_at: string
}

/**
 * The graph tables: artifacts, entities, edges and their artifact and session links.
 * Every method is one or a few indexed statements; infrastructure errors are defects.
 * Writes are meant to run inside `Database.withTransaction`.
 */
export class GraphRepo extends Context.Tag("gligabao/GraphRepo")<
  GraphRepo,
  {
    readonly insertArtifact: (artifact: NewArtifact) => Effect.Effect<ArtifactRow>
    readonly getArtifact: (id: number) => Effect.Effect<Option.Option<ArtifactRow>>
    /** entities of the dataset whose name_key is one of `nameKeys`, any type */
    readonly findEntitiesByNameKeys: (
      datasetId: number,
      nameKeys: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<EntityRow>>
    /**
     * inserts or updates on (dataset_id, name_key, type); the description is replaced only by a
     * non-empty one; returns the stored rows in input order
     */
    readonly upsertEntities: (
      datasetId: number,
      entities: ReadonlyArray<EntityUpsert>
    ) => Effect.Effect<ReadonlyArray<EntityRow>>
    /** returns the inserted rows in input order */
    readonly insertEdges: (edges: ReadonlyArray<NewEdge>) => Effect.Effect<ReadonlyArray<EdgeRow>>
    /** moves edges' ends earlier (never later), with the expired_at each gets */
    readonly closeEdges: (closes: ReadonlyArray<EdgeClose>) => Effect.Effect<void>
    readonly restartEdges: (restarts: ReadonlyArray<EdgeRestart>) => Effect.Effect<void>
    /**
     * the end the statements of each edge gave (gb_edge_artifacts: the earliest stated end, null
     * when none stated one), before any decision cut it; edges without statements are left out
     */
    readonly statedEnds: (
      edgeIds: ReadonlyArray<number>
    ) => Effect.Effect<ReadonlyArray<{ readonly edge_id: number; readonly stated_end: string | null }>>
    readonly getEdges: (ids: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<EdgeWithNames>>
    /**
     * live edges (expired_at IS NULL; `state` "closed": the others) of the dataset touching, as
     * source or target, an entity whose name_key is one of `nameKeys`; newest first (created_at,
     * then id), at most `limit`
     */
    readonly loadCandidateEdgesByNameKeys: (
      datasetId: number,
      nameKeys: ReadonlyArray<string>,
      limit: number,
      state?: EdgeState
    ) => Effect.Effect<ReadonlyArray<EdgeWithNames>>
    /** the same, for entity ids (the similarity lookup) */
    readonly loadCandidateEdgesByEntityIds: (
      datasetId: number,
      entityIds: ReadonlyArray<number>,
      limit: number
    ) => Effect.Effect<ReadonlyArray<EdgeWithNames>>
    /**
     * every edge of the dataset, live or closed, with one of these (source_id, target_id,
     * relation), whatever its age: the exact repeats, which no candidate cap may hide; newest
     * first (created_at, then id)
     */
    readonly loadEdgesByTriples: (
      datasetId: number,
      triples: ReadonlyArray<EdgeTriple>
    ) => Effect.Effect<ReadonlyArray<EdgeWithNames>>
    /**
     * the edges, live or closed, with one of these ends and relations, the `limit` newest of each
     * (created_at, then id), newest first: the facts an exclusive relation compares a new one with
     */
    readonly loadEdgesByEnds: (
      datasetId: number,
      ends: ReadonlyArray<EdgeEnd>,
      limit: number
    ) => Effect.Effect<ReadonlyArray<EdgeWithNames>>
    /** stored entities' attributes (JSON text; null: none), in the store's transaction */
    readonly setEntityAttributes: (
      rows: ReadonlyArray<{ readonly id: number; readonly attributes: string | null }>
    ) => Effect.Effect<void>
    /**
     * records that these rows have a vector (written, or waiting in the outbox), so that
     * `reembed` can find the ones stored before embeddings were configured
     */
    readonly markEmbedded: (
      entityIds: ReadonlyArray<number>,
      edgeIds: ReadonlyArray<number>,
      at: string
    ) => Effect.Effect<void>
    /** entities of the dataset without a vector, by id, after `afterId`, at most `limit` */
    readonly entitiesWithoutVectors: (
      datasetId: number,
      afterId: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<EntityRow>>
    /** edges of the dataset without a vector, by id, after `afterId`, at most `limit` */
    readonly edgesWithoutVectors: (
      datasetId: number,
      afterId: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<EdgeRow>>
    /**
     * provenance links with what the artifact stated (docs/FORGET.md): an entity's spelling and
     * description (null for an entity it named only as an endpoint), a fact's description and
     * times; the first statement of a pair wins
     */
    readonly linkEntityStatements: (
      artifactId: number,
      rows: ReadonlyArray<
        {
          readonly entity_id: number
          readonly name: string | null
          readonly description: string | null
          /** the attributes this text stated (JSON text), when a dataset schema declares any */
          readonly attributes?: string | null | undefined
        }
      >
    ) => Effect.Effect<void>
    readonly linkEdgeStatements: (
      artifactId: number,
      rows: ReadonlyArray<
        {
          readonly edge_id: number
          readonly description: string
          readonly valid_at: string | null
          readonly invalid_at: string | null
        }
      >
    ) => Effect.Effect<void>
    /** the closing decisions of a store (gb_edge_closures), in its transaction */
    readonly recordClosures: (rows: ReadonlyArray<EdgeClosure>) => Effect.Effect<void>
    /** idempotent link writes: one row per pair */
    readonly linkEntityArtifacts: (artifactId: number, entityIds: ReadonlyArray<number>) => Effect.Effect<void>
    readonly linkEdgeArtifacts: (artifactId: number, edgeIds: ReadonlyArray<number>) => Effect.Effect<void>
    readonly linkEntitySessions: (sessionId: string, entityIds: ReadonlyArray<number>) => Effect.Effect<void>
    readonly linkEdgeSessions: (sessionId: string, edgeIds: ReadonlyArray<number>) => Effect.Effect<void>
  }
>() {}
