/**
 * The stage rows of a run's log (gb_remember_run_stages), held in memory between writes.
 *
 * Stage ends and inference ids are held and written with the run's next write (the next stage
 * start, progress, or the run's finish; a read of the run writes them first): a remember's
 * stages then cost one statement per stage start instead of one per event, while a stage that
 * is running is always in the table (starts are written at once), so a call in progress can be
 * watched and a crash still leaves its stage `started`.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { RunStageRow } from "../../../../src/domain/Rows.js"
import type { StageStatus } from "../../../../src/domain/Stages.js"
import type { StageFinish } from "../../../../src/services/RunLogRepo.js"
import { encodeJson } from "../internal.js"

/** One stage row's events not written yet, merged in the order they came. */
interface PendingStage {
  /** null: only inference ids to append (the row's status is left alone) */
  status: StageStatus | null
  started_at: string | null
  finished_at: string | null
  duration_ms: number | null
  error: string | null
  /** encoded; with `started`, null keeps the stored detail */
  detail: string | null
  ids: Array<number>
}

/** What a run has not written yet; `lock` keeps one run's writes in the order they were made. */
interface RunBuffer {
  readonly stages: Map<string, PendingStage>
  readonly lock: Effect.Semaphore
}

/** Appends the stored array and `excluded`'s, both compact JSON arrays (see addInference). */
const APPEND_IDS = `CASE
        WHEN excluded.inference_ids = '[]' THEN gb_remember_run_stages.inference_ids
        WHEN gb_remember_run_stages.inference_ids = '[]' THEN excluded.inference_ids
        ELSE substr(gb_remember_run_stages.inference_ids, 1, length(gb_remember_run_stages.inference_ids) - 1)
          || ',' || substr(excluded.inference_ids, 2)
      END`

