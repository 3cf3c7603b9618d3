/** GraphRepo on SQL: artifacts, entities, edges and their artifact and session links. */
import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Layer, Option } from "effect"
import { metadataRows } from "../../../src/domain/Metadata.js"
import type { ArtifactRow, EdgeRow, EdgeWithNames, EntityRow } from "../../../src/domain/Rows.js"
import {
  type EdgeClose,
  type EdgeEnd,
  type EdgeRestart,
  type EdgeState,
  type EdgeTriple,
  type EntityUpsert,
  GraphRepo,
  type NewArtifact,
  type NewEdge
} from "../../../src/services/GraphRepo.js"
import { makeEntityWords } from "./entityWords.js"
import { chunksOf, decodeJson, encodeJson, unique } from "./internal.js"

const ARTIFACT_COLUMNS =
  "id, dataset_id, kind, text, parent_id, session_id, valid_at, created_at, inference_id, query, metadata"
const ENTITY_COLUMNS = "id, dataset_id, name, name_key, type, description, model_id, created_at, attributes"
const EDGE_COLUMNS =
  "id, dataset_id, source_id, target_id, relation, description, valid_at, invalid_at, created_at, expired_at, artifact_id, model_id"
const EDGE_WITH_NAMES_COLUMNS = `${EDGE_COLUMNS.split(", ").map((c) => `e.${c}`).join(", ")},
  s.name AS source_name, t.name AS target_name`

type ArtifactRecord = Omit<ArtifactRow, "metadata"> & { readonly metadata: string | null }

const decodeArtifact = ({ metadata, ...row }: ArtifactRecord): ArtifactRow => ({
  ...row,
  metadata: decodeJson<Record<string, unknown>>(metadata)
})

const entityKey = (e: { readonly name_key: string; readonly type: string }) => `${e.name_key}\u0000${e.type}`

/** newest first, as candidates are ordered: created_at, then id */
const newestFirst = (a: EdgeRow, b: EdgeRow) =>
  a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : b.id - a.id

/**
 * One INSERT per chunk must not see the same (name_key, type) twice (PostgreSQL rejects an
 * upsert that touches a row twice), so repeats within a call are merged first: the first
 * spelling, model and attributes win, the last non-empty description wins, as sequential
 * upserts would (an upsert never changes the attributes of a stored entity: setEntityAttributes).
 */
