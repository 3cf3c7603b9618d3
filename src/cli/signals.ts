/**
 * Ctrl-C (SIGINT) and SIGTERM for a command that stops cleanly instead of dying: the first signal
 * asks its work to stop (it finishes what it must, then reports), a second one exits at once.
 *
 * `NodeRuntime.runMain` answers a signal by interrupting the main fiber and exiting 0, which
 * would cut the work short and hide that it stopped. So the work runs in a fiber of its own that
 * the interruption does not reach; the main fiber's interruption waits for it, reports, and exits
 * with the shell's code for the signal (130 for SIGINT, 143 for SIGTERM).
 */
import { Deferred, Effect, Exit, Fiber, Option } from "effect"

export interface StopRequest {
  /** the signal that asked to stop, once one did */
  readonly signal: Effect.Effect<Option.Option<NodeJS.Signals>>
  /** waits until a signal asks to stop */
  readonly await: Effect.Effect<NodeJS.Signals>
}

/** 128 + the signal's number, as a shell reports a process the signal ended. */
export const exitCodeOf = (signal: NodeJS.Signals): number => signal === "SIGTERM" ? 143 : 130

const SIGNALS: ReadonlyArray<NodeJS.Signals> = ["SIGINT", "SIGTERM"]

/**
 * Runs `work` until it ends. A signal completes its StopRequest and calls `notice` (a line for the
 * user at once); once the work has ended, `report` says how it stopped and the process exits with
 * the signal's code. Without a signal this is `work` itself.
 */
export const stoppable = <A, E, R>(
  work: (stop: StopRequest) => Effect.Effect<A, E, R>,
  handlers: {
    readonly notice: (signal: NodeJS.Signals) => void
    readonly report: (exit: Exit.Exit<A, E>, signal: NodeJS.Signals) => Effect.Effect<void>
  }
): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    const stopped = yield* Deferred.make<NodeJS.Signals>()
    let received: NodeJS.Signals | undefined
    const onSignal = (signal: NodeJS.Signals) => {
      // a second signal: the user does not want to wait; the database is left consistent anyway
      if (received !== undefined) process.exit(exitCodeOf(received))
      received = signal
      handlers.notice(signal)
      Deferred.unsafeDone(stopped, Exit.succeed(signal))
    }
    const stop: StopRequest = {
      signal: Effect.sync(() => Option.fromNullable(received)),
      await: Deferred.await(stopped)
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => SIGNALS.forEach((s) => process.on(s, onSignal))),
      () => Effect.sync(() => SIGNALS.forEach((s) => process.removeListener(s, onSignal)))
    )
    const fiber = yield* Effect.forkDaemon(work(stop))
    /** The work's end: as it is, or, after a signal, reported and the process ended with the signal's code. */
    const ended = (exit: Exit.Exit<A, E>): Effect.Effect<A, E> =>
      received === undefined
        ? exit
        : Effect.zipRight(
          handlers.report(exit, received),
          Effect.sync(() => process.exit(exitCodeOf(received!)))
        )
    return yield* Fiber.await(fiber).pipe(
      Effect.flatMap(ended),
      // runMain interrupts the main fiber on a signal; the interruption is processed after every
      // listener of the signal has run, so `received` is set by then
      Effect.onInterrupt(() =>
        received === undefined
          ? Fiber.interrupt(fiber)
          : Effect.flatMap(Fiber.await(fiber), (exit) => Effect.ignore(ended(exit)))
      )
    )
  }).pipe(Effect.scoped)
