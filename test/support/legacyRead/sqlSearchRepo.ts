// Legacy copy of the read path as of 534360b (issue 38, item 7): test/query/readEquivalence.test.ts
// runs it beside the new one. Deleted once the comparison has passed.
/**
 * SearchRepo on SQL: full-text matches, neighbourhoods, filtered lookups, export pages, an
 * entity's story and a fact's view.
 * The one dialect difference is the full-text match (FTS5 MATCH + bm25 over the dataset's own
 * tables on SQLite, FullText.ts; tsvector @@ tsquery + ts_rank on PostgreSQL, migrations/0004);
 * the filters are shared SQL.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Layer, Option } from "effect"
import { datasetByName } from "../../../layers/sql/repositories/Datasets.js"
import { chunksOf, decodeJson, unique } from "../../../layers/sql/repositories/internal.js"
import { makeTextMatch } from "../../../layers/sql/repositories/search/textMatch.js"
import type { ArtifactRow, EdgeWithNames, EntityRow } from "../../../src/domain/Rows.js"
import { traced } from "../../../src/telemetry/traced.js"
import { makeReadFilters } from "./filters.js"
import {
  type EntityFactView,
  type EntityView,
  type FactClosureRow,
  type FactSourceRow,
  type FactView,
  type Links,
  MAX_RESULT_LINKS,
  type Neighbour,
  type ReadFilters,
  SearchRepo,
  type SessionCounts
} from "./SearchRepo.js"

const ENTITY_COLUMNS = ["id", "dataset_id", "name", "name_key", "type", "description", "model_id", "created_at"]
const EDGE_COLUMNS = [
  "id",
  "dataset_id",
  "source_id",
  "target_id",
  "relation",
  "description",
  "valid_at",
  "invalid_at",
  "created_at",
  "expired_at",
  "artifact_id",
  "model_id"
]
const ARTIFACT_COLUMNS = [
  "id",
  "dataset_id",
  "kind",
  "text",
  "parent_id",
  "session_id",
  "valid_at",
  "created_at",
  "inference_id",
  "query",
  "metadata"
]
const columns = (alias: string, names: ReadonlyArray<string>) => names.map((c) => `${alias}.${c}`).join(", ")

type ArtifactRecord = Omit<ArtifactRow, "metadata"> & { readonly metadata: string | null }
const decodeArtifact = ({ metadata, ...row }: ArtifactRecord): ArtifactRow => ({
  ...row,
  metadata: decodeJson<Record<string, unknown>>(metadata)
})

/** owner id -> its links, in link order */
const groupLinks = <L>(rows: ReadonlyArray<{ readonly owner: number; readonly link: L }>) => {
  const byOwner = new Map<number, Array<L>>()
  for (const { link, owner } of rows) {
    const list = byOwner.get(owner)
    if (list === undefined) byOwner.set(owner, [link])
    else list.push(link)
  }
  return byOwner
}

const numbersAscending = (a: number, b: number) => a - b

/** owners per statement of capped links: one UNION ALL member each, under SQLite's 500 */
const CAPPED_OWNERS = 128

