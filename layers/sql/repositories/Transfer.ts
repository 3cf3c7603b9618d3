/**
 * TransferRepo on SQL: the tables of transfer/tables.ts read in pages by key (keyset paging,
 * each page an index range), and rows written with ids the load takes beforehand (so no row's
 * new id depends on the order a multi-row RETURNING comes back in): on PostgreSQL from the
 * table's sequence, on SQLite above the highest id the table has had (its single writer holds
 * the transaction). Full text follows the rows by itself (SQLite's queue is applied before the
 * load's commit; PostgreSQL's column is generated); gb_entity_words and gb_artifact_metadata,
 * derived too, are written from the rows.
 */
import { SqlClient, SqlError } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Layer } from "effect"
import { metadataRows } from "../../../src/domain/Metadata.js"
import {
  type Cursor,
  type ExistingGroup,
  type GroupKey,
  type IdKind,
  type PendingVector,
  type TableKind,
  TransferRepo,
  type TransferRows,
  type Within
} from "../../../src/services/TransferRepo.js"
import { makeEntityWords } from "./entityWords.js"
import { chunksOf, decodeJson, encodeJson } from "./internal.js"
import { ID_TABLES, type Scope, TABLES, type TableSpec } from "./transfer/tables.js"
import { decodeValues } from "./VectorOutbox.js"

/** the alias whose columns say which scope a row is in: the parent when the table is read through one */
const owner = (from: string | undefined) => (from !== undefined && / p JOIN /.test(from) ? "p" : "t")

const scopeOf = (within: Within): Scope => within._tag === "All" ? "all" : within._tag === "Group" ? "group" : "dataset"

