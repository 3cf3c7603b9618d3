/**
 * ForgetRepo on SQL: the reads and writes of an exact forget (docs/FORGET.md). Every lookup
 * goes through an index: artifacts by parent, links by artifact and by edge, closures by edge
 * and by closer, live edges by triple, outbox rows by vector.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { ArtifactKind } from "../../../src/domain/Stages.js"
import {
  type FactSupport,
  type ForgetEntity,
  type ForgetFact,
  ForgetRepo,
  type StoredClosure
} from "../../../src/services/ForgetRepo.js"
import { makeEntityWords } from "./entityWords.js"
import { chunksOf, unique } from "./internal.js"

const inChunks = <A, R>(
  ids: ReadonlyArray<number>,
  run: (chunk: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<A>, unknown, R>
) => Effect.map(Effect.forEach(chunksOf(unique(ids)), run), (rows) => rows.flat())

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const words = makeEntityWords(sql)

  const descendants = (datasetId: number, artifactId: number) =>
    sql<{ id: number; kind: ArtifactKind }>`WITH RECURSIVE doomed(id) AS (
        SELECT id FROM gb_artifacts WHERE id = ${artifactId} AND dataset_id = ${datasetId}
        UNION SELECT a.id FROM gb_artifacts a JOIN doomed d ON a.parent_id = d.id
      )
      SELECT a.id, a.kind FROM doomed d JOIN gb_artifacts a ON a.id = d.id ORDER BY a.id`.pipe(
      Effect.map((rows) => rows.map((r) => ({ id: Number(r.id), kind: r.kind }))),
      Effect.orDie
    )

  const factsOfArtifacts = (artifactIds: ReadonlyArray<number>) =>
    inChunks(
      artifactIds,
      (chunk) =>
        sql<{ id: number }>`SELECT edge_id AS id FROM gb_edge_artifacts WHERE artifact_id IN ${sql.in(chunk)}
        UNION SELECT id FROM gb_edges WHERE artifact_id IN ${sql.in(chunk)}`
    ).pipe(
      Effect.map((rows) => unique(rows.map((r) => Number(r.id)))),
      Effect.orDie
    )

  const facts = (ids: ReadonlyArray<number>, forgotten: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      const rows = yield* inChunks(ids, (chunk) =>
        sql<Omit<ForgetFact, "supporters" | "embedded"> & { embedded_at: string | null }>`SELECT id, source_id,
          target_id, relation, description, valid_at, invalid_at, expired_at, artifact_id, embedded_at
          FROM gb_edges WHERE id IN ${sql.in(chunk)}`)
      const links = yield* inChunks(ids, (chunk) =>
        sql<FactSupport & { edge_id: number }>`SELECT ea.edge_id, ea.artifact_id, a.created_at AS artifact_created_at,
          ea.description, ea.valid_at, ea.invalid_at
          FROM gb_edge_artifacts ea JOIN gb_artifacts a ON a.id = ea.artifact_id
          WHERE ea.edge_id IN ${sql.in(chunk)}`)
      const gone = new Set(forgotten)
      const byEdge = new Map<number, Array<FactSupport>>()
      for (const link of links) {
        if (gone.has(Number(link.artifact_id))) {
          continue
        }
        const list = byEdge.get(Number(link.edge_id)) ?? []
        list.push({ ...link, artifact_id: Number(link.artifact_id) })
        byEdge.set(Number(link.edge_id), list)
      }
      const oldestFirst = (a: FactSupport, b: FactSupport) =>
        a.artifact_created_at < b.artifact_created_at ? -1 : a.artifact_created_at > b.artifact_created_at
          ? 1
          : a.artifact_id - b.artifact_id
      return rows.map(({ embedded_at, ...r }): ForgetFact => ({
        ...r,
        id: Number(r.id),
        source_id: Number(r.source_id),
        target_id: Number(r.target_id),
        artifact_id: r.artifact_id === null ? null : Number(r.artifact_id),
        embedded: embedded_at !== null,
        supporters: (byEdge.get(Number(r.id)) ?? []).sort(oldestFirst)
      }))
    }).pipe(Effect.orDie)

  const closuresTouching = (edgeIds: ReadonlyArray<number>) =>
    inChunks(
      edgeIds,
      (chunk) =>
        sql<StoredClosure>`SELECT id, edge_id, by_edge_id, artifact_id, kind, invalid_at, expired_at, prev_invalid_at,
          created_at FROM gb_edge_closures WHERE edge_id IN ${sql.in(chunk)}
        UNION SELECT id, edge_id, by_edge_id, artifact_id, kind, invalid_at, expired_at, prev_invalid_at, created_at
          FROM gb_edge_closures WHERE by_edge_id IN ${sql.in(chunk)}`
    ).pipe(
      Effect.map((rows) =>
        [...new Map(rows.map((r) => [Number(r.id), r])).values()].map((r) => ({
          ...r,
          id: Number(r.id),
          edge_id: Number(r.edge_id),
          by_edge_id: r.by_edge_id === null ? null : Number(r.by_edge_id),
          artifact_id: r.artifact_id === null ? null : Number(r.artifact_id)
        })).sort((a, b) => a.id - b.id)
      ),
      Effect.orDie
    )

  const withTriples: ForgetRepo["Type"]["withTriples"] = (datasetId, triples) =>
    Effect.forEach(
      triples,
      (t) =>
        sql<{ id: number; expired_at: string | null }>`SELECT id, expired_at FROM gb_edges
        WHERE dataset_id = ${datasetId} AND source_id = ${t.source_id} AND target_id = ${t.target_id}
        AND relation = ${t.relation}`
    ).pipe(
      Effect.map((rows) => {
        const byId = new Map(rows.flat().map((r) => [Number(r.id), r.expired_at === null]))
        return [...byId].map(([id, live]) => ({ id, live }))
      }),
      Effect.orDie
    )

  const deleteWhereIdIn = (table: string, ids: ReadonlyArray<number>) =>
    Effect.forEach(chunksOf(unique(ids)), (chunk) => sql`DELETE FROM ${sql(table)} WHERE id IN ${sql.in(chunk)}`, {
      discard: true
    }).pipe(Effect.orDie)

  const updateFact: ForgetRepo["Type"]["updateFact"] = (id, v) =>
    sql`UPDATE gb_edges SET artifact_id = ${v.artifact_id}, description = ${v.description}, valid_at = ${v.valid_at},
      invalid_at = ${v.invalid_at}, expired_at = ${v.expired_at}
      ${v.reembed ? sql`, embedded_at = NULL` : sql``} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

  const moveFactLinks = (from: number, into: number) =>
    Effect.all([
      sql`INSERT INTO gb_edge_artifacts (edge_id, artifact_id, description, valid_at, invalid_at)
        SELECT ${into}, artifact_id, description, valid_at, invalid_at FROM gb_edge_artifacts WHERE edge_id = ${from}
        ON CONFLICT DO NOTHING`,
      sql`INSERT INTO gb_edge_sessions (edge_id, session_id) SELECT ${into}, session_id FROM gb_edge_sessions
        WHERE edge_id = ${from} ON CONFLICT DO NOTHING`,
      sql`UPDATE gb_series_anchors SET edge_id = ${into} WHERE edge_id = ${from}`
    ], { discard: true }).pipe(Effect.orDie)

  const entitiesLinkedTo = (artifactIds: ReadonlyArray<number>) =>
    inChunks(
      artifactIds,
      (chunk) =>
        sql<{ id: number }>`SELECT entity_id AS id FROM gb_entity_artifacts WHERE artifact_id IN ${sql.in(chunk)}`
    ).pipe(
      Effect.map((rows) => unique(rows.map((r) => Number(r.id)))),
      Effect.orDie
    )

  const sessionsOf = (artifactIds: ReadonlyArray<number>) =>
    inChunks(artifactIds, (chunk) =>
      sql<{ session_id: string }>`SELECT DISTINCT session_id FROM gb_artifacts
        WHERE id IN ${sql.in(chunk)} AND session_id IS NOT NULL`).pipe(
        Effect.map((rows) => unique(rows.map((r) => r.session_id))),
        Effect.orDie
      )

  // a row keeps a session while an artifact of that session (not forgotten) still links it
  const removeSessionLinks: ForgetRepo["Type"]["removeSessionLinks"] = (sessions, entityIds, factIds, forgotten) =>
    Effect.gen(function*() {
      if (sessions.length === 0) return
      const gone = forgotten.length === 0 ? [-1] : forgotten
      for (const chunk of chunksOf(unique(entityIds))) {
        yield* sql`DELETE FROM gb_entity_sessions WHERE session_id IN ${sql.in(sessions)}
          AND entity_id IN ${sql.in(chunk)}
          AND NOT EXISTS (SELECT 1 FROM gb_entity_artifacts ea JOIN gb_artifacts a ON a.id = ea.artifact_id
            WHERE ea.entity_id = gb_entity_sessions.entity_id AND a.session_id = gb_entity_sessions.session_id
              AND a.id NOT IN ${sql.in(gone)})`
      }
      for (const chunk of chunksOf(unique(factIds))) {
        yield* sql`DELETE FROM gb_edge_sessions WHERE session_id IN ${sql.in(sessions)}
          AND edge_id IN ${sql.in(chunk)}
          AND NOT EXISTS (SELECT 1 FROM gb_edge_artifacts ea JOIN gb_artifacts a ON a.id = ea.artifact_id
            WHERE ea.edge_id = gb_edge_sessions.edge_id AND a.session_id = gb_edge_sessions.session_id
              AND a.id NOT IN ${sql.in(gone)})`
      }
    }).pipe(Effect.orDie)

  const deleteArtifacts = (datasetId: number, ids: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      // children first: parent_id cascades too, but a deep chain is cheaper leaf to root
      for (const chunk of chunksOf([...unique(ids)].sort((a, b) => b - a))) {
        yield* sql`DELETE FROM gb_artifacts WHERE id IN ${sql.in(chunk)}`
      }
      yield* sql`DELETE FROM gb_series WHERE dataset_id = ${datasetId}
        AND NOT EXISTS (SELECT 1 FROM gb_series_anchors WHERE series_id = gb_series.id)`
    }).pipe(Effect.orDie)

  const deleteOrphanEntities = (ids: ReadonlyArray<number>) =>
    inChunks(
      ids,
      (chunk) =>
        sql<{ id: number; embedded_at: string | null }>`DELETE FROM gb_entities WHERE id IN ${sql.in(chunk)}
        AND NOT EXISTS (SELECT 1 FROM gb_entity_artifacts WHERE entity_id = gb_entities.id)
        AND NOT EXISTS (SELECT 1 FROM gb_edges WHERE source_id = gb_entities.id)
        AND NOT EXISTS (SELECT 1 FROM gb_edges WHERE target_id = gb_entities.id)
        RETURNING id, embedded_at`
    ).pipe(
      Effect.map((rows) => rows.map((r) => ({ id: Number(r.id), embedded: r.embedded_at !== null }))),
      Effect.orDie
    )

  const idsIn = (table: string) => (datasetId: number, ids: ReadonlyArray<number>) =>
    inChunks(
      ids,
      (chunk) =>
        sql<{ id: number }>`SELECT id FROM ${sql(table)} WHERE id IN ${sql.in(chunk)} AND dataset_id = ${datasetId}`
    ).pipe(
      Effect.map((rows) => rows.map((r) => Number(r.id))),
      Effect.orDie
    )

  const factsTouching = (entityIds: ReadonlyArray<number>) =>
    inChunks(entityIds, (chunk) =>
      sql<{ id: number }>`SELECT id FROM gb_edges WHERE source_id IN ${sql.in(chunk)}
        UNION SELECT id FROM gb_edges WHERE target_id IN ${sql.in(chunk)}`).pipe(
        Effect.map((rows) => unique(rows.map((r) => Number(r.id)))),
        Effect.orDie
      )

  const moveEntities = (from: ReadonlyArray<number>, into: number) =>
    Effect.gen(function*() {
      const moved = yield* factsTouching(from)
      for (const chunk of chunksOf(unique(from))) {
        yield* sql`UPDATE gb_edges SET source_id = ${into}, embedded_at = NULL WHERE source_id IN ${sql.in(chunk)}`
        yield* sql`UPDATE gb_edges SET target_id = ${into}, embedded_at = NULL WHERE target_id IN ${sql.in(chunk)}`
        yield* sql`INSERT INTO gb_entity_artifacts (entity_id, artifact_id, name, description, attributes)
          SELECT ${into}, artifact_id, name, description, attributes FROM gb_entity_artifacts
          WHERE entity_id IN ${sql.in(chunk)}
          ON CONFLICT DO NOTHING`
        yield* sql`INSERT INTO gb_entity_sessions (entity_id, session_id)
          SELECT ${into}, session_id FROM gb_entity_sessions WHERE entity_id IN ${sql.in(chunk)} ON CONFLICT DO NOTHING`
        yield* sql`UPDATE gb_series_anchors SET entity_id = ${into} WHERE entity_id IN ${sql.in(chunk)}`
      }
      yield* words.copy(from, into)
      yield* sql`UPDATE gb_entities SET embedded_at = NULL WHERE id = ${into}`
      return moved
    }).pipe(Effect.orDie)

  const deleteEntities = (ids: ReadonlyArray<number>) =>
    inChunks(
      ids,
      (chunk) =>
        sql<{ id: number; embedded_at: string | null }>`DELETE FROM gb_entities WHERE id IN ${sql.in(chunk)}
        RETURNING id, embedded_at`
    ).pipe(
      Effect.map((rows) => rows.map((r) => ({ id: Number(r.id), embedded: r.embedded_at !== null }))),
      Effect.orDie
    )

  // the fact ends are counted on the (source_id, created_at) and (target_id, created_at) indexes
  const entities = (ids: ReadonlyArray<number>, forgotten: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      const rows = yield* inChunks(ids, (chunk) =>
        sql<
          {
            id: number
            name: string
            description: string
            embedded_at: string | null
            fact_ends: number
            attributes: string | null
          }
        >`SELECT
          id, name, description, embedded_at, attributes,
          (SELECT COUNT(*) FROM gb_edges WHERE source_id = gb_entities.id)
            + (SELECT COUNT(*) FROM gb_edges WHERE target_id = gb_entities.id) AS fact_ends
          FROM gb_entities WHERE id IN ${sql.in(chunk)}`)
      const links = yield* inChunks(ids, (chunk) =>
        sql<
          {
            entity_id: number
            artifact_id: number
            name: string | null
            description: string | null
            attributes: string | null
          }
        >`SELECT
          ea.entity_id, ea.artifact_id, ea.name, ea.description, ea.attributes
          FROM gb_entity_artifacts ea JOIN gb_artifacts a ON a.id = ea.artifact_id
          WHERE ea.entity_id IN ${sql.in(chunk)} ORDER BY a.created_at, a.id`)
      const gone = new Set(forgotten)
      const remaining = links.filter((l) => !gone.has(Number(l.artifact_id)))
      return rows.map((r): ForgetEntity => ({
        id: Number(r.id),
        name: r.name,
        description: r.description,
        embedded: r.embedded_at !== null,
        statements: remaining.filter((l) => Number(l.entity_id) === Number(r.id)).map((l) => ({
          name: l.name,
          description: l.description,
          attributes: l.attributes
        })),
        fact_ends: Number(r.fact_ends),
        attributes: r.attributes
      }))
    }).pipe(Effect.orDie)

  const rebuildNames: ForgetRepo["Type"]["rebuildNames"] = (entityIds) => Effect.orDie(words.rebuild(entityIds))

  const updateEntity: ForgetRepo["Type"]["updateEntity"] = (id, values) =>
    sql`UPDATE gb_entities SET name = ${values.name}, description = ${values.description}, embedded_at = NULL
      WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

  const discardPendingVectors = (index: string, vectorIds: ReadonlyArray<string>) =>
    Effect.forEach(
      chunksOf(unique(vectorIds)),
      (chunk) => sql`DELETE FROM gb_vector_outbox WHERE index_name = ${index} AND vector_id IN ${sql.in(chunk)}`,
      { discard: true }
    ).pipe(Effect.orDie)

  const scrubRuns = (artifactIds: ReadonlyArray<number>) =>
    Effect.forEach(
      chunksOf(unique(artifactIds)),
      (chunk) =>
        sql`UPDATE gb_remember_runs SET response = NULL WHERE pipeline = 'text' AND artifact_id IN ${sql.in(chunk)}`,
      { discard: true }
    ).pipe(Effect.orDie)

  return ForgetRepo.of({
    descendants,
    factsOfArtifacts,
    facts,
    closuresTouching,
    withTriples,
    deleteClosures: (ids) => deleteWhereIdIn("gb_edge_closures", ids),
    updateFact,
    moveFactLinks,
    deleteFacts: (ids) => deleteWhereIdIn("gb_edges", ids),
    repointClosures: (from, into) =>
      Effect.all([
        sql`UPDATE gb_edge_closures SET edge_id = ${into} WHERE edge_id = ${from}`,
        sql`UPDATE gb_edge_closures SET by_edge_id = ${into} WHERE by_edge_id = ${from}`,
        // a fact does not close itself
        sql`DELETE FROM gb_edge_closures WHERE edge_id = ${into} AND by_edge_id = ${into}`
      ], { discard: true }).pipe(Effect.orDie),
    entitiesLinkedTo,
    entities,
    removeSessionLinks,
    sessionsOf,
    deleteArtifacts,
    deleteOrphanEntities,
    deleteEntities,
    deleteImage: (datasetId, id) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ path: string }>`DELETE FROM gb_image_artifacts WHERE id = ${id}
          AND dataset_id = ${datasetId} RETURNING path`
        if (rows.length === 0) return Option.none()
        yield* sql`UPDATE gb_remember_runs SET response = NULL WHERE pipeline = 'image' AND artifact_id = ${id}`
        return Option.some({ path: rows[0]!.path })
      }).pipe(Effect.orDie),
    factsIn: idsIn("gb_edges"),
    entitiesIn: idsIn("gb_entities"),
    factsTouching,
    moveEntities,
    entityRows: (ids) =>
      inChunks(
        ids,
        (chunk) =>
          sql<{ id: number; name: string; type: string; description: string }>`SELECT id, name, type, description
          FROM gb_entities WHERE id IN ${sql.in(chunk)}`
      ).pipe(
        Effect.map((rows) => rows.map((r) => ({ ...r, id: Number(r.id) }))),
        Effect.orDie
      ),
    rebuildNames,
    updateEntity,
    discardPendingVectors,
    scrubRuns
  })
})

export const ForgetRepoLive: Layer.Layer<ForgetRepo, never, SqlClient.SqlClient> = Layer.effect(ForgetRepo, make)
