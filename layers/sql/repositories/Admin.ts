/**
 * AdminRepo on SQL: model usage over a period (gb_inferences, served by the started_at index of
 * migrations/0005), every user's datasets with their counts, and a bounded slice of one graph.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import {
  type AdminDataset,
  type AdminGraphArtifact,
  type AdminGraphEdge,
  type AdminGraphEntity,
  AdminRepo,
  type InferenceUsage,
  type UsageBucket,
  type UsageQuery,
  type UsageTotals
} from "../../../src/services/AdminRepo.js"
import { chunksOf, unique } from "./internal.js"

/** artifact text is cut to this many characters (SQL substr/length count characters on both dialects) */
export const ARTIFACT_TEXT_LIMIT = 2000

/**
 * The bucket start from the TEXT time, the same on both dialects. Constants only, so they are
 * spliced as literals: PostgreSQL cannot type a bound parameter on either side of `||`.
 */
const BUCKET_START: Record<UsageBucket, string> = {
  hour: "substr(started_at, 1, 13) || ':00:00.000Z'",
  day: "substr(started_at, 1, 10) || 'T00:00:00.000Z'"
}

type Mutable<A> = { -readonly [K in keyof A]: A[K] }

interface UsageRecord extends UsageTotals {
  readonly start: string
  readonly stage: string
  readonly provider: string
  readonly model: string
}

/**
 * One row per (bucket, stage, provider, model) of the period: the finest grain every view of
 * `InferenceUsage` is a sum of, so the period's rows are read once.
 */
export const usageStatement = (sql: SqlClient.SqlClient, query: UsageQuery) => {
  const start = sql.literal(BUCKET_START[query.bucket])
  return sql<UsageRecord>`SELECT ${start} AS start, stage, provider, model,
      COUNT(*) AS calls,
      SUM(CASE WHEN error IS NOT NULL THEN 1 ELSE 0 END) AS failed,
      SUM(input_tokens) AS input_tokens,
      SUM(output_tokens) AS output_tokens,
      SUM(cost_usd) AS cost_usd
    FROM gb_inferences
    WHERE started_at >= ${query.from} AND started_at < ${query.to}
    GROUP BY ${start}, stage, provider, model`
}

const zero = (): Mutable<UsageTotals> => ({ calls: 0, failed: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 })

const addTo = (sum: Mutable<UsageTotals>, row: UsageTotals) => {
  sum.calls += row.calls
  sum.failed += row.failed
  sum.input_tokens += row.input_tokens
  sum.output_tokens += row.output_tokens
  sum.cost_usd += row.cost_usd
}

