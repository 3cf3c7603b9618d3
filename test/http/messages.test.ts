/**
 * Conversations in (docs/INGESTION.md): `messages` instead of `text` on `POST /v1/gb/remember`
 * and batch items, on both databases. The transcript and the messages' structure are stored as
 * one episode at the last message's time; the extraction prompt names the speakers (the
 * scripted model checks it, and answers first-person statements as facts about the speaker);
 * long conversations are chunked between messages; bad input is a 400 naming
 * `messages[i].<field>` and stores nothing.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { describe, expect } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { expectError, postJson, serveTest } from "../support/http.js"

const prompts: Array<{ system: string; user: string }> = []

/**
 * The bench model, reading "I live in X since Y." in a line as a fact about that line's speaker,
 * which the prompt must name for it: the speaker list and the first-person rule are asserted.
 */
const script = (r: LlmRequest) => {
  const user = r.messages[0]!.content as string
  const scripted = answer(r)
  if (scripted.stage !== "extract_graph") return { text: scripted.text }
  prompts.push({ system: r.system ?? "", user })
  if (!user.startsWith("Speakers:\n")) return { text: scripted.text }
  expect(r.system).toContain(
    "A statement in the first person (I, me, my, we, our) is a fact about the message's speaker"
  )
  const speakers = new Set([...user.matchAll(/^- (.+): /gm)].map((m) => m[1]!))
  const edges = [...user.matchAll(/^(?:\[[^\]]+\] )?(.+?) \((\w+)\): I live in (\w+) since (\d{4})\./gm)].map((m) => {
    expect(speakers.has(m[1]!), `speaker ${m[1]} is listed`).toBe(true)
    return {
      source: m[1]!,
      target: m[3]!,
      relation: "lives in",
      description: `${m[1]} lives in ${m[3]}`,
      valid_at: `${m[4]}-01-01T00:00:00Z`,
      invalid_at: null
    }
  })
  const names = [...new Set(edges.flatMap((e) => [e.source, e.target]))]
  return {
    text: JSON.stringify({ entities: names.map((name) => ({ name, type: "", description: "" })), edges })
  }
}

const withApp = <A, E>(storage: StorageLayer, program: Effect.Effect<A, E, any>, chunkSize = 2048) =>
  program.pipe(
    Effect.provide(
      serveTest(rememberLayer(storage, script, { settings: { chunkSize, chunkOverlapPercent: 0 } })) as Layer.Layer<
        any,
        any,
        never
      >
    )
  ) as Effect.Effect<A, E, never>

const rows = <A extends object>(query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(query)).pipe(Effect.orDie)

const CONVERSATION = [
  { role: "user", content: "I live in Paris since 2024.\nIt is lovely.", created_at: "2025-01-15T10:00:00Z" },
  { role: "assistant", content: "Noted!", created_at: "2025-01-15T10:00:05Z" },
  { role: "user", name: "Bob Stone", content: "I live in Rome since 2019.", created_at: "2025-01-15T10:01:00Z" }
]

