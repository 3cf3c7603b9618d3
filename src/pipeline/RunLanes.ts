/**
 * The per-dataset lanes of the remember runs: what keeps a dataset's runs in submission order.
 *
 * Each dataset key has one lane while runs of it are unfinished in this process: its runs in id
 * (submission) order, each with the signal of its leaving. A run's work ahead (`prepare`) may
 * start once fewer than `lookahead` runs before it are in the lane (`window`), and its ordered
 * part once none is, here or, as the run log tells, in any other process sharing the database
 * (`turn`). A run taken over from a dead process joins with its old id, before newer ones.
 *
 * The lanes are an `RcMap` keyed by dataset: a lane is made when its first run joins and let go
 * when its last one leaves, so no hand-kept map of lanes is cleaned up beside it. The state is
 * the layer's: two managers (two apps in one process) never share a lane.
 */
import { Context, Deferred, Effect, Exit, Layer, RcMap, Ref, Scope } from "effect"
import { RunLogRepo } from "../services/RunLogRepo.js"

/** How often another process's earlier unfinished runs are asked about again. */
const ELSEWHERE_EVERY = "50 millis"

/** A run as its lane knows it. */
export interface LaneRun {
  readonly id: number
  /** the lane's key (the dataset's lock key) */
  readonly key: string
  /** the dataset, asked about in the run log; none for a run that can only fail (no turn to wait for elsewhere) */
  readonly dataset?: { readonly user_id: string; readonly dataset: string } | undefined
}

/** A run's place in its dataset's lane. */
export interface LanePlace {
  /** waits until the run's work ahead may start: fewer than `lookahead` runs before it are unfinished here */
  readonly window: Effect.Effect<void>
  /** waits until the run's ordered part may start: every earlier run of the dataset has ended, in every process */
  readonly turn: Effect.Effect<void>
  /** the run has ended (its row is finished): the runs after it may go on */
  readonly leave: Effect.Effect<void>
}

/** One dataset's lane: its unfinished runs by id, each with a Deferred completed when it leaves. */
export interface Lane {
  readonly enter: (runId: number) => Effect.Effect<void>
  /** waits until fewer than `lookahead` runs before `runId` are in the lane */
  readonly window: (runId: number) => Effect.Effect<void>
  /** waits until no run before `runId` is in the lane */
  readonly turn: (runId: number) => Effect.Effect<void>
  readonly leave: (runId: number) => Effect.Effect<void>
  /** the ids in the lane, in order */
  readonly runs: Effect.Effect<ReadonlyArray<number>>
}

interface Entry {
  readonly id: number
  readonly left: Deferred.Deferred<void>
}

export const makeLane = (lookahead: number): Effect.Effect<Lane> =>
  Effect.map(Ref.make<ReadonlyArray<Entry>>([]), (queue) => {
    /**
     * Waits for the run whose leaving would bring the count under `allowed` when runs leave in
     * order, then looks again: a run that failed ahead may leave early.
     */
    const fewerBefore = (runId: number, allowed: number): Effect.Effect<void> =>
      Effect.flatMap(Ref.get(queue), (entries) => {
        const before = entries.findIndex((e) => e.id >= runId)
        const count = before === -1 ? entries.length : before
        return count < allowed
          ? Effect.void
          : Effect.zipRight(Deferred.await(entries[count - allowed]!.left), fewerBefore(runId, allowed))
      })
    return {
      enter: (runId) =>
        Effect.flatMap(Deferred.make<void>(), (left) =>
          Ref.update(queue, (entries) => {
            const at = entries.findIndex((e) => e.id > runId)
            return at === -1
              ? [...entries, { id: runId, left }]
              : [...entries.slice(0, at), { id: runId, left }, ...entries.slice(at)]
          })),
      window: (runId) => fewerBefore(runId, lookahead),
      turn: (runId) => fewerBefore(runId, 1),
      leave: (runId) =>
        Ref.modify(queue, (entries) => [entries.find((e) => e.id === runId), entries.filter((e) => e.id !== runId)])
          .pipe(Effect.flatMap((entry) => entry === undefined ? Effect.void : Deferred.succeed(entry.left, undefined))),
      runs: Effect.map(Ref.get(queue), (entries) => entries.map((e) => e.id))
    }
  })

export class RunLanes extends Context.Tag("gligabao/RunLanes")<RunLanes, {
  /** puts the run in its dataset's lane at its place by id, whenever it joins; leave the place when the run ends */
  readonly join: (run: LaneRun) => Effect.Effect<LanePlace>
}>() {}

export const makeRunLanes = (lookahead: number) =>
  Effect.gen(function*() {
    const runLog = yield* RunLogRepo
    const lanes = yield* RcMap.make({ lookup: (_key: string) => makeLane(Math.max(1, Math.floor(lookahead))) })
    return RunLanes.of({
      join: (run) =>
        Effect.gen(function*() {
          // the run's hold on its lane, released when it leaves (the last one out lets the lane go)
          const hold = yield* Scope.make()
          const lane = yield* RcMap.get(lanes, run.key).pipe(Scope.extend(hold))
          yield* lane.enter(run.id)
          // the run log answers for every process: a run here finishes its row before it leaves;
          // asked once, and polled only when an earlier run is unfinished (a schedule costs a run)
          const unfinished = run.dataset === undefined
            ? Effect.succeed(false)
            : runLog.earlierUnfinished(run.dataset.user_id, run.dataset.dataset, run.id)
          const elsewhere = Effect.flatMap(unfinished, (waiting) =>
            waiting
              ? Effect.repeat(Effect.delay(unfinished, ELSEWHERE_EVERY), { until: (waiting) => !waiting })
              : Effect.void)
          return {
            window: lane.window(run.id),
            turn: Effect.zipRight(lane.turn(run.id), Effect.asVoid(elsewhere)),
            leave: Effect.zipRight(lane.leave(run.id), Scope.close(hold, Exit.void))
          }
        })
    })
  })

/** The lanes of one manager; `lookahead` is `remember.lookahead` (1: one run after another). */
export const RunLanesLive = (lookahead: number) => Layer.scoped(RunLanes, makeRunLanes(lookahead))
