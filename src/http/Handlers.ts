/**
 * Thin handlers: decode the request with its schema, hand it to a service, return the
 * response's schema Type (HttpApi encodes it); a failure stays a domain error, which
 * `jsonErrors` answers with its status. The remember bodies are read here, not by
 * HttpApi's body decoder, so that a body over its limit is a 413 before any JSON is parsed and
 * invalid UTF-8 is refused; what is parsed is then decoded by the request schema.
 */
import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Layer, Metric, Option } from "effect"
import { currentCaller } from "../auth/Authentication.js"
import { ADMIN_ONLY } from "../auth/tokens.js"
import { Forbidden, InvalidRequest, NotFound, PayloadTooLarge, statusOf } from "../domain/Errors.js"
import {
  BATCH_BODY_LIMIT,
  idempotencyKeyOf,
  validateRememberBatch,
  validateRememberRequest
} from "../domain/Remember.js"
import type { EvalRememberSuccess, RememberQueued, RememberSuccess } from "../domain/Responses.js"
import { type RunsResponse, runView } from "../domain/runView.js"
import { rememberWithTrajectory } from "../eval/trajectory.js"
import { Images } from "../images/Images.js"
import { runRememberBatch } from "../operations.js"
import { RememberManager } from "../pipeline/RememberManager.js"
import { RunLogRepo } from "../services/RunLogRepo.js"
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from "../telemetry/prometheus.js"
import { AdminHandlersLive } from "./AdminHandlers.js"
import { GligabaoApi } from "./Api.js"
import { requireUser } from "./authentication.js"
import { CorrectHandlersLive } from "./CorrectHandlers.js"
import { ForgetHandlersLive, UsersHandlersLive } from "./ForgetHandlers.js"
import { jsonOfBytes, readBytesUpTo, readJsonBody } from "./readBody.js"
import { ReadHandlersLive } from "./ReadHandlers.js"
import { readiness } from "./readiness.js"
import { jsonResponse } from "./responses.js"
import { RunEventsHandlersLive } from "./RunEventsHandlers.js"

/** A text request: 1 MiB of text plus room for JSON escaping and the other fields. */
export const TEXT_BODY_LIMIT = 2 * 1024 * 1024
/** An image request: 5 MiB decoded is about 6.7 MiB of base64, plus the envelope. */
export const IMAGE_BODY_LIMIT = 7 * 1024 * 1024

const tooLarge = (limit: number) => new PayloadTooLarge({ message: `request body is over the limit of ${limit} bytes` })

/** A chunked body past this is cut off (connection reset) instead of drained for its 413. */
const DRAIN_LIMIT = 4 * IMAGE_BODY_LIMIT

/** Reads the body as JSON with the image limit, then applies the text limit to text requests. */
const readRememberBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const declared = Number(request.headers["content-length"] ?? NaN)
    if (Number.isFinite(declared) && declared > IMAGE_BODY_LIMIT) return yield* tooLarge(IMAGE_BODY_LIMIT)
    const read = yield* Effect.either(readBytesUpTo(request, IMAGE_BODY_LIMIT, DRAIN_LIMIT))
    if (Either.isLeft(read)) return yield* new InvalidRequest({ message: "could not read the request body" })
    if (Option.isNone(read.right)) return yield* tooLarge(IMAGE_BODY_LIMIT)
    const bytes = read.right.value
    const body = yield* jsonOfBytes(bytes)
    const isImage = typeof body === "object" && body !== null && "image" in body &&
      (body as { image: unknown }).image != null
    if (!isImage && bytes.length > TEXT_BODY_LIMIT) return yield* tooLarge(TEXT_BODY_LIMIT)
    return body
  })

/** The caller, unless it is an admin token: runs are a user's (Forbidden, 403). */
const userCaller = Effect.flatMap(
  currentCaller,
  (caller) => caller._tag === "Admin" ? Effect.fail(new Forbidden({ message: ADMIN_ONLY })) : Effect.succeed(caller)
)

