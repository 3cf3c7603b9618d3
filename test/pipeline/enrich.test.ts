/**
 * The enrichments in the pipeline (seed: Classify complexity, Geo, Web search; contracts
 * sections 12-14) over a real database and the scripted LLM: they run after the text is
 * stored, never fail the call, record their outcome on their run stage, and file every
 * inference they cause under it. On SQLite and PostgreSQL.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import { expect } from "vitest"
import { FakeGeo, type FakeGeoAnswer } from "../../layers/testing/FakeGeo.js"
import { type LlmScript, type ScriptedAnswer, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import type { RememberRequest } from "../../src/domain/Remember.js"
import type { GeoItem, WebSearchItem } from "../../src/pipeline/enrich/index.js"
import { readResolveEdgesPrompt } from "../../src/pipeline/prompts/resolveEdges.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import type { RememberSettingsShape } from "../../src/pipeline/Settings.js"
import { ClassifierFailed, ComplexityClassifier } from "../../src/services/ComplexityClassifier.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { graph, itemsOf, rememberLayer, textBody } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { type FakeWebSearch, webSearchBlocks } from "../support/fakeAnthropic.js"

const REF = "2025-02-01T00:00:00.000Z"

const request = (text: string, extra: Partial<RememberRequest> = {}): RememberRequest => ({
  user_id: "alice",
  dataset: "main",
  text,
  kind: "knowledge",
  reference_time: REF,
  models: {},
  reasoning: {},
  web_search: false,
  ...extra
})

const rows = <A extends object>(query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(query)).pipe(Effect.orDie)

const remember = (req: RememberRequest) => Effect.flatMap(RememberManager, (m) => m.submit(req))

const runOf = (runId: number) =>
  Effect.map(Effect.flatMap(RunLogRepo, (log) => log.get(runId)), (o) => Option.getOrThrow(o))

const stagesOf = (runId: number) =>
  Effect.map(runOf(runId), (run) => Object.fromEntries(run.stages.map((s) => [s.stage, s])))

interface Options {
  readonly geo?: Readonly<Record<string, FakeGeoAnswer>>
  readonly classifier?: Layer.Layer<ComplexityClassifier>
  readonly settings?: Partial<RememberSettingsShape>
}

const run = <A, E>(
  storage: () => StorageLayer,
  script: LlmScript,
  options: Options,
  program: Effect.Effect<A, E, any>
) =>
  program.pipe(
    Effect.provide(
      rememberLayer(storage(), script, {
        ...(options.geo === undefined ? {} : { geo: FakeGeo.layer(options.geo) }),
        ...(options.classifier === undefined ? {} : { classifier: options.classifier }),
        settings: { webSearch: true, ...options.settings }
      }) as Layer.Layer<any, any, never>
    )
  ) as Effect.Effect<A, E, never>

const userText = (r: LlmRequest) => String(typeof r.messages[0]!.content === "string" ? r.messages[0]!.content : "")

/** Every inference of the run is filed in exactly one of its stages. */
const expectEachInferenceInOneStage = (runId: number) =>
  Effect.gen(function*() {
    const run = yield* runOf(runId)
    const filed = run.stages.flatMap((s) => s.inference_ids)
    const all = (yield* rows<{ id: number }>(`SELECT id FROM gb_inferences WHERE run_id = ${runId} ORDER BY id`)).map((
      r
    ) => Number(r.id))
    expect([...filed].sort((a, b) => a - b)).toEqual(all)
  })

// ---------------------------------------------------------------------------------------------
// classify_complexity

const stubClassifier = (result: "ok" | "fail") =>
  Layer.succeed(
    ComplexityClassifier,
    ComplexityClassifier.of({
      enabled: true,
      classify: (text) =>
        result === "ok"
          ? Effect.succeed(
            Option.some({
              complexity: "simple" as const,
              confidence: 0.9,
              probabilities: { simple: 0.9, medium: 0.08, complex: 0.02, chars: text.length },
              latency_ms: 12
            })
          )
          : Effect.fail(new ClassifierFailed({ message: "jev: HTTP 500: boom" }))
    })
  )

