/**
 * The remember manager (spec/contracts.md section 19) over a real database and a fake pipeline
 * whose runs wait for the test to release them: per-dataset serialization, the global permits,
 * the run log of queued runs, orphans of dead processes, client disconnects and shutdown.
 * On PostgreSQL the same-dataset lock is also checked across two managers (two "processes").
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Context, Deferred, type Duration, Effect, Exit, Fiber, FiberId, Layer, Option, Schedule, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect } from "vitest"
import { PgLive, SqliteLive } from "../layers/sql/index.js"
import { InternalFailure, LlmFailed } from "../src/domain/Errors.js"
import type { RememberRequest } from "../src/domain/Remember.js"
import { encodeRememberRequest } from "../src/domain/Remember.js"
import type { RunWithStages } from "../src/domain/Rows.js"
import { RememberManager, RememberManagerLive } from "../src/pipeline/RememberManager.js"
import { RunSchedulerLive } from "../src/pipeline/RunScheduler.js"
import { RememberPipeline } from "../src/services/RememberPipeline.js"
import { RunLogRepo } from "../src/services/RunLogRepo.js"
import { forEachDialect, freshPgUrl, type StorageLayer } from "./support/databases.js"

const request = (dataset: string, text = `a text for ${dataset}`): RememberRequest => ({
  user_id: "alice",
  dataset,
  text,
  kind: "knowledge",
  models: {},
  reasoning: {},
  web_search: false
})

/** A response of the contract's shape (the manager checks it); the text rides in session_id. */
const fakeOutcome = (runId: number, text: string) => {
  const at = "2025-02-01T00:00:00.000Z"
  return {
    response: {
      artifact_id: runId,
      kind: "knowledge" as const,
      valid_at: at,
      created_at: at,
      session_id: text,
      entities: [],
      edges: [],
      invalidated_edges: []
    },
    dataset_id: null,
    artifact_id: null
  }
}

/**
 * A pipeline whose run for a text starts, records `start <text>`, waits until the test
 * releases that text, records `end <text>`. It tracks how many runs are in flight at once.
 */
const makeFakePipeline = Effect.gen(function*() {
  const events: Array<string> = []
  const gates = new Map<string, Deferred.Deferred<void>>()
  const started = new Map<string, Deferred.Deferred<void>>()
  let active = 0
  let maxActive = 0
  let open = false
  const gate = (map: Map<string, Deferred.Deferred<void>>, text: string) => {
    let d = map.get(text)
    if (d === undefined) {
      d = Deferred.unsafeMake<void>(FiberId.none)
      if (open && map === gates) Deferred.unsafeDone(d, Exit.void)
      map.set(text, d)
    }
    return d
  }
  const service = RememberPipeline.of({
    run: (runId, req) =>
      Effect.gen(function*() {
        const text = req.text!
        events.push(`start ${text}`)
        active++
        maxActive = Math.max(maxActive, active)
        yield* Deferred.succeed(gate(started, text), undefined)
        yield* Deferred.await(gate(gates, text)).pipe(
          Effect.ensuring(Effect.sync(() => {
            active--
            events.push(`end ${text}`)
          }))
        )
        return fakeOutcome(runId, text)
      })
  })
  return {
    layer: Layer.succeed(RememberPipeline, service),
    events,
    maxActive: () => maxActive,
    active: () => active,
    release: (text: string) => Deferred.succeed(gate(gates, text), undefined),
    /** lets every run finish, so a failed test shuts its manager down without the grace wait */
    releaseAll: Effect.sync(() => {
      for (const d of gates.values()) Deferred.unsafeDone(d, Exit.void)
      // runs that have not reached their gate yet pass straight through
      gates.clear()
      open = true
    }),
    /** waits until the run for `text` has started (a guard timeout turns a hang into a failure) */
    awaitStart: (text: string) =>
      Deferred.await(gate(started, text)).pipe(
        Effect.timeoutFail({
          duration: "10 seconds",
          onTimeout: () => new Error(`the run for "${text}" never started`)
        }),
        Effect.orDie
      ),
    hasStarted: (text: string) => events.includes(`start ${text}`)
  }
})

