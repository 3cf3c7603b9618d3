/**
 * RunLogRepo on SQL: gb_remember_runs, the queue and Idempotency-Keys, one
 * gb_remember_run_stages row per stage that started (runLog/stages.ts holds their events between
 * writes), and gb_instances (process heartbeats) to tell a dead process's runs from a live one's.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either, Layer, Option } from "effect"
import type { RunRow, RunStageRow, RunWithStages } from "../../../src/domain/Rows.js"
import { IMAGE_STAGES, TEXT_STAGES } from "../../../src/domain/Stages.js"
import {
  type Enqueued,
  type IdempotencyClaim,
  type NewRun,
  type RecoveredRuns,
  type RunCounts,
  type RunFilter,
  type RunFinish,
  RunLogRepo,
  RunRemoved
} from "../../../src/services/RunLogRepo.js"
import { chunksOf, decodeJson, encodeJson, unique } from "./internal.js"
import { makeCancels } from "./runLog/cancel.js"
import { makeStageLog } from "./runLog/stages.js"

const RUN_COLUMNS = `id, pipeline, user_id, dataset, dataset_id, artifact_id, status, error, params, queued_at,
  instance_id, started_at, finished_at, duration_ms, attempts, response, error_tag`
const STAGE_COLUMNS =
  "run_id, stage, status, started_at, finished_at, duration_ms, error, inference_ids, progress, detail"

type RunRecord = Omit<RunRow, "params" | "response"> & { readonly params: string; readonly response: string | null }
type StageRecord = Omit<RunStageRow, "inference_ids" | "progress" | "detail"> & {
  readonly run_id: number
  readonly inference_ids: string
  readonly progress: string | null
  readonly detail: string | null
}

const decodeRun = ({ attempts, params, response, ...row }: RunRecord): RunRow => ({
  ...row,
  attempts: Number(attempts),
  params: decodeJson<Record<string, unknown>>(params) ?? {},
  response: decodeJson<unknown>(response)
})

/** A batch item's key names another request: the whole batch is rolled back. */
class OtherRequest {
  readonly _tag = "OtherRequest"
  constructor(readonly index: number) {}
}

/** A live key of the user names a run already: the new submission's writes are rolled back. */
class KeyTaken {
  readonly _tag = "KeyTaken"
}

const decodeStage = ({ detail, inference_ids, progress, run_id: _, ...row }: StageRecord): RunStageRow => ({
  ...row,
  inference_ids: decodeJson<Array<number>>(inference_ids) ?? [],
  progress: decodeJson<NonNullable<RunStageRow["progress"]>>(progress),
  detail: decodeJson<Record<string, unknown>>(detail)
})