const ALICE_IN_BERLIN = graph(
  [{ name: "Alice Smith", type: "person" }, { name: "Berlin", type: "city" }, { name: "Paris", type: "city" }],
  [{ source: "Alice Smith", target: "Berlin", relation: "moved from" }, {
    source: "Alice Smith",
    target: "Paris",
    relation: "moved to"
  }]
)

// ---------------------------------------------------------------------------------------------
// web search: a text about Alice, Acme, Berlin and Bob; the model's searches by entity

const TEXT = "Alice Smith works at Acme Corp and lives in Berlin. Acme Corp is based in Berlin. Bob knows Alice Smith."

const TEXT_GRAPH = {
  entities: [
    { name: "Alice Smith", type: "person" },
    { name: "Acme Corp", type: "organization" },
    { name: "Berlin", type: "city" },
    { name: "Bob", type: "person" }
  ],
  edges: [
    { source: "Alice Smith", target: "Acme Corp", relation: "works at", valid_at: "2024-01-01" },
    { source: "Alice Smith", target: "Berlin", relation: "lives in", valid_at: "2024-01-01" },
    { source: "Acme Corp", target: "Berlin", relation: "based in", valid_at: "2020-01-01" },
    { source: "Bob", target: "Alice Smith", relation: "knows", valid_at: "2023-01-01" }
  ]
}

/** What the web says about each key entity: the answer text (marked for the extraction below) and its graph. */
const WEB: Record<
  string,
  { readonly text: string; readonly searches: ReadonlyArray<FakeWebSearch>; readonly graph: unknown }
> = {
  "Alice Smith": {
    text: "[web:Alice] On 2025-01-10 Alice Smith moved to Paris.",
    searches: [{
      query: "Alice Smith latest news",
      results: [{ url: "https://news.test/alice", title: "Alice moves", page_age: "January 11, 2025" }]
    }],
    graph: {
      entities: [{ name: "Alice Smith", type: "person" }, { name: "Paris", type: "city" }],
      edges: [{ source: "Alice Smith", target: "Paris", relation: "lives in", valid_at: "2025-01-10" }]
    }
  },
  "Acme Corp": {
    text: "[web:Acme] Alice Smith works at Acme Corp. On 2025-01-15 Acme Corp opened a plant in Ohio.",
    searches: [
      { query: "Acme Corp news", results: [{ url: "https://news.test/acme", title: "Acme plant" }] },
      {
        query: "Acme Corp Ohio plant 2025",
        results: [{ url: "https://news.test/acme", title: "Acme plant" }, {
          url: "https://biz.test/ohio",
          title: "Ohio",
          page_age: "2025-01-16"
        }]
      }
    ],
    graph: {
      entities: [{ name: "Alice Smith", type: "person" }, { name: "Acme Corp", type: "organization" }, {
        name: "Ohio",
        type: "region"
      }],
      edges: [
        { source: "Alice Smith", target: "Acme Corp", relation: "works at", valid_at: "2024-01-01" },
        { source: "Acme Corp", target: "Ohio", relation: "opened plant in", valid_at: "2025-01-15" }
      ]
    }
  },
  Berlin: {
    text: "[web:Berlin] On 2025-01-25 Berlin hosted the Berlinale.",
    searches: [{
      query: "Berlin events January 2025",
      results: [{ url: "https://news.test/berlin", title: "Berlinale" }]
    }],
    graph: {
      entities: [{ name: "Berlin", type: "city" }, { name: "Berlinale", type: "event" }],
      edges: [{ source: "Berlin", target: "Berlinale", relation: "hosted", valid_at: "2025-01-25" }]
    }
  }
}

const webAnswer = (name: string): ScriptedAnswer => {
  const web = WEB[name]!
  return {
    text: web.text,
    model: "claude-haiku-4-5-20251001",
    blocks: webSearchBlocks({ preamble: "Let me search.", searches: web.searches, text: web.text }),
    usage: { inputTokens: 1500, outputTokens: 120, webSearchRequests: web.searches.length }
  }
}

/** A contradiction is a new fact with the same source and relation as a live one, to another target. */
const resolveByRule = (r: LlmRequest): ScriptedAnswer => {
  const input = readResolveEdgesPrompt(userText(r))
  const contradictions = input.new_facts.flatMap((n: any) => {
    const ids = input.existing_facts
      .filter((e: any) => e.source === n.source && e.relation === n.relation && e.target !== n.target)
      .map((e: any) => e.id)
    return ids.length > 0 ? [{ new: n.index, existing: ids }] : []
  })
  return ScriptedLlm.json({ duplicates: [], contradictions })
}