type FakePipeline = Effect.Effect.Success<typeof makeFakePipeline>

/**
 * A window for a wrongly started run to show itself. It only gives a broken manager time to
 * misbehave; no assertion depends on how long anything takes.
 */
const settle = Effect.sleep("100 millis")

/**
 * Builds a manager over `storage` in a scope of its own, closed by `close` (shutdown) or with
 * the test. The storage outlives it, so the test can read the run log after shutdown.
 */
const startManager = (
  pipeline: { readonly layer: Layer.Layer<RememberPipeline>; readonly releaseAll?: Effect.Effect<void> },
  storage: Context.Context<any>,
  concurrency = 4,
  instanceId = "me",
  shutdownGrace: Duration.DurationInput = "30 seconds",
  retries: { readonly maxAttempts?: number; readonly retryDelay?: Duration.DurationInput } = {}
) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const layer = RememberManagerLive({ concurrency, instanceId, shutdownGrace, ...retries }).pipe(
      Layer.provide(pipeline.layer),
      Layer.provide(RunSchedulerLive),
      Layer.provide(Layer.succeedContext(storage))
    )
    const context = yield* Layer.buildWithScope(layer, scope)
    yield* Effect.addFinalizer(() => Effect.zipRight(pipeline.releaseAll ?? Effect.void, Scope.close(scope, Exit.void)))
    return { manager: Context.get(context, RememberManager), close: Scope.close(scope, Exit.void) }
  })

const getRun = (storage: Context.Context<any>, id: number) =>
  Effect.flatMap(RunLogRepo, (repo) => repo.get(id)).pipe(
    Effect.map(Option.getOrThrow),
    Effect.provide(storage as Context.Context<RunLogRepo>)
  ) as Effect.Effect<RunWithStages>

/** Polls until the run is no longer `queued` or `started` (its final write follows the pipeline's end). */
const awaitFinished = (storage: Context.Context<any>, id: number) =>
  getRun(storage, id).pipe(
    Effect.filterOrFail((run) => run.status !== "started" && run.status !== "queued", () => "still running"),
    Effect.retry(Schedule.spaced("10 millis")),
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`run ${id} never finished`) }),
    Effect.orDie
  )

/** Runs `body` with a fresh migrated database (its context) and a fake pipeline. */
const withStorage = <A, E>(
  makeLayer: () => StorageLayer,
  body: (storage: Context.Context<any>, fake: FakePipeline) => Effect.Effect<A, E, Scope.Scope>
) =>
  Effect.gen(function*() {
    const storage = yield* Layer.build(makeLayer())
    const fake = yield* makeFakePipeline
    return yield* body(storage, fake)
  }).pipe(Effect.scoped)

