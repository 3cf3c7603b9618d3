/**
 * `GET /v1/gb/runs/{id}/events`: a run's changes as Server-Sent Events (docs/INGESTION.md). Its
 * own group, so the contract of the other run endpoints (Api.ts) stays as it is.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PathId } from "../domain/Wire.js"
import { Error400, Error401, Error403, Error404 } from "./ErrorBodies.js"

export const RUN_EVENTS_DESCRIPTION =
  "A Server-Sent Events stream (`text/event-stream`) of the run's changes, read from " +
  "the run log every 150 ms. It opens with `retry: 3000`; then one `id: <id>\\nevent: <name>\\ndata: <json>\\n\\n` " +
  "per change:\n\n" +
  "- `queued`: the run (as GET /v1/gb/runs/{id} shows it) when the stream opens on a queued run, or when a run " +
  "taken over after a crash is queued again;\n" +
  "- `started`: the run, once a worker took it;\n" +
  "- `stage`: a stage's start and its end, `{stage, status, started_at, finished_at, duration_ms, error}`;\n" +
  "- `progress`: a chunked text's progress, `{stage, chunks_done, chunks_total}`;\n" +
  "- `succeeded` (the run with its `response`), `failed` (the run with its `error`) or `cancelled` (the run, " +
  "cancelled while it was queued): the last event.\n\n" +
  "The stream ends with the run. A reconnect with `Last-Event-ID` (as an EventSource sends it) gets the events " +
  "after that one. A run already finished answers 204 with no body, which tells an EventSource to stop: its " +
  "final state is GET /v1/gb/runs/{id}. A comment line `: keep-alive` comes every 15 s. Scoped like GET " +
  "/v1/gb/runs/{id}: another user's run is a 404, the admin token a 403."

export class RunEventsGroup extends HttpApiGroup.make("runEvents")
  .add(
    HttpApiEndpoint.get("runEvents", "/v1/gb/runs/:id/events")
      .setPath(
        Schema.Struct({ id: PathId.annotations({ description: "the run's id (remember_run_id)", examples: [1] }) })
      )
      .addSuccess(
        HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
          description: "Server-Sent Events: queued, started, stage, progress, then succeeded, failed or cancelled"
        })
      )
      .addSuccess(HttpApiSchema.NoContent.annotations({ description: "the run has finished: nothing more to send" }))
      .setHeaders(Schema.Struct({
        "last-event-id": Schema.optional(Schema.String.annotations({
          description: "a reconnect: the id of the last event received; the stream goes on after it"
        }))
      }))
      .addError(Error400)
      .addError(Error404)
      .annotate(OpenApi.Summary, "A remember run's changes as Server-Sent Events, until it ends")
      .annotate(OpenApi.Description, RUN_EVENTS_DESCRIPTION)
  )
  .addError(Error401)
  .addError(Error403)
{}
