/**
 * `GET /v1/gb/runs/{id}/events`: polls the run log and streams the differences as Server-Sent
 * Events until the run ends (src/domain/runEvents.ts says which). The poll runs inside the
 * response's stream, so a client that goes away interrupts it.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Chunk, Duration, Effect, Option, Schedule, Stream } from "effect"
import { currentCaller } from "../auth/Authentication.js"
import { ADMIN_ONLY } from "../auth/tokens.js"
import { Forbidden, NotFound } from "../domain/Errors.js"
import type { RunWithStages } from "../domain/Rows.js"
import { compareEventIds, diffRun, eventId, isFinished, SSE_RETRY_MS, sseFrame } from "../domain/runEvents.js"
import { RunLogRepo } from "../services/RunLogRepo.js"
import { GligabaoApi } from "./Api.js"

export const RUN_EVENTS_POLL = Duration.millis(150)
export const RUN_EVENTS_HEARTBEAT = Duration.seconds(15)

interface PollState {
  readonly previous: RunWithStages | undefined
  /** the read to diff next; undefined: read the log after a poll interval */
  readonly current: RunWithStages | undefined
  readonly done: boolean
}

/**
 * The SSE frames of a run from `first` (its state when the stream opened) to its end, after the
 * reconnection delay; with `after` (a reconnect's `Last-Event-ID`), only the events past it.
 */
export const runEventFrames = (
  runLog: RunLogRepo["Type"],
  first: RunWithStages,
  options: {
    readonly poll?: Duration.DurationInput
    readonly heartbeat?: Duration.DurationInput
    readonly after?: string | undefined
  } = {}
): Stream.Stream<string> => {
  const after = options.after
  const poll = options.poll ?? RUN_EVENTS_POLL
  const events = Stream.unfoldChunkEffect<PollState, string, never, never>(
    { previous: undefined, current: first, done: false },
    (state) =>
      Effect.gen(function*() {
        if (state.done) return Option.none()
        const current = state.current ?? Option.getOrUndefined(
          yield* Effect.zipRight(
            Effect.sleep(poll),
            runLog.get(first.id)
          )
        )
        // run rows are never deleted; should one vanish, the stream ends
        if (current === undefined) return Option.none()
        const events = diffRun(state.previous, current).map((e) => ({ e, id: eventId(e, current) }))
        // a reconnect is sent what it has not seen: the run so far, past its last event
        const fresh = state.previous === undefined && after !== undefined
          ? events.filter(({ id }) => compareEventIds(id, after) > 0)
          : events
        const frames = Chunk.fromIterable(fresh.map(({ e, id }) => sseFrame(e, id)))
        return Option.some([frames, { previous: current, current: undefined, done: isFinished(current) }] as const)
      })
  )
  const heartbeat = Stream.fromSchedule(Schedule.spaced(options.heartbeat ?? RUN_EVENTS_HEARTBEAT)).pipe(
    Stream.as(": keep-alive\n\n")
  )
  return Stream.concat(
    Stream.make(`retry: ${SSE_RETRY_MS}\n\n`),
    Stream.merge(events, heartbeat, { haltStrategy: "left" })
  )
}

export const RunEventsHandlersLive = HttpApiBuilder.group(
  GligabaoApi,
  "runEvents",
  (handlers) =>
    Effect.gen(function*() {
      const runLog = yield* RunLogRepo
      return handlers.handle("runEvents", ({ path }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const caller = yield* currentCaller
          if (caller._tag === "Admin") return yield* new Forbidden({ message: ADMIN_ONLY })
          // another user's run is as absent as a missing one (as GET /v1/gb/runs/{id})
          const run = Option.filter(
            yield* runLog.get(path.id),
            (r) => caller._tag === "Open" || r.user_id === caller.userId
          )
          if (Option.isNone(run)) return yield* new NotFound({ message: `no remember run with id ${path.id}` })
          // a finished run has nothing more to say: 204 tells an EventSource to stop reconnecting
          // (its final state is GET /v1/gb/runs/{id})
          if (isFinished(run.value)) return HttpServerResponse.empty({ status: 204 })
          const after = request.headers["last-event-id"]
          return HttpServerResponse.stream(runEventFrames(runLog, run.value, { after }).pipe(Stream.encodeText), {
            contentType: "text/event-stream",
            headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
          })
        }))
    })
)