export const makeStageLog = (sql: SqlClient.SqlClient) => {
  const buffers = new Map<number, RunBuffer>()
  const bufferOf = (runId: number) => {
    let buffer = buffers.get(runId)
    if (buffer === undefined) {
      buffer = { stages: new Map(), lock: Effect.unsafeMakeSemaphore(1) }
      buffers.set(runId, buffer)
    }
    return buffer
  }
  const pendingOf = (runId: number, stage: string): PendingStage => {
    const stages = bufferOf(runId).stages
    let pending = stages.get(stage)
    if (pending === undefined) {
      pending = {
        status: null,
        started_at: null,
        finished_at: null,
        duration_ms: null,
        error: null,
        detail: null,
        ids: []
      }
      stages.set(stage, pending)
    }
    return pending
  }

  /** Full rows in one statement; rows that only add inference ids leave the status alone. */
  const writeStages = (runId: number, rows: ReadonlyArray<readonly [string, PendingStage]>) => {
    const full = rows.filter(([, p]) => p.status !== null)
    const appends = rows.filter(([, p]) => p.status === null && p.ids.length > 0)
    return Effect.zipRight(
      full.length === 0 ? Effect.void : sql`INSERT INTO gb_remember_run_stages ${
        sql.insert(full.map(([stage, p]) => ({
          run_id: runId,
          stage,
          status: p.status!,
          started_at: p.started_at,
          finished_at: p.finished_at,
          duration_ms: p.duration_ms,
          error: p.error,
          detail: p.detail,
          inference_ids: JSON.stringify(p.ids)
        })))
      }
        ON CONFLICT (run_id, stage) DO UPDATE SET
          status = excluded.status,
          started_at = COALESCE(gb_remember_run_stages.started_at, excluded.started_at),
          finished_at = excluded.finished_at,
          duration_ms = excluded.duration_ms,
          error = excluded.error,
          detail = CASE WHEN excluded.status = 'started' THEN COALESCE(excluded.detail, gb_remember_run_stages.detail)
            ELSE excluded.detail END,
          inference_ids = ${sql.literal(APPEND_IDS)}`,
      Effect.forEach(appends, ([stage, p]) => appendIds(runId, stage, p.ids), { discard: true })
    )
  }

  /**
   * Writes what the run holds. Outside a transaction under the run's lock, so a write taken
   * later cannot land first (PostgreSQL runs them on different connections); inside one (on
   * SQLite the lock's holder could be waiting for this very connection) directly.
   */
  const flush = (runId: number): Effect.Effect<void> =>
    Effect.suspend(() => {
      const buffer = buffers.get(runId)
      if (buffer === undefined) return Effect.void
      // taken and written as one: an interruption must not drop what was taken
      const write = Effect.uninterruptible(Effect.suspend(() => {
        if (buffer.stages.size === 0) return Effect.void
        const rows = [...buffer.stages]
        buffer.stages.clear()
        return writeStages(runId, rows)
      }))
      return Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (tx) =>
        Option.isSome(tx) ? write : buffer.lock.withPermits(1)(write))
    }).pipe(Effect.orDie)

  const flushAll = Effect.suspend(() => Effect.forEach([...buffers.keys()], flush, { discard: true }))

  // a stage that runs again (once per chunk) keeps its first start, its inferences and progress;
  // the start is written at once, with what the run held
  const stageStarted = (runId: number, stage: string, at: string) =>
    Effect.suspend(() => {
      const p = pendingOf(runId, stage)
      p.status = "started"
      p.started_at ??= at
      p.finished_at = null
      p.duration_ms = null
      p.error = null
      return flush(runId)
    })

  const stageFinished = (runId: number, stage: string, finish: StageFinish) =>
    Effect.suspend(() => {
      // "keep the stored detail" has no held form: written now
      if (finish.detail === undefined) return Effect.zipRight(flush(runId), writeFinished(runId, stage, finish))
      const p = pendingOf(runId, stage)
      p.status = finish.status
      p.finished_at = finish.finished_at
      p.duration_ms = Math.round(finish.duration_ms)
      p.error = finish.error
      p.detail = encodeJson(finish.detail)
      return Effect.void
    })

  // upserts, so a stage reported without its start still shows
  const writeFinished = (runId: number, stage: string, finish: StageFinish) =>
    sql`INSERT INTO gb_remember_run_stages ${
      sql.insert({
        run_id: runId,
        stage,
        status: finish.status,
        finished_at: finish.finished_at,
        duration_ms: Math.round(finish.duration_ms),
        error: finish.error
      })
    }
      ON CONFLICT (run_id, stage) DO UPDATE SET
        status = excluded.status,
        finished_at = excluded.finished_at,
        duration_ms = excluded.duration_ms,
        error = excluded.error`.pipe(Effect.asVoid, Effect.orDie)

  const addInference = (runId: number, stage: string, inferenceId: number) =>
    Effect.sync(() => {
      pendingOf(runId, stage).ids.push(inferenceId)
    })

  /**
   * Appends in one statement, so concurrent chunks of one run cannot lose each other's ids.
   * The arrays are always written here in the compact form `[1,2]`, which makes a plain text
   * splice correct on both dialects without their differing JSON functions.
   */
  const appendIds = (runId: number, stage: string, ids: ReadonlyArray<number>) =>
    sql`INSERT INTO gb_remember_run_stages ${
      sql.insert({
        run_id: runId,
        stage,
        status: "started",
        inference_ids: JSON.stringify(ids)
      })
    }
      ON CONFLICT (run_id, stage) DO UPDATE SET inference_ids = ${sql.literal(APPEND_IDS)}`.pipe(Effect.asVoid)

  const setProgress = (runId: number, stage: string, progress: NonNullable<RunStageRow["progress"]>) =>
    Effect.zipRight(
      flush(runId),
      sql`INSERT INTO gb_remember_run_stages ${
        sql.insert({
          run_id: runId,
          stage,
          status: "started",
          progress: encodeJson(progress)
        })
      }
      ON CONFLICT (run_id, stage) DO UPDATE SET progress = excluded.progress`.pipe(Effect.asVoid, Effect.orDie)
    )

  /** The run is done: what it held is written, and its buffer goes. */
  const close = (runId: number) => Effect.ensuring(flush(runId), Effect.sync(() => buffers.delete(runId)))

  /** The run is gone (a forget removed it): what it held is dropped unwritten. */
  const drop = (runId: number) => Effect.sync(() => buffers.delete(runId))

  return { flush, flushAll, close, drop, stageStarted, stageFinished, addInference, setProgress }
}
