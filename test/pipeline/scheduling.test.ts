/**
 * The remember runs' scheduler: one first-in first-out queue across fibers, slices that give
 * the event loop a turn, and the runs' answers unchanged by it.
 */
import { Effect, type Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { runScheduler, whileReading, yieldingToReads } from "../../src/pipeline/scheduling.js"

const busy = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // holds the thread past a slice
  }
}

/** stand-ins for three fibers: the scheduler may keep state per fiber, keyed by identity */
const fiber = () => ({}) as unknown as Fiber.RuntimeFiber<unknown, unknown>

const settle = () => new Promise((resolve) => setTimeout(resolve, 30))

describe("the remember runs' scheduler", () => {
  it("never lets a task overtake one of another fiber scheduled before it", async () => {
    const [a, b, c] = [fiber(), fiber(), fiber()]
    const order: Array<string> = []
    // the slice is spent: the next tasks wait for a macrotask
    busy(6)
    runScheduler.scheduleTask(
      () => {
        order.push("z")
        // scheduled after x, on a fresh slice: it must still run after x
        runScheduler.scheduleTask(() => order.push("y"), 0, c)
      },
      0,
      b
    )
    runScheduler.scheduleTask(() => order.push("x"), 0, a)
    await settle()
    expect(order).toEqual(["z", "x", "y"])
  })

  it("gives the event loop a turn once a slice is spent, and then goes on", async () => {
    const order: Array<string> = []
    const f = fiber()
    runScheduler.scheduleTask(
      () => {
        order.push("first")
        busy(6)
        // an I/O callback's stand-in, queued while the slice ran
        setImmediate(() => order.push("event loop"))
        runScheduler.scheduleTask(() => order.push("second"), 0, f)
      },
      0,
      f
    )
    await settle()
    expect(order).toEqual(["first", "event loop", "second"])
  })

  it("takes shorter slices while a read is answered", async () => {
    // runs two tasks of 2 ms; says whether the event loop had a turn between them
    const turnBetween = () =>
      new Promise<boolean>((resolve) => {
        const f = fiber()
        let turned = false
        runScheduler.scheduleTask(
          () => {
            // the slice starts afresh here
            setImmediate(() => {
              turned = true
            })
            runScheduler.scheduleTask(
              () => {
                busy(2)
                runScheduler.scheduleTask(() => resolve(turned), 0, f)
              },
              0,
              f
            )
          },
          0,
          f
        )
      })
    await settle()
    let during = false
    await Effect.runPromise(whileReading(Effect.promise(async () => {
      busy(6)
      during = await turnBetween()
    })))
    expect(during).toBe(true)
  })

  it("leaves what a program computes unchanged, interruption of concurrent work included", async () => {
    const work = Effect.forEach(
      Array.from({ length: 50 }, (_, i) => i),
      (i) => Effect.as(Effect.yieldNow(), i * 2),
      { concurrency: 8 }
    )
    expect(await Effect.runPromise(yieldingToReads(work))).toEqual(await Effect.runPromise(work))
    // a failure interrupts the rest; nothing waits forever
    const failing = Effect.forEach(
      Array.from({ length: 20 }, (_, i) => i),
      (i) => i === 7 ? Effect.fail("seven") : Effect.zipRight(Effect.sleep(5), Effect.succeed(i)),
      { concurrency: 4 }
    )
    expect(await Effect.runPromise(Effect.flip(yieldingToReads(failing)))).toBe("seven")
  })
})
