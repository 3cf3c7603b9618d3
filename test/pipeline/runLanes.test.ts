/**
 * The per-dataset lanes of the remember runs (src/pipeline/RunLanes.ts), without a database: a
 * lane keeps its runs in id order, a run's window opens once fewer than `lookahead` runs are
 * before it and its turn once none is; across processes the turn also waits for the run log,
 * asked again every 50 ms on the test's clock. Nothing here depends on how long anything takes:
 * a wait that must not end is checked after the steps that could wrongly end it.
 */
import { it } from "@effect/vitest"
import { Effect, Fiber, Option, TestClock } from "effect"
import { expect } from "vitest"
import { makeLane, makeRunLanes } from "../../src/pipeline/RunLanes.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"

/** Whether a forked wait has ended, once every fiber that can run has run. */
const ended = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  Effect.zipRight(Effect.yieldNow(), Effect.map(Fiber.poll(fiber), Option.isSome))

it.effect("a lane keeps its runs in id order, a run joining late with an older id included", () =>
  Effect.gen(function*() {
    const lane = yield* makeLane(4)
    yield* Effect.forEach([3, 5, 1, 4], lane.enter)
    expect(yield* lane.runs).toEqual([1, 3, 4, 5])
    yield* lane.leave(3)
    expect(yield* lane.runs).toEqual([1, 4, 5])
  }))

it.effect("a run's turn comes once every run before it has left, in whatever order they leave", () =>
  Effect.gen(function*() {
    const lane = yield* makeLane(4)
    yield* Effect.forEach([1, 2, 3], lane.enter)
    yield* lane.turn(1)
    const third = yield* Effect.fork(lane.turn(3))
    // the run just before it ends first (its work ahead failed): the first one is still there
    yield* lane.leave(2)
    expect(yield* ended(third)).toBe(false)
    yield* lane.leave(1)
    yield* Fiber.join(third)
  }))

it.effect("a run's window opens once fewer than lookahead runs are before it", () =>
  Effect.gen(function*() {
    const lane = yield* makeLane(2)
    yield* Effect.forEach([1, 2, 3, 4], lane.enter)
    // one run before it: inside the window of two
    yield* lane.window(2)
    const third = yield* Effect.fork(lane.window(3))
    const fourth = yield* Effect.fork(lane.window(4))
    expect(yield* ended(third)).toBe(false)
    yield* lane.leave(1)
    yield* Fiber.join(third)
    expect(yield* ended(fourth)).toBe(false)
    yield* lane.leave(2)
    yield* Fiber.join(fourth)
  }))

it.effect("with lookahead 1 the window is the turn: one run after another", () =>
  Effect.gen(function*() {
    const lane = yield* makeLane(1)
    yield* Effect.forEach([1, 2], lane.enter)
    const second = yield* Effect.fork(lane.window(2))
    expect(yield* ended(second)).toBe(false)
    yield* lane.leave(1)
    yield* Fiber.join(second)
  }))

/** Lanes over a run log whose answers to "an earlier run unfinished elsewhere?" the test gives. */
const lanesWith = (answers: Array<boolean>) => {
  const asked: Array<number> = []
  const runLog = {
    earlierUnfinished: (_user: string, _dataset: string, runId: number) =>
      Effect.sync(() => {
        asked.push(runId)
        return answers.shift() ?? false
      })
  } as unknown as RunLogRepo["Type"]
  return { asked, lanes: makeRunLanes(2).pipe(Effect.provideService(RunLogRepo, runLog)) }
}

const dataset = { user_id: "alice", dataset: "main" }

it.scoped("a turn also waits for the dataset's earlier runs in other processes, asked every 50 ms", () =>
  Effect.gen(function*() {
    const { asked, lanes } = lanesWith([true, true, false])
    const place = yield* (yield* lanes).join({ id: 7, key: "main", dataset })
    const turn = yield* Effect.fork(place.turn)
    expect(yield* ended(turn)).toBe(false)
    expect(asked).toEqual([7])
    yield* TestClock.adjust("49 millis")
    expect(yield* ended(turn)).toBe(false)
    expect(asked).toEqual([7])
    yield* TestClock.adjust("1 millis")
    expect(asked).toEqual([7, 7])
    yield* TestClock.adjust("50 millis")
    yield* Fiber.join(turn)
    expect(asked).toEqual([7, 7, 7])
  }))

it.scoped("datasets have lanes of their own; a run that can only fail asks no run log", () =>
  Effect.gen(function*() {
    const { asked, lanes } = lanesWith([])
    const runLanes = yield* lanes
    const first = yield* runLanes.join({ id: 1, key: "a", dataset })
    const other = yield* runLanes.join({ id: 2, key: "b", dataset })
    const invalid = yield* runLanes.join({ id: 3, key: "a" })
    // run 2 is in another lane: run 1, unfinished, does not hold it up
    yield* other.window
    yield* other.turn
    const blocked = yield* Effect.fork(invalid.turn)
    expect(yield* ended(blocked)).toBe(false)
    yield* first.leave
    yield* Fiber.join(blocked)
    expect(asked).toEqual([2])
  }))
