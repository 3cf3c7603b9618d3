/**
 * One provider attempt's deadline (layers/llm/retry.ts `attemptWithDeadline`): a timer of the
 * event loop in place of Effect.timeoutFail. The request's signal is aborted at the deadline and
 * on interruption, the attempt fails "timed out" at once, and a late answer goes nowhere.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { AttemptFailed, attemptWithDeadline } from "../../layers/llm/retry.js"

const classify = (error: unknown) =>
  error instanceof AttemptFailed ? error : new AttemptFailed({ message: String(error), retryable: false })

/** A call that never answers on its own; it rejects when its signal is aborted, as fetch does. */
const hanging = (seen: Array<AbortSignal>) => (signal: AbortSignal) =>
  new Promise<string>((_, reject) => {
    seen.push(signal)
    signal.addEventListener("abort", () => reject(new Error("aborted")))
  })

describe("attemptWithDeadline", () => {
  it.live("answers what the call answers before the deadline", () =>
    Effect.gen(function*() {
      expect(yield* attemptWithDeadline(() => Promise.resolve("ok"), classify, 1_000)).toBe("ok")
      const failed = yield* Effect.flip(attemptWithDeadline(() => Promise.reject(new Error("boom")), classify, 1_000))
      expect(failed.message).toBe("Error: boom")
      expect(failed.retryable).toBe(false)
    }))

  it.live("classifies a call that throws before it returns a promise", () =>
    Effect.gen(function*() {
      const failed = yield* Effect.flip(attemptWithDeadline(
        () => {
          throw new Error("no request")
        },
        classify,
        1_000
      ))
      expect(failed.message).toBe("Error: no request")
    }))

  it.live("fails as timed out, retryable, and aborts the request at the deadline", () =>
    Effect.gen(function*() {
      const seen: Array<AbortSignal> = []
      const failed = yield* Effect.flip(attemptWithDeadline(hanging(seen), classify, 30))
      expect(failed).toBeInstanceOf(AttemptFailed)
      expect(failed.message).toBe("timed out after 30ms")
      expect(failed.retryable).toBe(true)
      expect(seen).toHaveLength(1)
      expect(seen[0]!.aborted).toBe(true)
    }))

  it.live("aborts the request when the fiber is interrupted, and the deadline never fires", () =>
    Effect.gen(function*() {
      const seen: Array<AbortSignal> = []
      const fiber = yield* Effect.fork(attemptWithDeadline(hanging(seen), classify, 40))
      yield* Effect.sleep("10 millis")
      expect(seen[0]!.aborted).toBe(false)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(seen[0]!.aborted).toBe(true)
      // past the deadline: nothing fires into the interrupted fiber
      yield* Effect.sleep("60 millis")
      expect(Exit.isInterrupted(yield* Fiber.await(fiber))).toBe(true)
    }))

  it.live("keeps the first outcome when the call answers after its deadline", () =>
    Effect.gen(function*() {
      let answer: (value: string) => void = () => {}
      const failed = yield* Effect.flip(attemptWithDeadline(
        () => new Promise<string>((resolve) => (answer = resolve)),
        classify,
        20
      ))
      answer("late")
      expect(failed.message).toBe("timed out after 20ms")
    }))
})
