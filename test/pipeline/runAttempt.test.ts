/**
 * One remember run's attempts (src/pipeline/RunAttempt.ts), without a database and on the test's
 * clock: the states an attempt goes through, the queue-depth figures counted from them, and the
 * retry policy (a transient failure after the take is queued again and retried after
 * `retryDelay`, doubled each time, up to `maxAttempts` starts; anything else fails at once).
 */
import { it } from "@effect/vitest"
import { Chunk, Duration, Effect, Fiber, HashMap, Option, Queue, Ref, Schedule, TestClock } from "effect"
import { expect } from "vitest"
import { InternalFailure, LlmFailed, type RememberError } from "../../src/domain/Errors.js"
import { AttemptState, depthOf, makeRunAttempts, retryPolicy, type RunAttempt } from "../../src/pipeline/RunAttempt.js"

const transient = (n: number) => new LlmFailed({ message: `HTTP 529 (try ${n})`, status: 529, retryable: true })

/** Attempts whose run log queues a run again unless `stored`, and the runs it was asked about. */
const attemptsWith = (
  options: { readonly stored?: boolean; readonly closing?: boolean; readonly maxAttempts?: number }
) =>
  Effect.gen(function*() {
    const requeued: Array<number> = []
    const attempts = yield* makeRunAttempts({
      maxAttempts: options.maxAttempts ?? 3,
      retryDelay: "1 second",
      closing: Effect.succeed(options.closing ?? false),
      requeue: (runId) => Effect.sync(() => (requeued.push(runId), options.stored !== true))
    })
    return { attempts, requeued }
  })

/**
 * One try of a run, as the manager's: takes the run (its starts so far plus this one), then fails
 * with what `outcome` says for this try. Each try is announced on `tries`.
 */
const tryOf = (
  attempt: RunAttempt,
  starts: Ref.Ref<number>,
  tries: Queue.Queue<number>,
  outcome: (n: number) => Effect.Effect<string, RememberError>
) =>
  Effect.gen(function*() {
    const n = yield* Ref.updateAndGet(starts, (k) => k + 1)
    yield* attempt.taken(n)
    yield* Queue.offer(tries, n)
    return yield* outcome(n)
  })

it("the retry policy waits retryDelay, doubled each time, for maxAttempts - 1 retries", () => {
  // one step per failure; `run` ends with the step that ends the schedule, whose output is no wait
  const steps = Effect.runSync(Schedule.run(Schedule.delays(retryPolicy("1 second", 4)), 0, [1, 2, 3, 4, 5, 6]))
  expect(Chunk.toReadonlyArray(steps).map(Duration.toMillis)).toEqual([1000, 2000, 4000, 0])
})

it.effect("an attempt goes Queued, Taken, Applying; the gauge's figures are counted from the states", () =>
  Effect.gen(function*() {
    const { attempts } = yield* attemptsWith({})
    const first = yield* attempts.begin(1)
    const second = yield* attempts.begin(2)
    expect(yield* first.state).toEqual(AttemptState.Queued())
    expect(depthOf(yield* attempts.states)).toEqual({ queued: 2, running: 0 })
    yield* first.taken(1)
    expect(yield* first.state).toEqual(AttemptState.Taken({ attempts: 1 }))
    expect(depthOf(yield* attempts.states)).toEqual({ queued: 1, running: 1 })
    yield* first.applying
    expect(yield* first.state).toEqual(AttemptState.Applying({ attempts: 1 }))
    // applying is a step of a taken run only
    yield* second.applying
    expect(yield* second.state).toEqual(AttemptState.Queued())
    yield* first.end
    expect(HashMap.has(yield* attempts.states, 1)).toBe(false)
    expect(depthOf(yield* attempts.states)).toEqual({ queued: 1, running: 0 })
  }))