forEachDialect((dialect, makeLayer) => {
  it.live("two runs on the same dataset never overlap", () =>
    withStorage(makeLayer, (storage, fake) =>
      Effect.gen(function*() {
        const { manager } = yield* startManager(fake, storage)
        const a = yield* manager.enqueue(request("shared", "A"))
        const b = yield* manager.enqueue(request("shared", "B"))
        yield* fake.awaitStart("A")
        yield* settle
        expect(fake.hasStarted("B")).toBe(false)
        yield* fake.release("A")
        yield* fake.awaitStart("B")
        yield* fake.release("B")
        yield* a.await
        yield* b.await
        expect(fake.events).toEqual(["start A", "end A", "start B", "end B"])
        expect(fake.maxActive()).toBe(1)
      })))

  it.live("runs on different datasets overlap, up to the permit count", () =>
    withStorage(makeLayer, (storage, fake) =>
      Effect.gen(function*() {
        const { manager } = yield* startManager(fake, storage, 2)
        const runs = yield* Effect.forEach(["d1", "d2", "d3"], (d) => manager.enqueue(request(d, d)))
        // two start without any release: they overlap
        yield* Effect.sync(() => fake.active()).pipe(
          Effect.repeat({ until: (n) => n >= 2, schedule: Schedule.spaced("5 millis") }),
          Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("two runs never overlapped") }),
          Effect.orDie
        )
        yield* settle
        expect(fake.active()).toBe(2)
        const waiting = ["d1", "d2", "d3"].find((d) => !fake.hasStarted(d))!
        const first = ["d1", "d2", "d3"].find((d) => fake.hasStarted(d))!
        yield* fake.release(first)
        yield* fake.awaitStart(waiting)
        yield* Effect.forEach(["d1", "d2", "d3"], fake.release)
        yield* Effect.forEach(runs, (r) => r.await)
        expect(fake.maxActive()).toBe(2)
        expect(fake.events.indexOf(`start ${waiting}`)).toBeGreaterThan(fake.events.indexOf(`end ${first}`))
      })))

  it.live("a queued run has its run-log row before it starts", () =>
    withStorage(makeLayer, (storage, fake) =>
      Effect.gen(function*() {
        const { manager } = yield* startManager(fake, storage)
        const a = yield* manager.enqueue(request("shared", "A"))
        yield* fake.awaitStart("A")
        const b = yield* manager.enqueue(request("shared", "B"))
        const queued = yield* getRun(storage, b.runId)
        expect(queued).toMatchObject({
          status: "queued",
          started_at: null,
          finished_at: null,
          user_id: "alice",
          dataset: "shared",
          queued_at: expect.any(String)
        })
        expect(queued.params).toMatchObject({ kind: "knowledge", text_length: 1 })
        expect(JSON.stringify(queued.params)).not.toContain("\"B\"")
        expect((yield* getRun(storage, a.runId)).started_at).not.toBeNull()
        yield* fake.release("A")
        yield* fake.release("B")
        const outcome = yield* b.await
        expect(outcome).toMatchObject({ runId: b.runId, response: { session_id: "B" } })
        const done = yield* awaitFinished(storage, b.runId)
        expect(done).toMatchObject({ status: "succeeded", error: null, started_at: expect.any(String) })
      })))

  it.live("a run whose waiter is interrupted (client disconnect) still completes", () =>
    withStorage(makeLayer, (storage, fake) =>
      Effect.gen(function*() {
        const { manager } = yield* startManager(fake, storage)
        const waiter = yield* Effect.fork(manager.submit(request("main", "A")))
        yield* fake.awaitStart("A")
        yield* Fiber.interrupt(waiter)
        yield* fake.release("A")
        const run = yield* awaitFinished(storage, 1)
        expect(run.status).toBe("succeeded")
        expect(fake.events).toEqual(["start A", "end A"])
      })))

  it.live("a failing and a dying run are recorded as failed; the waiter gets a domain error", () =>
    withStorage(makeLayer, (storage) =>
      Effect.gen(function*() {
        const failing = Layer.succeed(RememberPipeline, {
          run: (_, req) =>
            req.text === "fail"
              ? Effect.fail(new InternalFailure({ message: "store failed with an internal error" }))
              : Effect.die(new Error("secret internals"))
        })
        const { manager } = yield* startManager({ layer: failing }, storage)
        const failed = yield* Effect.flip(manager.submit(request("main", "fail")))
        expect(failed).toMatchObject({ _tag: "InternalFailure", message: "store failed with an internal error" })
        const died = yield* Effect.flip(manager.submit(request("main", "die")))
        expect(died._tag).toBe("InternalFailure")
        expect(died.message).not.toContain("secret internals")
        expect(yield* awaitFinished(storage, 1)).toMatchObject({
          status: "failed",
          error: "store failed with an internal error"
        })
        expect(yield* awaitFinished(storage, 2)).toMatchObject({ status: "failed", error: expect.any(String) })
      })))

  it.live("a transient failure queues the run again until it succeeds; an unusable answer fails at once", () =>
    withStorage(makeLayer, (storage) =>
      Effect.gen(function*() {
        const tries = new Map<string, number>()
        const flaky = Layer.succeed(RememberPipeline, {
          run: (runId, req) =>
            Effect.suspend(() => {
              const text = req.text!
              const n = (tries.get(text) ?? 0) + 1
              tries.set(text, n)
              if (text === "unusable") return Effect.fail(new LlmFailed({ message: "extract_graph: not JSON" }))
              if (text === "down" || n < 3) {
                return Effect.fail(new LlmFailed({ message: `HTTP 529 (try ${n})`, status: 529, retryable: true }))
              }
              return Effect.succeed(fakeOutcome(runId, text))
            })
        })
        const { manager } = yield* startManager({ layer: flaky }, storage, 4, "me", "30 seconds", {
          maxAttempts: 3,
          retryDelay: "5 millis"
        })
        const flakyRun = yield* manager.enqueue(request("main", "flaky"))
        // the dataset's next run waits for the one being retried: the order holds
        const next = yield* manager.enqueue(request("main", "next"))
        expect((yield* flakyRun.await).response.session_id).toBe("flaky")
        yield* next.await
        expect(yield* awaitFinished(storage, flakyRun.runId)).toMatchObject({ status: "succeeded", attempts: 3 })
        expect(tries.get("flaky")).toBe(3)
        expect(
          (yield* getRun(storage, next.runId)).started_at! >= (yield* getRun(storage, flakyRun.runId)).finished_at!
        )
          .toBe(true)

        const unusable = yield* Effect.flip(manager.submit(request("main", "unusable")))
        expect(unusable.message).toBe("extract_graph: not JSON")
        expect(tries.get("unusable")).toBe(1)

        const down = yield* Effect.flip(manager.submit(request("main", "down")))
        expect(down).toMatchObject({ _tag: "LlmFailed", message: "HTTP 529 (try 3)" })
        expect(tries.get("down")).toBe(3)
        const runs = yield* Effect.forEach([3, 4], (id) => awaitFinished(storage, id))
        expect(runs.map((r) => [r.status, r.attempts])).toEqual([["failed", 1], ["failed", 3]])
        const sql = Context.get(storage as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient)
        expect(yield* sql`SELECT run_id FROM gb_remember_queue`.pipe(Effect.orDie)).toEqual([])
      })))

  it.live("at startup, runs left started by a dead process are failed as interrupted", () =>
    withStorage(makeLayer, (storage, fake) =>
      Effect.gen(function*() {
        const repo = Context.get(storage as Context.Context<RunLogRepo>, RunLogRepo)
        const now = Date.now()
        const iso = (ms: number) => new Date(ms).toISOString()
        const newRun = (instance_id: string) =>
          repo.create({
            pipeline: "text",
            user_id: "alice",
            dataset: "main",
            params: {},
            queued_at: iso(now - 60_000),
            instance_id
          })
        // a process that never beat, one that stopped beating an hour ago, and one alive now
        const vanished = yield* newRun("vanished")
        const stale = yield* newRun("stale")
        const alive = yield* newRun("alive")
        const finished = yield* newRun("stale")
        yield* repo.markStarted(stale.id, iso(now - 60_000))
        yield* repo.stageStarted(stale.id, "extract_graph", iso(now - 60_000))
        yield* repo.finish(finished.id, {
          status: "succeeded",
          error: null,
          dataset_id: null,
          artifact_id: null,
          finished_at: iso(now - 30_000),
          duration_ms: 1
        })
        yield* repo.heartbeat("stale", iso(now - 3_600_000))
        yield* repo.heartbeat("alive", iso(now))

        yield* startManager(fake, storage)

        expect(yield* getRun(storage, vanished.id)).toMatchObject({
          status: "failed",
          error: "interrupted",
          finished_at: expect.any(String)
        })
        const staleRun = yield* getRun(storage, stale.id)
        expect(staleRun).toMatchObject({ status: "failed", error: "interrupted" })
        // a stage it was in is failed too, so the run does not look half alive
        expect(staleRun.stages.find((s) => s.stage === "extract_graph")).toMatchObject({ status: "failed" })
        expect(yield* getRun(storage, alive.id)).toMatchObject({ status: "started", error: null })
        expect(yield* getRun(storage, finished.id)).toMatchObject({ status: "succeeded" })
      })))

  // Changed with the durable queue (issue 21): a queued run is no longer failed at shutdown; it
  // stays queued and the next instance on the database runs it.
  it.live("at shutdown, a queued run stays queued; the run in flight finishes; the next instance runs it", () =>
    withStorage(makeLayer, (storage, fake) =>
      Effect.gen(function*() {
        const { close, manager } = yield* startManager(fake, storage)
        const a = yield* manager.enqueue(request("shared", "A"))
        yield* fake.awaitStart("A")
        const b = yield* manager.enqueue(request("shared", "B"))
        const closing = yield* Effect.fork(close)
        yield* settle
        yield* fake.release("A")
        yield* Fiber.join(closing)
        expect(yield* getRun(storage, a.runId)).toMatchObject({ status: "succeeded", attempts: 1 })
        expect(yield* getRun(storage, b.runId)).toMatchObject({ status: "queued", started_at: null, attempts: 0 })
        expect(fake.hasStarted("B")).toBe(false)
        expect(Exit.isFailure(yield* Effect.exit(b.await))).toBe(true)
        // the next process on the database takes it over and runs it
        yield* startManager(fake, storage, 4, "next")
        yield* fake.awaitStart("B")
        yield* fake.release("B")
        expect(yield* awaitFinished(storage, b.runId)).toMatchObject({
          status: "succeeded",
          attempts: 1,
          instance_id: "next",
          response: { remember_run_id: b.runId, session_id: "B" }
        })
      })))

  it.live("at shutdown, a run still storing after the grace period is interrupted: queued again if nothing committed, else failed", () =>
    withStorage(makeLayer, (storage, fake) =>
      Effect.gen(function*() {
        const repo = Context.get(storage as Context.Context<RunLogRepo>, RunLogRepo)
        // "B" has committed its artifact (what the store transaction's hook does) and then hangs
        const stuck = Layer.succeed(RememberPipeline, {
          run: (runId, req) => req.text === "B" ? Effect.zipRight(repo.committed(runId), Effect.never) : Effect.never
        })
        const { close, manager } = yield* startManager({ layer: stuck }, storage, 4, "me", "200 millis")
        const a = yield* manager.enqueue(request("main", "A"))
        const b = yield* manager.enqueue(request("other", "B"))
        // started: the runs are in the pipeline, not queued
        for (const run of [a, b]) {
          yield* getRun(storage, run.runId).pipe(
            Effect.filterOrFail((r) => r.started_at !== null, () => "queued"),
            Effect.retry(Schedule.spaced("10 millis"))
          )
        }
        const closing = yield* Effect.fork(close)
        yield* Fiber.join(closing).pipe(
          Effect.timeoutFail({
            duration: "10 seconds",
            onTimeout: () => new Error("shutdown did not end after its grace period")
          }),
          Effect.orDie
        )
        expect(yield* getRun(storage, a.runId)).toMatchObject({ status: "queued", attempts: 1 })
        expect(yield* getRun(storage, b.runId)).toMatchObject({ status: "failed", error: "interrupted" })
        expect(Exit.isFailure(yield* Effect.exit(b.await))).toBe(true)
        // the next process runs the one queued again
        yield* startManager(fake, storage, 4, "next")
        yield* fake.awaitStart("A")
        yield* fake.release("A")
        expect(yield* awaitFinished(storage, a.runId)).toMatchObject({ status: "succeeded", attempts: 2 })
      })))

  /** a run of a process that died: queued with its request, then (optionally) taken by it */
  const deadRun = (storage: Context.Context<any>, text: string, attempts: number) =>
    Effect.gen(function*() {
      const repo = Context.get(storage as Context.Context<RunLogRepo>, RunLogRepo)
      const sql = Context.get(storage as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient)
      const enqueued = yield* repo.enqueue(
        {
          pipeline: "text",
          user_id: "alice",
          dataset: "main",
          params: {},
          queued_at: new Date().toISOString(),
          instance_id: "dead"
        },
        JSON.stringify(encodeRememberRequest(request("main", text))),
        undefined
      )
      if (enqueued._tag !== "Created") throw new Error("not created")
      if (attempts > 0) {
        yield* sql`UPDATE gb_remember_runs SET status = 'started', started_at = ${new Date().toISOString()},
          attempts = ${attempts} WHERE id = ${enqueued.run.id}`.pipe(Effect.orDie)
      }
      return enqueued.run.id
    })

  it.live("a started run of a dead process runs again from the start (attempts 2)", () =>
    withStorage(makeLayer, (storage, fake) =>
      Effect.gen(function*() {
        const id = yield* deadRun(storage, "A", 1)
        yield* startManager(fake, storage)
        yield* fake.awaitStart("A")
        yield* fake.release("A")
        expect(yield* awaitFinished(storage, id)).toMatchObject({ status: "succeeded", attempts: 2, error: null })
        expect(fake.events).toEqual(["start A", "end A"])
      })))

  it.live("a dead process's run that had stored its artifact is failed, never stored again", () =>
    withStorage(makeLayer, (storage, fake) =>
      Effect.gen(function*() {
        const repo = Context.get(storage as Context.Context<RunLogRepo>, RunLogRepo)
        const id = yield* deadRun(storage, "A", 1)
        yield* repo.committed(id) // what the store transaction does
        yield* startManager(fake, storage)
        expect(yield* awaitFinished(storage, id)).toMatchObject({ status: "failed", error: "interrupted", attempts: 1 })
        yield* settle
        expect(fake.hasStarted("A")).toBe(false)
      })))

  it.live("a run whose process died remember.max_attempts times is failed for good", () =>
    withStorage(makeLayer, (storage, fake) =>
      Effect.gen(function*() {
        const id = yield* deadRun(storage, "A", 3)
        yield* startManager(fake, storage)
        expect(yield* awaitFinished(storage, id)).toMatchObject({
          status: "failed",
          attempts: 3,
          error: expect.stringContaining("max_attempts")
        })
        yield* settle
        expect(fake.hasStarted("A")).toBe(false)
        const sql = Context.get(storage as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient)
        expect(yield* sql`SELECT run_id FROM gb_remember_queue`.pipe(Effect.orDie)).toEqual([])
      })))

  if (dialect === "sqlite") {
    it.live("a run queued on a SQLite file by an instance shut down before running it runs in the next process", () =>
      Effect.gen(function*() {
        const dir = yield* Effect.sync(() => mkdtempSync(join(tmpdir(), "gligabao-queue-")))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
        const file = join(dir, "gligabao.db")
        const fake = yield* makeFakePipeline
        const first = yield* Effect.gen(function*() {
          const storage = yield* Layer.build(SqliteLive(file))
          const { close, manager } = yield* startManager(fake, storage, 4, "process-1")
          const a = yield* manager.enqueue(request("shared", "A"))
          yield* fake.awaitStart("A")
          const b = yield* manager.enqueue(request("shared", "B"))
          const closing = yield* Effect.fork(close)
          yield* fake.release("A")
          yield* Fiber.join(closing)
          return { a: a.runId, b: b.runId }
        }).pipe(Effect.scoped)
        const storage = yield* Layer.build(SqliteLive(file))
        yield* startManager(fake, storage, 4, "process-2")
        yield* fake.awaitStart("B")
        yield* fake.release("B")
        expect(yield* awaitFinished(storage, first.b)).toMatchObject({ status: "succeeded", attempts: 1 })
        expect((yield* getRun(storage, first.a)).status).toBe("succeeded")
      }).pipe(Effect.scoped))
  }

  if (dialect === "pg") {
    it.live("a run queued on PostgreSQL by an instance shut down before running it runs in the next process", () =>
      Effect.gen(function*() {
        const url = yield* freshPgUrl
        const fake = yield* makeFakePipeline
        const first = yield* Effect.gen(function*() {
          const storage = yield* Layer.build(PgLive(url))
          const { close, manager } = yield* startManager(fake, storage, 4, "process-1")
          yield* manager.enqueue(request("shared", "A"))
          yield* fake.awaitStart("A")
          const b = yield* manager.enqueue(request("shared", "B"))
          const closing = yield* Effect.fork(close)
          yield* fake.release("A")
          yield* Fiber.join(closing)
          return b.runId
        }).pipe(Effect.scoped)
        const storage = yield* Layer.build(PgLive(url))
        yield* startManager(fake, storage, 4, "process-2")
        yield* fake.awaitStart("B")
        yield* fake.release("B")
        expect(yield* awaitFinished(storage, first)).toMatchObject({ status: "succeeded", attempts: 1 })
      }).pipe(Effect.scoped))

    it.live("a run submitted later to another process applies after the earlier one, whose work ahead is slower", () =>
      Effect.gen(function*() {
        const url = yield* freshPgUrl
        const one = yield* Layer.build(PgLive(url))
        const two = yield* Layer.build(PgLive(url))
        const events: Array<string> = []
        const slow = Deferred.unsafeMake<void>(FiberId.none)
        const twoPhase = Layer.succeed(RememberPipeline, {
          run: () => Effect.dieMessage("the manager runs two-phase pipelines in two phases"),
          prepare: (runId, req) =>
            Effect.gen(function*() {
              const text = req.text!
              events.push(`prepare ${text}`)
              if (text === "A") yield* Deferred.await(slow)
              return { apply: Effect.sync(() => (events.push(`apply ${text}`), fakeOutcome(runId, text))) }
            })
        })
        const first = yield* startManager(
          { layer: twoPhase, releaseAll: Deferred.succeed(slow, undefined) },
          one,
          4,
          "p1"
        )
        const second = yield* startManager({ layer: twoPhase }, two, 4, "p2")
        const a = yield* first.manager.enqueue(request("shared", "A"))
        const b = yield* second.manager.enqueue(request("shared", "B"))
        const c = yield* second.manager.enqueue(request("other", "C"))
        yield* c.await
        yield* settle
        // B's work ahead is done, but A was submitted first and has not applied
        expect(events).toContain("prepare B")
        expect(events).not.toContain("apply B")
        yield* Deferred.succeed(slow, undefined)
        yield* Effect.forEach([a, b], (r) => r.await)
        expect(events.filter((e) => e.startsWith("apply") && !e.endsWith("C"))).toEqual(["apply A", "apply B"])
      }).pipe(Effect.scoped))

    it.live("two managers on one PostgreSQL database (two processes) serialize a dataset", () =>
      Effect.gen(function*() {
        const url = yield* freshPgUrl
        const one = yield* Layer.build(PgLive(url))
        const two = yield* Layer.build(PgLive(url))
        const fake = yield* makeFakePipeline
        const first = yield* startManager(fake, one, 4, "process-1")
        const second = yield* startManager(fake, two, 4, "process-2")
        const a = yield* first.manager.enqueue(request("shared", "A"))
        yield* fake.awaitStart("A")
        const b = yield* second.manager.enqueue(request("shared", "B"))
        // another dataset on the second process is not held up by the lock
        const c = yield* second.manager.enqueue(request("other", "C"))
        yield* fake.awaitStart("C")
        yield* settle
        expect(fake.hasStarted("B")).toBe(false)
        yield* fake.release("A")
        yield* fake.awaitStart("B")
        yield* fake.release("B")
        yield* fake.release("C")
        yield* Effect.forEach([a, b, c], (r) => r.await)
        const order = fake.events.filter((e) => !e.endsWith("C"))
        expect(order).toEqual(["start A", "end A", "start B", "end B"])
        // each process saw the other alive: neither failed the other's runs at startup
        const sql = Context.get(one as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient)
        const rows = yield* sql<{ status: string }>`SELECT status FROM gb_remember_runs ORDER BY id`.pipe(Effect.orDie)
        expect(rows.map((r) => r.status)).toEqual(["succeeded", "succeeded", "succeeded"])
      }).pipe(Effect.scoped))
  }
})
