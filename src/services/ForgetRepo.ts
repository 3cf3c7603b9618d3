import { Context, type Effect, type Option } from "effect"
import type { ArtifactKind } from "../domain/Stages.js"
import type { EdgeClosure } from "./GraphRepo.js"

/** A provenance link of a fact with what its artifact stated (null: stored before statements were kept). */
export interface FactSupport {
  readonly artifact_id: number
  readonly artifact_created_at: string
  readonly description: string | null
  readonly valid_at: string | null
  readonly invalid_at: string | null
}

/** A fact as the forget needs it: its row and its remaining supporters. */
export interface ForgetFact {
  readonly id: number
  readonly source_id: number
  readonly target_id: number
  readonly relation: string
  readonly description: string
  readonly valid_at: string | null
  readonly invalid_at: string | null
  readonly expired_at: string | null
  readonly artifact_id: number | null
  readonly embedded: boolean
  /** the links of artifacts that are not being forgotten, oldest first */
  readonly supporters: ReadonlyArray<FactSupport>
}

export interface StoredClosure extends EdgeClosure {
  readonly id: number
}

/**
 * An entity a forget may remove or rename: its row, what the artifacts that are not being
 * forgotten stated of it (oldest first: its spelling and description), and how many fact ends
 * it is (a fact from it to itself counts twice), so the planner knows whether a fact still touches it.
 */
export interface ForgetEntity {
  readonly id: number
  readonly name: string
  readonly description: string
  readonly embedded: boolean
  readonly statements: ReadonlyArray<{
    readonly name: string | null
    readonly description: string | null
    /** the attributes the artifact stated (JSON text; docs/SCHEMA.md) */
    readonly attributes?: string | null | undefined
  }>
  readonly fact_ends: number
  /** its attributes as stored (JSON text); null or absent: none */
  readonly attributes?: string | null | undefined
}

/**
 * The reads and writes of an exact forget (docs/FORGET.md), each a few indexed statements.
 * The caller holds the dataset's lock and one transaction. Infrastructure errors are defects.
 */
/** A fact's anchor, words and state as a forget decided them. */
export interface FactUpdate {
  readonly artifact_id: number | null
  readonly description: string
  readonly valid_at: string | null
  readonly invalid_at: string | null
  readonly expired_at: string | null
  /** its vector must be written again */
  readonly reembed: boolean
}

export class ForgetRepo extends Context.Tag("gligabao/ForgetRepo")<
  ForgetRepo,
  {
    /** the artifact and everything whose parent chain leads to it (chunks, summaries, web results, observations) */
    readonly descendants: (
      datasetId: number,
      artifactId: number
    ) => Effect.Effect<ReadonlyArray<{ readonly id: number; readonly kind: ArtifactKind }>>
    /** the facts linked to or anchored in the artifacts */
    readonly factsOfArtifacts: (artifactIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<number>>
    /** the facts with their supporters outside `forgotten` */
    readonly facts: (
      ids: ReadonlyArray<number>,
      forgotten: ReadonlyArray<number>
    ) => Effect.Effect<ReadonlyArray<ForgetFact>>
    /** the closing decisions that close any of `edgeIds` or were made by any of them */
    readonly closuresTouching: (edgeIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<StoredClosure>>
    /** the facts of the dataset with one of these triples, live or not */
    readonly withTriples: (
      datasetId: number,
      triples: ReadonlyArray<{ readonly source_id: number; readonly target_id: number; readonly relation: string }>
    ) => Effect.Effect<ReadonlyArray<{ readonly id: number; readonly live: boolean }>>
    readonly deleteClosures: (ids: ReadonlyArray<number>) => Effect.Effect<void>
    /** a fact's anchor, words and state as the forget decided them */
    readonly updateFact: (id: number, values: FactUpdate) => Effect.Effect<void>
    /** moves the links, sessions and series anchors of `from` to `into` (a repeat merged) */
    readonly moveFactLinks: (from: number, into: number) => Effect.Effect<void>
    readonly deleteFacts: (ids: ReadonlyArray<number>) => Effect.Effect<void>
    /** the closing decisions of `from` (either side) become `into`'s (a repeat merged by an entity merge) */
    readonly repointClosures: (from: number, into: number) => Effect.Effect<void>
    /** the entities the artifacts link */
    readonly entitiesLinkedTo: (artifactIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<number>>
    /** the entities with their statements outside `forgotten` and their fact ends */
    readonly entities: (
      ids: ReadonlyArray<number>,
      forgotten: ReadonlyArray<number>
    ) => Effect.Effect<ReadonlyArray<ForgetEntity>>
    /** session links of `sessions` on these rows that no artifact outside `forgotten` of that session gives */
    readonly removeSessionLinks: (
      sessions: ReadonlyArray<string>,
      entityIds: ReadonlyArray<number>,
      factIds: ReadonlyArray<number>,
      forgotten: ReadonlyArray<number>
    ) => Effect.Effect<void>
    readonly sessionsOf: (artifactIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<string>>
    /** deletes the artifacts (their links and series anchors cascade) and series left without anchors */
    readonly deleteArtifacts: (datasetId: number, ids: ReadonlyArray<number>) => Effect.Effect<void>
    /**
     * deletes the entities no artifact links and no fact touches (a guard: the forget's plan
     * names only such entities); the ids deleted, with whether they had a vector
     */
    readonly deleteOrphanEntities: (
      ids: ReadonlyArray<number>
    ) => Effect.Effect<ReadonlyArray<{ readonly id: number; readonly embedded: boolean }>>
    /** deletes an image artifact of the dataset (its extractions cascade) and its run's kept response; its file's path */
    readonly deleteImage: (
      datasetId: number,
      id: number
    ) => Effect.Effect<Option.Option<{ readonly path: string }>>
    /** which of these facts and entities are the dataset's (the others are another user's or missing) */
    readonly factsIn: (datasetId: number, ids: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<number>>
    readonly entitiesIn: (datasetId: number, ids: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<number>>
    readonly entityRows: (
      ids: ReadonlyArray<number>
    ) => Effect.Effect<
      ReadonlyArray<{ readonly id: number; readonly name: string; readonly type: string; readonly description: string }>
    >
    /** every fact touching one of the entities, in any state */
    readonly factsTouching: (entityIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<number>>
    /**
     * an entity merge: the facts, provenance links (with their statements, whose spellings become
     * `into`'s aliases), sessions, series anchors and name words of `from` move to `into`; the
     * facts moved, which must be re-embedded
     */
    readonly moveEntities: (from: ReadonlyArray<number>, into: number) => Effect.Effect<ReadonlyArray<number>>
    /** deletes these entities whatever links them (their links, sessions and anchors cascade) */
    readonly deleteEntities: (
      ids: ReadonlyArray<number>
    ) => Effect.Effect<ReadonlyArray<{ readonly id: number; readonly embedded: boolean }>>
    /**
     * the words each entity is found by (its name's, and its aliases': the spellings of its
     * statements under another key), read anew from what it now has
     */
    readonly rebuildNames: (entityIds: ReadonlyArray<number>) => Effect.Effect<void>
    readonly updateEntity: (
      id: number,
      values: { readonly name: string; readonly description: string }
    ) => Effect.Effect<void>
    /** pending outbox upserts of these vectors are dropped (they would write back what is forgotten) */
    readonly discardPendingVectors: (index: string, vectorIds: ReadonlyArray<string>) => Effect.Effect<void>
    /** the remember runs whose artifact is one of these: their kept response and request traces go */
    readonly scrubRuns: (artifactIds: ReadonlyArray<number>) => Effect.Effect<void>
  }
>() {}
