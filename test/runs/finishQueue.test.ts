/**
 * Issue 39's run-log statements on both dialects: a run that ends takes its request out of the
 * queue with its status (migration 0022's trigger), whichever way it ends, while a run queued
 * again keeps it; `committed` inside a store transaction deletes the request and proves the run
 * is still there, with or without a request left; `take` reads the request only when asked. And
 * migration 0022 removes the requests older releases left behind by ended runs.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Cause, Effect, Exit, type Layer, Option } from "effect"
import { describe, expect, it as vit } from "vitest"
import { PgLive, SqliteLive, type Storage } from "../../layers/sql/index.js"
import { migrations } from "../../layers/sql/migrations/index.js"
import { Database } from "../../src/services/Database.js"
import { RunLogRepo, RunRemoved } from "../../src/services/RunLogRepo.js"
import { tempDir } from "../support/cli.js"
import { forEachDialect, freshPgUrl, pgSkipReason } from "../support/databases.js"
import { pgMigratedTo, sqliteMigratedTo } from "../support/migrated.js"

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString()
const REQUEST = JSON.stringify({ user_id: "alice", text: "Ada knows Bob." })

const enqueue = Effect.flatMap(RunLogRepo, (runLog) =>
  Effect.map(
    runLog.enqueue(
      { pipeline: "text", user_id: "alice", dataset: "main", params: {}, queued_at: t(0), instance_id: "i" },
      REQUEST,
      undefined
    ),
    (e) => {
      if (e._tag !== "Created") throw new Error("expected a new run")
      return e.run.id
    }
  ))

const queued = (runId: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ run_id: number }>`SELECT run_id FROM gb_remember_queue WHERE run_id = ${runId}`.pipe(
        Effect.map((rows) => rows.length),
        Effect.orDie
      )
  )

const end = (status: "succeeded" | "failed") => ({
  status,
  error: status === "failed" ? "boom" : null,
  dataset_id: null,
  artifact_id: null,
  finished_at: t(2),
  duration_ms: 1
})

forEachDialect((_dialect, makeLayer) => {
  it.effect("an ended run's request leaves the queue with its status; a run queued again keeps it", () =>
    Effect.gen(function*() {
      const runLog = yield* RunLogRepo
      const sql = yield* SqlClient.SqlClient
      const [ok, failed, requeued, cancelled] = yield* Effect.all([enqueue, enqueue, enqueue, enqueue])
      for (const id of [ok!, failed!, requeued!, cancelled!]) expect(yield* queued(id)).toBe(1)
      yield* runLog.take(ok!, "i", t(1))
      yield* runLog.finish(ok!, end("succeeded"))
      yield* runLog.take(failed!, "i", t(1))
      yield* runLog.finish(failed!, end("failed"))
      yield* runLog.take(requeued!, "i", t(1))
      expect(yield* runLog.requeue(requeued!, "interrupted", t(2))).toBe(true)
      yield* runLog.cancel(cancelled!, "alice", t(1))
      expect(yield* queued(ok!)).toBe(0)
      expect(yield* queued(failed!)).toBe(0)
      expect(yield* queued(cancelled!)).toBe(0)
      expect(yield* queued(requeued!)).toBe(1)
      // an update that leaves the status as it is touches nothing
      yield* sql`UPDATE gb_remember_runs SET status = 'queued' WHERE id = ${requeued!}`.pipe(Effect.orDie)
      expect(yield* queued(requeued!)).toBe(1)
      expect(Option.getOrThrow(yield* runLog.get(failed!))).toMatchObject({ status: "failed", error: "boom" })
    }).pipe(Effect.provide(makeLayer())))

  it.effect("take reads the request unless told not to; committed proves the run, with or without a request", () =>
    Effect.gen(function*() {
      const runLog = yield* RunLogRepo
      const database = yield* Database
      const sql = yield* SqlClient.SqlClient
      const [a, b, c] = yield* Effect.all([enqueue, enqueue, enqueue])
      expect(yield* runLog.take(a!, "i", t(1))).toEqual(Option.some({ request: REQUEST, attempts: 1 }))
      expect(yield* runLog.take(b!, "i", t(1), false)).toEqual(Option.some({ request: null, attempts: 1 }))
      expect(yield* runLog.take(b!, "i", t(1), false)).toEqual(Option.none())
      // a request in the queue: deleted in the transaction
      yield* database.withTransaction(runLog.committed(a!))
      expect(yield* queued(a!)).toBe(0)
      // none left (a chunked run's last chunk after a restart): the run row is what counts
      yield* database.withTransaction(runLog.committed(a!))
      // a run a forget removed dies, and the transaction's work rolls back with it
      yield* sql`DELETE FROM gb_remember_runs WHERE id = ${c!}`.pipe(Effect.orDie)
      const exit = yield* Effect.exit(database.withTransaction(runLog.committed(c!)))
      expect(Exit.isFailure(exit) && Cause.dieOption(exit.cause).pipe(Option.exists((d) => d instanceof RunRemoved)))
        .toBe(true)
    }).pipe(Effect.provide(makeLayer())))
})

const before22 = Object.fromEntries(Object.entries(migrations).filter(([key]) => key < "0022"))

/** An older release's runs: one ended with its request left behind, one queued. */
const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`INSERT INTO gb_remember_runs (id, pipeline, user_id, dataset, status, params, queued_at,
    instance_id) VALUES (1, 'text', 'alice', 'main', 'failed', '{}', '${t(0)}', 'i'),
    (2, 'text', 'alice', 'main', 'queued', '{}', '${t(0)}', 'i')`)
  yield* sql.unsafe(`INSERT INTO gb_remember_queue (run_id, request) VALUES (1, '{}'), (2, '{}')`)
})

const check = (before: Layer.Layer<SqlClient.SqlClient>, after: Layer.Layer<Storage, unknown>) =>
  Effect.gen(function*() {
    yield* seed.pipe(Effect.provide(before))
    yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ run_id: number }>`SELECT run_id FROM gb_remember_queue ORDER BY run_id`
      expect(rows.map((r) => Number(r.run_id))).toEqual([2])
    }).pipe(Effect.provide(after))
  }).pipe(Effect.orDie)

describe("migration 0022: ended runs leave the queue", () => {
  vit("SQLite: an ended run's leftover request is removed, a queued run's kept", async () => {
    const dir = tempDir("gligabao-0022-")
    const file = `${dir.path}/old.db`
    const before = sqliteMigratedTo(file, before22)
    await Effect.runPromise(check(before, SqliteLive(file)))
    dir.remove()
  })

  vit.skipIf(pgSkipReason() !== null)(
    "PostgreSQL: an ended run's leftover request is removed, a queued run's kept",
    async () => {
      await Effect.runPromise(Effect.gen(function*() {
        const url = yield* freshPgUrl
        const before = pgMigratedTo(url, before22)
        yield* check(before, PgLive(url))
      }))
    }
  )
})
