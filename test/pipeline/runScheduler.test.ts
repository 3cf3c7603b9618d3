/**
 * The remember runs' scheduler (src/pipeline/RunScheduler.ts), on a clock the test drives: one
 * first-in first-out queue across fibers, slices that give the event loop a turn, shorter slices
 * while a read is answered, state per instance; and, on the event loop, the runs' answers and
 * interruption unchanged by it.
 */
import { Effect, type Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { makeRunScheduler, type RunSchedulerClock, SLICE_MS } from "../../src/pipeline/RunScheduler.js"

/** A clock and an event loop the test turns by hand: time moves only when told. */
const fakeLoop = () => {
  let time = 0
  const microtasks: Array<() => void> = []
  const macrotasks: Array<() => void> = []
  const clock: RunSchedulerClock = {
    now: () => time,
    microtask: (run) => void microtasks.push(run),
    macrotask: (run) => void macrotasks.push(run)
  }
  const flushMicrotasks = () => {
    while (microtasks.length > 0) microtasks.shift()!()
  }
  return {
    clock,
    advance: (ms: number) => {
      time += ms
    },
    /** an I/O callback arriving: it waits its turn behind the macrotasks already queued */
    io: (run: () => void) => void macrotasks.push(run),
    /** the event loop runs until nothing is left */
    run: () => {
      flushMicrotasks()
      while (macrotasks.length > 0) {
        macrotasks.shift()!()
        flushMicrotasks()
      }
    },
    queued: () => ({ microtasks: microtasks.length, macrotasks: macrotasks.length })
  }
}

/** stand-ins for fibers: the scheduler may keep state per fiber, keyed by identity */
const fiber = () => ({}) as unknown as Fiber.RuntimeFiber<unknown, unknown>

describe("the remember runs' scheduler", () => {
  it("never lets a task overtake one of another fiber scheduled before it", () => {
    const loop = fakeLoop()
    const { scheduler } = makeRunScheduler(loop.clock)
    const order: Array<string> = []
    loop.advance(SLICE_MS + 2) // the slice is spent: the next tasks wait for a macrotask
    scheduler.scheduleTask(
      () => {
        order.push("z")
        // scheduled after x: it must still run after x
        scheduler.scheduleTask(() => order.push("y"), 0, fiber())
      },
      0,
      fiber()
    )
    scheduler.scheduleTask(() => order.push("x"), 0, fiber())
    expect(loop.queued()).toEqual({ microtasks: 0, macrotasks: 1 })
    loop.run()
    expect(order).toEqual(["z", "x", "y"])
  })

  /** A task that works for `ms` while an I/O callback arrives, then schedules a second task. */
  const orderAfter = (ms: number) => {
    const loop = fakeLoop()
    const { scheduler } = makeRunScheduler(loop.clock)
    const order: Array<string> = []
    const f = fiber()
    scheduler.scheduleTask(
      () => {
        order.push("first")
        loop.advance(ms)
        loop.io(() => order.push("event loop"))
        scheduler.scheduleTask(() => order.push("second"), 0, f)
      },
      0,
      f
    )
    loop.run()
    return order
  }

  it("gives the event loop a turn once a slice is spent, and then goes on", () => {
    expect(orderAfter(SLICE_MS + 2)).toEqual(["first", "event loop", "second"])
  })

  it("keeps to microtasks within a slice", () => {
    expect(orderAfter(SLICE_MS - 1)).toEqual(["first", "second", "event loop"])
  })

  it("takes shorter slices while a read is answered, on its own instance only", () => {
    const loop = fakeLoop()
    const runs = makeRunScheduler(loop.clock)
    const other = makeRunScheduler(loop.clock)
    loop.advance(2) // within a slice, beyond a reading slice
    const during = Effect.runSync(runs.reading(Effect.sync(() => {
      runs.scheduler.scheduleTask(() => {}, 0, fiber())
      other.scheduler.scheduleTask(() => {}, 0, fiber())
      return loop.queued()
    })))
    // this instance waits for a turn; the other, which no read marks, goes on in a microtask
    expect(during).toEqual({ microtasks: 1, macrotasks: 1 })
    loop.run()
    // the read is over: a task 2 ms into a slice goes on in a microtask again
    loop.advance(2)
    runs.scheduler.scheduleTask(() => {}, 0, fiber())
    expect(loop.queued()).toEqual({ microtasks: 1, macrotasks: 0 })
  })

  it("leaves what a program computes unchanged, interruption of concurrent work included", async () => {
    const { runs } = makeRunScheduler()
    const work = Effect.forEach(
      Array.from({ length: 50 }, (_, i) => i),
      (i) => Effect.as(Effect.yieldNow(), i * 2),
      { concurrency: 8 }
    )
    expect(await Effect.runPromise(runs(work))).toEqual(await Effect.runPromise(work))
    // a failure interrupts the rest; nothing waits forever
    const failing = Effect.forEach(
      Array.from({ length: 20 }, (_, i) => i),
      (i) => i === 7 ? Effect.fail("seven") : Effect.zipRight(Effect.sleep(5), Effect.succeed(i)),
      { concurrency: 4 }
    )
    expect(await Effect.runPromise(Effect.flip(runs(failing)))).toBe("seven")
  })
})
