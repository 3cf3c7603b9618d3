/**
 * The rows of SearchRepo: which ids pass the filters, facts, entities and artifacts by id, a
 * neighbourhood, the recent facts and the export pages' rows. Never links (links.ts).
 */
import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"
import type { ArtifactRow } from "../../../../src/domain/Rows.js"
import type { Neighbour, ReadEntity, ReadFact, ReadFilters, ReadKind } from "../../../../src/services/SearchRepo.js"
import { chunksOf, decodeJson, unique } from "../internal.js"
import type { ReadFilterSql } from "./filters.js"

const ENTITY_COLUMNS = "id dataset_id name name_key type description model_id created_at attributes".split(" ")
const EDGE_COLUMNS =
  "id dataset_id source_id target_id relation description valid_at invalid_at created_at expired_at artifact_id model_id"
    .split(" ")
const ARTIFACT_COLUMNS = "id dataset_id kind text parent_id session_id valid_at created_at inference_id query metadata"
  .split(" ")
export const columns = (alias: string, names: ReadonlyArray<string>) => names.map((c) => `${alias}.${c}`).join(", ")
export const ENTITY_FIELDS = columns("n", ENTITY_COLUMNS)
export const EDGE_FIELDS = columns("e", EDGE_COLUMNS)

type ArtifactRecord = Omit<ArtifactRow, "metadata"> & { readonly metadata: string | null }
const decodeArtifact = ({ metadata, ...row }: ArtifactRecord): ArtifactRow => ({
  ...row,
  metadata: decodeJson<Record<string, unknown>>(metadata)
})