/** stages in pipeline order (spec: Run log); a name outside the lists sorts last */
const PIPELINE_ORDER: ReadonlyArray<string> = [...TEXT_STAGES, ...IMAGE_STAGES]
const stageRank = (stage: string) => {
  const rank = PIPELINE_ORDER.indexOf(stage)
  return rank === -1 ? PIPELINE_ORDER.length : rank
}
const byPipelineOrder = (a: RunStageRow, b: RunStageRow) =>
  stageRank(a.stage) - stageRank(b.stage) || (a.stage < b.stage ? -1 : a.stage > b.stage ? 1 : 0)

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const { addInference, close, drop, flush, flushAll, setProgress, stageFinished, stageStarted } = makeStageLog(sql)
  const { cancel, cancelQueued, cancelledAmong } = makeCancels(
    sql,
    (runId) =>
      sql<RunRecord>`SELECT ${sql.literal(RUN_COLUMNS)} FROM gb_remember_runs WHERE id = ${runId}`.pipe(
        Effect.map((rows) => rows[0] === undefined ? undefined : decodeRun(rows[0]))
      )
  )

  const create = (run: NewRun) =>
    sql<RunRecord>`INSERT INTO gb_remember_runs ${
      sql.insert({
        pipeline: run.pipeline,
        user_id: run.user_id,
        dataset: run.dataset,
        status: "started",
        params: encodeJson(run.params) ?? "{}",
        queued_at: run.queued_at,
        instance_id: run.instance_id
      })
    } RETURNING ${sql.literal(RUN_COLUMNS)}`.pipe(
      Effect.map((rows) => decodeRun(rows[0]!)),
      Effect.orDie
    )

  const enqueue = (run: NewRun, request: string, idempotency: IdempotencyClaim | undefined) =>
    Effect.gen(function*() {
      const written = sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<RunRecord>`INSERT INTO gb_remember_runs ${
          sql.insert({
            pipeline: run.pipeline,
            user_id: run.user_id,
            dataset: run.dataset,
            status: "queued",
            params: encodeJson(run.params) ?? "{}",
            queued_at: run.queued_at,
            instance_id: run.instance_id
          })
        } RETURNING ${sql.literal(RUN_COLUMNS)}`
        const created = decodeRun(rows[0]!)
        yield* sql`INSERT INTO gb_remember_queue ${sql.insert({ run_id: created.id, request })}`
        if (idempotency !== undefined) {
          yield* sql`DELETE FROM gb_remember_idempotency WHERE user_id = ${run.user_id}
            AND idempotency_key = ${idempotency.key} AND created_at < ${idempotency.expiredBefore}`
          const claimed = yield* sql`INSERT INTO gb_remember_idempotency ${
            sql.insert({
              user_id: run.user_id,
              idempotency_key: idempotency.key,
              request_hash: idempotency.hash,
              run_id: created.id,
              created_at: run.queued_at
            })
          } ON CONFLICT (user_id, idempotency_key) DO NOTHING RETURNING run_id`
          if (claimed.length === 0) return yield* Effect.fail(new KeyTaken())
        }
        return { _tag: "Created", run: created } satisfies Enqueued
      }))
      return yield* written.pipe(
        Effect.catchTag("KeyTaken", () =>
          sql<{ run_id: number; request_hash: string }>`SELECT run_id, request_hash FROM gb_remember_idempotency
            WHERE user_id = ${run.user_id} AND idempotency_key = ${idempotency!.key}`.pipe(
            Effect.map((rows): Enqueued => ({
              _tag: "Existing",
              runId: Number(rows[0]!.run_id),
              sameRequest: rows[0]!.request_hash === idempotency!.hash
            }))
          ))
      )
    }).pipe(Effect.orDie)

  /** One transaction (each run's own is a savepoint in it): a key naming another request rolls all back. */
  const enqueueMany = (
    runs: ReadonlyArray<
      { readonly run: NewRun; readonly request: string; readonly idempotency: IdempotencyClaim | undefined }
    >
  ) =>
    sql.withTransaction(
      Effect.forEach(runs, ({ idempotency, request, run }, index) =>
        Effect.flatMap(
          enqueue(run, request, idempotency),
          (enqueued) =>
            enqueued._tag === "Existing" && !enqueued.sameRequest
              ? Effect.fail(new OtherRequest(index))
              : Effect.succeed(enqueued)
        ))
    ).pipe(
      Effect.map((all) => Either.right<ReadonlyArray<Enqueued>>(all)),
      Effect.catchTag("OtherRequest", (e) => Effect.succeed(Either.left(e.index))),
      Effect.orDie
    )

  const take = (runId: number, instanceId: string, at: string, withRequest = true) =>
    Effect.gen(function*() {
      const taken = yield* sql<{ attempts: number }>`UPDATE gb_remember_runs
        SET status = 'started', started_at = ${at}, attempts = attempts + 1, instance_id = ${instanceId}
        WHERE id = ${runId} AND status = 'queued' RETURNING attempts`
      if (taken.length === 0) return Option.none()
      if (!withRequest) return Option.some({ request: null, attempts: Number(taken[0]!.attempts) })
      const queued = yield* sql<{ request: string }>`SELECT request FROM gb_remember_queue WHERE run_id = ${runId}`
      return Option.some({ request: queued[0]?.request ?? null, attempts: Number(taken[0]!.attempts) })
    }).pipe(Effect.orDie)

  const exists = (runId: number) =>
    sql<{ id: number }>`SELECT id FROM gb_remember_runs WHERE id = ${runId}`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.tap((found) => found ? Effect.void : drop(runId)),
      Effect.orDie
    )

  /** Inside a store transaction: a run a forget removed must not store (the defect rolls it back). */
  const mustExist = (runId: number) =>
    Effect.flatMap(exists(runId), (found) => found ? Effect.void : Effect.die(new RunRemoved({ runId })))

  // the queue row references the run (ON DELETE CASCADE): one deleted here proves the run is there
  const committed = (runId: number) =>
    sql`DELETE FROM gb_remember_queue WHERE run_id = ${runId} RETURNING run_id`.pipe(
      Effect.orDie,
      Effect.flatMap((rows) => rows.length > 0 ? Effect.void : mustExist(runId))
    )

  const recoverOrphaned = (instanceId: string, staleBefore: string, maxAttempts: number, error: string, at: string) =>
    sql.withTransaction(
      Effect.gen(function*() {
        // claimed in one statement: two live processes never both take a dead one's run
        const claimed = yield* sql<{ id: number; attempts: number }>`UPDATE gb_remember_runs
          SET instance_id = ${instanceId}
          WHERE status IN ('queued', 'started') AND instance_id <> ${instanceId}
            AND instance_id NOT IN (SELECT id FROM gb_instances WHERE heartbeat_at >= ${staleBefore})
          RETURNING id, attempts`
        if (claimed.length === 0) return { requeued: [], failed: 0 } satisfies RecoveredRuns
        const ids = claimed.map((r) => Number(r.id))
        const requests = new Map<number, string>()
        for (const chunk of chunksOf(ids)) {
          const rows = yield* sql<{ run_id: number; request: string }>`SELECT run_id, request FROM gb_remember_queue
            WHERE run_id IN ${sql.in(chunk)}`
          for (const row of rows) requests.set(Number(row.run_id), row.request)
        }
        const again = claimed.filter((r) => requests.has(Number(r.id)) && Number(r.attempts) < maxAttempts)
        const againIds = new Set(again.map((r) => Number(r.id)))
        const exhausted = claimed.filter((r) => requests.has(Number(r.id)) && !againIds.has(Number(r.id)))
        const failed = ids.filter((id) => !againIds.has(id))
        // the previous attempt's stages that were running end with it
        yield* failRuns(ids, error, at)
        for (const chunk of chunksOf([...againIds])) {
          yield* sql`UPDATE gb_remember_runs SET status = 'queued', started_at = NULL WHERE id IN ${sql.in(chunk)}`
        }
        for (const run of exhausted) {
          yield* sql`UPDATE gb_remember_runs SET status = 'failed', error_tag = 'InternalFailure',
            error = ${`${error} (${Number(run.attempts)} attempts, remember.max_attempts reached)`}, finished_at = ${at}
            WHERE id = ${run.id}`
        }
        const stored = failed.filter((id) => !requests.has(id))
        for (const chunk of chunksOf(stored)) {
          yield* sql`UPDATE gb_remember_runs SET status = 'failed', error = ${error}, error_tag = 'InternalFailure',
            finished_at = ${at} WHERE id IN ${sql.in(chunk)}`
        }
        for (const chunk of chunksOf(exhausted.map((r) => Number(r.id)))) {
          yield* sql`DELETE FROM gb_remember_queue WHERE run_id IN ${sql.in(chunk)}`
        }
        return {
          requeued: [...againIds].sort((a, b) => a - b).map((id) => ({ id, request: requests.get(id)! })),
          failed: failed.length
        } satisfies RecoveredRuns
      })
    ).pipe(Effect.orDie)

  const earlierUnfinished = (userId: string, dataset: string, runId: number) =>
    sql<{ id: number }>`SELECT id FROM gb_remember_runs
      WHERE user_id = ${userId} AND dataset = ${dataset} AND id < ${runId} AND status IN ('queued', 'started')
      LIMIT 1`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

  const requeue = (runId: number, error: string, at: string) =>
    Effect.zipRight(
      close(runId),
      sql.withTransaction(Effect.gen(function*() {
        const again = yield* sql<{ id: number }>`UPDATE gb_remember_runs SET status = 'queued', started_at = NULL
          WHERE id = ${runId} AND status = 'started'
            AND EXISTS (SELECT 1 FROM gb_remember_queue WHERE run_id = ${runId})
          RETURNING id`
        if (again.length === 0) return false
        yield* failRuns([runId], error, at)
        return true
      }))
    ).pipe(Effect.orDie)

  const chunkStored = (runId: number, documentId: number, storedChunks: number) =>
    Effect.zipRight(
      sql`UPDATE gb_remember_queue SET document_id = ${documentId}, stored_chunks = ${storedChunks}
      WHERE run_id = ${runId}`.pipe(Effect.orDie),
      mustExist(runId)
    )

  const storedChunks = (runId: number) =>
    sql<{ document_id: number | null; stored_chunks: number }>`SELECT document_id, stored_chunks
      FROM gb_remember_queue WHERE run_id = ${runId}`.pipe(
      Effect.map((rows) => {
        const row = rows[0]
        return row === undefined || row.document_id === null || Number(row.stored_chunks) === 0
          ? Option.none()
          : Option.some({ documentId: Number(row.document_id), storedChunks: Number(row.stored_chunks) })
      }),
      Effect.orDie
    )

  const purgeIdempotencyKeys = (before: string) =>
    sql<{ run_id: number }>`DELETE FROM gb_remember_idempotency WHERE created_at < ${before} RETURNING run_id`.pipe(
      Effect.map((rows) => rows.length),
      Effect.orDie
    )

  const leave = (instanceId: string) =>
    sql`DELETE FROM gb_instances WHERE id = ${instanceId}`.pipe(Effect.asVoid, Effect.orDie)

  const markStarted = (runId: number, at: string) =>
    sql`UPDATE gb_remember_runs SET started_at = ${at}, status = 'started' WHERE id = ${runId}`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

  // the run's held stage events go first; then the run is done with its buffer, and its queue
  // row goes with the status (a trigger: a finished run holds no request, migration 0022).
  // A cancelled run stays cancelled: it was never taken, so nothing of it may finish it.
  const finish = (runId: number, f: RunFinish) =>
    Effect.zipRight(
      close(runId),
      sql`UPDATE gb_remember_runs SET
          status = ${f.status}, error = ${f.error}, dataset_id = ${f.dataset_id}, artifact_id = ${f.artifact_id},
          finished_at = ${f.finished_at}, duration_ms = ${Math.round(f.duration_ms)},
          response = ${encodeJson(f.response)}, error_tag = ${f.error_tag ?? null}
        WHERE id = ${runId} AND status <> 'cancelled'`.pipe(Effect.asVoid, Effect.orDie)
    )

  const stagesOf = (runIds: ReadonlyArray<number>) =>
    Effect.forEach(
      chunksOf(runIds),
      (ids) =>
        sql<StageRecord>`SELECT ${sql.literal(STAGE_COLUMNS)} FROM gb_remember_run_stages
        WHERE run_id IN ${sql.in(ids)}`
    ).pipe(
      Effect.map((chunks) => {
        const byRun = new Map<number, Array<RunStageRow>>()
        for (const record of chunks.flat()) {
          const stages = byRun.get(record.run_id) ?? []
          stages.push(decodeStage(record))
          byRun.set(record.run_id, stages)
        }
        for (const stages of byRun.values()) stages.sort(byPipelineOrder)
        return byRun
      })
    )

  const withStages = (records: ReadonlyArray<RunRecord>) =>
    stagesOf(records.map((r) => r.id)).pipe(
      Effect.map((byRun) =>
        records.map((record): RunWithStages => ({ ...decodeRun(record), stages: byRun.get(record.id) ?? [] }))
      )
    )

  const get = (runId: number) =>
    Effect.zipRight(
      flush(runId),
      sql<RunRecord>`SELECT ${sql.literal(RUN_COLUMNS)} FROM gb_remember_runs WHERE id = ${runId}`.pipe(
        Effect.flatMap(withStages),
        Effect.map((runs) => Option.fromNullable(runs[0])),
        Effect.orDie
      )
    )

  const list = (filter: RunFilter) => {
    const where = sql.and([
      ...(filter.status !== undefined ? [sql`status = ${filter.status}`] : []),
      ...(filter.dataset !== undefined ? [sql`dataset = ${filter.dataset}`] : []),
      ...(filter.user_id !== undefined ? [sql`user_id = ${filter.user_id}`] : []),
      ...(filter.before_id !== undefined ? [sql`id < ${filter.before_id}`] : [])
    ])
    return Effect.zipRight(
      flushAll,
      Effect.all({
        runs: sql<RunRecord>`SELECT ${sql.literal(RUN_COLUMNS)} FROM gb_remember_runs WHERE ${where}
        ORDER BY ${sql.literal(filter.order === "id" ? "id DESC" : "queued_at DESC, id DESC")}
        LIMIT ${filter.limit} OFFSET ${filter.offset}`.pipe(Effect.flatMap(withStages)),
        total: sql<{ total: number }>`SELECT COUNT(*) AS total FROM gb_remember_runs WHERE ${where}`.pipe(
          Effect.map((rows) => Number(rows[0]?.total ?? 0))
        )
      }).pipe(Effect.orDie)
    )
  }

  const counts = () =>
    sql<RunCounts>`SELECT COUNT(*) AS total,
        COALESCE(SUM(CASE WHEN status = 'queued' THEN 1 ELSE 0 END), 0) AS queued,
        COALESCE(SUM(CASE WHEN status = 'started' THEN 1 ELSE 0 END), 0) AS started,
        COALESCE(SUM(CASE WHEN status = 'succeeded' THEN 1 ELSE 0 END), 0) AS succeeded,
        COALESCE(SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), 0) AS failed,
        COALESCE(SUM(CASE WHEN status = 'cancelled' THEN 1 ELSE 0 END), 0) AS cancelled
      FROM gb_remember_runs`.pipe(
      Effect.map((rows) => rows[0]!),
      Effect.orDie
    )

  const heartbeat = (instanceId: string, at: string) =>
    sql`INSERT INTO gb_instances ${sql.insert({ id: instanceId, started_at: at, heartbeat_at: at })}
      ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`.pipe(Effect.asVoid, Effect.orDie)

  /** fails the runs, and their stages still running, with one error */
  const failRuns = (runIds: ReadonlyArray<number>, error: string, at: string) =>
    Effect.forEach(
      chunksOf(runIds),
      (ids) =>
        sql`UPDATE gb_remember_run_stages SET status = 'failed', error = ${error}, finished_at = ${at}
          WHERE run_id IN ${sql.in(ids)} AND status = 'started'`,
      { discard: true }
    )

  const failOrphaned = (instanceId: string, staleBefore: string, error: string, at: string) =>
    sql.withTransaction(
      Effect.gen(function*() {
        const failed = yield* sql<{ id: number }>`UPDATE gb_remember_runs
          SET status = 'failed', error = ${error}, finished_at = ${at}
          WHERE status = 'started' AND instance_id <> ${instanceId}
            AND instance_id NOT IN (SELECT id FROM gb_instances WHERE heartbeat_at >= ${staleBefore})
          RETURNING id`
        const ids = failed.map((row) => row.id)
        yield* failRuns(ids, error, at)
        return ids.length
      })
    ).pipe(Effect.orDie)

  const failQueued = (runIds: ReadonlyArray<number>, error: string, at: string) =>
    Effect.forEach(
      chunksOf(unique(runIds)),
      (ids) =>
        sql`UPDATE gb_remember_runs SET status = 'failed', error = ${error}, finished_at = ${at}
          WHERE id IN ${sql.in(ids)} AND status = 'started' AND started_at IS NULL`,
      { discard: true }
    ).pipe(Effect.orDie)

  return RunLogRepo.of({
    create,
    enqueue,
    enqueueMany,
    take,
    committed,
    exists,
    recoverOrphaned,
    earlierUnfinished,
    requeue,
    purgeIdempotencyKeys,
    chunkStored,
    storedChunks,
    leave,
    markStarted,
    stageStarted,
    stageFinished,
    addInference,
    setProgress,
    finish,
    get,
    list,
    counts,
    heartbeat,
    failOrphaned,
    failQueued,
    cancel,
    cancelQueued,
    cancelledAmong
  })
})

export const RunLogRepoLive: Layer.Layer<RunLogRepo, never, SqlClient.SqlClient> = Layer.effect(RunLogRepo, make)
