/**
 * The image pipeline end to end over a real database (SQLite and PostgreSQL), real files in a
 * temp directory and the scripted vision model: a new image, normalization, repeats (cached,
 * with a lost file), failures that must store nothing and leave no file, dataset isolation,
 * the library API; and the image block on the wire through the Anthropic adapter.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, Either, Exit, Layer, Option, Redacted } from "effect"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { NoneClassifierLive } from "../../layers/classifier/NoneClassifier.js"
import { LocalImageStoreLive } from "../../layers/files/LocalImageStore.js"
import { AnthropicLlmLive } from "../../layers/llm/AnthropicLlm.js"
import { type LlmScript, type ScriptedAnswer, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { MemoryVectorStoreLive } from "../../layers/vectors/MemoryVectorStore.js"
import { type RememberRequest, validateRememberRequest } from "../../src/domain/Remember.js"
import { type ImageRememberBody, isImageBody, type RememberResult } from "../../src/domain/Responses.js"
import { listImageArtifacts, listImageExtractions, loadImage } from "../../src/pipeline/image/library.js"
import { RememberManager, RememberManagerLive } from "../../src/pipeline/RememberManager.js"
import { RememberPipelineLive } from "../../src/pipeline/RememberPipelineLive.js"
import { RunSchedulerLive } from "../../src/pipeline/RunScheduler.js"
import { RememberSettings } from "../../src/pipeline/Settings.js"
import { ImagesRepo } from "../../src/services/ImagesRepo.js"
import { ImageStore } from "../../src/services/ImageStore.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { NoEmbeddings, noGeoNoTimeseries, rememberLayer, tempImageStore } from "../support/app.js"
import { forEachDialect, sqliteLayer, type StorageLayer } from "../support/databases.js"
import { type FakeAnthropic, startFakeAnthropic } from "../support/fakeAnthropic.js"
import { b64, gif, png, sha256, webp } from "../support/images.js"

const REFERENCE_TIME = "2025-02-01T00:00:00.000Z"

/** A request as the HTTP handler makes it (validated, the image decoded). */
const imageRequest = (bytes: Uint8Array, extra: Record<string, unknown> = {}): RememberRequest =>
  Either.getOrThrow(
    validateRememberRequest({ user_id: "alice", image: b64(bytes), reference_time: REFERENCE_TIME, ...extra })
  )

const reading = (
  theme: string,
  title: string,
  text_blocks: ReadonlyArray<{ kind?: string; text: string | null }>,
  rest: Omit<Extract<ScriptedAnswer, { text: string }>, "text"> = {}
) => ScriptedLlm.json({ theme, title, text_blocks }, rest)

const revenue = (rest: Omit<Extract<ScriptedAnswer, { text: string }>, "text"> = {}) =>
  reading("plot", "Revenue 2024", [{ kind: "title", text: "Revenue 2024" }, { kind: "axis", text: "Q1" }, {
    kind: "axis",
    text: "Q2"
  }], {
    usage: { inputTokens: 1500, outputTokens: 120 },
    ...rest
  })

