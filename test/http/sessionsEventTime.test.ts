/**
 * Sessions in event time (issue 40): `GET /v1/gb/sessions` reports `first_at`/`last_at` as when
 * the conversation happened (its messages' created_at, else the reference time), and beside them
 * `first_stored_at`/`last_stored_at`, when gligabao stored it.
 */
import { it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { describe, expect } from "vitest"
import { graph, rememberLayer } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { get, postJson, serveTest } from "../support/http.js"

const livesIn = graph([{ name: "Alice Smith", type: "person" }, { name: "Berlin", type: "place" }], [
  { source: "Alice Smith", target: "Berlin", relation: "lives_in", description: "Alice Smith lives in Berlin." }
])
const app = serveTest(rememberLayer(sqliteLayer(), () => livesIn)) as Layer.Layer<any, any, never>

describe("sessions in event time", () => {
  it.live("a conversation of last year is reported when it happened, and when it was stored", () =>
    Effect.gen(function*() {
      const before = new Date().toISOString()
      for (const [day, text] of [["2025-11-20", "I live in Berlin."], ["2025-11-22", "Still in Berlin."]] as const) {
        const res = yield* postJson("/v1/gb/remember", {
          user_id: "alice",
          session_id: "chat-1",
          messages: [
            { role: "user", content: "Hello", created_at: `${day}T09:00:00Z` },
            { role: "user", content: text, created_at: `${day}T09:05:00Z` }
          ]
        })
        expect(res.status, res.text).toBe(200)
      }
      // a text without message times: its reference time
      const note = yield* postJson("/v1/gb/remember", {
        user_id: "alice",
        session_id: "notes",
        text: "Alice Smith lives in Berlin.",
        reference_time: "2024-03-01T00:00:00Z"
      })
      expect(note.status, note.text).toBe(200)
      const sessions = (yield* get("/v1/gb/sessions?user_id=alice")).json.sessions
      const chat = sessions.find((s: any) => s.session_id === "chat-1")
      expect(chat).toMatchObject({ first_at: "2025-11-20T09:05:00.000Z", last_at: "2025-11-22T09:05:00.000Z" })
      expect(chat.first_stored_at >= before && chat.last_stored_at >= chat.first_stored_at).toBe(true)
      expect(sessions.find((s: any) => s.session_id === "notes")).toMatchObject({
        first_at: "2024-03-01T00:00:00.000Z",
        last_at: "2024-03-01T00:00:00.000Z"
      })
    }).pipe(Effect.provide(app)))
})
