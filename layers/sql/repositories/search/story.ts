/**
 * An entity's story and a fact's view for SearchRepo: one entity by id or name with every
 * fact touching it, one fact with the artifacts behind it and the decisions that closed it.
 * Every link, and every read through an index (test/http/entityView.test.ts and
 * factView.test.ts check the SQLite plans).
 */
import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Option } from "effect"
import type {
  EntityFactView,
  FactClosureRow,
  FactSourceRow,
  ReadEntity,
  ReadFilters
} from "../../../../src/services/SearchRepo.js"
import { decodeJson } from "../internal.js"
import type { makeLinks } from "./links.js"
import { EDGE_FIELDS } from "./rows.js"

/** links are filtered by known_at only: none here, so every link */
const ALL_LINKS: ReadFilters = { asOf: "", knownAt: null, includeExpired: true, sessionId: null, kind: null }

export const makeStory = (
  sql: SqlClient.SqlClient,
  { withAllLinks }: ReturnType<typeof makeLinks>,
  ENTITY_SELECT: Fragment
) => {
  const firstEntity = (rows: ReadonlyArray<ReadEntity>) =>
    Effect.map(withAllLinks("entity", rows.slice(0, 1), ALL_LINKS), (found) => Option.fromNullable(found[0]))

  /** by primary key, the dataset checked on the row */
  const entity = (datasetId: number, by: { readonly id: number }) =>
    sql<ReadEntity>`${ENTITY_SELECT} WHERE n.id = ${by.id} AND n.dataset_id = ${datasetId}`.pipe(
      Effect.flatMap(firstEntity),
      Effect.orDie
    )

  const STORY_FACT_SELECT = sql.literal(`SELECT ${EDGE_FIELDS},
      s.name AS source_name, s.type AS source_type, t.name AS target_name, t.type AS target_type, m.name AS model
    FROM gb_edges e
    JOIN gb_entities s ON s.id = e.source_id
    JOIN gb_entities t ON t.id = e.target_id
    LEFT JOIN gb_models m ON m.id = e.model_id`)
  type StoryFactRow = Omit<EntityFactView, "artifact_ids" | "session_ids">

  /**
   * Each side one walk of its (endpoint, created_at) index; the target side leaves out the facts
   * from the entity to itself, which the source side has. As in factsAround (rows.ts), the
   * dataset is checked on the entity (by primary key), not on the edges.
   */
  const entityFacts = (datasetId: number, entityId: number, openAt: string | null) => {
    const side = (column: "source_id" | "target_id") => {
      const clauses: Array<Fragment> = [
        sql`e.${sql.literal(column)} = ${entityId}`,
        sql`EXISTS (SELECT 1 FROM gb_entities n WHERE n.id = ${entityId} AND n.dataset_id = ${datasetId})`
      ]
      if (column === "target_id") clauses.push(sql`e.source_id <> ${entityId}`)
      if (openAt !== null) clauses.push(sql`(e.invalid_at IS NULL OR e.invalid_at > ${openAt})`)
      return sql`${STORY_FACT_SELECT} WHERE ${sql.and(clauses)}`
    }
    // an unknown start comes first on both engines (PostgreSQL sorts NULL last by default)
    return sql<StoryFactRow>`SELECT * FROM (
        ${side("source_id")}
        UNION ALL
        ${side("target_id")}
      ) story
      ORDER BY story.valid_at NULLS FIRST, story.id`.pipe(
      Effect.flatMap((rows) => withAllLinks("edge", rows, ALL_LINKS)),
      Effect.orDie
    )
  }

  /** by primary key; the dataset is checked on the row */
  const factById = (datasetId: number, id: number) =>
    sql<StoryFactRow>`${STORY_FACT_SELECT}
      WHERE e.id = ${id} AND e.dataset_id = ${datasetId}`.pipe(
      Effect.flatMap((rows) => withAllLinks("edge", rows.slice(0, 1), ALL_LINKS)),
      Effect.map((found) => Option.fromNullable(found[0])),
      Effect.orDie
    )

  /**
   * The links by the (edge_id, artifact_id) primary key, each artifact by its primary key; the
   * creator (by primary key) only when it has no link. substr counts characters on both
   * engines (code points: SQLite's text is UTF-8), so a long text is never read whole into the
   * result; its length is a literal, a bound number being typed as a float by some drivers.
   */
  const factSources = (
    datasetId: number,
    fact: { readonly id: number; readonly artifact_id: number | null },
    textChars: number
  ) => {
    const chars = sql.literal(String(Math.max(1, Math.trunc(textChars))))
    const linked =
      sql`SELECT a.id, a.kind, a.valid_at, a.created_at, substr(a.text, 1, ${chars}) AS excerpt, a.metadata,
        ea.description AS statement_description, ea.valid_at AS statement_valid_at,
        ea.invalid_at AS statement_invalid_at
      FROM gb_edge_artifacts ea JOIN gb_artifacts a ON a.id = ea.artifact_id
      WHERE ea.edge_id = ${fact.id} AND a.dataset_id = ${datasetId}`
    const creator = fact.artifact_id === null ? sql`` : sql`UNION ALL
      SELECT a.id, a.kind, a.valid_at, a.created_at, substr(a.text, 1, ${chars}) AS excerpt, a.metadata,
        NULL AS statement_description, NULL AS statement_valid_at, NULL AS statement_invalid_at
      FROM gb_artifacts a
      WHERE a.id = ${fact.artifact_id} AND a.dataset_id = ${datasetId}
        AND NOT EXISTS (SELECT 1 FROM gb_edge_artifacts ea WHERE ea.edge_id = ${fact.id} AND ea.artifact_id = a.id)`
    return sql<
      Omit<FactSourceRow, "text" | "metadata"> & { readonly excerpt: string; readonly metadata: string | null }
    >`SELECT * FROM (
        ${linked}
        ${creator}
      ) sources
      ORDER BY sources.created_at, sources.id`.pipe(
      Effect.map((rows) =>
        rows.map(({ excerpt, metadata, ...row }): FactSourceRow => ({
          ...row,
          text: excerpt,
          metadata: decodeJson<Record<string, unknown>>(metadata)
        }))
      ),
      Effect.orDie
    )
  }

  /** by the gb_edge_closures_edge index; the closing fact by primary key */
  const factClosures = (factId: number) =>
    sql<FactClosureRow>`SELECT c.id, c.kind, c.by_edge_id, b.description AS by_description, c.artifact_id,
        c.invalid_at, c.created_at
      FROM gb_edge_closures c LEFT JOIN gb_edges b ON b.id = c.by_edge_id
      WHERE c.edge_id = ${factId} AND c.kind <> 'contradicts'
      ORDER BY c.created_at, c.id`.pipe(Effect.orDie)

  return { entity, entityFacts, factById, factSources, factClosures }
}
