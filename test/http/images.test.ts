/**
 * Images over HTTP, in process: `POST /v1/gb/remember` with an image (the response of
 * contracts section 15, repeats, 400s before anything is queued, 502/503), the run view of an
 * image run, and `GET /v1/gb/images/{id}` (the bytes with their media type; 400/404 as `{"error"}`).
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect } from "vitest"
import { LocalImageStoreLive } from "../../layers/files/LocalImageStore.js"
import { type LlmScript, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { LlmUnavailable } from "../../src/domain/Errors.js"
import { MAX_IMAGE_BYTES } from "../../src/domain/Image.js"
import { IMAGE_STAGES } from "../../src/domain/Stages.js"
import { TEXT_BODY_LIMIT } from "../../src/http/Handlers.js"
import { rememberLayer } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { expectError, get, postJson, send, serveTest, type TestResponse } from "../support/http.js"
import { b64, gif, jpeg, png, sha256 } from "../support/images.js"

const REMEMBER = "/v1/gb/remember"

const answer = ScriptedLlm.json(
  {
    theme: "Plot",
    title: "Revenue 2024",
    text_blocks: [{ kind: "title", text: "Revenue 2024" }, { kind: "axis", text: "Q1" }]
  },
  { model: "claude-haiku-5-5", usage: { inputTokens: 1500, outputTokens: 120 } }
)

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`)).pipe(
    Effect.map((rows) => Number(rows[0]!.n)),
    Effect.orDie
  )

/** GET returning the raw bytes. */
const getBytes = (path: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(HttpClientRequest.get(path))
    const body = new Uint8Array(yield* response.arrayBuffer)
    return { status: response.status, headers: response.headers, body }
  }).pipe(Effect.scoped, Effect.orDie)

/** Runs `program(dir)` against a fresh app whose image files are in the temp directory `dir`. */
const withApp = <A, E>(script: LlmScript, program: (dir: string) => Effect.Effect<A, E, any>) =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "gligabao-http-images-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  ).pipe(
    Effect.flatMap((dir) =>
      program(dir).pipe(
        Effect.provide(
          serveTest(rememberLayer(sqliteLayer(), script, { images: LocalImageStoreLive(dir) })) as Layer.Layer<
            any,
            any,
            never
          >
        )
      )
    ),
    Effect.scoped
  ) as Effect.Effect<A, E, never>