export { RETRY_FAST_EVERY, WEIGHTED_IDF_ROWS } from "../../../layers/sql/repositories/search/textMatch.js"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const isPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })

  const readFilters = makeReadFilters(sql)
  const { artifactFilters, baseOf, entityFilters, factFilters, limitOf } = readFilters
  const { matchEntities, matchFacts } = makeTextMatch(sql, readFilters)

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

  /**
   * The `cap` highest links of each owner: one walk of the link table's (owner, link) primary
   * key per owner, backwards and stopped at `cap`, so an owner with thousands of links costs
   * `cap` rows. PostgreSQL: a LATERAL subquery per owner of a VALUES list (one plan). SQLite,
   * which has no LATERAL: a UNION ALL of one walk per owner, the owners padded with 0 (no row has
   * it) to a power of two, so the statement cache holds a few shapes, not one per owner count.
   */
  const cappedLinks = (
    t: Fragment,
    owner: Fragment,
    link: Fragment,
    owners: ReadonlyArray<number>,
    hideLater: Fragment,
    cap: number
  ) => {
    if (isPg) {
      const values = sql.join(", ", false)(owners.map((id) => sql`(${id}::bigint)`))
      return sql`SELECT o.owner AS owner, w.link AS link
        FROM (VALUES ${values}) AS o (owner)
        CROSS JOIN LATERAL (
          SELECT l.${link} AS link FROM ${t} l
          WHERE l.${owner} = o.owner ${hideLater}
          ORDER BY l.${link} DESC LIMIT ${cap}
        ) w
        ORDER BY owner, link`
    }
    const padded = [...owners]
    while (padded.length & (padded.length - 1)) padded.push(0)
    const limit = limitOf(cap)
    const walks = padded.map((id) =>
      sql`SELECT * FROM (SELECT l.${owner} AS owner, l.${link} AS link
        FROM ${t} l
        WHERE l.${owner} = ${id} ${hideLater}
        ORDER BY l.${link} DESC LIMIT ${limit}) w`
    )
    return sql`SELECT owner, link FROM (${sql.join(" UNION ALL ", false)(walks)}) capped ORDER BY owner, link`
  }

  /**
   * The links of `owners` from a link table, ascending; with `cap`, only the `cap` most recent
   * artifacts (highest ids) per owner. Links to artifacts stored after known_at are hidden.
   */
  const links = <L extends string | number>(
    table: string,
    ownerColumn: string,
    linkColumn: string,
    owners: ReadonlyArray<number>,
    filters: ReadFilters,
    cap: number | null
  ) =>
    Effect.forEach(chunksOf(unique(owners), cap === null ? undefined : CAPPED_OWNERS), (chunk) => {
      const [t, owner, link] = [sql.literal(table), sql.literal(ownerColumn), sql.literal(linkColumn)]
      const hideLater = linkColumn === "artifact_id" && filters.knownAt !== null
        ? sql`AND EXISTS (SELECT 1 FROM gb_artifacts a WHERE a.id = l.artifact_id AND a.created_at <= ${filters.knownAt})`
        : sql``
      return sql<{ owner: number; link: L }>`${
        cap === null
          ? sql`SELECT l.${owner} AS owner, l.${link} AS link FROM ${t} l
              WHERE l.${owner} IN ${sql.in(chunk)} ${hideLater}
              ORDER BY owner, link`
          : cappedLinks(t, owner, link, chunk, hideLater, cap)
      }`
    }).pipe(Effect.map((chunks) => groupLinks(chunks.flat())))

  /**
   * The artifact and session lists of these facts (`edge`) or entities (`entity`), an entry for
   * every id (empty lists when it has none).
   */
  const linksOf = (
    owner: "edge" | "entity",
    ids: ReadonlyArray<number>,
    filters: ReadFilters,
    cap: number | null
  ): Effect.Effect<ReadonlyMap<number, Links>, SqlError.SqlError> =>
    Effect.gen(function*() {
      if (ids.length === 0) return new Map()
      const [artifacts, sessions] = yield* Effect.all([
        links<number>(`gb_${owner}_artifacts`, `${owner}_id`, "artifact_id", ids, filters, cap),
        links<string>(`gb_${owner}_sessions`, `${owner}_id`, "session_id", ids, filters, cap)
      ], { concurrency: "unbounded" })
      return new Map(ids.map((id) => [id, {
        artifact_ids: (artifacts.get(id) ?? []).sort(numbersAscending),
        session_ids: sessions.get(id) ?? []
      }]))
    })

  /** `rows` with their links */
  const withLinks = <R extends { readonly id: number }>(
    owner: "edge" | "entity",
    rows: ReadonlyArray<R>,
    filters: ReadFilters,
    cap: number | null
  ) =>
    Effect.map(
      linksOf(owner, rows.map((r) => r.id), filters, cap),
      (byId) => rows.map((row): R & Links => ({ ...row, ...byId.get(row.id)! }))
    )
  const withFactLinks = <R extends EdgeWithNames & { readonly model: string | null }>(
    rows: ReadonlyArray<R>,
    filters: ReadFilters,
    cap: number | null
  ): Effect.Effect<ReadonlyArray<R & FactView>, SqlError.SqlError> => withLinks("edge", rows, filters, cap)
  const withEntityLinks = (
    rows: ReadonlyArray<EntityRow & { readonly model: string | null }>,
    filters: ReadFilters,
    cap: number | null
  ): Effect.Effect<ReadonlyArray<EntityView>, SqlError.SqlError> => withLinks("entity", rows, filters, cap)

  const FACT_SELECT = sql.literal(`SELECT ${columns("e", EDGE_COLUMNS)}, s.name AS source_name, t.name AS target_name,
      m.name AS model
    FROM gb_edges e
    JOIN gb_entities s ON s.id = e.source_id
    JOIN gb_entities t ON t.id = e.target_id
    LEFT JOIN gb_models m ON m.id = e.model_id`)
  const ENTITY_SELECT = sql.literal(`SELECT ${columns("n", ENTITY_COLUMNS)}, m.name AS model
    FROM gb_entities n LEFT JOIN gb_models m ON m.id = n.model_id`)
  const ARTIFACT_SELECT = sql.literal(`SELECT ${columns("a", ARTIFACT_COLUMNS)} FROM gb_artifacts a`)

  type FactRecord = EdgeWithNames & { readonly model: string | null }
  type EntityRecord = EntityRow & { readonly model: string | null }

  /** those of `ids` in the dataset that pass `filters` over alias `alias` of the base table, as a set */
  const passing = (alias: "n" | "e", datasetId: number, ids: ReadonlyArray<number>, filters: Fragment) => {
    const a = sql.literal(alias)
    return Effect.forEach(
      chunksOf(unique(ids)),
      (chunk) =>
        sql<{ id: number }>`SELECT ${a}.id FROM ${baseOf(alias)} ${a}
        WHERE ${a}.id IN ${sql.in(chunk)} AND ${a}.dataset_id = ${datasetId} AND ${filters}`
    ).pipe(
      Effect.map((chunks): ReadonlySet<number> => new Set(chunks.flatMap((rows) => rows.map((r) => r.id)))),
      Effect.orDie
    )
  }

  const passingFacts = (datasetId: number, ids: ReadonlyArray<number>, filters: ReadFilters) =>
    passing("e", datasetId, ids, factFilters(filters))

  const passingEntities = (datasetId: number, ids: ReadonlyArray<number>, filters: ReadFilters) =>
    passing("n", datasetId, ids, entityFilters(filters))

  /**
   * Those of `ids` in the dataset that pass the filters, as `select` reads them (alias `alias`):
   * with their capped links (`linked`), or without (`unlinked`).
   */
  const resultRows = <R extends { readonly id: number }>(
    alias: "n" | "e",
    select: Fragment,
    filtersOf: (filters: ReadFilters) => Fragment
  ) => {
    const a = sql.literal(alias)
    const rows = (datasetId: number, ids: ReadonlyArray<number>, filters: ReadFilters) =>
      Effect.forEach(chunksOf(unique(ids)), (chunk) =>
        sql<R>`${select}
          WHERE ${a}.id IN ${sql.in(chunk)} AND ${a}.dataset_id = ${datasetId} AND ${filtersOf(filters)}`).pipe(
          Effect.map((chunks) => chunks.flat())
        )
    return {
      linked: (datasetId: number, ids: ReadonlyArray<number>, filters: ReadFilters) =>
        rows(datasetId, ids, filters).pipe(
          Effect.flatMap((found) => withLinks(alias === "e" ? "edge" : "entity", found, filters, MAX_RESULT_LINKS)),
          Effect.orDie
        ),
      unlinked: (datasetId: number, ids: ReadonlyArray<number>, filters: ReadFilters) =>
        Effect.orDie(rows(datasetId, ids, filters))
    }
  }
  const factReads = resultRows<FactRecord>("e", FACT_SELECT, factFilters)
  const entityReads = resultRows<EntityRecord>("n", ENTITY_SELECT, entityFilters)

  const resultLinks = (owner: "fact" | "entity", ids: ReadonlyArray<number>, filters: ReadFilters) =>
    Effect.orDie(linksOf(owner === "fact" ? "edge" : "entity", unique(ids), filters, MAX_RESULT_LINKS))

  const artifacts = (datasetId: number, ids: ReadonlyArray<number>, filters: ReadFilters) =>
    Effect.forEach(chunksOf(unique(ids)), (chunk) =>
      sql<ArtifactRecord>`${ARTIFACT_SELECT}
        WHERE a.id IN ${sql.in(chunk)} AND a.dataset_id = ${datasetId} AND ${artifactFilters(filters)}`).pipe(
        Effect.map((chunks) => chunks.flat().map(decodeArtifact)),
        Effect.orDie
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
    limit <= 0 ? Effect.succeed([] as ReadonlyArray<FactRecord>) : sql<FactRecord>`${FACT_SELECT}
      WHERE e.dataset_id = ${datasetId} AND ${factFilters(filters)}
      ORDER BY e.id DESC LIMIT ${limit}`.pipe(Effect.orDie)

  const entityPage = (datasetId: number, filters: ReadFilters, afterId: number, limit: number) =>
    sql<EntityRecord>`${ENTITY_SELECT}
      WHERE n.dataset_id = ${datasetId} AND n.id > ${afterId} AND ${entityFilters(filters)}
      ORDER BY n.id LIMIT ${limit}`.pipe(
      Effect.flatMap((rows) => withEntityLinks(rows, filters, null)),
      Effect.orDie
    )

  const factPage = (datasetId: number, filters: ReadFilters, afterId: number, limit: number) =>
    sql<FactRecord>`${FACT_SELECT}
      WHERE e.dataset_id = ${datasetId} AND e.id > ${afterId} AND ${factFilters(filters)}
      ORDER BY e.id LIMIT ${limit}`.pipe(
      Effect.flatMap((rows) => withFactLinks(rows, filters, null)),
      Effect.orDie
    )

  const artifactPage = (datasetId: number, filters: ReadFilters, afterId: number, limit: number) =>
    sql<ArtifactRecord>`${ARTIFACT_SELECT}
      WHERE a.dataset_id = ${datasetId} AND a.id > ${afterId} AND ${artifactFilters(filters)}
      ORDER BY a.id LIMIT ${limit}`.pipe(
      Effect.map((rows) => rows.map(decodeArtifact)),
      Effect.orDie
    )

  // -- an entity's story: one entity by id or name, every fact touching it, every link ---------

  /** links are filtered by known_at only: none here, so every link */
  const ALL_LINKS: ReadFilters = { asOf: "", knownAt: null, includeExpired: true, sessionId: null, kind: null }

  const firstEntity = (rows: ReadonlyArray<EntityRecord>) =>
    Effect.map(withEntityLinks(rows.slice(0, 1), ALL_LINKS, null), (found) => Option.fromNullable(found[0]))

  /** by primary key; the dataset is checked on the row */
  const entityById = (datasetId: number, id: number) =>
    sql<EntityRecord>`${ENTITY_SELECT} WHERE n.id = ${id} AND n.dataset_id = ${datasetId}`.pipe(
      Effect.flatMap(firstEntity),
      Effect.orDie
    )

  /**
   * The candidates by (dataset_id, name_key), each counted by its two (endpoint, created_at)
   * indexes (a fact from the entity to itself once), the most facts first, then the lowest id.
   */
  const entityByNameKey = (datasetId: number, nameKey: string) =>
    sql<EntityRecord & { readonly facts: number }>`SELECT ${sql.literal(columns("n", ENTITY_COLUMNS))},
        m.name AS model,
        (SELECT COUNT(*) FROM gb_edges e WHERE e.source_id = n.id)
          + (SELECT COUNT(*) FROM gb_edges e WHERE e.target_id = n.id AND e.source_id <> n.id) AS facts
      FROM gb_entities n LEFT JOIN gb_models m ON m.id = n.model_id
      WHERE n.dataset_id = ${datasetId} AND n.name_key = ${nameKey}
      ORDER BY facts DESC, n.id
      LIMIT 1`.pipe(
      Effect.map((rows) => rows.map(({ facts: _, ...row }) => row)),
      Effect.flatMap(firstEntity),
      Effect.orDie
    )

  const STORY_FACT_SELECT = sql.literal(`SELECT ${columns("e", EDGE_COLUMNS)},
      s.name AS source_name, s.type AS source_type, t.name AS target_name, t.type AS target_type, m.name AS model
    FROM gb_edges e
    JOIN gb_entities s ON s.id = e.source_id
    JOIN gb_entities t ON t.id = e.target_id
    LEFT JOIN gb_models m ON m.id = e.model_id`)

  /**
   * Each side one walk of its (endpoint, created_at) index; the target side leaves out the facts
   * from the entity to itself, which the source side has. As in factsAround, the dataset is
   * checked on the entity (by primary key), not on the edges (see there).
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
    return sql<Omit<EntityFactView, "artifact_ids" | "session_ids">>`SELECT * FROM (
        ${side("source_id")}
        UNION ALL
        ${side("target_id")}
      ) story
      ORDER BY story.valid_at NULLS FIRST, story.id`.pipe(
      Effect.flatMap((rows) => withFactLinks(rows, ALL_LINKS, null)),
      Effect.orDie
    )
  }

  // Chunks and summaries are pieces of a text the session remembered, so they are not counted.
  const sessions = (datasetId: number) =>
    Effect.gen(function*() {
      const texts = yield* sql<{ session_id: string; n: number; first_at: string; last_at: string }>`
        SELECT session_id, COUNT(*) AS n, MIN(created_at) AS first_at, MAX(created_at) AS last_at
        FROM gb_artifacts
        WHERE dataset_id = ${datasetId} AND session_id IS NOT NULL AND kind NOT IN ('chunk', 'chunk_summary')
        GROUP BY session_id`
      const entityCounts = yield* sql<{ session_id: string; n: number }>`
        SELECT ns.session_id, COUNT(*) AS n
        FROM gb_entities n JOIN gb_entity_sessions ns ON ns.entity_id = n.id
        WHERE n.dataset_id = ${datasetId}
        GROUP BY ns.session_id`
      const edgeCounts = yield* sql<{ session_id: string; n: number }>`
        SELECT es.session_id, COUNT(*) AS n
        FROM gb_edges e JOIN gb_edge_sessions es ON es.edge_id = e.id
        WHERE e.dataset_id = ${datasetId}
        GROUP BY es.session_id`
      const byId = new Map<string, { -readonly [K in keyof SessionCounts]: SessionCounts[K] }>()
      const entry = (id: string) => {
        let row = byId.get(id)
        if (row === undefined) {
          row = { session_id: id, artifacts: 0, entities: 0, edges: 0, first_at: null, last_at: null }
          byId.set(id, row)
        }
        return row
      }
      for (const r of texts) {
        Object.assign(entry(r.session_id), { artifacts: Number(r.n), first_at: r.first_at, last_at: r.last_at })
      }
      for (const r of entityCounts) {
        entry(r.session_id).entities = Number(r.n)
      }
      for (const r of edgeCounts) entry(r.session_id).edges = Number(r.n)
      return [...byId.values()].sort((a, b) => (a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : 0))
    }).pipe(Effect.orDie)

  // -- a fact's view: the fact by id, the artifacts behind it, the decisions that closed it -------

  /** by primary key; the dataset is checked on the row */
  const factById = (datasetId: number, id: number) =>
    sql<Omit<EntityFactView, "artifact_ids" | "session_ids">>`${STORY_FACT_SELECT}
      WHERE e.id = ${id} AND e.dataset_id = ${datasetId}`.pipe(
      Effect.flatMap((rows) => withFactLinks(rows.slice(0, 1), ALL_LINKS, null)),
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
    const linked = sql`SELECT a.id, a.kind, a.valid_at, a.created_at, substr(a.text, 1, ${chars}) AS excerpt,
        ea.description AS statement_description, ea.valid_at AS statement_valid_at,
        ea.invalid_at AS statement_invalid_at
      FROM gb_edge_artifacts ea JOIN gb_artifacts a ON a.id = ea.artifact_id
      WHERE ea.edge_id = ${fact.id} AND a.dataset_id = ${datasetId}`
    const creator = fact.artifact_id === null ? sql`` : sql`UNION ALL
      SELECT a.id, a.kind, a.valid_at, a.created_at, substr(a.text, 1, ${chars}) AS excerpt,
        NULL AS statement_description, NULL AS statement_valid_at, NULL AS statement_invalid_at
      FROM gb_artifacts a
      WHERE a.id = ${fact.artifact_id} AND a.dataset_id = ${datasetId}
        AND NOT EXISTS (SELECT 1 FROM gb_edge_artifacts ea WHERE ea.edge_id = ${fact.id} AND ea.artifact_id = a.id)`
    return sql<Omit<FactSourceRow, "text"> & { readonly excerpt: string }>`SELECT * FROM (
        ${linked}
        ${creator}
      ) sources
      ORDER BY sources.created_at, sources.id`.pipe(
      Effect.map((rows) => rows.map(({ excerpt, ...row }): FactSourceRow => ({ ...row, text: excerpt }))),
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

  const dataset = datasetByName(sql)

  return SearchRepo.of(traced("LegacySearchRepo", {
    dataset,
    matchEntities,
    matchFacts,
    factsAround,
    passingFacts,
    passingEntities,
    facts: factReads.linked,
    entities: entityReads.linked,
    unlinkedFacts: factReads.unlinked,
    unlinkedEntities: entityReads.unlinked,
    links: resultLinks,
    artifacts,
    summariesOf,
    entityPage,
    factPage,
    artifactPage,
    entityById,
    entityByNameKey,
    entityFacts,
    recentFacts,
    sessions,
    factById,
    factSources,
    factClosures
  }))
})

export const SearchRepoLive: Layer.Layer<SearchRepo, never, SqlClient.SqlClient> = Layer.effect(SearchRepo, make)