forEachDialect((_dialect, makeLayer) => {
  describe("remember with messages", () => {
    it.live("stores the transcript as one episode at the last message's time; first person is the speaker", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          prompts.length = 0
          const res = yield* postJson("/v1/gb/remember", { user_id: "alice", messages: CONVERSATION })
          expect(res.status, res.text).toBe(200)
          expect(res.json).toMatchObject({ kind: "episode", valid_at: "2025-01-15T10:01:00.000Z" })
          expect(res.json.edges.map((e: any) => e.description)).toEqual([
            "alice lives in Paris",
            "Bob Stone lives in Rome"
          ])
          expect(prompts[0]!.user).toMatch(
            /^Speakers:\n- alice: the user\n- assistant: the assistant\n- Bob Stone: the user\n/
          )
          const [artifact] = yield* rows<{ text: string; kind: string; metadata: string }>(
            `SELECT text, kind, metadata FROM gb_artifacts WHERE id = ${res.json.artifact_id}`
          )
          expect(artifact!.kind).toBe("episode")
          expect(artifact!.text).toBe(
            "[2025-01-15T10:00:00.000Z] alice (user): I live in Paris since 2024. It is lovely.\n\n" +
              "[2025-01-15T10:00:05.000Z] assistant (assistant): Noted!\n\n" +
              "[2025-01-15T10:01:00.000Z] Bob Stone (user): I live in Rome since 2019."
          )
          const places = JSON.parse(artifact!.metadata).messages
          expect(places.map((p: any) => [p.role, p.speaker, p.name, p.created_at])).toEqual([
            ["user", "alice", undefined, "2025-01-15T10:00:00.000Z"],
            ["assistant", "assistant", undefined, "2025-01-15T10:00:05.000Z"],
            ["user", "Bob Stone", "Bob Stone", "2025-01-15T10:01:00.000Z"]
          ])
          for (const p of places) expect(artifact!.text.slice(p.start_offset, p.end_offset)).toMatch(/^\[2025-/)
          // a request's reference_time wins over the messages'
          const dated = yield* postJson("/v1/gb/remember", {
            user_id: "alice",
            reference_time: "2026-01-01T00:00:00Z",
            messages: [{ role: "user", content: "Hello." }]
          })
          expect(dated.json.valid_at).toBe("2026-01-01T00:00:00.000Z")
        })
      ))

    it.live("batch items take messages too, spoken by the batch's user", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const res = yield* postJson("/v1/gb/remember/batch", {
            user_id: "carol",
            wait: true,
            items: [{ messages: [{ role: "user", content: "I live in Oslo since 2022." }] }, { text: "A note." }]
          })
          expect(res.status, res.text).toBe(200)
          expect(res.json.items[0].edges.map((e: any) => e.description)).toEqual(["carol lives in Oslo"])
          expect(res.json.items[1].kind).toBe("knowledge")
        })
      ))

    it.live("a long conversation is chunked between messages", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const messages = Array.from({ length: 12 }, (_, i) => ({
            role: i % 2 === 0 ? "user" : "assistant",
            content: `Message number ${i} says a few words about the harbour and the weather of that day.`
          }))
          const res = yield* postJson("/v1/gb/remember", { user_id: "dave", messages })
          expect(res.status, res.text).toBe(200)
          expect(res.json.chunks.length).toBeGreaterThan(1)
          const chunks = yield* rows<{ text: string }>(
            `SELECT text FROM gb_artifacts WHERE parent_id = ${res.json.artifact_id} AND kind = 'chunk' ORDER BY id`
          )
          for (const chunk of chunks) {
            expect(chunk.text).toMatch(/^(dave \(user\)|assistant \(assistant\)): Message number/)
            expect(chunk.text.trimEnd()).toMatch(/of that day\.$/)
          }
          const [parent] = yield* rows<{ kind: string; metadata: string }>(
            `SELECT kind, metadata FROM gb_artifacts WHERE id = ${res.json.artifact_id}`
          )
          expect(parent!.kind).toBe("episode")
          expect(JSON.parse(parent!.metadata).messages).toHaveLength(12)
        }),
        64
      ))

    it.live("bad messages are a 400 naming messages[i].<field>, and nothing is stored", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const refuse = (body: Record<string, unknown>, message: RegExp) =>
            Effect.map(
              postJson("/v1/gb/remember", { user_id: "erin", ...body }),
              (res) => expectError(res, 400, message)
            )
          yield* refuse({ messages: [] }, /^messages must not be empty/)
          yield* refuse({ messages: "hi" }, /^messages must be an array of messages/)
          yield* refuse({ messages: [{ role: "bot", content: "x" }] }, /^messages\[0\]\.role must be one of/)
          yield* refuse({ messages: [{ role: "user" }] }, /^messages\[0\]\.content/)
          yield* refuse(
            { messages: [{ role: "user", content: "x" }, { role: "user", content: "  " }] },
            /^messages\[1\]\.content must not be empty/
          )
          yield* refuse(
            { messages: [{ role: "user", content: "x", created_at: "yesterday" }] },
            /^messages\[0\]\.created_at/
          )
          yield* refuse({ messages: [{ role: "user", content: "x", name: "" }] }, /^messages\[0\]\.name/)
          yield* refuse(
            { messages: Array.from({ length: 201 }, () => ({ role: "user", content: "x" })) },
            /^messages must have at most 200 messages/
          )
          yield* refuse(
            {
              messages: [{ role: "user", content: "x".repeat(600_000) }, { role: "user", content: "y".repeat(600_000) }]
            },
            /^messages must hold at most 1048576 bytes/
          )
          yield* refuse(
            { text: "x", messages: [{ role: "user", content: "y" }] },
            /^messages must not be given together with text/
          )
          yield* refuse({ kind: "knowledge", messages: [{ role: "user", content: "y" }] }, /^kind must be episode/)
          const [stored] = yield* rows<{ n: number }>(
            `SELECT COUNT(*) AS n FROM gb_artifacts a JOIN gb_datasets d ON d.id = a.dataset_id WHERE d.user_id = 'erin'`
          )
          expect(Number(stored!.n)).toBe(0)
        })
      ))
  })
})