describe("POST /v1/gb/remember with an image", () => {
  it.live("200 with the image response, in the contract's field order; the run shows the image stages", () => {
    const bytes = png({ width: 3, height: 3 })
    return withApp({ extract_image: [answer] }, () =>
      Effect.gen(function*() {
        const res = yield* postJson(REMEMBER, {
          user_id: "alice",
          image: b64(bytes),
          session_id: "s1",
          reference_time: "2025-02-01T00:00:00Z"
        })
        expect(res.status, res.text).toBe(200)
        expect(Object.keys(res.json)).toEqual([
          "remember_run_id",
          "pipeline",
          "image_artifact_id",
          "extraction_id",
          "session_id",
          "path",
          "media_type",
          "bytes",
          "sha256",
          "theme",
          "title",
          "text",
          "text_blocks",
          "model",
          "provider",
          "reasoning",
          "input_tokens",
          "output_tokens",
          "cost_usd",
          "cached",
          "valid_at",
          "created_at"
        ])
        expect(res.json).toMatchObject({
          pipeline: "image",
          session_id: "s1",
          path: `1/${sha256(bytes)}.png`,
          media_type: "image/png",
          bytes: bytes.length,
          sha256: sha256(bytes),
          theme: "plot",
          title: "Revenue 2024",
          text: "Revenue 2024\nQ1",
          text_blocks: [{ kind: "title", text: "Revenue 2024" }, { kind: "axis", text: "Q1" }],
          model: "claude-haiku-5-5",
          provider: "scripted",
          reasoning: "low",
          input_tokens: 1500,
          output_tokens: 120,
          cached: false,
          valid_at: "2025-02-01T00:00:00.000Z"
        })
        expect(res.json.cost_usd).toBeCloseTo(0.0021, 10)

        const run = yield* get(`/v1/gb/runs/${res.json.remember_run_id}`)
        expect(run.json).toMatchObject({
          pipeline: "image",
          status: "succeeded",
          artifact_id: res.json.image_artifact_id
        })
        expect(Object.keys(run.json.stages)).toEqual([...IMAGE_STAGES])
        for (const stage of IMAGE_STAGES) expect(run.json.stages[stage].status).toBe("succeeded")
        expect(run.json.params).toMatchObject({ kind: "image", media_type: "image/png", image_bytes: bytes.length })
      }))
  })

  it.live("a repeat is a new run answered from the stored extraction (cached), with find_existing_image only", () => {
    const image = b64(jpeg())
    return withApp({ extract_image: [answer] }, () =>
      Effect.gen(function*() {
        const first = yield* postJson(REMEMBER, { user_id: "alice", image })
        const again = yield* postJson(REMEMBER, { user_id: "alice", image, session_id: "later" })
        expect(again.status).toBe(200)
        expect(again.json.remember_run_id).not.toBe(first.json.remember_run_id)
        expect(again.json).toMatchObject({
          cached: true,
          image_artifact_id: first.json.image_artifact_id,
          media_type: "image/jpeg"
        })
        expect(again.json).not.toHaveProperty("session_id")
        const run = yield* get(`/v1/gb/runs/${again.json.remember_run_id}`)
        expect(run.json.stages.find_existing_image.status).toBe("succeeded")
        expect(run.json.stages.extract_image.status).toBe("not_started")
        expect(run.json.stages.store_image.status).toBe("not_started")
        expect((yield* ScriptedLlm).calls).toHaveLength(1)
      }))
  })

  it.live("an image request may be larger than the text limit", () => {
    // a PNG signature and 2 MiB of zeros: its base64 is over the 2 MiB text body limit
    const big = new Uint8Array(2 * 1024 * 1024)
    big.set(png())
    expect(b64(big).length).toBeGreaterThan(TEXT_BODY_LIMIT)
    return withApp({ extract_image: [answer] }, () =>
      Effect.gen(function*() {
        const res = yield* postJson(REMEMBER, { user_id: "alice", image: b64(big) })
        expect(res.status, res.text.slice(0, 300)).toBe(200)
        expect(res.json.bytes).toBe(big.length)
      }))
  })

  const over = new Uint8Array(MAX_IMAGE_BYTES + 1)
  over.set(png())
  const invalid: ReadonlyArray<[string, unknown, RegExp]> = [
    ["not base64", { user_id: "alice", image: "not base64!" }, /image is not base64/],
    ["base64url", { user_id: "alice", image: "iVBORw0KGgo-_w==" }, /base64url/],
    [
      "a PDF",
      { user_id: "alice", image: b64(new Uint8Array(Buffer.from("%PDF-1.7 ..."))) },
      /JPEG, PNG, GIF or WebP; found a PDF document/
    ],
    [
      "unknown bytes",
      { user_id: "alice", image: b64(new Uint8Array([0xca, 0xfe, 0xba, 0xbe])) },
      /found unknown data starting with bytes ca fe ba be/
    ],
    ["over 5 MiB decoded", { user_id: "alice", image: b64(over) }, /at most 5 MiB/],
    ["an image with a bad session_id", { user_id: "alice", image: b64(gif()), session_id: "a\u0001b" }, /session_id/],
    ["an image with kind", { user_id: "alice", image: b64(gif()), kind: "episode" }, /kind.*image/]
  ]
  for (const [what, body, message] of invalid) {
    it.live(`400 for ${what}, before anything is queued`, () =>
      withApp({}, () =>
        Effect.gen(function*() {
          expectError(yield* postJson(REMEMBER, body), 400, message)
          expect(yield* count("gb_remember_runs")).toBe(0)
          expect((yield* ScriptedLlm).calls).toHaveLength(0)
        })))
  }

  it.live("502 when the model's answer is unusable; the run log names extract_image", () =>
    withApp({ extract_image: [{ text: "A nice picture of a cat." }] }, () =>
      Effect.gen(function*() {
        expectError(yield* postJson(REMEMBER, { user_id: "alice", image: b64(gif()) }), 502, /extract_image/)
        expect(yield* count("gb_image_artifacts")).toBe(0)
        expect(yield* count("gb_inferences")).toBe(1)
        const run = yield* get("/v1/gb/runs/1")
        expect(run.json).toMatchObject({ pipeline: "image", status: "failed" })
        expect(run.json.stages.extract_image.status).toBe("failed")
      })))

  it.live("503 when no LLM is configured", () =>
    withApp({
      extract_image: [{ fail: new LlmUnavailable({ message: "no LLM is configured: set ANTHROPIC_API_KEY" }) }]
    }, () =>
      Effect.gen(function*() {
        expectError(yield* postJson(REMEMBER, { user_id: "alice", image: b64(gif()) }), 503, /ANTHROPIC_API_KEY/)
        expect(yield* count("gb_image_artifacts")).toBe(0)
      })))
})

