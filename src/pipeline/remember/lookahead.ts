/**
 * Work on a sequence that is consumed in order, run ahead of the consumer by a bounded
 * window: item i's work starts once item i - window has been consumed, and at most `window`
 * works run at once. With window 1 it is one item after another (the seed's behaviour for
 * the chunks of a document); with more, the model work of the next chunks overlaps the
 * in-order reconciliation and store of the current one, while finished work waiting for its
 * turn (and the calls wasted if a chunk fails) stays bounded by the window.
 *
 * The consumer hands a value to the work it releases (`consumed(i, context)`): the remember
 * program hands on its run context as it stands after item i, so a unit's work runs with what
 * the stores before its release learned (the dataset the first one created).
 */
import { Deferred, Effect, type Scope } from "effect"

export interface Lookahead<A, E, C = void> {
  /** item i's result, once its work is done */
  readonly result: (i: number) => Effect.Effect<A, E>
  /** item i has been consumed (its result is let go): item i + window may start, with `context` */
  readonly consumed: (i: number, context: C) => Effect.Effect<void>
  /**
   * lets every item start (still at most `window` at once), those not yet released with the
   * first context: for a step that must see every result before the first is consumed
   */
  readonly openAll: Effect.Effect<void>
}

export function lookahead<I, A, E>(
  items: ReadonlyArray<I>,
  window: number,
  work: (item: I, i: number) => Effect.Effect<A, E>
): Effect.Effect<Lookahead<A, E>, never, Scope.Scope>
export function lookahead<I, A, E, C>(
  items: ReadonlyArray<I>,
  window: number,
  work: (item: I, i: number, context: C) => Effect.Effect<A, E>,
  first: C
): Effect.Effect<Lookahead<A, E, C>, never, Scope.Scope>
export function lookahead<I, A, E, C>(
  items: ReadonlyArray<I>,
  window: number,
  work: (item: I, i: number, context: C) => Effect.Effect<A, E>,
  first?: C
): Effect.Effect<Lookahead<A, E, C>, never, Scope.Scope> {
  return Effect.gen(function*() {
    const size = Math.max(1, Math.floor(window))
    // a consumed item's result is dropped, so finished work (a chunk's vectors) is not kept to the end
    const results: Array<Deferred.Deferred<A, E> | undefined> = Array.from(
      yield* Effect.forEach(items, () => Deferred.make<A, E>())
    )
    const gates = yield* Effect.forEach(items, () => Deferred.make<C>())
    const open = (i: number, context: C) => {
      const gate = gates[i]
      return gate === undefined ? Effect.void : Deferred.succeed(gate, context)
    }
    const permits = yield* Effect.makeSemaphore(size)
    yield* Effect.forEach(gates.slice(0, size), (gate) => Deferred.succeed(gate, first as C), { discard: true })
    // forked into the caller's scope: when the caller is done (or fails), unstarted work never starts
    yield* Effect.forEach(
      items,
      (item, i) =>
        Deferred.await(gates[i]!).pipe(
          Effect.flatMap((context) => permits.withPermits(1)(work(item, i, context))),
          Effect.exit,
          Effect.flatMap((exit) => {
            const result = results[i]
            return result === undefined ? Effect.void : Deferred.done(result, exit)
          })
        ),
      { concurrency: "unbounded", discard: true }
    ).pipe(Effect.forkScoped)
    return {
      result: (i) =>
        Effect.suspend(() => {
          const result = results[i]
          return result === undefined
            ? Effect.dieMessage(`lookahead: item ${i} was already consumed`)
            : Deferred.await(result)
        }),
      consumed: (i, context) =>
        Effect.suspend(() => {
          results[i] = undefined
          return open(i + size, context)
        }),
      // a gate already open keeps its context (Deferred.succeed on a done Deferred does nothing)
      openAll: Effect.forEach(gates, (gate) => Deferred.succeed(gate, first as C), { discard: true })
    } satisfies Lookahead<A, E, C>
  })
}

/**
 * A lookahead of one item whose work is already done: for a caller that would await that one
 * result at once, which needs no fiber to run ahead in (a remember of one unit).
 */
export const doneLookahead = <A, E, C = void>(value: A): Lookahead<A, E, C> => {
  let result: A | undefined = value
  let taken = false
  return {
    result: (i) =>
      Effect.suspend(() =>
        i === 0 && !taken ? Effect.succeed(result as A) : Effect.dieMessage(`lookahead: item ${i} was already consumed`)
      ),
    consumed: (i) =>
      Effect.sync(() => {
        if (i !== 0) return
        taken = true
        result = undefined
      }),
    openAll: Effect.void
  }
}