const webScript = (overrides: Partial<Record<string, ScriptedAnswer>> = {}) => (r: LlmRequest): ScriptedAnswer => {
  const text = userText(r)
  switch (r.stage) {
    case "web_search": {
      const name = /Entity: (.+?) \(/.exec(text)![1]!
      return overrides[name] ?? webAnswer(name)
    }
    case "resolve_edges":
      return resolveByRule(r)
    case "detect_geo":
      return ScriptedLlm.json({ places: [] })
    case "extract_graph": {
      const web = Object.values(WEB).find((w) => text.includes(w.text))
      return ScriptedLlm.json(web?.graph ?? TEXT_GRAPH)
    }
    default:
      return { fail: { message: `unexpected stage ${r.stage}` } }
  }
}

forEachDialect((_dialect, makeLayer) => {
  it.live("classify_complexity: the result is on the stage; a failure is recorded and the call goes on", () =>
    Effect.gen(function*() {
      const ok = yield* run(
        makeLayer,
        { extract_graph: [ALICE_IN_BERLIN] },
        { classifier: stubClassifier("ok") },
        Effect.gen(function*() {
          const out = yield* remember(request("Alice Smith moved from Berlin to Paris."))
          return (yield* stagesOf(out.runId)).classify_complexity!
        })
      )
      expect(ok.status).toBe("succeeded")
      expect(ok.detail).toEqual({
        complexity: "simple",
        confidence: 0.9,
        probabilities: {
          simple: 0.9,
          medium: 0.08,
          complex: 0.02,
          chars: "Alice Smith moved from Berlin to Paris.".length
        },
        latency_ms: 12
      })

      yield* run(
        makeLayer,
        { extract_graph: [ALICE_IN_BERLIN] },
        { classifier: stubClassifier("fail") },
        Effect.gen(function*() {
          const out = yield* remember(request("Alice Smith moved from Berlin to Paris."))
          expect(textBody(out).entities).toHaveLength(3)
          const run = yield* runOf(out.runId)
          expect(run.status).toBe("succeeded")
          const stage = run.stages.find((s) => s.stage === "classify_complexity")!
          expect(stage).toMatchObject({ status: "failed", error: "jev: HTTP 500: boom" })
        })
      )
    }))

  // -------------------------------------------------------------------------------------------
  // geo

  const DETECTED = ScriptedLlm.json({
    places: [
      { entity: "Berlin", kind: "city", query: "Berlin, Germany" },
      { entity: "Paris", kind: "city", query: "Paris, France" }
    ]
  })

  it.live("geo: places are resolved and stored; a resolver failure fails the stage, not the call, and is retried next time", () =>
    run(
      makeLayer,
      {
        extract_graph: [ALICE_IN_BERLIN, ALICE_IN_BERLIN, graph([{ name: "Berlin", type: "city" }], [])],
        detect_geo: [
          DETECTED,
          ScriptedLlm.json({ places: [{ entity: "Paris", kind: "city", query: "Paris, France" }] })
        ]
      },
      {
        geo: {
          "Berlin, Germany": FakeGeo.place("Berlin", 52.517, 13.3889, "Deutschland", "de"),
          "Paris, France": { fail: "nominatim: HTTP 503: Search temporarily unavailable" }
        }
      },
      Effect.gen(function*() {
        const out = yield* remember(
          request("Alice Smith moved from Berlin to Paris.", {
            models: { detect_geo: "geo-model" },
            reasoning: { detect_geo: "low" }
          })
        )
        const response = textBody(out)
        const ids = Object.fromEntries(response.entities.map((e) => [e.name, e.id]))
        expect(response.geo).toEqual([
          {
            entity: "Berlin",
            entity_type: "city",
            entity_id: ids.Berlin,
            kind: "city",
            query: "Berlin, Germany",
            resolved: true,
            latitude: 52.517,
            longitude: 13.3889,
            display_name: "Berlin, Deutschland",
            country: "Deutschland",
            country_code: "de",
            region: null,
            provider: "fake"
          },
          {
            entity: "Paris",
            entity_type: "city",
            entity_id: ids.Paris,
            kind: "city",
            query: "Paris, France",
            resolved: false,
            latitude: null,
            longitude: null,
            display_name: null,
            country: null,
            country_code: null,
            region: null,
            provider: "fake",
            error: "nominatim: HTTP 503: Search temporarily unavailable"
          }
        ])
        // the call succeeded with the stage failed, its detect_geo inference filed under it
        const run = yield* runOf(out.runId)
        expect(run.status).toBe("succeeded")
        const stages = Object.fromEntries(run.stages.map((s) => [s.stage, s]))
        expect(stages.resolve_geo).toMatchObject({
          status: "failed",
          error: expect.stringContaining("Paris: nominatim: HTTP 503")
        })
        const inferences = yield* rows<any>(
          `SELECT id, stage, model, reasoning FROM gb_inferences WHERE run_id = ${out.runId} ORDER BY id`
        )
        const detect = inferences.find((i: any) => i.stage === "detect_geo")
        expect(detect).toMatchObject({ model: "geo-model", reasoning: "low" })
        expect(stages.resolve_geo!.inference_ids).toEqual([Number(detect.id)])
        yield* expectEachInferenceInOneStage(out.runId)
        const stored = yield* rows<any>(
          "SELECT entity_id, kind, query, resolved, latitude, provider, error FROM gb_entity_geo ORDER BY entity_id"
        )
        expect(
          stored.map((
            r: any
          ) => [Number(r.entity_id), Number(r.resolved), r.latitude === null ? null : Number(r.latitude), r.error])
        ).toEqual([
          [ids.Berlin, 1, 52.517, null],
          [ids.Paris, 0, null, "nominatim: HTTP 503: Search temporarily unavailable"]
        ])

        // again: Berlin has its place and is skipped; Paris failed, so it is asked about again
        const again = textBody(yield* remember(request("Alice Smith moved from Berlin to Paris.")))
        const detectCalls = (yield* ScriptedLlm).callsFor("detect_geo")
        expect(JSON.parse(userText(detectCalls[1]!)).entities.map((e: any) => e.name)).toEqual(["Alice Smith", "Paris"])
        expect((yield* FakeGeo).lookups).toEqual(["Berlin, Germany", "Paris, France", "Paris, France"])
        expect(itemsOf<GeoItem>(again.geo).map((g) => g.entity)).toEqual(["Paris"])

        // a text whose only place is known: no detect_geo call at all
        const third = yield* remember(request("Berlin."))
        expect(textBody(third).geo).toEqual([])
        expect((yield* ScriptedLlm).callsFor("detect_geo")).toHaveLength(2)
        expect((yield* stagesOf(third.runId)).resolve_geo).toMatchObject({
          status: "succeeded",
          inference_ids: [],
          detail: { entities: 1, skipped: 1, places: 0, resolved: 0 }
        })
      })
    ))

  it.live("geo: an unresolved place ([]) is stored as such and not looked up again; a failed detect_geo leaves the call succeeded", () =>
    run(
      makeLayer,
      {
        extract_graph: [ALICE_IN_BERLIN, ALICE_IN_BERLIN],
        detect_geo: [DETECTED, { fail: { message: "HTTP 529 overloaded", status: 529 } }]
      },
      { geo: { "Paris, France": FakeGeo.place("Paris", 48.8566, 2.3522) } },
      Effect.gen(function*() {
        const first = itemsOf<GeoItem>(
          textBody(yield* remember(request("Alice Smith moved from Berlin to Paris."))).geo
        )
        expect(first.map((g) => [g.entity, g.resolved, g.error])).toEqual([["Berlin", false, undefined], [
          "Paris",
          true,
          undefined
        ]])
        expect(first[0]).not.toHaveProperty("error")
        expect(yield* rows<any>("SELECT COUNT(*) AS n FROM gb_entity_geo WHERE error IS NULL")).toEqual([{ n: 2 }])

        const second = yield* remember(request("Alice Smith moved from Berlin to Paris."))
        expect(textBody(second).geo).toEqual([])
        expect(textBody(second).artifact_id).toEqual(expect.any(Number))
        const run = yield* runOf(second.runId)
        expect(run.status).toBe("succeeded")
        expect(run.stages.find((s) => s.stage === "resolve_geo")).toMatchObject({
          status: "failed",
          error: expect.stringContaining("HTTP 529 overloaded")
        })
        // only Alice was left to ask about (both places have rows)
        const calls = (yield* ScriptedLlm).callsFor("detect_geo")
        expect(JSON.parse(userText(calls[1]!)).entities.map((e: any) => e.name)).toEqual(["Alice Smith"])
        expect((yield* FakeGeo).lookups).toEqual(["Berlin, Germany", "Paris, France"])
        yield* expectEachInferenceInOneStage(second.runId)
      })
    ))

  it.live("geo: without a resolver there is no geo stage and no geo in the response", () =>
    run(
      makeLayer,
      { extract_graph: [ALICE_IN_BERLIN] },
      {},
      Effect.gen(function*() {
        const out = yield* remember(request("Alice Smith moved from Berlin to Paris."))
        expect(out.response).not.toHaveProperty("geo")
        expect((yield* stagesOf(out.runId)).resolve_geo).toBeUndefined()
      })
    ))

  // -------------------------------------------------------------------------------------------
  // web search

  it.live("web_search: 503 before any work when the server cannot search", () =>
    run(
      makeLayer,
      { extract_graph: [ALICE_IN_BERLIN] },
      { settings: { webSearch: false } },
      Effect.gen(function*() {
        const submitted = yield* Effect.flatMap(RememberManager, (m) => m.enqueue(request(TEXT, { web_search: true })))
        const exit = yield* Effect.exit(submitted.await)
        expect(exit).toEqual(
          Exit.fail(
            expect.objectContaining({ _tag: "ServiceUnavailable", message: "web_search needs an Anthropic API key" })
          )
        )
        expect((yield* ScriptedLlm).calls).toHaveLength(0)
        expect(yield* rows<any>("SELECT COUNT(*) AS n FROM gb_artifacts")).toEqual([{ n: 0 }])
        const run = yield* runOf(submitted.runId)
        expect(run).toMatchObject({ status: "failed", error: "web_search needs an Anthropic API key" })
        expect(run.stages).toEqual([])
      })
    ))

  it.live("web_search: the key entities' results are artifacts under the text, reconciled with its facts; the inferences are filed under web_search", () =>
    run(
      makeLayer,
      webScript(),
      { geo: {} },
      Effect.gen(function*() {
        const out = yield* remember(
          request(TEXT, { web_search: true, session_id: "s1", models: { web_search: "claude-haiku-4-5" } })
        )
        const response = textBody(out)
        const textArtifact = response.artifact_id
        const webSearches = itemsOf<WebSearchItem>(response.web_searches)

        // the response's entities and edges stay the text's
        expect(response.entities.map((e) => e.name)).toEqual(["Alice Smith", "Acme Corp", "Berlin", "Bob"])
        expect(response.edges).toHaveLength(4)
        // Alice (3 facts), then Acme and Berlin (2 each, in order of appearance); Bob (1) is not searched
        expect(webSearches.map((w) => w.entity)).toEqual(["Alice Smith", "Acme Corp", "Berlin"])
        const [alice, acme, berlin] = webSearches
        for (const item of webSearches) {
          expect(item).not.toHaveProperty("error")
          expect(item.parent_artifact_id).toBe(textArtifact)
          expect(item.artifact_id).toEqual(expect.any(Number))
        }
        expect(acme).toMatchObject({
          query: "Acme Corp news\nAcme Corp Ohio plant 2025",
          sources: [
            { url: "https://news.test/acme", title: "Acme plant", page_age: null },
            { url: "https://biz.test/ohio", title: "Ohio", page_age: "2025-01-16" }
          ]
        })
        expect(acme.entities.map((e) => e.name)).toEqual(["Alice Smith", "Acme Corp", "Ohio"])
        expect(berlin.edges.map((e) => [e.source, e.relation, e.target])).toEqual([[
          "Berlin",
          "hosted",
          "Berlinale"
        ]])

        // the artifacts: kind web_search, child of the text, with the queries, the sources and the session
        const artifacts = yield* rows<any>(
          `SELECT id, kind, parent_id, query, metadata, session_id, text FROM gb_artifacts WHERE kind = 'web_search' ORDER BY id`
        )
        expect(artifacts.map((a: any) => Number(a.id))).toEqual([
          alice.artifact_id,
          acme.artifact_id,
          berlin.artifact_id
        ])
        expect(artifacts.every((a: any) => Number(a.parent_id) === textArtifact && a.session_id === "s1")).toBe(true)
        expect(artifacts[0].query).toBe("Alice Smith latest news")
        expect(artifacts[0].text).toBe(WEB["Alice Smith"]!.text)
        expect(JSON.parse(artifacts[1].metadata)).toEqual({ sources: acme.sources })

        // reconciled: Acme's result repeats "Alice works at Acme" (merged, linked to both) ...
        const worksAt = response.edges.find((e) => e.relation === "works_at")!
        expect(acme.edges.find((e) => e.relation === "works_at")!.id).toBe(worksAt.id)
        const links = yield* rows<any>(
          `SELECT artifact_id FROM gb_edge_artifacts WHERE edge_id = ${worksAt.id} ORDER BY artifact_id`
        )
        expect(links.map((l: any) => Number(l.artifact_id))).toEqual([textArtifact, acme.artifact_id])
        // ... and Alice's says she moved to Paris: the text's "lives in Berlin" is closed (shown in its final state)
        const livesIn = response.edges.find((e) => e.relation === "lives_in")
        expect(livesIn).toMatchObject({
          target: "Berlin",
          invalid_at: "2025-01-10T00:00:00.000Z",
          expired_at: expect.any(String)
        })
        expect(yield* rows<any>("SELECT COUNT(*) AS n FROM gb_entities WHERE name = 'Alice Smith'")).toEqual([{ n: 1 }])

        // geo ran first and saw only the text's entities
        const calls = (yield* ScriptedLlm).calls
        expect(calls.findIndex((c) => c.stage === "detect_geo")).toBeLessThan(
          calls.findIndex((c) => c.stage === "web_search")
        )

        // the run log: web_search holds its searches and all the work on the results; the text's stages only the text's
        const stages = yield* stagesOf(out.runId)
        expect(stages.web_search).toMatchObject({
          status: "succeeded",
          detail: { entities: ["Alice Smith", "Acme Corp", "Berlin"], searches: 4, stored: 3 }
        })
        const inferences = yield* rows<any>(
          `SELECT id, stage, model, reasoning, web_search_requests, cost_usd FROM gb_inferences WHERE run_id = ${out.runId} ORDER BY id`
        )
        const byId = new Map(inferences.map((i: any) => [Number(i.id), i]))
        expect(stages.extract_graph!.inference_ids.map((id) => byId.get(id).stage)).toEqual(["extract_graph"])
        const filed = stages.web_search!.inference_ids.map((id) => byId.get(id).stage)
        expect(filed.filter((s) => s === "web_search")).toHaveLength(3)
        expect(filed.filter((s) => s === "extract_graph")).toHaveLength(3)
        expect(filed).toContain("resolve_edges")
        yield* expectEachInferenceInOneStage(out.runId)
        const searches = inferences.filter((i: any) => i.stage === "web_search")
        // the searches run concurrently: their rows are in the order they finished
        expect(searches.map((i: any) => [i.model, i.reasoning, Number(i.web_search_requests)]).sort()).toEqual([
          ["claude-haiku-4-5-20251001", "none", 1],
          ["claude-haiku-4-5-20251001", "none", 1],
          ["claude-haiku-4-5-20251001", "none", 2]
        ])
        // priced per 1,000 searches on top of the tokens (haiku 4.5: $1/$5 per million, $10 per 1,000 searches)
        const twoSearches = searches.find((i: any) => Number(i.web_search_requests) === 2)
        expect(Number(twoSearches.cost_usd)).toBeCloseTo((1500 * 1 + 120 * 5) / 1e6 + 2 * 10 / 1000, 8)
        // the call asked for the tool and no thinking
        const request0 = (yield* ScriptedLlm).callsFor("web_search")[0]!
        expect(request0).toMatchObject({
          model: "claude-haiku-4-5",
          reasoning: "none",
          tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }]
        })
      })
    ))

  it.live("web_search: a failing search, an empty answer or a tool error fail their item only; the others are stored", () =>
    run(
      makeLayer,
      webScript({
        "Alice Smith": { fail: { message: "HTTP 500 api_error", status: 500 } },
        "Acme Corp": {
          text: "",
          blocks: webSearchBlocks({ searches: [{ query: "Acme Corp", errorCode: "max_uses_exceeded" }], text: [] })
        }
      }),
      {},
      Effect.gen(function*() {
        const out = yield* remember(request(TEXT, { web_search: true }))
        const response = textBody(out)
        const [alice, acme, berlin] = itemsOf<WebSearchItem>(response.web_searches)
        expect(alice).toEqual({
          entity: "Alice Smith",
          query: null,
          parent_artifact_id: response.artifact_id,
          artifact_id: null,
          sources: [],
          entities: [],
          edges: [],
          error: expect.stringContaining("HTTP 500 api_error")
        })
        expect(acme).toMatchObject({
          query: "Acme Corp",
          artifact_id: null,
          error: expect.stringContaining("max_uses_exceeded")
        })
        expect(berlin).toMatchObject({ entity: "Berlin", artifact_id: expect.any(Number) })
        expect(berlin).not.toHaveProperty("error")
        expect(yield* rows<any>("SELECT COUNT(*) AS n FROM gb_artifacts WHERE kind = 'web_search'")).toEqual([{ n: 1 }])

        const run = yield* runOf(out.runId)
        expect(run.status).toBe("succeeded")
        const stage = run.stages.find((s) => s.stage === "web_search")!
        expect(stage.status).toBe("failed")
        expect(stage.error).toMatch(
          /^web search failed for 2 of 3 entities: Alice Smith: .*HTTP 500.*; Acme Corp: .*max_uses_exceeded/
        )
        // the failed call is an inference too, filed under web_search
        yield* expectEachInferenceInOneStage(out.runId)
        const failed = yield* rows<any>(
          `SELECT error FROM gb_inferences WHERE run_id = ${out.runId} AND stage = 'web_search' AND error IS NOT NULL`
        )
        expect(failed).toHaveLength(1)
      })
    ))

  it.live("web_search on a chunked text: an entity's result hangs off the chunk it came from", () => {
    const paragraph = (marker: string) =>
      `${marker} This paragraph is about the harbour, the ships that came and went, and the people who watched them from the quay in the evening light.`
    const doc = ["[P1]", "[P2]", "[P3]", "[P4]"].map(paragraph).join("\n\n")
    const script = (r: LlmRequest): ScriptedAnswer => {
      const text = userText(r)
      if (r.stage === "summarize_chunk") return { text: "A summary." }
      if (r.stage === "web_search") return webAnswer("Berlin")
      if (r.stage === "resolve_edges") return resolveByRule(r)
      if (text.includes("[web:Berlin]")) return ScriptedLlm.json(WEB.Berlin!.graph)
      // Dan and his two facts are in P3 only
      return text.includes("[P3]")
        ? ScriptedLlm.json({
          entities: [{ name: "Dan", type: "person" }, { name: "Rome", type: "city" }, { name: "Eve", type: "person" }],
          edges: [{ source: "Dan", target: "Rome", relation: "visited" }, {
            source: "Dan",
            target: "Eve",
            relation: "knows"
          }]
        })
        : ScriptedLlm.json({ entities: [], edges: [] })
    }
    return run(
      makeLayer,
      script,
      { settings: { chunkSize: 64, chunkOverlapPercent: 0 } },
      Effect.gen(function*() {
        const response = textBody(yield* remember(request(doc, { web_search: true })))
        const webSearches = itemsOf<WebSearchItem>(response.web_searches)
        expect(response.chunks!.length).toBeGreaterThan(1)
        const danChunk = response.chunks!.find((c) => c.entities.some((e) => e.name === "Dan"))!
        expect(danChunk.artifact_id).not.toBe(response.artifact_id)
        expect(webSearches[0]).toMatchObject({
          entity: "Dan",
          parent_artifact_id: danChunk.artifact_id,
          artifact_id: expect.any(Number)
        })
        const [artifact] = yield* rows<any>(
          `SELECT parent_id FROM gb_artifacts WHERE id = ${webSearches[0].artifact_id}`
        )
        expect(Number(artifact.parent_id)).toBe(danChunk.artifact_id)
      })
    )
  })
})