describe("GET /v1/gb/images/{id}", () => {
  it.live("returns the stored bytes with their media type", () => {
    const bytes = png({ width: 5, height: 5, rgb: [1, 2, 3] })
    return withApp({ extract_image: [answer] }, () =>
      Effect.gen(function*() {
        const stored = (yield* postJson(REMEMBER, { user_id: "alice", dataset: "shots", image: b64(bytes) })).json
        const res = yield* getBytes(`/v1/gb/images/${stored.image_artifact_id}?user_id=alice&dataset=shots`)
        expect(res.status).toBe(200)
        expect(res.headers["content-type"]).toBe("image/png")
        expect(Buffer.from(res.body).equals(Buffer.from(bytes))).toBe(true)
      }))
  })

  it.live("400 and 404 as {error}", () =>
    withApp({ extract_image: [answer] }, (dir) =>
      Effect.gen(function*() {
        const stored = (yield* postJson(REMEMBER, { user_id: "alice", image: b64(gif()) })).json
        const id = stored.image_artifact_id
        expectError(yield* get(`/v1/gb/images/abc?user_id=alice&dataset=main`), 400, /id/)
        expectError(yield* get(`/v1/gb/images/${id}?dataset=main`), 400, /user_id/)
        expectError(yield* get(`/v1/gb/images/${id}?user_id=alice`), 400, /dataset/)
        expectError(yield* get(`/v1/gb/images/${id}?user_id=alice&dataset=nope`), 404, /dataset "nope"/)
        // another user's image is not found, even by its id
        expectError(yield* get(`/v1/gb/images/${id}?user_id=bob&dataset=main`), 404)
        expectError(
          yield* get(`/v1/gb/images/${id + 1}?user_id=alice&dataset=main`),
          404,
          new RegExp(`image ${id + 1}`)
        )
        rmSync(join(dir, stored.path))
        expectError(yield* get(`/v1/gb/images/${id}?user_id=alice&dataset=main`), 404, /file.*missing/)
      })))

  it.live("is in the OpenAPI document", () =>
    withApp({}, () =>
      Effect.gen(function*() {
        const doc = (yield* get("/openapi.json")).json
        expect(doc.paths["/v1/gb/images/{id}"].get).toBeDefined()
      })))
})

describe("DELETE /v1/gb/images/{id}", () => {
  it.live("forgets the image: its rows, its run's response and its file; another user's is a 404", () => {
    const bytes = png({ width: 4, height: 4 })
    return withApp({ extract_image: [answer] }, (dir) =>
      Effect.gen(function*() {
        const res = yield* postJson(REMEMBER, { user_id: "alice", image: b64(bytes) })
        expect(res.status, res.text).toBe(200)
        const id = res.json.image_artifact_id
        expect(existsSync(join(dir, res.json.path))).toBe(true)
        const bob = yield* send(HttpClientRequest.del(`/v1/gb/images/${id}?user_id=bob`))
        expectError(bob, 404, /image \d+ not found/)
        const gone = yield* send(HttpClientRequest.del(`/v1/gb/images/${id}?user_id=alice`))
        expect(gone.status, gone.text).toBe(200)
        expect(gone.json).toEqual({ image_artifact_id: id, deleted: { images: 1, files: 1 } })
        expect(existsSync(join(dir, res.json.path))).toBe(false)
        for (const table of ["gb_image_artifacts", "gb_image_extractions", "gb_image_text_blocks"]) {
          expect(yield* count(table)).toBe(0)
        }
        const run = yield* get(`/v1/gb/runs/${res.json.remember_run_id}`)
        expect(run.json.response).toBeUndefined()
        expectError(
          yield* getBytes(`/v1/gb/images/${id}?user_id=alice&dataset=main`).pipe(Effect.map((r) => ({
            status: r.status,
            headers: r.headers,
            text: Buffer.from(r.body).toString(),
            json: JSON.parse(Buffer.from(r.body).toString())
          } as TestResponse))),
          404
        )
        expectError(yield* send(HttpClientRequest.del(`/v1/gb/images/${id}?user_id=alice`)), 404, /not found/)
      }))
  })
})