export const makeRows = (sql: SqlClient.SqlClient, readFilters: ReadFilterSql) => {
  const { artifactFilters, baseOf, entityFilters, factFilters, limitOf } = readFilters

  const FACT_SELECT = sql.literal(`SELECT ${EDGE_FIELDS}, s.name AS source_name, t.name AS target_name,
      m.name AS model
    FROM gb_edges e
    JOIN gb_entities s ON s.id = e.source_id
    JOIN gb_entities t ON t.id = e.target_id
    LEFT JOIN gb_models m ON m.id = e.model_id`)
  const ENTITY_SELECT = sql.literal(`SELECT ${ENTITY_FIELDS}, m.name AS model
    FROM gb_entities n LEFT JOIN gb_models m ON m.id = n.model_id`)
  const ARTIFACT_SELECT = sql.literal(`SELECT ${columns("a", ARTIFACT_COLUMNS)} FROM gb_artifacts a`)

  /**
   * Each side walks its (endpoint, created_at) index newest first and stops at `limit`, so a
   * hub entity costs `limit` rows, not its degree. The dataset is checked on the entity (once,
   * by primary key), not on the edges: an edge's endpoints are always of its dataset, and an
   * `e.dataset_id` condition lets a planner without statistics prefer the triple index, which
   * then scans the whole dataset for a target.
   */
  const factsAround = (datasetId: number, entityId: number, filters: ReadFilters, limit: number) => {
    if (limit <= 0) return Effect.succeed([] as ReadonlyArray<Neighbour>)
    const walk = limitOf(limit)
    const side = (column: "source_id" | "target_id") =>
      sql`SELECT e.id, e.source_id, e.target_id, e.created_at FROM gb_edges e
        WHERE e.${sql.literal(column)} = ${entityId}
          AND EXISTS (SELECT 1 FROM gb_entities n WHERE n.id = ${entityId} AND n.dataset_id = ${datasetId})
          AND ${factFilters(filters)}
        ORDER BY e.created_at DESC, e.id DESC
        LIMIT ${walk}`
    return sql<Neighbour & { readonly created_at: string }>`
      SELECT id, source_id, target_id, created_at FROM (${side("source_id")}) out_edges
      UNION
      SELECT id, source_id, target_id, created_at FROM (${side("target_id")}) in_edges
      ORDER BY created_at DESC, id DESC
      LIMIT ${walk}`.pipe(
      Effect.map((rows) => rows.map(({ id, source_id, target_id }) => ({ id, source_id, target_id }))),
      Effect.orDie
    )
  }

  /** ids only (no names, no links): a candidate is checked before its row is read */
  const passing = (kind: ReadKind, datasetId: number, ids: ReadonlyArray<number>, filters: ReadFilters) => {
    const alias = kind === "fact" ? "e" : "n"
    const a = sql.literal(alias)
    const passes = kind === "fact" ? factFilters(filters) : entityFilters(filters)
    return Effect.forEach(
      chunksOf(unique(ids)),
      (chunk) =>
        sql<{ id: number }>`SELECT ${a}.id FROM ${baseOf(alias)} ${a}
        WHERE ${a}.id IN ${sql.in(chunk)} AND ${a}.dataset_id = ${datasetId} AND ${passes}`
    ).pipe(
      Effect.map((chunks): ReadonlySet<number> => new Set(chunks.flatMap((rows) => rows.map((r) => r.id)))),
      Effect.orDie
    )
  }

  /** those of `ids` in the dataset that pass the filters, as `select` reads them (alias `alias`) */
  const byIds = <R extends object>(
    select: Fragment,
    alias: string,
    passes: Fragment,
    datasetId: number,
    ids: ReadonlyArray<number>
  ) =>
    Effect.forEach(chunksOf(unique(ids)), (chunk) =>
      sql<R>`${select}
        WHERE ${sql.literal(alias)}.id IN ${sql.in(chunk)} AND ${sql.literal(alias)}.dataset_id = ${datasetId}
          AND ${passes}`).pipe(Effect.map((chunks) => chunks.flat()), Effect.orDie)

  const facts = (datasetId: number, ids: ReadonlyArray<number>, filters: ReadFilters) =>
    byIds<ReadFact>(FACT_SELECT, "e", factFilters(filters), datasetId, ids)

  const entities = (datasetId: number, ids: ReadonlyArray<number>, filters: ReadFilters) =>
    byIds<ReadEntity>(ENTITY_SELECT, "n", entityFilters(filters), datasetId, ids)

  const artifacts = (datasetId: number, ids: ReadonlyArray<number>, filters: ReadFilters) =>
    Effect.map(
      byIds<ArtifactRecord>(ARTIFACT_SELECT, "a", artifactFilters(filters), datasetId, ids),
      (rows) => rows.map(decodeArtifact)
    )

  const summariesOf = (datasetId: number, chunkIds: ReadonlyArray<number>) =>
    Effect.forEach(chunksOf(unique(chunkIds)), (chunk) =>
      sql<ArtifactRecord>`${ARTIFACT_SELECT}
        WHERE a.parent_id IN ${sql.in(chunk)} AND a.kind = 'chunk_summary' AND a.dataset_id = ${datasetId}`).pipe(
        Effect.map((chunks) => chunks.flat().map(decodeArtifact)),
        Effect.orDie
      )

  /** the `(dataset_id, id)` index walked backwards (no sort), filtered as it goes, stopped at `limit` */
  const recentFacts = (datasetId: number, filters: ReadFilters, limit: number) =>
    limit <= 0 ? Effect.succeed([] as ReadonlyArray<ReadFact>) : sql<ReadFact>`${FACT_SELECT}
      WHERE e.dataset_id = ${datasetId} AND ${factFilters(filters)}
      ORDER BY e.id DESC LIMIT ${limit}`.pipe(Effect.orDie)

  /** an export page's rows (keyset by id), without their links */
  const pageRows = {
    entities: (datasetId: number, filters: ReadFilters, afterId: number, limit: number) =>
      sql<ReadEntity>`${ENTITY_SELECT}
        WHERE n.dataset_id = ${datasetId} AND n.id > ${afterId} AND ${entityFilters(filters)}
        ORDER BY n.id LIMIT ${limit}`,
    facts: (datasetId: number, filters: ReadFilters, afterId: number, limit: number) =>
      sql<ReadFact>`${FACT_SELECT}
        WHERE e.dataset_id = ${datasetId} AND e.id > ${afterId} AND ${factFilters(filters)}
        ORDER BY e.id LIMIT ${limit}`,
    artifacts: (datasetId: number, filters: ReadFilters, afterId: number, limit: number) =>
      Effect.map(
        sql<ArtifactRecord>`${ARTIFACT_SELECT}
          WHERE a.dataset_id = ${datasetId} AND a.id > ${afterId} AND ${artifactFilters(filters)}
          ORDER BY a.id LIMIT ${limit}`,
        (rows) => rows.map(decodeArtifact)
      )
  }

  return { factsAround, passing, facts, entities, artifacts, summariesOf, recentFacts, pageRows, ENTITY_SELECT }
}
