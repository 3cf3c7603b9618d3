/**
 * The run log's cancel on both dialects (issue 41, item 5): a cancel and a worker's take race in
 * the database, and exactly one wins each run; what a cancel leaves (status, queue, keys); the
 * cancel of a user's queued runs (only theirs, only queued, the started ones named); a cancelled
 * run is never finished over; and on SQLite the queued runs are found through the unfinished
 * runs' index.
 */
import { it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { expect } from "vitest"
import { SqliteLive } from "../../layers/sql/index.js"
import { cancelQueuedRuns, cancelRun } from "../../src/pipeline/cancelRuns.js"
import { type IdempotencyClaim, type NewRun, RunLogRepo } from "../../src/services/RunLogRepo.js"
import { forEachDialect } from "../support/databases.js"
import { planOf, sqlCapture } from "../support/sqlCapture.js"

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString()

const newRun = (user: string, dataset: string): NewRun => ({
  pipeline: "text",
  user_id: user,
  dataset,
  params: { kind: "knowledge" },
  queued_at: t(0),
  instance_id: "importer"
})

const key = (k: string): IdempotencyClaim => ({ key: k, hash: `hash-${k}`, expiredBefore: t(-100) })

/** Queues a run; its id. */
const enqueue = (user: string, dataset: string, k?: string) =>
  Effect.flatMap(RunLogRepo, (runLog) =>
    Effect.map(
      runLog.enqueue(
        newRun(user, dataset),
        JSON.stringify({ user_id: user, text: "x" }),
        k === undefined ? undefined : key(k)
      ),
      (e) => {
        if (e._tag !== "Created") throw new Error("expected a new run")
        return e.run.id
      }
    ))

const statusOf = (id: number) =>
  Effect.flatMap(RunLogRepo, (runLog) => Effect.map(runLog.get(id), (run) => Option.getOrThrow(run).status))

forEachDialect((dialect, makeLayer) => {
  it.live(
    "a cancel and a take of the same queued run: exactly one wins, decided in the database",
    () =>
      Effect.gen(function*() {
        const runLog = yield* RunLogRepo
        const ids = yield* Effect.forEach(Array.from({ length: 40 }, (_, i) => i), () => enqueue("alice", "main"))
        const outcomes = yield* Effect.forEach(
          ids,
          (id) => Effect.all([runLog.take(id, "worker", t(1)), runLog.cancel(id, "alice", t(1))], { concurrency: 2 }),
          {
            concurrency: 4
          }
        )
        for (const [i, [taken, cancelled]] of outcomes.entries()) {
          expect(Option.isSome(taken) !== (cancelled._tag === "Cancelled"), `run ${ids[i]}`).toBe(true)
          const status = yield* statusOf(ids[i]!)
          if (Option.isSome(taken)) {
            expect(status).toBe("started")
            expect(cancelled).toMatchObject({ _tag: "NotQueued", run: { status: "started" } })
          } else {
            expect(status).toBe("cancelled")
          }
        }
        // both outcomes happen on a real race (PostgreSQL) or in order (SQLite): either way one per run
        expect(outcomes.length).toBe(40)
      }).pipe(Effect.provide(makeLayer())),
    60_000
  )

  it.effect("a cancelled run: cancelled and finished, out of the queue, its key released; never finished over", () =>
    Effect.gen(function*() {
      const runLog = yield* RunLogRepo
      const id = yield* enqueue("alice", "main", "k1")
      expect(yield* runLog.cancel(id, "bob", t(2))).toEqual({ _tag: "Missing" })
      expect(yield* runLog.cancel(id + 1000, "alice", t(2))).toEqual({ _tag: "Missing" })
      const done = yield* runLog.cancel(id, "alice", t(2))
      expect(done).toMatchObject({
        _tag: "Cancelled",
        run: { id, status: "cancelled", finished_at: t(2), started_at: null }
      })
      expect(yield* runLog.cancelledAmong([id, id + 1000])).toEqual([id])
      // no take, and the key names nothing: the same key is a new run
      expect(Option.isNone(yield* runLog.take(id, "worker", t(3)))).toBe(true)
      const again = yield* enqueue("alice", "main", "k1")
      expect(again).not.toBe(id)
      // a finish (a worker that lost the race late) leaves it cancelled
      yield* runLog.finish(id, {
        status: "failed",
        error: "interrupted",
        dataset_id: null,
        artifact_id: null,
        finished_at: t(4),
        duration_ms: 1
      })
      expect(yield* statusOf(id)).toBe("cancelled")
      expect(yield* runLog.counts()).toMatchObject({ total: 2, queued: 1, cancelled: 1 })

      // the program: a repeat answers the run again; a started or finished run is a 409 naming it
      expect(yield* cancelRun(runLog, { id, user_id: "alice" })).toMatchObject({ id, status: "cancelled" })
      yield* runLog.take(again, "worker", t(5))
      const running = yield* Effect.flip(cancelRun(runLog, { id: again, user_id: "alice" }))
      expect(running).toMatchObject({ _tag: "Conflict", message: expect.stringContaining("is running (started)") })
      yield* runLog.finish(again, {
        status: "succeeded",
        error: null,
        dataset_id: null,
        artifact_id: null,
        finished_at: t(6),
        duration_ms: 1
      })
      const ended = yield* Effect.flip(cancelRun(runLog, { id: again, user_id: "alice" }))
      expect(ended.message).toBe(`remember run ${again} has already succeeded: only a queued run can be cancelled`)
      expect(yield* Effect.flip(cancelRun(runLog, { id, user_id: "bob" }))).toMatchObject({ _tag: "NotFound" })
    }).pipe(Effect.provide(makeLayer())))

  it.effect("the queued runs of a user (of a dataset): only theirs and only queued; the started ones named", () =>
    Effect.gen(function*() {
      const runLog = yield* RunLogRepo
      const mine = yield* Effect.forEach([1, 2, 3], (i) => enqueue("alice", "notes", `n${i}`))
      const otherDataset = yield* enqueue("alice", "main")
      const otherUser = yield* enqueue("bob", "notes")
      yield* runLog.take(mine[0]!, "worker", t(1))
      const done = yield* cancelQueuedRuns(runLog, { user_id: "alice", dataset: "notes" })
      expect(done).toEqual({ cancelled: [mine[1], mine[2]], started: [mine[0]] })
      expect(yield* statusOf(otherDataset)).toBe("queued")
      expect(yield* statusOf(otherUser)).toBe("queued")
      // the keys of the cancelled runs are free again; the started run's is not
      expect(yield* enqueue("alice", "notes", "n2")).not.toBe(mine[1])
      const repeat = yield* runLog.enqueue(newRun("alice", "notes"), "{}", key("n1"))
      expect(repeat).toMatchObject({ _tag: "Existing", runId: mine[0] })
      // without a dataset: every dataset of the user
      const all = yield* cancelQueuedRuns(runLog, { user_id: "alice" })
      expect(all.cancelled).toContain(otherDataset)
      expect(all.started).toEqual([mine[0]])
      expect(yield* statusOf(otherUser)).toBe("queued")
      expect((yield* cancelQueuedRuns(runLog, { user_id: "alice" })).cancelled).toEqual([])
    }).pipe(Effect.provide(makeLayer())))
})

const trace = sqlCapture()

it.effect("sqlite: the cancel of a user's queued runs reads the unfinished runs' index, not every run", () =>
  Effect.gen(function*() {
    const runLog = yield* RunLogRepo
    yield* enqueue("alice", "notes")
    for (const dataset of ["notes", undefined]) {
      trace.start()
      yield* runLog.cancelQueued("alice", dataset, t(1))
      const statements = trace.stop().filter((q) => /^(UPDATE|SELECT) /.test(q.trim()) && q.includes("user_id"))
      const [update, select] = statements
      expect(statements).toHaveLength(2)
      expect(yield* planOf(update!), update).toMatch(/USING (COVERING )?INDEX gb_remember_runs_unfinished/)
      // the started runs: through the same index, or the status index (the runs in flight, few by construction)
      expect(yield* planOf(select!), select).toMatch(
        /USING (COVERING )?INDEX (gb_remember_runs_unfinished|gb_remember_runs_status \(status=\?\))/
      )
      expect(yield* planOf(select!), select).not.toMatch(/SCAN/)
    }
  }).pipe(Effect.provide(SqliteLive(":memory:"))))