it.effect("a transient failure after the take is queued again and retried after 1 s, then 2 s", () =>
  Effect.gen(function*() {
    const { attempts, requeued } = yield* attemptsWith({})
    const attempt = yield* attempts.begin(7)
    const starts = yield* Ref.make(0)
    const tries = yield* Queue.unbounded<number>()
    const run = yield* Effect.fork(
      attempt.retried(tryOf(attempt, starts, tries, (n) => n < 3 ? Effect.fail(transient(n)) : Effect.succeed("ok")))
    )
    expect(yield* Queue.take(tries)).toBe(1)
    yield* TestClock.adjust("999 millis")
    expect(yield* Queue.poll(tries)).toEqual(Option.none())
    // between two tries the run is queued again: the gauge counts it as queued
    expect(yield* attempt.state).toEqual(AttemptState.Requeued({ attempts: 1 }))
    expect(depthOf(yield* attempts.states)).toEqual({ queued: 1, running: 0 })
    yield* TestClock.adjust("1 millis")
    expect(yield* Queue.take(tries)).toBe(2)
    yield* TestClock.adjust("1999 millis")
    expect(yield* Queue.poll(tries)).toEqual(Option.none())
    yield* TestClock.adjust("1 millis")
    expect(yield* Queue.take(tries)).toBe(3)
    expect(yield* Fiber.join(run)).toBe("ok")
    expect(requeued).toEqual([7, 7])
    expect(yield* attempt.state).toEqual(AttemptState.Taken({ attempts: 3 }))
  }))

it.effect("a run failing transiently maxAttempts times fails with its last error; its starts elsewhere count", () =>
  Effect.gen(function*() {
    const { attempts, requeued } = yield* attemptsWith({})
    const attempt = yield* attempts.begin(7)
    // started once before, by a process that died
    const starts = yield* Ref.make(1)
    const tries = yield* Queue.unbounded<number>()
    const run = yield* Effect.fork(Effect.flip(
      attempt.retried(tryOf(attempt, starts, tries, (n) => Effect.fail(transient(n))))
    ))
    expect(yield* Queue.take(tries)).toBe(2)
    yield* TestClock.adjust("1 second")
    expect(yield* Queue.take(tries)).toBe(3)
    expect(yield* Fiber.join(run)).toMatchObject({ _tag: "LlmFailed", message: "HTTP 529 (try 3)" })
    expect(requeued).toEqual([7])
    // the failed try's state stays: the run was taken, so its row is finished as failed
    expect(yield* attempt.state).toEqual(AttemptState.Taken({ attempts: 3 }))
  }))

it.effect("no retry: an unusable answer, a failure before the take, a run that stored something, at shutdown", () =>
  Effect.gen(function*() {
    const unusable = new LlmFailed({ message: "extract_graph: not JSON" })
    const cases = [
      { name: "unusable", options: {}, fail: unusable, take: true, asked: false },
      { name: "internal", options: {}, fail: new InternalFailure({ message: "boom" }), take: true, asked: false },
      { name: "before take", options: {}, fail: transient(1), take: false, asked: false },
      { name: "stored", options: { stored: true }, fail: transient(1), take: true, asked: true },
      { name: "closing", options: { closing: true }, fail: transient(1), take: true, asked: false },
      { name: "one attempt", options: { maxAttempts: 1 }, fail: transient(1), take: true, asked: false }
    ]
    for (const c of cases) {
      const { attempts, requeued } = yield* attemptsWith(c.options)
      const attempt = yield* attempts.begin(1)
      const tries = yield* Ref.make(0)
      const once = Effect.gen(function*() {
        yield* Ref.update(tries, (n) => n + 1)
        if (c.take) yield* attempt.taken(1)
        return yield* Effect.fail<RememberError>(c.fail)
      })
      const error = yield* Effect.flip(attempt.retried(once))
      expect({ name: c.name, error, tries: yield* Ref.get(tries), asked: requeued.length > 0 }).toEqual({
        name: c.name,
        error: c.fail,
        tries: 1,
        asked: c.asked
      })
    }
  }))