export const RememberHandlersLive = HttpApiBuilder.group(GligabaoApi, "remember", (handlers) =>
  Effect.gen(function*() {
    const manager = yield* RememberManager
    const runLog = yield* RunLogRepo
    return handlers
      .handleRaw("remember", ({ request }) =>
        Effect.gen(function*() {
          const valid = yield* Effect.flatMap(readRememberBody(request), validateRememberRequest)
          const key = yield* idempotencyKeyOf(request.headers["idempotency-key"], valid)
          yield* requireUser(valid.user_id)
          const run = yield* manager.accept(valid, { idempotencyKey: key })
          if (valid.wait === false) {
            const status = run.created
              ? "queued"
              : Option.match(yield* runLog.get(run.runId), { onNone: () => "queued" as const, onSome: (r) => r.status })
            const body: RememberQueued = { remember_run_id: run.runId, status }
            return jsonResponse(body, 202).pipe(
              HttpServerResponse.setHeader("location", `/v1/gb/runs/${run.runId}`)
            )
          }
          // The run is forked by the manager: if the client goes away, only this wait ends.
          const result = yield* run.await
          const success: RememberSuccess = { remember_run_id: result.runId, ...result.response }
          return success
        }))
      // every item validated before any is queued; one transaction queues them all, in order
      .handleRaw("rememberBatch", ({ request }) =>
        Effect.gen(function*() {
          const valid = yield* Effect.flatMap(readJsonBody(request, BATCH_BODY_LIMIT), validateRememberBatch)
          yield* requireUser(valid.user_id)
          const outcome = yield* runRememberBatch(valid).pipe(
            Effect.provideService(RememberManager, manager),
            Effect.provideService(RunLogRepo, runLog)
          )
          return jsonResponse(outcome.body, outcome._tag === "Queued" ? 202 : 200)
        }))
      // eval mode: the same request and run, plus its ATIF trajectory (also when it fails)
      .handleRaw("evalRemember", ({ request }) =>
        Effect.gen(function*() {
          const valid = yield* Effect.flatMap(readRememberBody(request), validateRememberRequest)
          yield* requireUser(valid.user_id)
          const { outcome, trajectory } = yield* rememberWithTrajectory(manager, valid)
          return Either.match(outcome, {
            // a failed run answers its error's status with the trajectory beside the message
            onLeft: (e) => jsonResponse({ error: e.message, trajectory }, statusOf(e)),
            onRight: (result): EvalRememberSuccess => ({
              remember_run_id: result.runId,
              ...result.response,
              trajectory
            })
          })
        }))
      .handle("getRun", ({ path }) =>
        Effect.gen(function*() {
          const caller = yield* userCaller
          // another user's run is as absent as a missing one: its id says nothing
          const run = Option.filter(
            yield* runLog.get(path.id),
            (r) => caller._tag === "Open" || r.user_id === caller.userId
          )
          if (Option.isNone(run)) return yield* new NotFound({ message: `no remember run with id ${path.id}` })
          return runView(run.value)
        }))
      .handle("cancelRun", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* userCaller
          yield* requireUser(payload.user_id)
          return yield* manager.cancel({ ...payload, id: path.id })
        }))
      .handle("listRuns", ({ urlParams: params }) =>
        Effect.gen(function*() {
          yield* userCaller
          yield* requireUser(params.user_id)
          // one more than asked tells whether there is a next page
          const { runs } = yield* runLog.list({
            user_id: params.user_id,
            dataset: params.dataset,
            status: params.status,
            before_id: params.before_id,
            limit: params.limit + 1,
            offset: 0,
            order: "id"
          })
          const page = runs.slice(0, params.limit)
          const response: RunsResponse = {
            runs: page.map(runView),
            next_before_id: runs.length > params.limit ? page[page.length - 1]!.id : null
          }
          return response
        }))
  }))

export const ImagesHandlersLive = HttpApiBuilder.group(GligabaoApi, "images", (handlers) =>
  Effect.gen(function*() {
    const images = yield* Images
    return handlers.handle("getImage", ({ path: { id }, urlParams: { dataset, user_id } }) =>
      Effect.zipRight(
        requireUser(user_id),
        Effect.map(images.image({ user_id, dataset, id }), (image) =>
          HttpServerResponse.uint8Array(image.bytes, {
            contentType: image.artifact.media_type,
            headers: { "x-content-type-options": "nosniff" }
          }))
      ))
  }))

export const HealthHandlersLive = HttpApiBuilder.group(
  GligabaoApi,
  "health",
  (handlers) =>
    handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
      .handle("readyz", () =>
        Effect.map(readiness, (report) =>
          report.ready
            ? HttpServerResponse.unsafeJson({ status: "ready", ...report.body })
            : HttpServerResponse.unsafeJson({ error: report.error, ...report.body }, { status: 503 })))
)

export const MetricsHandlersLive = HttpApiBuilder.group(
  GligabaoApi,
  "metrics",
  (handlers) =>
    handlers.handleRaw(
      "metrics",
      () =>
        Effect.map(Metric.snapshot, (snapshot) =>
          HttpServerResponse.text(renderPrometheus(snapshot), { contentType: PROMETHEUS_CONTENT_TYPE }))
    )
)

export const ApiHandlersLive = Layer.mergeAll(
  RememberHandlersLive,
  ImagesHandlersLive,
  HealthHandlersLive,
  MetricsHandlersLive,
  ReadHandlersLive,
  ForgetHandlersLive,
  CorrectHandlersLive,
  UsersHandlersLive,
  AdminHandlersLive,
  RunEventsHandlersLive
)
