/**
 * The bounded look-ahead of a document's units (src/pipeline/remember/lookahead.ts): work in
 * flight never exceeds the window, item i starts only after item i - window is consumed,
 * results come back in order, a failure stops what is not started, and openAll lets every
 * item start. Interleavings are scrambled with random yields (no timing).
 */
import { it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import fc from "fast-check"
import { expect } from "vitest"
import { doneLookahead, lookahead } from "../../src/pipeline/remember/lookahead.js"

type Event = { readonly kind: "start" | "end" | "consumed"; readonly i: number }

const yields = (n: number) => Effect.forEach(Array.from({ length: n }), () => Effect.yieldNow(), { discard: true })

/** Runs n items through a window; work i yields workYields[i] times, the consumer consumeYields[i]. */
const drive = (input: {
  readonly n: number
  readonly window: number
  readonly workYields: ReadonlyArray<number>
  readonly consumeYields: ReadonlyArray<number>
  readonly failAt?: number
  readonly openAll?: boolean
}) =>
  Effect.gen(function*() {
    const events: Array<Event> = []
    const items = Array.from({ length: input.n }, (_, i) => i)
    const exit = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
      const work = yield* lookahead(items, input.window, (item) =>
        Effect.gen(function*() {
          events.push({ kind: "start", i: item })
          yield* yields(input.workYields[item] ?? 0)
          events.push({ kind: "end", i: item })
          if (item === input.failAt) return yield* Effect.fail(`item ${item} failed`)
          return item * 10
        }))
      // as the series precheck does: every result before the first is consumed (without
      // openAll this would wait forever once n > window)
      if (input.openAll === true) {
        yield* Effect.andThen(
          work.openAll,
          Effect.forEach(items, (i) => Effect.either(work.result(i)))
        )
      }
      const results: Array<number> = []
      for (const i of items) {
        results.push(yield* work.result(i))
        yield* yields(input.consumeYields[i] ?? 0)
        events.push({ kind: "consumed", i })
        yield* work.consumed(i)
      }
      return results
    })))
    // whatever was not started must never start once the scope is closed
    yield* yields(50)
    return { exit, events }
  })

const maxInFlight = (events: ReadonlyArray<Event>) => {
  let now = 0
  let max = 0
  for (const e of events) {
    if (e.kind === "start") max = Math.max(max, ++now)
    if (e.kind === "end") now--
  }
  return max
}

const at = (events: ReadonlyArray<Event>, kind: Event["kind"], i: number) =>
  events.findIndex((e) => e.kind === kind && e.i === i)

const cases = fc.record({
  n: fc.integer({ min: 0, max: 12 }),
  window: fc.integer({ min: 1, max: 5 }),
  workYields: fc.array(fc.integer({ min: 0, max: 8 }), { minLength: 12, maxLength: 12 }),
  consumeYields: fc.array(fc.integer({ min: 0, max: 8 }), { minLength: 12, maxLength: 12 })
})

it.effect("results in order; at most `window` in flight; item i starts after item i - window is consumed", () =>
  Effect.promise(() =>
    fc.assert(
      fc.asyncProperty(cases, async (c) => {
        const { exit, events } = await Effect.runPromise(drive(c))
        expect(exit).toEqual(Exit.succeed(Array.from({ length: c.n }, (_, i) => i * 10)))
        expect(maxInFlight(events)).toBeLessThanOrEqual(c.window)
        for (let i = c.window; i < c.n; i++) {
          expect(at(events, "start", i)).toBeGreaterThan(at(events, "consumed", i - c.window))
        }
      }),
      { numRuns: 200 }
    )
  ))

it.effect("window 1 is one item after another", () =>
  Effect.gen(function*() {
    const { events } = yield* drive({ n: 4, window: 1, workYields: [3, 0, 5, 1], consumeYields: [2, 2, 2, 2] })
    expect(events.map((e) => `${e.kind} ${e.i}`)).toEqual(
      [0, 1, 2, 3].flatMap((i) => [`start ${i}`, `end ${i}`, `consumed ${i}`])
    )
  }))

it.effect("a failure in item k: the call fails with it, nothing after k is consumed, nothing beyond the window starts", () =>
  Effect.promise(() =>
    fc.assert(
      fc.asyncProperty(cases, fc.nat(), async (c, k0) => {
        fc.pre(c.n > 0)
        const failAt = k0 % c.n
        const { exit, events } = await Effect.runPromise(drive({ ...c, failAt }))
        expect(exit).toEqual(Exit.fail(`item ${failAt} failed`))
        expect(events.filter((e) => e.kind === "consumed").map((e) => e.i)).toEqual(
          Array.from({ length: failAt }, (_, i) => i)
        )
        const started = events.filter((e) => e.kind === "start").map((e) => e.i)
        expect(Math.max(...started)).toBeLessThan(failAt + c.window)
      }),
      { numRuns: 200 }
    )
  ))

it.effect("openAll lets every item start before any is consumed, still at most `window` at once", () =>
  Effect.gen(function*() {
    const { exit, events } = yield* drive({
      n: 7,
      window: 2,
      workYields: [1, 4, 0, 2, 3, 0, 1],
      consumeYields: [],
      openAll: true
    }).pipe(
      Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "openAll did not let the items start" })
    )
    expect(exit).toEqual(Exit.succeed([0, 10, 20, 30, 40, 50, 60]))
    expect(at(events, "end", 6)).toBeLessThan(at(events, "consumed", 0))
    expect(maxInFlight(events)).toBeLessThanOrEqual(2)
  }))

it.effect("a done lookahead of one item gives its result until it is consumed, then none", () =>
  Effect.gen(function*() {
    const done = doneLookahead<string, never, number>("work of item 0")
    expect(yield* done.result(0)).toBe("work of item 0")
    expect(yield* done.result(0)).toBe("work of item 0")
    yield* done.openAll
    yield* done.consumed(1, 7)
    expect(yield* done.result(0)).toBe("work of item 0")
    expect(Exit.isFailure(yield* Effect.exit(done.result(1)))).toBe(true)
    yield* done.consumed(0, 7)
    expect(Exit.isFailure(yield* Effect.exit(done.result(0)))).toBe(true)
  }))