/** Rows a multi-row insert writes at once: the widest table (19 columns) stays far below both dialects' limits. */
const INSERT_ROWS = 400

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })
  const words = makeEntityWords(sql)
  /** SQLite: the highest id this process has taken per table, so two allocations before an insert never overlap */
  const taken = new Map<string, number>()

  /** the rows of the scope: which rows of `t` (or its parent `p`) belong to it */
  const whereOf = (kind: TableKind, spec: TableSpec, within: Within): Fragment => {
    switch (within._tag) {
      case "All":
        return kind === "inference" ? sql`t.run_id IS NULL AND t.dataset_id IS NULL` : sql`1 = 1`
      case "Group": {
        const { dataset, user_id } = within.group
        if (kind === "dataset") return sql`t.user_id = ${user_id} AND t.name = ${dataset}`
        if (kind === "inference") {
          return sql`t.dataset_id IS NULL AND t.run_id IN (SELECT id FROM gb_remember_runs
            WHERE user_id = ${user_id} AND dataset = ${dataset})`
        }
        const alias = owner(spec.from.group)
        return sql`${sql.literal(alias)}.user_id = ${user_id} AND ${sql.literal(alias)}.dataset = ${dataset}`
      }
      case "Dataset":
        return sql`${sql.literal(owner(spec.from.dataset))}.dataset_id = ${within.datasetId}`
    }
  }

  const fieldExpr = (spec: TableSpec, field: string) => spec.select?.[field] ?? `t.${field}`

  /** rows after the cursor in key order: (k1 > c1) OR (k1 = c1 AND k2 > c2) ... */
  const afterCursor = (spec: TableSpec, after: Cursor): Fragment => {
    const clauses: Array<Fragment> = []
    for (let i = 0; i < spec.key.length; i++) {
      const equal = spec.key.slice(0, i).map((k, j) => sql`${sql.literal(fieldExpr(spec, k))} = ${after[j]!}`)
      clauses.push(sql.and([...equal, sql`${sql.literal(fieldExpr(spec, spec.key[i]!))} > ${after[i]!}`]))
    }
    const bound = spec.bounded === true ? [sql`p.id >= ${after[0]!}`] : []
    return sql.and([...bound, sql.or(clauses)])
  }

  const decodeRow = (spec: TableSpec, row: Record<string, unknown>) => {
    if (spec.json.length === 0) return row
    const out = { ...row }
    for (const column of spec.json) out[column] = decodeJson(out[column])
    return out
  }

  const page = <K extends TableKind>(kind: K, within: Within, after: Cursor | null, limit: number) =>
    Effect.gen(function*() {
      const spec = TABLES[kind]
      const from = spec.from[scopeOf(within)]
      if (from === undefined) return yield* Effect.dieMessage(`transfer: ${kind} is not read by ${within._tag}`)
      const select = spec.columns.map((c) => `${fieldExpr(spec, c)} AS ${c}`).join(", ")
      const order = spec.key.map((k) => fieldExpr(spec, k)).join(", ")
      const where = after === null
        ? whereOf(kind, spec, within)
        : sql.and([whereOf(kind, spec, within), afterCursor(spec, after)])
      const rows = yield* sql<Record<string, unknown>>`SELECT ${sql.literal(select)} FROM ${sql.literal(from)}
        WHERE ${where} ORDER BY ${sql.literal(order)} LIMIT ${limit}`
      const last = rows.at(-1)
      return {
        rows: rows.map((r) => decodeRow(spec, r)) as unknown as ReadonlyArray<TransferRows[K]>,
        next: rows.length < limit || last === undefined ? null : spec.key.map((k) => last[k] as string | number)
      }
    }).pipe(Effect.orDie, Effect.withSpan("TransferRepo.page", { attributes: { kind } }))

  const groups = (userId: string | null) =>
    (userId === null
      ? sql<GroupKey>`SELECT user_id, name AS dataset FROM gb_datasets
          UNION SELECT user_id, dataset FROM gb_remember_runs ORDER BY user_id, dataset`
      : sql<GroupKey>`SELECT user_id, name AS dataset FROM gb_datasets WHERE user_id = ${userId}
          UNION SELECT user_id, dataset FROM gb_remember_runs WHERE user_id = ${userId} ORDER BY user_id, dataset`)
      .pipe(Effect.orDie)

  const pendingVectors = (datasetId: number, afterId: number, limit: number) =>
    sql<{
      id: number
      index_name: string
      vector_id: string
      op: string
      text_or_values: string
      metadata: string | null
    }>`SELECT id, index_name, vector_id, op, text_or_values, metadata FROM gb_vector_outbox
      WHERE dataset_id = ${datasetId} AND id > ${afterId} ORDER BY id LIMIT ${limit}`.pipe(
      Effect.map((rows) =>
        rows.map((r): PendingVector => ({
          id: Number(r.id),
          index_name: r.index_name,
          vector_id: r.vector_id,
          op: r.op === "delete" ? "delete" : "upsert",
          values: r.op === "delete" ? [] : decodeValues(r.text_or_values),
          metadata: decodeJson<Record<string, string | number | boolean>>(r.metadata) ?? {}
        }))
      ),
      Effect.orDie
    )

  const existing = (group: GroupKey) =>
    Effect.all({
      datasets: sql<{ created_at: string }>`SELECT created_at FROM gb_datasets
        WHERE user_id = ${group.user_id} AND name = ${group.dataset} ORDER BY created_at, id`,
      runs: sql<{ n: number }>`SELECT COUNT(*) AS n FROM gb_remember_runs
        WHERE user_id = ${group.user_id} AND dataset = ${group.dataset}`
    }).pipe(
      Effect.map(({ datasets, runs }): ExistingGroup => ({
        datasetCreatedAt: datasets.map((d) => d.created_at),
        runs: Number(runs[0]?.n ?? 0)
      })),
      Effect.orDie
    )

  const allocate = (kind: IdKind, count: number) =>
    Effect.gen(function*() {
      if (count <= 0) return []
      const table = ID_TABLES[kind]
      if (dialect === "pg") {
        const rows = yield* sql<{ id: number }>`SELECT nextval(pg_get_serial_sequence(${table}, 'id')) AS id
          FROM generate_series(1, ${count})`
        return rows.map((r) => Number(r.id)).sort((a, b) => a - b)
      }
      const [row] = yield* sql<{ seq: number | null; top: number | null }>`SELECT
        (SELECT seq FROM sqlite_sequence WHERE name = ${table}) AS seq,
        (SELECT MAX(id) FROM ${sql(table)}) AS top`
      const last = Math.max(Number(row?.seq ?? 0), Number(row?.top ?? 0), taken.get(table) ?? 0)
      taken.set(table, last + count)
      return Array.from({ length: count }, (_, i) => last + 1 + i)
    }).pipe(Effect.orDie)

  const encodeRow = (spec: TableSpec, row: Record<string, unknown>) => {
    const out: Record<string, unknown> = {}
    for (const column of spec.columns) {
      const value = row[column]
      out[column] = spec.json.includes(column) ? encodeJson(value) : value ?? null
    }
    return out
  }

  const insert = <K extends Exclude<TableKind, "model" | "run_result">>(
    kind: K,
    rows: ReadonlyArray<TransferRows[K]>
  ) =>
    Effect.gen(function*() {
      const spec = TABLES[kind]
      let written = 0
      for (const chunk of chunksOf(rows, INSERT_ROWS)) {
        const values = chunk.map((r) => encodeRow(spec, r as unknown as Record<string, unknown>))
        if (kind === "idempotency_key") {
          // a key the target has for this user already stays the target's
          const kept = yield* sql<{ run_id: number }>`INSERT INTO ${sql(spec.table)} ${sql.insert(values)}
            ON CONFLICT DO NOTHING RETURNING run_id`
          written += kept.length
        } else {
          yield* sql`INSERT INTO ${sql(spec.table)} ${sql.insert(values)}`
          written += chunk.length
        }
        // derived: the caller's metadata of each artifact, key by key, for the read filters
        if (kind === "artifact") {
          const keys = (chunk as ReadonlyArray<TransferRows["artifact"]>).flatMap((a) =>
            metadataRows(a.metadata as Record<string, unknown> | null).map((k) => ({
              artifact_id: a.id,
              dataset_id: a.dataset_id,
              ...k
            }))
          )
          for (const rows of chunksOf(keys)) yield* sql`INSERT INTO gb_artifact_metadata ${sql.insert(rows)}`
        }
      }
      return written
    }).pipe(Effect.orDie, Effect.withSpan("TransferRepo.insert", { attributes: { kind, rows: rows.length } }))

  const upsertModel = (model: TransferRows["model"]) =>
    Effect.gen(function*() {
      yield* sql`INSERT INTO gb_models ${
        sql.insert({ provider: model.provider, name: model.name, created_at: model.created_at })
      } ON CONFLICT (provider, name) DO NOTHING`
      const [row] = yield* sql<{ id: number }>`SELECT id FROM gb_models
        WHERE provider = ${model.provider} AND name = ${model.name}`
      return Number(row!.id)
    }).pipe(Effect.orDie)

  const setRunResults = (results: ReadonlyArray<TransferRows["run_result"]>) =>
    Effect.forEach(
      results,
      (r) =>
        sql`UPDATE gb_remember_runs SET artifact_id = ${r.artifact_id}, response = ${encodeJson(r.response)}
          WHERE id = ${r.run_id}`,
      { discard: true }
    ).pipe(Effect.orDie)

  const rebuildEntityWords = (datasetId: number) =>
    Effect.gen(function*() {
      let after = 0
      for (;;) {
        const rows = yield* sql<{ id: number }>`SELECT id FROM gb_entities
          WHERE dataset_id = ${datasetId} AND id > ${after} ORDER BY id LIMIT 500`
        if (rows.length === 0) return
        yield* words.rebuild(rows.map((r) => Number(r.id)))
        after = Number(rows.at(-1)!.id)
      }
    }).pipe(Effect.orDie)

  const hasInference = (row: TransferRows["inference"]) =>
    sql<{ one: number }>`SELECT 1 AS one FROM gb_inferences WHERE started_at = ${row.started_at}
      AND stage = ${row.stage} AND provider = ${row.provider} AND model = ${row.model} AND type = ${row.type}
      AND input_tokens = ${row.input_tokens} AND output_tokens = ${row.output_tokens}
      AND latency_ms = ${row.latency_ms} AND run_id IS NULL AND dataset_id IS NULL LIMIT 1`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  // PostgreSQL: every page of the dump sees the same instant (REPEATABLE READ takes its snapshot
  // at the first statement); SQLite: a read transaction is a snapshot in WAL mode
  const snapshot = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    sql.withTransaction(
      Effect.zipRight(
        dialect === "pg"
          ? Effect.orDie(sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`)
          : Effect.void,
        effect
      )
    ).pipe(Effect.catchIf((e): e is never => e instanceof SqlError.SqlError, (e) => Effect.die(e))) as Effect.Effect<
      A,
      E,
      R
    >

  return TransferRepo.of({
    dialect,
    snapshot,
    groups,
    page,
    pendingVectors,
    existing,
    allocate,
    insert,
    upsertModel,
    setRunResults,
    rebuildEntityWords,
    hasInference
  })
})

export const TransferRepoLive: Layer.Layer<TransferRepo, never, SqlClient.SqlClient> = Layer.effect(
  TransferRepo,
  make
)