/** sums `records` per key, keeping the identifying fields of the first record of each key */
const sumBy = <K extends object>(
  records: ReadonlyArray<UsageRecord>,
  key: (r: UsageRecord) => string,
  fields: (r: UsageRecord) => K
): Array<K & UsageTotals> => {
  const groups = new Map<string, K & Mutable<UsageTotals>>()
  for (const record of records) {
    const k = key(record)
    let group = groups.get(k)
    if (group === undefined) {
      group = { ...fields(record), ...zero() }
      groups.set(k, group)
    }
    addTo(group, record)
  }
  return Array.from(groups.values())
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

const byCostThenCalls = (a: UsageTotals, b: UsageTotals) => b.cost_usd - a.cost_usd || b.calls - a.calls

// PostgreSQL sums are bigint/numeric; Pg.ts parses those to numbers, Number() keeps that true here
const decodeUsage = (row: UsageRecord): UsageRecord => ({
  start: row.start,
  stage: row.stage,
  provider: row.provider,
  model: row.model,
  calls: Number(row.calls),
  failed: Number(row.failed),
  input_tokens: Number(row.input_tokens),
  output_tokens: Number(row.output_tokens),
  cost_usd: Number(row.cost_usd)
})

const summarizeUsage = (rows: ReadonlyArray<UsageRecord>): InferenceUsage => {
  const totals = zero()
  for (const row of rows) addTo(totals, row)
  const by_stage = sumBy(rows, (r) => r.stage, (r) => ({ stage: r.stage })).sort(
    (a, b) => byCostThenCalls(a, b) || compareText(a.stage, b.stage)
  )
  const by_model = sumBy(
    rows,
    (r) => `${r.provider}\u0000${r.model}`,
    (r) => ({ provider: r.provider, model: r.model })
  )
    .sort((a, b) => byCostThenCalls(a, b) || compareText(a.model, b.model) || compareText(a.provider, b.provider))
  // the bucket rows name a model, not its provider: one model name served by two providers is one row
  const buckets = sumBy(rows, (r) => `${r.start}\u0000${r.stage}\u0000${r.model}`, (r) => ({
    start: r.start,
    stage: r.stage,
    model: r.model
  })).sort((a, b) => compareText(a.start, b.start) || compareText(a.stage, b.stage) || compareText(a.model, b.model))
  return { totals, by_stage, by_model, buckets }
}

type EdgeRecord = Omit<AdminGraphEdge, "artifact_ids">

interface ArtifactRecord extends Omit<AdminGraphArtifact, "text_truncated"> {
  readonly text_truncated: number | boolean
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const inferenceUsage = (query: UsageQuery) =>
    usageStatement(sql, query).pipe(
      Effect.map((rows) => summarizeUsage(rows.map(decodeUsage))),
      Effect.orDie
    )

  /**
   * The page is cut first, in a derived table, so that the counts (correlated subqueries over the
   * (dataset_id, id) indexes) run for its rows only: SQLite computes a sorted query's columns
   * for every row before the sort.
   */
  const datasets = (page: { readonly limit: number; readonly offset: number }) =>
    Effect.all({
      datasets: sql<AdminDataset>`SELECT d.id, d.user_id, d.name, d.created_at, d.deleted_at,
          (SELECT COUNT(*) FROM gb_artifacts a WHERE a.dataset_id = d.id) AS artifacts,
          (SELECT COUNT(*) FROM gb_entities n WHERE n.dataset_id = d.id) AS entities,
          (SELECT COUNT(*) FROM gb_edges e WHERE e.dataset_id = d.id) AS edges
        FROM (
          SELECT id, user_id, name, created_at, deleted_at FROM gb_datasets
          ORDER BY created_at DESC, id DESC
          LIMIT ${page.limit} OFFSET ${page.offset}
        ) d
        ORDER BY d.created_at DESC, d.id DESC`.pipe(
        Effect.map((rows) =>
          rows.map((row): AdminDataset => ({
            ...row,
            artifacts: Number(row.artifacts),
            entities: Number(row.entities),
            edges: Number(row.edges)
          }))
        )
      ),
      total: sql<{ total: number }>`SELECT COUNT(*) AS total FROM gb_datasets`.pipe(
        Effect.map((rows) => Number(rows[0]?.total ?? 0))
      )
    }).pipe(Effect.orDie)

  const ENTITY_COLUMNS = sql.literal("id, name, type, description, created_at")

  const entitiesByIds = (ids: ReadonlyArray<number>) =>
    Effect.forEach(
      chunksOf(ids),
      (chunk) => sql<AdminGraphEntity>`SELECT ${ENTITY_COLUMNS} FROM gb_entities WHERE id IN ${sql.in(chunk)}`
    ).pipe(
      Effect.map((chunks) => chunks.flat())
    )

  const edgeLinks = (edgeIds: ReadonlyArray<number>) =>
    Effect.forEach(
      chunksOf(edgeIds),
      (chunk) =>
        sql<{ edge_id: number; artifact_id: number }>`SELECT edge_id, artifact_id FROM gb_edge_artifacts
        WHERE edge_id IN ${sql.in(chunk)} ORDER BY edge_id, artifact_id`
    ).pipe(
      Effect.map((chunks) => {
        const byEdge = new Map<number, Array<number>>()
        for (const { artifact_id, edge_id } of chunks.flat()) {
          const list = byEdge.get(edge_id)
          if (list === undefined) byEdge.set(edge_id, [artifact_id])
          else list.push(artifact_id)
        }
        return byEdge
      })
    )

  const artifactsByIds = (ids: ReadonlyArray<number>) =>
    Effect.forEach(
      chunksOf(ids),
      (chunk) =>
        sql<ArtifactRecord>`SELECT id, kind, substr(text, 1, ${sql.literal(String(ARTIFACT_TEXT_LIMIT))}) AS text,
          CASE WHEN length(text) > ${sql.literal(String(ARTIFACT_TEXT_LIMIT))} THEN 1 ELSE 0 END AS text_truncated,
          session_id, valid_at, created_at
        FROM gb_artifacts WHERE id IN ${sql.in(chunk)}`
    ).pipe(
      Effect.map((chunks) =>
        chunks
          .flat()
          .map((row): AdminGraphArtifact => ({ ...row, text_truncated: Number(row.text_truncated) === 1 }))
          .sort((a, b) => a.id - b.id)
      )
    )

  const graph = (datasetId: number, limit: number) =>
    Effect.gen(function*() {
      const found = yield* sql<{ id: number; user_id: string; name: string }>`SELECT id, user_id, name
        FROM gb_datasets WHERE id = ${datasetId}`
      const dataset = found[0]
      if (dataset === undefined) return Option.none()
      const cap = Math.max(0, Math.floor(limit))

      // one more than asked tells whether there are more
      const newest = yield* sql<EdgeRecord>`SELECT id, source_id, target_id, relation, description,
          valid_at, invalid_at, created_at, expired_at
        FROM gb_edges WHERE dataset_id = ${datasetId}
        ORDER BY id DESC LIMIT ${cap + 1}`
      const edgeRows = newest.slice(0, cap)
      const links = yield* edgeLinks(edgeRows.map((e) => e.id))
      const edges = edgeRows.map((e): AdminGraphEdge => ({ ...e, artifact_ids: links.get(e.id) ?? [] }))

      // every endpoint is returned, even past the limit, so that no returned edge dangles
      const endpointIds = unique(edges.flatMap((e) => [e.source_id, e.target_id])).sort((a, b) => b - a)
      const endpoints = yield* entitiesByIds(endpointIds)
      const byId = new Map(endpoints.map((n) => [n.id, n]))
      const entities = endpointIds.flatMap((id) => byId.get(id) ?? [])
      const room = cap - entities.length
      if (room > 0) {
        // the `cap` newest hold at least `room` entities that are not endpoints, if there are that many
        const newestEntities = yield* sql<AdminGraphEntity>`SELECT ${ENTITY_COLUMNS} FROM gb_entities
          WHERE dataset_id = ${datasetId} ORDER BY id DESC LIMIT ${cap}`
        entities.push(...newestEntities.filter((n) => !byId.has(n.id)).slice(0, room))
      }

      const artifacts = yield* artifactsByIds(unique(edges.flatMap((e) => e.artifact_ids)))
      return Option.some({ dataset, truncated: newest.length > cap, entities, edges, artifacts })
    }).pipe(Effect.orDie)

  return AdminRepo.of({ inferenceUsage, datasets, graph })
})

export const AdminRepoLive: Layer.Layer<AdminRepo, never, SqlClient.SqlClient> = Layer.effect(AdminRepo, make)
