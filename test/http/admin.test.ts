/**
 * The admin API and page over HTTP, in process, on both dialects (docs/ADMIN.md): runs seeded
 * through POST /v1/gb/remember with the scripted LLM (succeeded ones in two datasets of two
 * users, a failed one, and a "flagged" one: succeeded with its resolve_geo stage failed), then
 * every admin endpoint's answers, filters, bounds and errors; the page and its assets; and a
 * composition with two named databases. Authentication is off here (see auth.test.ts).
 */
import { layer } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import { describe, expect } from "vitest"
import { SqliteLive } from "../../layers/sql/index.js"
import { FakeGeo } from "../../layers/testing/FakeGeo.js"
import { type LlmScript, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { type AdminDatabase, AdminDatabases, repositoriesReadDeps } from "../../src/admin/AdminDatabases.js"
import { ADMIN_CSP } from "../../src/admin/assets.js"
import { ALL_STAGES } from "../../src/admin/programs.js"
import {
  AdminDatabasesResponse,
  AdminDatasetsResponse,
  AdminGraphResponse,
  AdminRunResponse,
  AdminRunsResponse,
  AdminUsageResponse
} from "../../src/admin/responses.js"
import { TEXT_STAGES } from "../../src/domain/Stages.js"
import { readDeps } from "../../src/query/deps.js"
import { makeReads } from "../../src/query/Reads.js"
import { DatasetsResponse } from "../../src/query/responses.js"
import { AdminRepo } from "../../src/services/AdminRepo.js"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import { InferencesRepo } from "../../src/services/InferencesRepo.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { SearchRepo } from "../../src/services/SearchRepo.js"
import { graph, rememberLayer, resolution } from "../support/app.js"
import { forEachDialect, sqliteLayer } from "../support/databases.js"
import { expectError, get, postJson, serveTest, type TestResponse } from "../support/http.js"

const API = "/v1/gb/admin/api"

/** A 200's JSON body; with a schema, read as the contract's type (no field missing, none extra). */
function ok(res: TestResponse): any
function ok<A, I>(res: TestResponse, schema: Schema.Schema<A, I>): A
function ok<A, I>(res: TestResponse, schema?: Schema.Schema<A, I>) {
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  expect(res.headers["content-type"]).toContain("application/json")
  return schema === undefined ? res.json : Schema.decodeUnknownSync(schema, { onExcessProperty: "error" })(res.json)
}

// ---------------------------------------------------------------------------------------------
// the seeded runs

const USAGE = { usage: { inputTokens: 100, outputTokens: 10 } }
const TEXTS = {
  aliceMain: "Alice Smith lives in Berlin.",
  aliceWork: "Alice Smith works at Acme Corp.",
  bobMain: "Bob Jones lives in Paris.",
  failing: "This text makes extract_graph FAIL.",
  flagged: "Bob Jones visited Flagtown."
}

const mentions = (request: LlmRequest, text: string) => JSON.stringify(request.messages).includes(text)

/** extract_graph by text (one fails); detect_geo finds no place, except it fails on Flagtown. */
const script: LlmScript = (request) => {
  switch (request.stage) {
    case "extract_graph": {
      if (mentions(request, TEXTS.failing)) return { fail: { message: "HTTP 500 from provider", status: 500 } }
      if (mentions(request, TEXTS.aliceMain)) {
        return {
          ...graph([{ name: "Alice Smith", type: "person" }, { name: "Berlin", type: "place" }], [{
            source: "Alice Smith",
            target: "Berlin",
            relation: "lives in"
          }]),
          ...USAGE
        }
      }
      if (mentions(request, TEXTS.aliceWork)) {
        return {
          ...graph([{ name: "Alice Smith", type: "person" }, { name: "Acme Corp", type: "organization" }], [{
            source: "Alice Smith",
            target: "Acme Corp",
            relation: "works at"
          }]),
          ...USAGE
        }
      }
      if (mentions(request, TEXTS.bobMain)) {
        return {
          ...graph([{ name: "Bob Jones", type: "person" }, { name: "Paris", type: "place" }], [{
            source: "Bob Jones",
            target: "Paris",
            relation: "lives in"
          }]),
          ...USAGE
        }
      }
      if (mentions(request, TEXTS.flagged)) {
        return {
          ...graph([{ name: "Bob Jones", type: "person" }, { name: "Flagtown", type: "place" }], [{
            source: "Bob Jones",
            target: "Flagtown",
            relation: "visited"
          }]),
          ...USAGE
        }
      }
      return { fail: { message: "unexpected text" } }
    }
    case "resolve_edges":
      return resolution([], [])
    case "detect_geo":
      return mentions(request, "Flagtown")
        ? { fail: { message: "HTTP 529 overloaded", status: 529 } }
        : ScriptedLlm.json({ places: [] })
    default:
      return { fail: { message: `unexpected stage ${request.stage}` } }
  }
}

interface SeededShape {
  /** run ids in the order they were made */
  readonly aliceMain: number
  readonly aliceWork: number
  readonly bobMain: number
  readonly failed: number
  readonly flagged: number
}

class Seeded extends Context.Tag("test/admin/Seeded")<Seeded, SeededShape>() {}

const remember = (body: Record<string, unknown>, status: number) =>
  Effect.gen(function*() {
    const res = yield* postJson("/v1/gb/remember", body)
    expect(res.status, res.text.slice(0, 300)).toBe(status)
    return res
  })

const seed = Effect.gen(function*() {
  const aliceMain =
    (yield* remember({ user_id: "alice", text: TEXTS.aliceMain, models: { extract_graph: "graph-model" } }, 200)).json
      .remember_run_id
  const aliceWork =
    (yield* remember({ user_id: "alice", dataset: "work", text: TEXTS.aliceWork }, 200)).json.remember_run_id
  const bobMain = (yield* remember({ user_id: "bob", text: TEXTS.bobMain }, 200)).json.remember_run_id
  yield* remember({ user_id: "alice", text: TEXTS.failing }, 502)
  const flagged = (yield* remember({ user_id: "bob", text: TEXTS.flagged }, 200)).json.remember_run_id
  // the failed run's id is between bob's two: ids are handed out in order
  const failed = bobMain + 1
  expect(flagged).toBe(failed + 1)
  return { aliceMain, aliceWork, bobMain, failed, flagged }
})

/** The app with the seed done once, before the block's tests. */
const seededApp = (storage: ReturnType<typeof sqliteLayer>) =>
  Layer.effect(Seeded, seed).pipe(
    Layer.provideMerge(serveTest(rememberLayer(storage, script, { geo: FakeGeo.layer({}) })))
  )

// ---------------------------------------------------------------------------------------------

forEachDialect((dialect, makeLayer) => {
  layer(seededApp(makeLayer()), { excludeTestServices: true })("admin API", (it) => {
    it.effect("the flagged run really is succeeded with a failed stage", () =>
      Effect.gen(function*() {
        const { flagged } = yield* Seeded
        const run = ok(yield* get(`/v1/gb/runs/${flagged}`))
        expect(run.status).toBe("succeeded")
        expect(run.stages.resolve_geo).toMatchObject({ status: "failed", error: expect.stringContaining("529") })
      }))

    it.effect("GET /databases: the app's one database, as default", () =>
      Effect.gen(function*() {
        const body = ok(yield* get(`${API}/databases`), AdminDatabasesResponse)
        expect(body.databases).toEqual([{
          name: "default",
          dialect: dialect === "pg" ? "postgres" : "sqlite",
          primary: true
        }])
      }))

    it.effect("GET /remember-runs: counts, stages, runs newest first with their stages and flag", () =>
      Effect.gen(function*() {
        const s = yield* Seeded
        const res = yield* get(`${API}/remember-runs?db=default`)
        expect(Object.keys(res.json)).toEqual(["counts", "stages", "runs", "total", "limit", "offset"])
        const body = ok(res, AdminRunsResponse)
        expect(body.counts).toEqual({ total: 5, queued: 0, started: 0, succeeded: 4, failed: 1, cancelled: 0 })
        expect(body.stages).toEqual(ALL_STAGES)
        expect(body).toMatchObject({ total: 5, limit: 100, offset: 0 })
        expect(body.runs.map((r) => r.id)).toEqual([
          s.flagged,
          s.failed,
          s.bobMain,
          s.aliceWork,
          s.aliceMain
        ])
        expect(body.runs.map((r) => r.flagged)).toEqual([true, false, false, false, false])
        expect(body.runs.map((r) => r.status)).toEqual([
          "succeeded",
          "failed",
          "succeeded",
          "succeeded",
          "succeeded"
        ])
        for (const run of body.runs) {
          // each run is the run log's view plus `flagged`
          const { flagged, ...view } = run
          expect(view).toEqual(ok(yield* get(`/v1/gb/runs/${run.id}`)))
          expect(typeof flagged).toBe("boolean")
          expect(Object.keys(run.stages)).toEqual([...TEXT_STAGES])
        }
        const failed = body.runs[1]
        expect(failed).toMatchObject({ user_id: "alice", dataset: "main", error: expect.stringContaining("500") })
        expect(failed.stages.extract_graph.status).toBe("failed")
      }))

    it.effect("GET /remember-runs: status, dataset and user_id filter the runs, never the counts", () =>
      Effect.gen(function*() {
        const s = yield* Seeded
        const ids = (body: { runs: ReadonlyArray<{ id: number }> }) => body.runs.map((r) => r.id)
        const failed = ok(yield* get(`${API}/remember-runs?db=default&status=failed`), AdminRunsResponse)
        expect(failed.counts).toEqual({ total: 5, queued: 0, started: 0, succeeded: 4, failed: 1, cancelled: 0 })
        expect(ids(failed)).toEqual([s.failed])
        expect(failed.total).toBe(1)
        expect(ids(ok(yield* get(`${API}/remember-runs?db=default&status=succeeded`), AdminRunsResponse))).toEqual([
          s.flagged,
          s.bobMain,
          s.aliceWork,
          s.aliceMain
        ])
        expect(ok(yield* get(`${API}/remember-runs?db=default&status=started`), AdminRunsResponse).runs).toEqual([])
        expect(ids(ok(yield* get(`${API}/remember-runs?db=default&dataset=work`), AdminRunsResponse))).toEqual([
          s.aliceWork
        ])
        expect(ids(ok(yield* get(`${API}/remember-runs?db=default&user_id=bob`), AdminRunsResponse))).toEqual([
          s.flagged,
          s.bobMain
        ])
        const combined = ok(
          yield* get(`${API}/remember-runs?db=default&user_id=alice&dataset=main&status=succeeded`),
          AdminRunsResponse
        )
        expect(ids(combined)).toEqual([s.aliceMain])
        expect(combined.counts.total).toBe(5)
        expect(ok(yield* get(`${API}/remember-runs?db=default&user_id=nobody`), AdminRunsResponse)).toMatchObject({
          runs: [],
          total: 0
        })
      }))

    it.effect("GET /remember-runs: limit 1..500 (default 100), offset pages with the total kept", () =>
      Effect.gen(function*() {
        const s = yield* Seeded
        expect(ok(yield* get(`${API}/remember-runs?db=default&limit=500`), AdminRunsResponse)).toMatchObject({
          limit: 500,
          total: 5
        })
        const pages = []
        for (const offset of [0, 2, 4, 6]) {
          const page = ok(yield* get(`${API}/remember-runs?db=default&limit=2&offset=${offset}`), AdminRunsResponse)
          expect(page).toMatchObject({ total: 5, limit: 2, offset })
          pages.push(page.runs.map((r) => r.id))
        }
        expect(pages).toEqual([[s.flagged, s.failed], [s.bobMain, s.aliceWork], [s.aliceMain], []])
        expectError(
          yield* get(`${API}/remember-runs?db=default&limit=501`),
          400,
          /limit must be an integer from 1 to 500/
        )
        expectError(yield* get(`${API}/remember-runs?db=default&limit=0`), 400, /limit/)
        expectError(yield* get(`${API}/remember-runs?db=default&limit=abc`), 400, /limit/)
        expectError(yield* get(`${API}/remember-runs?db=default&offset=-1`), 400, /offset/)
        expectError(yield* get(`${API}/remember-runs?db=default&status=done`), 400, /status/)
      }))

    it.effect("GET /remember-runs/{id}: one run (as in the list) with its model calls; bad and unknown ids", () =>
      Effect.gen(function*() {
        const s = yield* Seeded
        const list = ok(yield* get(`${API}/remember-runs?db=default`), AdminRunsResponse)
        for (const listed of list.runs) {
          const body = ok(yield* get(`${API}/remember-runs/${listed.id}?db=default`), AdminRunResponse)
          expect(body.run).toEqual(listed)
          const ids = Object.values(body.run.stages).flatMap((st) => st.inference_ids)
          // every inference id of the stages table resolves to a model call of this run
          expect(body.inferences.map((i) => i.id).sort()).toEqual([...ids].sort())
          for (const call of body.inferences) {
            expect(call).toMatchObject({
              run_id: listed.id,
              stage: expect.any(String),
              model: expect.any(String),
              cost_usd: expect.any(Number)
            })
          }
        }
        const failed = ok(yield* get(`${API}/remember-runs/${s.failed}?db=default`), AdminRunResponse)
        expect(failed.inferences.some((i) => i.error !== null)).toBe(true)
        expectError(yield* get(`${API}/remember-runs/999999?db=default`), 404, /no remember run with id 999999/)
        expectError(yield* get(`${API}/remember-runs/abc?db=default`), 400, /id must be a positive integer/)
        expectError(yield* get(`${API}/remember-runs/0?db=default`), 400, /id must be a positive integer/)
        // no db: the server's own database, whatever its name
        expect(ok(yield* get(`${API}/remember-runs/${s.failed}`), AdminRunResponse)).toEqual(failed)
      }))

    it.effect("every admin endpoint: db missing is the server's own database, an unknown db a 404 {error}", () =>
      Effect.gen(function*() {
        for (const endpoint of ["remember-runs", "inferences", "datasets", "graph"]) {
          const extra = endpoint === "graph" ? "&dataset_id=1" : ""
          const named = yield* get(`${API}/${endpoint}?db=default${extra}`)
          const absent = yield* get(`${API}/${endpoint}?${extra.slice(1)}`)
          expect([named.status, absent.status]).toEqual([200, 200])
          // the usage period ends now, so two asks of it differ in their times
          if (endpoint !== "inferences") expect(absent.json).toEqual(named.json)
          expectError(yield* get(`${API}/${endpoint}?db=nope${extra}`), 404, /no database named "nope".*default/)
        }
      }))

    it.effect("GET /inferences: the seeded calls by stage and model; totals are the sums", () =>
      Effect.gen(function*() {
        const llm = yield* ScriptedLlm
        const res = yield* get(`${API}/inferences?db=default`)
        expect(Object.keys(res.json)).toEqual(["from", "to", "bucket", "totals", "by_stage", "by_model", "buckets"])
        const body = ok(res, AdminUsageResponse)
        expect(body.bucket).toBe("day")
        expect(Date.parse(body.to) - Date.parse(body.from)).toBe(7 * 86_400_000)
        type Totals = (typeof body)["totals"]
        const sum = (rows: ReadonlyArray<Totals>, field: keyof Totals) => rows.reduce((n, r) => n + r[field], 0)
        // every model call of the seed was recorded, the failed ones too
        expect(body.totals.calls).toBe(llm.calls.length)
        for (const field of ["calls", "failed", "input_tokens", "output_tokens"] as const) {
          expect(sum(body.by_stage, field), field).toBe(body.totals[field])
          expect(sum(body.by_model, field), field).toBe(body.totals[field])
          expect(sum(body.buckets, field), field).toBe(body.totals[field])
        }
        for (const rows of [body.by_stage, body.by_model, body.buckets]) {
          expect(sum(rows, "cost_usd")).toBeCloseTo(body.totals.cost_usd, 9)
        }
        const stage = (name: string) => body.by_stage.find((r) => r.stage === name)
        expect(stage("extract_graph")).toMatchObject({
          calls: llm.callsFor("extract_graph").length,
          failed: 1,
          input_tokens: 400,
          output_tokens: 40
        })
        expect(stage("detect_geo")).toMatchObject({ calls: llm.callsFor("detect_geo").length, failed: 1 })
        expect(body.totals.failed).toBe(2)
        const models = body.by_model.map((m) => `${m.provider}/${m.model}`)
        expect(models).toEqual(expect.arrayContaining(["scripted/graph-model", "scripted/scripted-model"]))
        expect(body.by_model.find((m) => m.model === "graph-model")).toMatchObject({
          calls: 1,
          input_tokens: 100
        })
        for (const bucket of body.buckets) expect(bucket.start).toMatch(/T00:00:00\.000Z$/)
      }))

    it.effect("GET /inferences: by hour, a period without calls, bad parameters", () =>
      Effect.gen(function*() {
        const now = Date.now()
        const from = new Date(now - 3_600_000).toISOString()
        const to = new Date(now + 3_600_000).toISOString()
        const hourly = ok(yield* get(`${API}/inferences?db=default&from=${from}&to=${to}`), AdminUsageResponse)
        expect(hourly).toMatchObject({ bucket: "hour", from, to })
        expect(hourly.buckets.length).toBeGreaterThan(0)
        for (const bucket of hourly.buckets) expect(bucket.start).toMatch(/T\d\d:00:00\.000Z$/)
        expect(
          ok(yield* get(`${API}/inferences?db=default&from=${from}&to=${to}&bucket=day`), AdminUsageResponse).bucket
        ).toBe("day")
        const empty = ok(
          yield* get(`${API}/inferences?db=default&from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z`),
          AdminUsageResponse
        )
        expect(empty).toMatchObject({
          totals: { calls: 0, failed: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 },
          by_stage: [],
          by_model: [],
          buckets: []
        })
        expectError(yield* get(`${API}/inferences?db=default&from=yesterday`), 400, /^from must be an RFC 3339 time/)
        expectError(
          yield* get(`${API}/inferences?db=default&to=2020-01-01T00:00:00Z&from=2020-01-02T00:00:00Z`),
          400,
          /from must be before to/
        )
        expectError(yield* get(`${API}/inferences?db=default&bucket=minute`), 400, /bucket/)
        expectError(
          yield* get(`${API}/inferences?db=default&from=2020-01-01T00:00:00Z&bucket=hour`),
          400,
          /from\.\.to spans more than 1000 hours/
        )
      }))

    it.effect("GET /datasets: every user's datasets, newest first, with counts as the user endpoint counts them", () =>
      Effect.gen(function*() {
        const body = ok(yield* get(`${API}/datasets?db=default`), AdminDatasetsResponse)
        expect(body).toMatchObject({ total: 3, limit: 100, offset: 0 })
        expect(body.datasets.map((d) => `${d.user_id}/${d.name}`)).toEqual([
          "bob/main",
          "alice/work",
          "alice/main"
        ])
        for (const d of body.datasets) {
          expect(d).toMatchObject({ id: expect.any(Number), created_at: expect.any(String), deleted_at: null })
          const mine = ok(yield* get(`/v1/gb/datasets?user_id=${d.user_id}`), DatasetsResponse).datasets.find((x) =>
            x.id === d.id
          )!
          expect({ artifacts: d.artifacts, entities: d.entities, edges: d.edges }).toEqual({
            artifacts: mine.artifacts,
            entities: mine.entities,
            edges: mine.edges
          })
        }
        // the failed run stored nothing: alice's main has one text
        expect(body.datasets[2]).toMatchObject({ artifacts: 1, entities: 2, edges: 1 })
        expect(body.datasets[0]).toMatchObject({ artifacts: 2, entities: 3, edges: 2 })
        const page = ok(yield* get(`${API}/datasets?db=default&limit=1&offset=1`), AdminDatasetsResponse)
        expect(page).toMatchObject({ total: 3, limit: 1, offset: 1 })
        expect(page.datasets.map((d) => d.name)).toEqual(["work"])
        expectError(yield* get(`${API}/datasets?db=default&limit=501`), 400, /limit/)
      }))

    it.effect("GET /graph: a dataset's facts, their entities and artifacts; truncated by limit", () =>
      Effect.gen(function*() {
        const datasets = ok(yield* get(`${API}/datasets?db=default`), AdminDatasetsResponse).datasets
        const bob = datasets.find((d) => d.user_id === "bob")!
        const body = ok(yield* get(`${API}/graph?db=default&dataset_id=${bob.id}`), AdminGraphResponse)
        expect(body.dataset).toEqual({ id: bob.id, user_id: "bob", name: "main" })
        expect(body.truncated).toBe(false)
        expect(body.entities.map((e) => e.name).sort()).toEqual(["Bob Jones", "Flagtown", "Paris"])
        expect(body.edges.map((e) => e.relation).sort()).toEqual(["lives_in", "visited"])
        const entityIds = new Set(body.entities.map((e) => e.id))
        const artifactIds = new Set(body.artifacts.map((a) => a.id))
        for (const edge of body.edges) {
          expect(entityIds.has(edge.source_id) && entityIds.has(edge.target_id)).toBe(true)
          expect(edge.artifact_ids.length).toBeGreaterThan(0)
          for (const id of edge.artifact_ids) expect(artifactIds.has(id)).toBe(true)
        }
        expect(body.artifacts.map((a) => a.text).sort()).toEqual([TEXTS.bobMain, TEXTS.flagged])
        expect(body.artifacts.every((a) => !a.text_truncated)).toBe(true)

        const one = ok(yield* get(`${API}/graph?db=default&dataset_id=${bob.id}&limit=1`), AdminGraphResponse)
        expect(one.truncated).toBe(true)
        expect(one.edges.map((e) => e.relation)).toEqual(["visited"])
        expect(ok(yield* get(`${API}/graph?db=default&dataset_id=${bob.id}&limit=2000`), AdminGraphResponse).truncated)
          .toBe(false)
      }))

    it.effect("GET /graph: dataset_id required and a positive integer, an unknown one a 404, limit 1..2000", () =>
      Effect.gen(function*() {
        expectError(yield* get(`${API}/graph?db=default`), 400, /dataset_id is required/)
        expectError(yield* get(`${API}/graph?db=default&dataset_id=0`), 400, /dataset_id/)
        expectError(yield* get(`${API}/graph?db=default&dataset_id=x`), 400, /dataset_id/)
        expectError(yield* get(`${API}/graph?db=default&dataset_id=999999`), 404, /no dataset with id 999999/)
        expectError(
          yield* get(`${API}/graph?db=default&dataset_id=1&limit=2001`),
          400,
          /limit must be an integer from 1 to 2000/
        )
        expectError(yield* get(`${API}/graph?db=default&dataset_id=1&limit=0`), 400, /limit/)
      }))
  })
})

// ---------------------------------------------------------------------------------------------

layer(serveTest(rememberLayer(sqliteLayer(), {})), { excludeTestServices: true })("the admin page", (it) => {
  const expectStatic = (res: TestResponse, contentType: string) => {
    expect(res.status, res.text.slice(0, 200)).toBe(200)
    expect(res.headers["content-type"]).toBe(contentType)
    expect(res.headers["content-security-policy"]).toBe(ADMIN_CSP)
    expect(res.headers["x-content-type-options"]).toBe("nosniff")
    expect(res.text.length).toBeGreaterThan(0)
  }

  it.effect("GET /v1/gb/admin/ is the HTML page, CSP-locked; /v1/gb/admin redirects there", () =>
    Effect.gen(function*() {
      const res = yield* get("/v1/gb/admin/")
      expectStatic(res, "text/html; charset=utf-8")
      expect(res.text).toMatch(/<html/i)
      // without the slash the page's relative links (assets/admin.js) would resolve to /v1/gb/assets/
      const bare = yield* get("/v1/gb/admin")
      expect(bare.status).toBe(308)
      expect(bare.headers["location"]).toBe("/v1/gb/admin/")
    }))

  it.effect("the assets serve with their content types; every asset the page links to loads", () =>
    Effect.gen(function*() {
      expectStatic(yield* get("/v1/gb/admin/assets/admin.js"), "text/javascript; charset=utf-8")
      expectStatic(yield* get("/v1/gb/admin/assets/admin.css"), "text/css; charset=utf-8")
      const cytoscape = yield* get("/v1/gb/admin/assets/cytoscape.min.js")
      expectStatic(cytoscape, "text/javascript; charset=utf-8")
      expect(cytoscape.text).toMatch(/cytoscape/i)
      const page = (yield* get("/v1/gb/admin/")).text
      const linked = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
        .filter((u) => !u.startsWith("#") && !u.startsWith("data:"))
      expect(linked.length).toBeGreaterThanOrEqual(3)
      for (const url of linked) {
        // no CDN: everything the page loads is ours, resolved as the browser resolves it
        const resolved = new URL(url, "http://127.0.0.1/v1/gb/admin/")
        expect(resolved.host, url).toBe("127.0.0.1")
        expect(resolved.pathname, url).toMatch(/^\/v1\/gb\/admin\/assets\//)
        expect((yield* get(resolved.pathname)).status, url).toBe(200)
      }
      // and every module the scripts import, transitively, from the same directory
      const seen = new Set<string>()
      const queue = ["admin.js"]
      while (queue.length > 0) {
        const name = queue.shift()!
        if (seen.has(name)) continue
        seen.add(name)
        const res = yield* get(`/v1/gb/admin/assets/${name}`)
        expectStatic(res, "text/javascript; charset=utf-8")
        for (const m of res.text.matchAll(/^import .* from "\.\/([\w.-]+)"$/gm)) queue.push(m[1]!)
      }
      expect([...seen].sort()).toEqual(["admin.js", "common.js", "graph.js", "inferences.js", "memory.js", "runs.js"])
    }))

  it.effect("an unknown asset, a path out of the directory and index.html as an asset are 404 {error}", () =>
    Effect.gen(function*() {
      for (
        const name of [
          "nope.js",
          "..%2fpackage.json",
          "..%2F..%2Fpackage.json",
          "index.html",
          "ui",
          "constructor",
          "__proto__"
        ]
      ) {
        const res = yield* get(`/v1/gb/admin/assets/${name}`)
        expect(res.status, name).toBe(404)
        expectError(res, 404)
      }
    }))

  it.effect("the admin API is open when [auth] is off", () =>
    Effect.gen(function*() {
      expect((yield* get(`${API}/databases`)).status).toBe(200)
      expect(ok(yield* get(`${API}/remember-runs?db=default`), AdminRunsResponse).counts.total).toBe(0)
    }))
})

// ---------------------------------------------------------------------------------------------
// two named databases: the app's own (alpha) and an extra one (beta), as `serve --db a --db b`

const twoDatabases = Layer.scoped(
  AdminDatabases,
  Effect.gen(function*() {
    const primary: AdminDatabase = {
      name: "alpha",
      dialect: "sqlite",
      primary: true,
      runLog: yield* RunLogRepo,
      inferences: yield* InferencesRepo,
      admin: yield* AdminRepo,
      reads: makeReads(yield* readDeps)
    }
    const extra = yield* Layer.build(SqliteLive(":memory:"))
    const beta: AdminDatabase = {
      name: "beta",
      dialect: "sqlite",
      primary: false,
      runLog: Context.get(extra, RunLogRepo),
      inferences: Context.get(extra, InferencesRepo),
      admin: Context.get(extra, AdminRepo),
      reads: makeReads(repositoriesReadDeps({
        datasets: Context.get(extra, DatasetsRepo),
        search: Context.get(extra, SearchRepo),
        inferences: Context.get(extra, InferencesRepo)
      }))
    }
    // two runs only beta has, seeded through its run log
    for (const user_id of ["carol", "dave"]) {
      const run = yield* beta.runLog.create({
        pipeline: "text",
        user_id,
        dataset: "notes",
        params: {},
        queued_at: "2026-01-01T00:00:00.000Z",
        instance_id: "other"
      })
      yield* beta.runLog.markStarted(run.id, "2026-01-01T00:00:01.000Z")
      yield* beta.runLog.stageStarted(run.id, "extract_graph", "2026-01-01T00:00:01.000Z")
      yield* beta.runLog.stageFinished(run.id, "extract_graph", {
        status: "failed",
        finished_at: "2026-01-01T00:00:02.000Z",
        duration_ms: 1000,
        error: "boom"
      })
      yield* beta.runLog.finish(run.id, {
        status: "failed",
        error: "boom",
        dataset_id: null,
        artifact_id: null,
        finished_at: "2026-01-01T00:00:02.000Z",
        duration_ms: 2000
      })
    }
    return [primary, beta]
  }).pipe(Effect.orDie)
)

const twoDatabaseApp = serveTest(
  twoDatabases.pipe(Layer.provideMerge(rememberLayer(sqliteLayer(), { extract_graph: [graph([{ name: "Eve" }], [])] })))
)

describe("two named databases", () => {
  layer(twoDatabaseApp, { excludeTestServices: true })("admin API", (it) => {
    it.effect("/databases lists both; ?db= picks the right one; default is not a name here", () =>
      Effect.gen(function*() {
        expect(ok(yield* get(`${API}/databases`), AdminDatabasesResponse)).toEqual({
          databases: [{ name: "alpha", dialect: "sqlite", primary: true }, {
            name: "beta",
            dialect: "sqlite",
            primary: false
          }]
        })
        // the API writes into the primary database only
        expect((yield* postJson("/v1/gb/remember", { user_id: "eve", text: "Eve." })).status).toBe(200)
        const alpha = ok(yield* get(`${API}/remember-runs?db=alpha`), AdminRunsResponse)
        expect(alpha.counts).toEqual({ total: 1, queued: 0, started: 0, succeeded: 1, failed: 0, cancelled: 0 })
        expect(alpha.runs.map((r) => r.user_id)).toEqual(["eve"])
        const beta = ok(yield* get(`${API}/remember-runs?db=beta`), AdminRunsResponse)
        expect(beta.counts).toEqual({ total: 2, queued: 0, started: 0, succeeded: 0, failed: 2, cancelled: 0 })
        expect(beta.runs.map((r) => r.user_id)).toEqual(["dave", "carol"])
        expect(beta.runs[0].stages.extract_graph).toMatchObject({ status: "failed", error: "boom" })
        expect(ok(yield* get(`${API}/datasets?db=alpha`), AdminDatasetsResponse).datasets.map((d) => d.user_id))
          .toEqual([
            "eve"
          ])
        expect(ok(yield* get(`${API}/datasets?db=beta`), AdminDatasetsResponse).datasets).toEqual([])
        expect(ok(yield* get(`${API}/inferences?db=beta`), AdminUsageResponse).totals.calls).toBe(0)
        expect(ok(yield* get(`${API}/inferences?db=alpha`), AdminUsageResponse).totals.calls).toBe(1)
        expectError(yield* get(`${API}/remember-runs?db=default`), 404, /known: alpha, beta/)
      }))
  })
})