const mergeRepeats = (entities: ReadonlyArray<EntityUpsert>): Array<EntityUpsert> => {
  const merged = new Map<string, EntityUpsert>()
  for (const entity of entities) {
    const key = entityKey(entity)
    const seen = merged.get(key)
    merged.set(
      key,
      seen === undefined ? entity : entity.description !== "" ? { ...seen, description: entity.description } : seen
    )
  }
  return Array.from(merged.values())
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const words = makeEntityWords(sql)

  const insertArtifact = (artifact: NewArtifact) =>
    sql<ArtifactRecord>`INSERT INTO gb_artifacts ${
      sql.insert({
        dataset_id: artifact.dataset_id,
        kind: artifact.kind,
        text: artifact.text,
        parent_id: artifact.parent_id,
        session_id: artifact.session_id,
        valid_at: artifact.valid_at,
        created_at: artifact.created_at,
        inference_id: artifact.inference_id,
        query: artifact.query,
        metadata: encodeJson(artifact.metadata)
      })
    } RETURNING ${sql.literal(ARTIFACT_COLUMNS)}`.pipe(
      Effect.map((rows) => decodeArtifact(rows[0]!)),
      // the caller's metadata, key by key, for the read filters (search/filters.ts)
      Effect.tap((row) => {
        const keys = metadataRows(row.metadata)
        return keys.length === 0 ?
          Effect.void :
          sql`INSERT INTO gb_artifact_metadata ${
            sql.insert(keys.map((k) => ({ artifact_id: row.id, dataset_id: row.dataset_id, ...k })))
          }`
      }),
      Effect.orDie
    )

  const getArtifact = (id: number) =>
    sql<ArtifactRecord>`SELECT ${sql.literal(ARTIFACT_COLUMNS)} FROM gb_artifacts WHERE id = ${id}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), decodeArtifact)),
      Effect.orDie
    )

  // `+id`: ordering by the bare column lets SQLite (without statistics) walk the dataset's
  // (dataset_id, id) index to skip a sort, reading every entity of the dataset instead of the
  // few that (dataset_id, name_key) finds (BENCHMARKS.md, the misses and their causes).
  const findEntitiesByNameKeys = (datasetId: number, nameKeys: ReadonlyArray<string>) =>
    Effect.forEach(
      chunksOf(unique(nameKeys)),
      (keys) =>
        sql<EntityRow>`SELECT ${sql.literal(ENTITY_COLUMNS)} FROM gb_entities
        WHERE dataset_id = ${datasetId} AND name_key IN ${sql.in(keys)}
        ORDER BY +id`
    ).pipe(
      Effect.map((chunks) => chunks.flat()),
      Effect.orDie
    )

  const upsertEntities = (datasetId: number, entities: ReadonlyArray<EntityUpsert>) =>
    Effect.forEach(chunksOf(mergeRepeats(entities)), (chunk) =>
      sql<EntityRow>`INSERT INTO gb_entities ${
        sql.insert(
          chunk.map((e) => ({
            dataset_id: datasetId,
            name: e.name,
            name_key: e.name_key,
            type: e.type,
            description: e.description,
            model_id: e.model_id,
            created_at: e.created_at,
            updated_at: e.created_at,
            attributes: e.attributes ?? null
          }))
        )
      }
      ON CONFLICT (dataset_id, name_key, type) DO UPDATE SET
        description = CASE WHEN excluded.description <> '' THEN excluded.description
          ELSE gb_entities.description END,
        updated_at = CASE WHEN excluded.description <> '' AND excluded.description <> gb_entities.description
          THEN excluded.updated_at ELSE gb_entities.updated_at END
      RETURNING ${sql.literal(ENTITY_COLUMNS)}`).pipe(
        Effect.flatMap((chunks) => {
          const byKey = new Map(chunks.flat().map((row) => [entityKey(row), row]))
          const rows = entities.map((e) => byKey.get(entityKey(e))!)
          // a row created by this upsert has its created_at (an older one has its words already)
          const created = rows.filter((row, i) => row.created_at === entities[i]!.created_at)
          return Effect.as(words.add(created), rows)
        }),
        Effect.orDie
      )

  // ids are assigned in VALUES order, so sorting a chunk's RETURNING rows by id gives input order
  const insertEdges = (edges: ReadonlyArray<NewEdge>) =>
    Effect.forEach(chunksOf(edges), (chunk) =>
      sql<EdgeRow>`INSERT INTO gb_edges ${
        sql.insert(
          chunk.map((e) => ({
            dataset_id: e.dataset_id,
            source_id: e.source_id,
            target_id: e.target_id,
            relation: e.relation,
            description: e.description,
            valid_at: e.valid_at,
            invalid_at: e.invalid_at,
            created_at: e.created_at,
            expired_at: e.expired_at,
            artifact_id: e.artifact_id,
            model_id: e.model_id
          }))
        )
      }
        RETURNING ${sql.literal(EDGE_COLUMNS)}`.pipe(Effect.map((rows) => [...rows].sort((a, b) => a.id - b.id)))).pipe(
        Effect.map((chunks) => chunks.flat()),
        Effect.orDie
      )

  // an end only moves earlier (times are normalized RFC 3339 UTC, so they compare as text); the
  // plan says which expired_at goes with it (the same end too: a statement of an imposed end makes it live)
  const closeEdges = (closes: ReadonlyArray<EdgeClose>) =>
    Effect.forEach(
      chunksOf(closes),
      (chunk) => {
        const newEnd = sql`CASE ${
          sql.join(" ", false)(chunk.map((c) => sql`WHEN id = ${c.id} THEN ${c.invalid_at}`))
        } END`
        return sql`UPDATE gb_edges SET
          invalid_at = ${newEnd},
          expired_at = CASE ${sql.join(" ", false)(chunk.map((c) => sql`WHEN id = ${c.id} THEN ${c.expired_at}`))} END
        WHERE id IN ${sql.in(chunk.map((c) => c.id))} AND (invalid_at IS NULL OR invalid_at >= ${newEnd})`
      },
      { discard: true }
    ).pipe(Effect.orDie)

  const restartEdges = (restarts: ReadonlyArray<EdgeRestart>) =>
    Effect.forEach(
      restarts,
      (r) => sql`UPDATE gb_edges SET valid_at = ${r.valid_at} WHERE id = ${r.id}`,
      { discard: true }
    ).pipe(Effect.orDie)

  // served by the primary key (edge_id, artifact_id); links stored before migration 0009 have no statement
  const statedEnds = (edgeIds: ReadonlyArray<number>) =>
    Effect.forEach(
      chunksOf(unique(edgeIds)),
      (chunk) =>
        sql<{ edge_id: number; stated_end: string | null }>`SELECT edge_id, MIN(invalid_at) AS stated_end
        FROM gb_edge_artifacts WHERE edge_id IN ${sql.in(chunk)} AND description IS NOT NULL
        GROUP BY edge_id`
    ).pipe(
      Effect.map((chunks) => chunks.flat().map((r) => ({ edge_id: Number(r.edge_id), stated_end: r.stated_end }))),
      Effect.orDie
    )

  const getEdges = (ids: ReadonlyArray<number>) =>
    Effect.forEach(chunksOf(unique(ids)), (chunk) =>
      sql<EdgeWithNames>`SELECT ${sql.literal(EDGE_WITH_NAMES_COLUMNS)}
        FROM gb_edges e
        JOIN gb_entities s ON s.id = e.source_id
        JOIN gb_entities t ON t.id = e.target_id
        WHERE e.id IN ${sql.in(chunk)}`).pipe(
        Effect.map((chunks) => {
          const byId = new Map(chunks.flat().map((row) => [row.id, row]))
          return unique(ids).flatMap((id) => byId.get(id) ?? [])
        }),
        Effect.orDie
      )

  /**
   * Live (or closed) edges touching the entities `entities` selects. The source and target
   * lookups are separate halves of a UNION so that each is served by an index (the partial ones
   * on live edges, (source_id, created_at) and (target_id, created_at) for closed ones); an OR
   * across the two columns would scan the table. CROSS JOIN makes SQLite drive the outer query
   * from those ids rather than from the dataset's edges (PostgreSQL plans freely).
   */
  const edgesTouching = (datasetId: number, entities: Fragment, limit: number, state: EdgeState) => {
    const alive = sql.literal(state === "live" ? "expired_at IS NULL" : "expired_at IS NOT NULL")
    return sql<EdgeWithNames>`WITH touched AS (${entities}),
      candidate_ids AS (
        SELECT id FROM gb_edges WHERE ${alive} AND source_id IN (SELECT id FROM touched)
        UNION
        SELECT id FROM gb_edges WHERE ${alive} AND target_id IN (SELECT id FROM touched)
      )
      SELECT ${sql.literal(EDGE_WITH_NAMES_COLUMNS)}
      FROM candidate_ids c
      CROSS JOIN gb_edges e
      JOIN gb_entities s ON s.id = e.source_id
      JOIN gb_entities t ON t.id = e.target_id
      WHERE e.id = c.id AND e.dataset_id = ${datasetId}
      ORDER BY e.created_at DESC, e.id DESC
      LIMIT ${limit}`
  }

  /** runs the lookup per chunk of keys, then merges: newest first, capped */
  const candidates = <K, E>(
    keys: ReadonlyArray<K>,
    limit: number,
    lookup: (chunk: ReadonlyArray<K>) => Effect.Effect<ReadonlyArray<EdgeWithNames>, E>
  ) => {
    if (keys.length === 0 || limit <= 0) return Effect.succeed([] as ReadonlyArray<EdgeWithNames>)
    return Effect.forEach(chunksOf(unique(keys)), lookup).pipe(
      Effect.map((chunks) => {
        if (chunks.length === 1) return chunks[0]!
        const byId = new Map(chunks.flat().map((row) => [row.id, row]))
        return Array.from(byId.values()).sort(newestFirst).slice(0, limit)
      }),
      Effect.orDie
    )
  }

  const loadCandidateEdgesByNameKeys = (
    datasetId: number,
    nameKeys: ReadonlyArray<string>,
    limit: number,
    state: EdgeState = "live"
  ) =>
    candidates(nameKeys, limit, (keys) =>
      edgesTouching(
        datasetId,
        sql`SELECT id FROM gb_entities WHERE dataset_id = ${datasetId} AND name_key IN ${sql.in(keys)}`,
        limit,
        state
      ))

  const loadCandidateEdgesByEntityIds = (datasetId: number, entityIds: ReadonlyArray<number>, limit: number) =>
    candidates(entityIds, limit, (ids) =>
      edgesTouching(
        datasetId,
        sql`SELECT id FROM gb_entities WHERE dataset_id = ${datasetId} AND id IN ${sql.in(ids)}`,
        limit,
        "live"
      ))

  /**
   * The wanted triples drive the lookup (CROSS JOIN keeps SQLite from starting at the dataset's
   * edges), each served by (dataset_id, source_id, target_id, relation); the casts type the
   * VALUES columns for PostgreSQL.
   */
  const loadEdgesByTriples = (datasetId: number, triples: ReadonlyArray<EdgeTriple>) =>
    Effect.forEach(
      chunksOf(triples, 100),
      (chunk) =>
        sql<EdgeWithNames>`WITH wanted (source_id, target_id, relation) AS (VALUES ${
          sql.join(", ", false)(
            chunk.map((t) =>
              sql`(CAST(${t.source_id} AS BIGINT), CAST(${t.target_id} AS BIGINT), CAST(${t.relation} AS TEXT))`
            )
          )
        })
        SELECT ${sql.literal(EDGE_WITH_NAMES_COLUMNS)}
        FROM wanted w
        CROSS JOIN gb_edges e
        JOIN gb_entities s ON s.id = e.source_id
        JOIN gb_entities t ON t.id = e.target_id
        WHERE e.dataset_id = ${datasetId} AND e.source_id = w.source_id AND e.target_id = w.target_id
          AND e.relation = w.relation`
    ).pipe(
      Effect.map((chunks) => {
        const byId = new Map(chunks.flat().map((row) => [row.id, row]))
        return Array.from(byId.values()).sort(newestFirst)
      }),
      Effect.orDie
    )

  /**
   * newest first per (end, relation), each a walk of its (source_id | target_id, created_at) index
   * that stops at `limit`; the entity ids are the dataset's (no dataset condition: it would let a
   * planner without statistics prefer the triple index, which scans the dataset for a target)
   */
  const loadEdgesByEnds = (_datasetId: number, ends: ReadonlyArray<EdgeEnd>, limit: number) =>
    Effect.forEach(
      [...new Map(ends.map((e) => [JSON.stringify([e.side, e.entity_id, e.relation]), e] as const)).values()],
      ({ entity_id: entityId, relation, side }) =>
        sql<{ id: number }>`SELECT e.id FROM gb_edges e
          WHERE e.${sql.literal(side === "source" ? "source_id" : "target_id")} = ${entityId}
            AND e.relation = ${relation}
          ORDER BY e.created_at DESC, e.id DESC LIMIT ${limit}`
    ).pipe(
      Effect.flatMap((found) => getEdges(unique(found.flat().map((r) => Number(r.id))))),
      Effect.map((rows) => [...rows].sort(newestFirst)),
      Effect.orDie
    )

  const setEntityAttributes = (rows: ReadonlyArray<{ readonly id: number; readonly attributes: string | null }>) =>
    Effect.forEach(rows, (r) => sql`UPDATE gb_entities SET attributes = ${r.attributes} WHERE id = ${r.id}`, {
      discard: true
    }).pipe(Effect.orDie)

  const link = (table: string, rows: ReadonlyArray<Record<string, unknown>>) =>
    Effect.forEach(
      chunksOf(rows),
      (chunk) => sql`INSERT INTO ${sql(table)} ${sql.insert(chunk)} ON CONFLICT DO NOTHING`,
      { discard: true }
    ).pipe(Effect.orDie)

  const markEmbedded = (entityIds: ReadonlyArray<number>, edgeIds: ReadonlyArray<number>, at: string) =>
    Effect.all([
      Effect.forEach(chunksOf(unique(entityIds)), (chunk) =>
        sql`UPDATE gb_entities SET embedded_at = ${at} WHERE id IN ${sql.in(chunk)}`, { discard: true }),
      Effect.forEach(chunksOf(unique(edgeIds)), (chunk) =>
        sql`UPDATE gb_edges SET embedded_at = ${at} WHERE id IN ${sql.in(chunk)}`, { discard: true })
    ], { discard: true }).pipe(Effect.orDie)

  const entitiesWithoutVectors = (datasetId: number, afterId: number, limit: number) =>
    sql<EntityRow>`SELECT ${sql.literal(ENTITY_COLUMNS)} FROM gb_entities
      WHERE dataset_id = ${datasetId} AND embedded_at IS NULL AND id > ${afterId}
      ORDER BY id LIMIT ${limit}`.pipe(Effect.orDie)

  const edgesWithoutVectors = (datasetId: number, afterId: number, limit: number) =>
    sql<EdgeRow>`SELECT ${sql.literal(EDGE_COLUMNS)} FROM gb_edges
      WHERE dataset_id = ${datasetId} AND embedded_at IS NULL AND id > ${afterId}
      ORDER BY id LIMIT ${limit}`.pipe(Effect.orDie)

  return GraphRepo.of({
    markEmbedded,
    entitiesWithoutVectors,
    edgesWithoutVectors,
    insertArtifact,
    getArtifact,
    findEntitiesByNameKeys,
    upsertEntities,
    insertEdges,
    closeEdges,
    getEdges,
    loadCandidateEdgesByNameKeys,
    loadCandidateEdgesByEntityIds,
    loadEdgesByTriples,
    loadEdgesByEnds,
    setEntityAttributes,
    restartEdges,
    statedEnds,
    linkEntityStatements: (artifactId, rows) =>
      link("gb_entity_artifacts", rows.map((r) => ({ ...r, artifact_id: artifactId }))),
    linkEdgeStatements: (artifactId, rows) =>
      link("gb_edge_artifacts", rows.map((r) => ({ ...r, artifact_id: artifactId }))),
    recordClosures: (rows) =>
      Effect.forEach(
        chunksOf(rows),
        (chunk) => sql`INSERT INTO gb_edge_closures ${sql.insert(chunk.map((c) => ({ ...c })))}`,
        {
          discard: true
        }
      ).pipe(Effect.orDie),
    linkEntityArtifacts: (artifactId, entityIds) =>
      link("gb_entity_artifacts", unique(entityIds).map((entity_id) => ({ entity_id, artifact_id: artifactId }))),
    linkEdgeArtifacts: (artifactId, edgeIds) =>
      link("gb_edge_artifacts", unique(edgeIds).map((edge_id) => ({ edge_id, artifact_id: artifactId }))),
    linkEntitySessions: (sessionId, entityIds) =>
      link("gb_entity_sessions", unique(entityIds).map((entity_id) => ({ entity_id, session_id: sessionId }))),
    linkEdgeSessions: (sessionId, edgeIds) =>
      link("gb_edge_sessions", unique(edgeIds).map((edge_id) => ({ edge_id, session_id: sessionId })))
  })
})

export const GraphRepoLive: Layer.Layer<GraphRepo, never, SqlClient.SqlClient> = Layer.effect(GraphRepo, make)