const count = (table: string, where = "1 = 1") =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.map(sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`), (rows) =>
        Number(rows[0]!.n))
  ).pipe(Effect.orDie)

const rows = <A extends object>(query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(query)).pipe(Effect.orDie)

const exec = (statement: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(Effect.orDie)

const remember = (req: RememberRequest) => Effect.flatMap(RememberManager, (m) => m.submit(req))

/** The response of an image run, as its type (a text's fails the test). */
const imageBody = ({ response }: RememberResult): ImageRememberBody => {
  if (!isImageBody(response)) throw new Error(`not an image response: ${JSON.stringify(response)}`)
  return response
}

const runOf = (runId: number) => Effect.flatMap(RunLogRepo, (log) => log.get(runId)).pipe(Effect.map(Option.getOrThrow))

const stagesOf = (runId: number) =>
  Effect.map(runOf(runId), (run) => Object.fromEntries(run.stages.map((s) => [s.stage, s])))

/** Every file under `dir`, relative, sorted. */
const filesIn = (dir: string): Array<string> =>
  (readdirSync(dir, { recursive: true }) as Array<string>).filter((f) => statSync(join(dir, f)).isFile()).sort()

const IMAGE_TABLES = ["gb_datasets", "gb_image_artifacts", "gb_image_extractions", "gb_image_text_blocks"]
const GRAPH_TABLES = ["gb_artifacts", "gb_entities", "gb_edges"]

/** Runs `program(dir)` with the remember machinery, its image files in a fresh temp directory `dir`. */
const run = <A, E>(
  storage: () => StorageLayer,
  script: LlmScript,
  program: (dir: string) => Effect.Effect<A, E, any>
) =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "gligabao-image-test-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  ).pipe(
    Effect.flatMap((dir) =>
      program(dir).pipe(
        Effect.provide(
          rememberLayer(storage(), script, { images: LocalImageStoreLive(dir) }) as Layer.Layer<any, any, never>
        )
      )
    ),
    Effect.scoped
  ) as Effect.Effect<A, E, never>

const CONTRACT_KEYS = [
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
]

forEachDialect((_dialect, makeLayer) => {
  it.live("remembers a new image: the file, three tables, the inference, the run log and the response", () => {
    const bytes = png({ width: 4, height: 3 })
    return run(makeLayer, { extract_image: [revenue()] }, (dir) =>
      Effect.gen(function*() {
        const out = yield* remember(imageRequest(bytes, { session_id: "s1" }))
        const response = imageBody(out)
        const datasetId = out.dataset_id!
        const path = `${datasetId}/${sha256(bytes)}.png`
        expect(Object.keys(response)).toEqual(CONTRACT_KEYS)
        expect(response).toEqual({
          pipeline: "image",
          image_artifact_id: expect.any(Number),
          extraction_id: expect.any(Number),
          session_id: "s1",
          path,
          media_type: "image/png",
          bytes: bytes.length,
          sha256: sha256(bytes),
          theme: "plot",
          title: "Revenue 2024",
          text: "Revenue 2024\nQ1\nQ2",
          text_blocks: [{ kind: "title", text: "Revenue 2024" }, { kind: "axis", text: "Q1" }, {
            kind: "axis",
            text: "Q2"
          }],
          model: ScriptedLlm.DEFAULT_MODEL,
          provider: ScriptedLlm.PROVIDER,
          reasoning: "low",
          input_tokens: 1500,
          output_tokens: 120,
          cost_usd: 0,
          cached: false,
          valid_at: REFERENCE_TIME,
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/)
        })
        expect(out.artifact_id).toBe(response.image_artifact_id)

        // the file, byte for byte, at the path the row holds
        expect(filesIn(dir)).toEqual([path])
        expect(readFileSync(join(dir, path)).equals(Buffer.from(bytes))).toBe(true)
        const [artifact] = yield* rows<any>("SELECT * FROM gb_image_artifacts")
        expect(artifact).toMatchObject({
          dataset_id: datasetId,
          session_id: "s1",
          path,
          media_type: "image/png",
          bytes: bytes.length,
          valid_at: REFERENCE_TIME
        })
        const blocks = yield* rows<any>("SELECT position, kind, text FROM gb_image_text_blocks ORDER BY position")
        expect(blocks).toEqual([{ position: 0, kind: "title", text: "Revenue 2024" }, {
          position: 1,
          kind: "axis",
          text: "Q1"
        }, { position: 2, kind: "axis", text: "Q2" }])
        // nothing goes to the graph
        for (const table of GRAPH_TABLES) expect(yield* count(table)).toBe(0)

        // one vision call: the image as a content block, 8192 output tokens, reasoning low
        const calls = (yield* ScriptedLlm).calls
        expect(calls).toHaveLength(1)
        expect(calls[0]).toMatchObject({ stage: "extract_image", reasoning: "low", maxTokens: 8192 })
        expect(calls[0]!.model).toBeUndefined()
        const content = calls[0]!.messages[0]!.content as ReadonlyArray<any>
        expect(content[0]).toEqual({ type: "image", mediaType: "image/png", data: b64(bytes) })

        const inferences = yield* rows<any>("SELECT * FROM gb_inferences")
        expect(inferences).toHaveLength(1)
        expect(inferences[0]).toMatchObject({
          type: "remember_image",
          stage: "extract_image",
          reasoning: "low",
          input_tokens: 1500,
          output_tokens: 120,
          run_id: out.runId,
          error: null
        })
        const [extraction] = yield* rows<any>("SELECT * FROM gb_image_extractions")
        expect(extraction).toMatchObject({
          image_artifact_id: response.image_artifact_id,
          inference_id: inferences[0].id,
          theme: "plot",
          text: "Revenue 2024\nQ1\nQ2"
        })

        const runRow = yield* runOf(out.runId)
        expect(runRow).toMatchObject({
          pipeline: "image",
          status: "succeeded",
          artifact_id: response.image_artifact_id,
          dataset_id: datasetId
        })
        expect(runRow.params).toMatchObject({
          kind: "image",
          media_type: "image/png",
          image_bytes: bytes.length,
          session_id: "s1"
        })
        expect(JSON.stringify(runRow.params)).not.toContain(b64(bytes))
        const stages = yield* stagesOf(out.runId)
        expect(Object.keys(stages).sort()).toEqual(["extract_image", "find_existing_image", "store_image"])
        expect(stages.find_existing_image).toMatchObject({ status: "succeeded", detail: { found: false } })
        expect(stages.extract_image).toMatchObject({ status: "succeeded", inference_ids: [inferences[0].id] })
        expect(stages.store_image).toMatchObject({ status: "succeeded", detail: { path, file_created: true } })
      }))
  })

  it.live("normalizes the model's answer before storing it", () =>
    run(makeLayer, {
      extract_image: [{
        text: "Sure! ```json\n" + JSON.stringify({
          theme: "Bar Chart",
          title: "",
          text_blocks: [
            { kind: "Title", text: " Sales " },
            { kind: "footnote", text: "source: us" },
            { kind: "label", text: "   " },
            { kind: "TABLE", text: "a | b" }
          ]
        }) + "\n```"
      }]
    }, () =>
      Effect.gen(function*() {
        const response = imageBody(yield* remember(imageRequest(gif())))
        expect(response).toMatchObject({
          theme: "other",
          title: "Sales",
          text: "Sales\nsource: us\na | b",
          text_blocks: [{ kind: "title", text: "Sales" }, { kind: "other", text: "source: us" }, {
            kind: "table",
            text: "a | b"
          }],
          media_type: "image/gif"
        })
        expect(response.path).toMatch(/\.gif$/)
        expect(yield* rows<any>("SELECT kind, text FROM gb_image_text_blocks ORDER BY position")).toEqual(
          response.text_blocks
        )
        expect(yield* rows<any>("SELECT theme, title FROM gb_image_extractions")).toEqual([{
          theme: "other",
          title: "Sales"
        }])
      })))

  it.live("a repeat is answered from the stored extraction: cached, no model call, nothing stored", () => {
    const bytes = png({ rgb: [0, 128, 0] })
    return run(makeLayer, { extract_image: [revenue({ model: "claude-haiku-5-5" })] }, () =>
      Effect.gen(function*() {
        const first = yield* remember(imageRequest(bytes, { session_id: "s1" }))
        const before = yield* Effect.forEach([...IMAGE_TABLES, "gb_inferences"], (t) => count(t))
        const again = yield* remember(
          imageRequest(bytes, {
            session_id: "s2",
            reference_time: "2030-01-01T00:00:00Z",
            reasoning: { extract_image: "high" }
          })
        )
        const a = imageBody(first)
        const b = imageBody(again)
        expect(b.cached).toBe(true)
        // the stored artifact and the call that made the extraction, not this request
        expect({ ...b, cached: false }).toEqual(a)
        expect(b).toMatchObject({
          session_id: "s1",
          valid_at: REFERENCE_TIME,
          model: "claude-haiku-5-5",
          reasoning: "low",
          input_tokens: 1500,
          output_tokens: 120
        })
        expect(b.cost_usd).toBeCloseTo(0.0021, 10)
        expect(again.artifact_id).toBe(a.image_artifact_id)
        expect(yield* Effect.forEach([...IMAGE_TABLES, "gb_inferences"], (t) => count(t))).toEqual(before)
        expect((yield* ScriptedLlm).calls).toHaveLength(1)

        const runRow = yield* runOf(again.runId)
        expect(runRow).toMatchObject({ status: "succeeded", artifact_id: a.image_artifact_id })
        const stages = yield* stagesOf(again.runId)
        expect(Object.keys(stages)).toEqual(["find_existing_image"])
        expect(stages.find_existing_image).toMatchObject({
          status: "succeeded",
          inference_ids: [],
          detail: {
            found: true,
            image_artifact_id: a.image_artifact_id,
            extraction_id: a.extraction_id,
            file_rewritten: false
          }
        })
      }))
  })

  it.live("a repeat whose file has gone writes it again from the uploaded bytes", () => {
    const bytes = webp()
    return run(makeLayer, { extract_image: [revenue()] }, (dir) =>
      Effect.gen(function*() {
        const first = imageBody(yield* remember(imageRequest(bytes)))
        expect(first.media_type).toBe("image/webp")
        rmSync(join(dir, first.path))
        expect(filesIn(dir)).toEqual([])
        const again = yield* remember(imageRequest(bytes))
        expect(imageBody(again).cached).toBe(true)
        expect(filesIn(dir)).toEqual([first.path])
        expect(readFileSync(join(dir, first.path)).equals(Buffer.from(bytes))).toBe(true)
        expect((yield* stagesOf(again.runId)).find_existing_image!.detail).toMatchObject({ file_rewritten: true })
        expect(yield* count("gb_image_artifacts")).toBe(1)
        expect((yield* ScriptedLlm).calls).toHaveLength(1)
      }))
  })

  const unusable: ReadonlyArray<[string, ScriptedAnswer, RegExp]> = [
    ["the answer is not JSON", { text: "This image shows a cat." }, /unusable answer.*not JSON/],
    ["the answer lacks text_blocks", ScriptedLlm.json({ theme: "photo" }), /unusable answer.*text_blocks/],
    [
      "the answer was cut by the output limit",
      { ...revenue(), stopReason: "max_tokens" },
      /output limit of 8192 tokens/
    ],
    ["the provider fails", { fail: { message: "HTTP 529 overloaded", status: 529 } }, /HTTP 529/]
  ]
  for (const [what, answer, message] of unusable) {
    it.live(`fails with LlmFailed (502) when ${what}: the call is recorded, nothing stored, no dataset, no file`, () =>
      run(makeLayer, { extract_image: [answer] }, (dir) =>
        Effect.gen(function*() {
          const exit = yield* Effect.exit(remember(imageRequest(png(), { dataset: "fresh" })))
          expect(Exit.isFailure(exit)).toBe(true)
          if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
            expect(exit.cause.error).toMatchObject({
              _tag: "LlmFailed",
              stage: "extract_image",
              message: expect.stringMatching(message)
            })
          }
          for (const table of IMAGE_TABLES) expect(yield* count(table)).toBe(0)
          expect(filesIn(dir)).toEqual([])
          const inferences = yield* rows<any>("SELECT type, stage, error FROM gb_inferences")
          expect(inferences).toHaveLength(1)
          expect(inferences[0]).toMatchObject({ type: "remember_image", stage: "extract_image" })
          const runRow = (yield* rows<any>("SELECT id, status, error FROM gb_remember_runs"))[0]
          expect(runRow).toMatchObject({ status: "failed", error: expect.stringMatching(message) })
          const stages = yield* stagesOf(runRow.id)
          expect(stages.extract_image).toMatchObject({ status: "failed", inference_ids: [expect.any(Number)] })
          expect(stages.store_image).toBeUndefined()
        })))
  }

  it.live("a failure while storing the rows rolls them back and removes the file this call wrote", () =>
    run(makeLayer, { extract_image: [revenue(), revenue()] }, (dir) =>
      Effect.gen(function*() {
        // the artifact row goes in, then the text blocks fail: the whole transaction must go
        yield* exec("DROP TABLE gb_image_text_blocks")
        const exit = yield* Effect.exit(remember(imageRequest(png(), { dataset: "fresh" })))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
          expect(exit.cause.error).toMatchObject({
            _tag: "InternalFailure",
            message: "store_image failed with an internal error"
          })
        }
        expect(filesIn(dir)).toEqual([])
        for (const table of ["gb_datasets", "gb_image_artifacts", "gb_image_extractions"]) {
          expect(yield* count(table)).toBe(0)
        }
        // the model call was spent and stays recorded
        expect(yield* count("gb_inferences", "type = 'remember_image'")).toBe(1)
        const runRow = (yield* rows<any>("SELECT id, status, error FROM gb_remember_runs"))[0]
        expect(runRow).toMatchObject({ status: "failed", error: expect.stringContaining("store_image") })
        expect((yield* stagesOf(runRow.id)).store_image).toMatchObject({ status: "failed" })
      })))

  it.live("a failed store keeps a file it did not create", () => {
    const bytes = png({ rgb: [1, 2, 3] })
    const storage = () =>
      Layer.effect(
        ImagesRepo,
        Effect.map(ImagesRepo, (repo) => ({ ...repo, insert: () => Effect.die(new Error("disk full")) }))
      ).pipe(Layer.provideMerge(makeLayer())) as unknown as StorageLayer
    return run(storage, { extract_image: [revenue()] }, (dir) =>
      Effect.gen(function*() {
        const path = `1/${sha256(bytes)}.png`
        yield* (yield* ImageStore).write(path, bytes)
        yield* exec(
          "INSERT INTO gb_datasets (user_id, name, created_at) VALUES ('alice', 'main', '2025-01-01T00:00:00.000Z')"
        )
        expect((yield* rows<any>("SELECT id FROM gb_datasets"))[0].id).toBe(1)
        const exit = yield* Effect.exit(remember(imageRequest(bytes)))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(filesIn(dir)).toEqual([path])
        expect(yield* count("gb_image_artifacts")).toBe(0)
      }))
  })

  it.live("datasets and users are isolated: the same image is read and stored again in each", () => {
    const bytes = png({ rgb: [9, 9, 9] })
    return run(makeLayer, { extract_image: [revenue(), revenue(), revenue()] }, (dir) =>
      Effect.gen(function*() {
        const a = imageBody(yield* remember(imageRequest(bytes)))
        const b = imageBody(yield* remember(imageRequest(bytes, { dataset: "other" })))
        const c = imageBody(yield* remember(imageRequest(bytes, { user_id: "bob" })))
        expect([a.cached, b.cached, c.cached]).toEqual([false, false, false])
        expect(new Set([a.image_artifact_id, b.image_artifact_id, c.image_artifact_id]).size).toBe(3)
        expect(new Set([a.path, b.path, c.path]).size).toBe(3)
        expect(filesIn(dir)).toEqual([a.path, b.path, c.path].sort())
        expect((yield* ScriptedLlm).calls).toHaveLength(3)
        expect(yield* count("gb_inferences")).toBe(3)
        // and each is a repeat within its own dataset
        expect(imageBody(yield* remember(imageRequest(bytes, { user_id: "bob" })))).toMatchObject({
          cached: true,
          image_artifact_id: c.image_artifact_id
        })
      }))
  })

  it.live("an artifact whose extractions were deleted is read again into the same artifact", () => {
    const bytes = png({ rgb: [5, 5, 5] })
    return run(makeLayer, { extract_image: [revenue(), reading("photo", "", [])] }, () =>
      Effect.gen(function*() {
        const first = imageBody(yield* remember(imageRequest(bytes)))
        yield* exec("DELETE FROM gb_image_extractions")
        const again = imageBody(yield* remember(imageRequest(bytes)))
        expect(again).toMatchObject({
          cached: false,
          image_artifact_id: first.image_artifact_id,
          path: first.path,
          theme: "photo"
        })
        expect(again.extraction_id).not.toBe(first.extraction_id)
        expect(yield* count("gb_image_artifacts")).toBe(1)
        expect(yield* count("gb_image_extractions")).toBe(1)
      }))
  })

  it.live("the request's model and reasoning are used and recorded, with the cost from the price table", () =>
    run(makeLayer, { extract_image: [revenue()] }, () =>
      Effect.gen(function*() {
        const out = imageBody(
          yield* remember(
            imageRequest(png(), { models: { extract_image: "claude-haiku-5-5" }, reasoning: { extract_image: "high" } })
          )
        )
        expect(out).toMatchObject({ model: "claude-haiku-5-5", reasoning: "high" })
        // 1500 input and 120 output tokens at USD 1 / 5 per million
        expect(out.cost_usd).toBeCloseTo(0.0021, 10)
        const [call] = (yield* ScriptedLlm).calls
        expect(call).toMatchObject({ model: "claude-haiku-5-5", reasoning: "high" })
        expect((yield* rows<any>("SELECT model, reasoning, cost_usd FROM gb_inferences"))[0]).toMatchObject({
          model: "claude-haiku-5-5",
          reasoning: "high"
        })
      })))

  it.live("the library API lists a dataset's images and extractions and loads an image's bytes", () => {
    const one = png({ rgb: [10, 0, 0] })
    const two = gif()
    return run(makeLayer, { extract_image: [revenue(), reading("photo", "", [])] }, (dir) =>
      Effect.gen(function*() {
        const a = imageBody(yield* remember(imageRequest(one)))
        const b = imageBody(yield* remember(imageRequest(two)))
        const artifacts = yield* listImageArtifacts("alice", "main")
        expect(artifacts.map((x) => [x.id, x.media_type])).toEqual([[a.image_artifact_id, "image/png"], [
          b.image_artifact_id,
          "image/gif"
        ]])
        const extractions = yield* listImageExtractions("alice", "main")
        expect(extractions.map((x) => [x.image_artifact_id, x.theme, x.text_blocks.length])).toEqual([[
          a.image_artifact_id,
          "plot",
          3
        ], [b.image_artifact_id, "photo", 0]])
        expect(yield* listImageArtifacts("alice", "nothing-here")).toEqual([])
        expect(yield* listImageArtifacts("bob", "main")).toEqual([])

        const loaded = yield* loadImage("alice", "main", a.image_artifact_id)
        expect(loaded._tag).toBe("Loaded")
        if (loaded._tag === "Loaded") expect(Buffer.from(loaded.image.bytes).equals(Buffer.from(one))).toBe(true)
        expect((yield* loadImage("bob", "main", a.image_artifact_id))._tag).toBe("NoDataset")
        expect((yield* loadImage("alice", "main", 999))._tag).toBe("NoArtifact")
        rmSync(join(dir, a.path))
        expect((yield* loadImage("alice", "main", a.image_artifact_id))._tag).toBe("NoFile")
      }))
  })

  it.live("a request built in code is decoded by the pipeline; an invalid image fails the run with InvalidRequest", () =>
    run(makeLayer, { extract_image: [revenue()] }, () =>
      Effect.gen(function*() {
        const base = {
          user_id: "alice",
          dataset: "main",
          kind: "knowledge" as const,
          models: {},
          reasoning: {},
          web_search: false
        }
        const ok = imageBody(yield* remember({ ...base, image: b64(png()) }))
        expect(ok).toMatchObject({ pipeline: "image", media_type: "image/png", cached: false })
        const exit = yield* Effect.exit(remember({ ...base, image: b64(new Uint8Array([1, 2, 3])) }))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
          expect(exit.cause.error).toMatchObject({
            _tag: "InvalidRequest",
            message: expect.stringMatching(/JPEG, PNG, GIF or WebP/)
          })
        }
        expect((yield* ScriptedLlm).calls).toHaveLength(1)
      })))
})

