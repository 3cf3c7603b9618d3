/**
 * How remember runs share the event loop with the reads. Effect's default scheduler resumes a
 * fiber in a microtask and gives the event loop a turn only every 2048 of them: sixteen pipelines
 * busy with SQL and parsing held it for a hundred milliseconds and more, and a search's request
 * or its vector worker's reply waited that long. The runs' fibers are resumed from one queue of
 * their own, in microtasks, until they have held the thread for SLICE_MS since their last
 * macrotask; the rest of the queue then waits for setImmediate, so pending I/O is taken in first.
 * While a read is being answered (`whileReading`) the slices are shorter, as each of its steps
 * (the request, the query's embedding, the vector worker's reply) waits for such a turn. (A
 * macrotask for every resumption cost a quarter of the throughput.) What the runs compute is
 * unchanged; only the interleaving is.
 */
import { Effect, Scheduler } from "effect"

/** The longest the runs' microtasks hold the event loop without a turn, ms. */
const SLICE_MS = 4
/** The same while a read is being answered. */
const SLICE_WHILE_READING_MS = 1

/** reads being answered now */
let reading = 0
const slice = () => reading > 0 ? SLICE_WHILE_READING_MS : SLICE_MS

/** How many operations a run's fiber does before it goes back to the queue. */
const OPS_PER_TURN = 256

const macrotask: (run: () => void) => void = typeof globalThis.setImmediate === "function"
  ? (run) => void globalThis.setImmediate(run)
  : (run) => void setTimeout(run, 0)

/**
 * One first-in first-out queue for every fiber of every run, as Effect's schedulers had before
 * they kept a queue per fiber: a fiber's wake-up is never overtaken by a later one of another
 * fiber, which interruption relies on.
 */
const tasks = new Scheduler.PriorityBuckets()
let draining = false
let sliceStart = performance.now()

const drain = () => {
  for (;;) {
    const buckets = tasks.buckets
    if (buckets.length === 0) {
      draining = false
      return
    }
    if (performance.now() - sliceStart >= slice()) {
      macrotask(() => {
        sliceStart = performance.now()
        drain()
      })
      return
    }
    tasks.buckets = []
    for (const [, run] of buckets) for (const task of run) task()
  }
}

/** The scheduler of the runs' fibers (exported for its tests). */
export const runScheduler = Scheduler.make((task, priority) => {
  tasks.scheduleTask(task, priority)
  if (draining) return
  draining = true
  if (performance.now() - sliceStart < slice()) queueMicrotask(drain)
  else {
    macrotask(() => {
      sliceStart = performance.now()
      drain()
    })
  }
})

/** `self` with the remember runs' scheduling: pending I/O goes first after every slice of their work. */
export const yieldingToReads = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  self.pipe(Effect.withScheduler(runScheduler), Effect.withMaxOpsBeforeYield(OPS_PER_TURN))

/** `self`, a read: while it runs, the remember runs take shorter slices. */
export const whileReading = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => reading++),
    () => self,
    () => Effect.sync(() => reading--)
  )
