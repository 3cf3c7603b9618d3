/**
 * How remember runs share the event loop with the reads. Effect's default scheduler resumes a
 * fiber in a microtask, and yields to the event loop only every 2048 of them: sixteen pipelines
 * busy with SQL and parsing could hold it for hundreds of milliseconds, and a search's request or
 * its vector worker's reply waited that long. A run's fibers instead resume through the macrotask
 * queue (setImmediate) and yield every few hundred operations, so pending I/O is taken in between
 * two slices of a pipeline's work. What the runs compute is unchanged; only the interleaving is.
 */
import { Effect, Scheduler } from "effect"

/** Operations a run's fiber performs before it yields (Effect's default is 2048). */
const OPS_BEFORE_YIELD = 256

const later: (run: () => void) => void = typeof globalThis.setImmediate === "function"
  ? (run) => void globalThis.setImmediate(run)
  : (run) => void setTimeout(run, 0)

const runScheduler = Scheduler.makeBatched(later)

/** `self` with the remember runs' scheduling: yielding to pending I/O between slices of its work. */
export const yieldingToReads = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  self.pipe(Effect.withScheduler(runScheduler), Effect.withMaxOpsBeforeYield(OPS_BEFORE_YIELD))