describe("through the Anthropic adapter", () => {
  let fake: FakeAnthropic
  const answer = JSON.stringify({ theme: "diagram", title: "Flow", text_blocks: [{ kind: "label", text: "start" }] })
  beforeAll(async () => {
    fake = await startFakeAnthropic({ text: answer })
  })
  afterAll(() => fake.close())

  const anthropicApp = () =>
    RememberManagerLive({ concurrency: 1, instanceId: "test-instance" }).pipe(
      Layer.provideMerge(RememberPipelineLive),
      Layer.provideMerge(RunSchedulerLive),
      Layer.provideMerge(
        Layer.mergeAll(
          AnthropicLlmLive({
            apiKey: Redacted.make("sk-ant-test"),
            baseUrl: fake.url,
            defaultModel: "claude-haiku-5-5",
            timeoutMs: 5_000,
            maxRetries: 0
          }),
          NoneClassifierLive,
          RememberSettings.layer(),
          NoEmbeddings,
          MemoryVectorStoreLive(),
          tempImageStore(),
          noGeoNoTimeseries()
        )
      ),
      Layer.provideMerge(sqliteLayer())
    )

  it.live("sends the image block (media_type and data) on the wire and records the run", () => {
    fake.reset()
    const bytes = png({ width: 2, height: 2, rgb: [0, 0, 255] })
    return Effect.gen(function*() {
      const out = imageBody(yield* remember(imageRequest(bytes)))
      expect(fake.requests).toHaveLength(1)
      const body = fake.requests[0]!.body
      expect(body.model).toBe("claude-haiku-5-5")
      // the answer's 8192 tokens on top of the low thinking budget
      expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 })
      expect(body.max_tokens).toBe(8192 + 1024)
      expect(typeof body.system).toBe("string")
      const content = body.messages[0].content
      expect(content[0]).toEqual({
        type: "image",
        source: { type: "base64", media_type: "image/png", data: b64(bytes) }
      })
      expect(content[1]).toMatchObject({ type: "text" })
      expect(out).toMatchObject({
        provider: "anthropic",
        model: "claude-haiku-5-5",
        reasoning: "low",
        theme: "diagram",
        title: "Flow",
        text: "start"
      })
      expect(out.input_tokens).toBeGreaterThan(0)
    }).pipe(Effect.provide(anthropicApp()))
  })

  it.live("a model without extended thinking is called without it and records none", () => {
    fake.reset()
    return Effect.gen(function*() {
      const out = imageBody(
        yield* remember(imageRequest(gif(), { models: { extract_image: "claude-3-5-haiku-20241022" } }))
      )
      expect(fake.requests[0]!.body.thinking).toBeUndefined()
      expect(fake.requests[0]!.body.messages[0].content[0].source.media_type).toBe("image/gif")
      expect(out).toMatchObject({ model: "claude-3-5-haiku-20241022", reasoning: "none" })
      expect((yield* rows<any>("SELECT reasoning FROM gb_inferences"))[0].reasoning).toBe("none")
    }).pipe(Effect.provide(anthropicApp()))
  })
})
