/**
 * How remember runs share the event loop with the reads. Effect's default scheduler resumes a
 * fiber in a microtask and gives the event loop a turn only every 2048 of them: sixteen pipelines
 * busy with SQL and parsing held it for a hundred milliseconds and more, and a search's request
 * or its vector worker's reply waited that long. A run's fibers are resumed in microtasks too,
 * but once the runs have held the thread for SLICE_MS since their last macrotask, the next
 * resumption goes through setImmediate, so pending I/O is taken in first. (A macrotask for every
 * resumption cost a quarter of the throughput.) What the runs compute is unchanged; only the
 * interleaving is.
 */
import { Effect, Scheduler } from "effect"

/** The longest the runs' microtasks hold the event loop without a turn, ms. */
const SLICE_MS = 4

const macrotask: (run: () => void) => void = typeof globalThis.setImmediate === "function"
  ? (run) => void globalThis.setImmediate(run)
  : (run) => void setTimeout(run, 0)

let sliceStart = performance.now()

const runScheduler = Scheduler.makeBatched((run) => {
  if (performance.now() - sliceStart < SLICE_MS) return queueMicrotask(run)
  macrotask(() => {
    sliceStart = performance.now()
    run()
  })
})

/** `self` with the remember runs' scheduling: pending I/O goes first after every slice of their work. */
export const yieldingToReads = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withScheduler(self, runScheduler)
