/**
 * How remember runs share the event loop with the reads. Effect's default scheduler resumes a
 * fiber in a microtask and gives the event loop a turn only every 2048 of them: sixteen pipelines
 * busy with SQL and parsing held it for a hundred milliseconds and more, and a search's request
 * or its vector worker's reply waited that long. The runs' fibers are resumed from one queue of
 * their own, in microtasks, until they have held the thread for a slice since their last
 * macrotask; the rest of the queue then waits for a macrotask, so pending I/O is taken in first.
 * While a read is being answered (`reading`, put on by the doors) the slices are shorter. What the
 * runs compute is unchanged; only the interleaving is.
 *
 * The state (the queue, the slice's start, the reads in flight) belongs to one instance, built by
 * the app's layer: two apps in one process do not share it.
 */
import { Context, Effect, Layer, Scheduler } from "effect"

/** The longest the runs' microtasks hold the event loop without a turn, ms. */
export const SLICE_MS = 4
/** The same while a read is being answered. */
export const SLICE_WHILE_READING_MS = 1
/** How many operations a run's fiber does before it goes back to the queue. */
const OPS_PER_TURN = 256

/** What the scheduler waits with; the defaults are the event loop's, tests drive their own. */
export interface RunSchedulerClock {
  readonly now: () => number
  readonly microtask: (run: () => void) => void
  readonly macrotask: (run: () => void) => void
}

const eventLoop: RunSchedulerClock = {
  now: () => performance.now(),
  microtask: (run) => queueMicrotask(run),
  macrotask: typeof globalThis.setImmediate === "function"
    ? (run) => void globalThis.setImmediate(run)
    : (run) => void setTimeout(run, 0)
}

export interface RunSchedulerService {
  /** the runs' scheduler itself (its tests schedule tasks on it directly) */
  readonly scheduler: Scheduler.Scheduler
  /** `self` with the runs' scheduling: pending I/O goes first after every slice of their work */
  readonly runs: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** `self`, a read: while it runs, the runs take shorter slices */
  readonly reading: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export class RunScheduler extends Context.Tag("gligabao/RunScheduler")<RunScheduler, RunSchedulerService>() {}

export const makeRunScheduler = (clock: RunSchedulerClock = eventLoop): RunSchedulerService => {
  let readsInFlight = 0
  const slice = () => readsInFlight > 0 ? SLICE_WHILE_READING_MS : SLICE_MS
  // One first-in first-out queue for every fiber of every run, as Effect's schedulers had before
  // they kept a queue per fiber: a fiber's wake-up is never overtaken by a later one of another
  // fiber, which interruption relies on.
  const tasks = new Scheduler.PriorityBuckets()
  let draining = false
  let sliceStart = clock.now()

  const turn = () =>
    clock.macrotask(() => {
      sliceStart = clock.now()
      drain()
    })

  const drain = () => {
    for (;;) {
      const buckets = tasks.buckets
      if (buckets.length === 0) {
        draining = false
        return
      }
      if (clock.now() - sliceStart >= slice()) return turn()
      tasks.buckets = []
      for (const [, run] of buckets) for (const task of run) task()
    }
  }

  const scheduler = Scheduler.make((task, priority) => {
    tasks.scheduleTask(task, priority)
    if (draining) return
    draining = true
    if (clock.now() - sliceStart < slice()) clock.microtask(drain)
    else turn()
  })

  return {
    scheduler,
    runs: (self) => self.pipe(Effect.withScheduler(scheduler), Effect.withMaxOpsBeforeYield(OPS_PER_TURN)),
    reading: (self) =>
      Effect.acquireUseRelease(
        Effect.sync(() => readsInFlight++),
        () => self,
        () => Effect.sync(() => readsInFlight--)
      )
  }
}

/** One scheduler for the app: its runs, and the doors that mark reads. */
export const RunSchedulerLive = Layer.sync(RunScheduler, () => makeRunScheduler())
