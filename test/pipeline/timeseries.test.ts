/**
 * Timeseries in the text pipeline (spec/contracts.md section 11), on SQLite and PostgreSQL:
 * store and anchor (entity, edge, artifact), 422 that stores nothing, overwriting points,
 * a chunked text anchored to its parent, fetch with a Layer-provided provider and the
 * scripted resolve_series stage, and observations extracted into facts; the run log stages
 * store_series, fetch_series and observe_series with their inferences.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Cause, Effect, Either, Exit, type Layer, Option } from "effect"
import { expect } from "vitest"
import { type ScriptedAnswer, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { TimeseriesProvidersLive } from "../../layers/timeseries/index.js"
import { validateRememberRequest } from "../../src/domain/Remember.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import type { FetchItem, ObservationItem, SeriesItem } from "../../src/pipeline/series/index.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { type FetchedSeries, ProviderFailed, type TimeseriesProvider } from "../../src/services/TimeseriesProviders.js"
import { itemsOf, rememberLayer, type RememberLayerOptions, textBody } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"

const REF = "2025-02-01T00:00:00.000Z"
const day = (d: number) => `2025-01-${String(d).padStart(2, "0")}T00:00:00.000Z`

/** A request as the HTTP handler validates it. */
const request = (body: Record<string, unknown>) => {
  const r = validateRememberRequest({ user_id: "alice", dataset: "main", reference_time: REF, ...body })
  if (Either.isLeft(r)) throw new Error(r.left.message)
  return r.right
}

const rows = <A extends object>(query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(query)).pipe(Effect.orDie)
const count = (table: string, where = "1 = 1") =>
  Effect.map(rows<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`), (r) => Number(r[0]!.n))

const remember = (body: Record<string, unknown>) => Effect.flatMap(RememberManager, (m) => m.submit(request(body)))

const runOf = (id: number) => Effect.flatMap(RunLogRepo, (log) => log.get(id)).pipe(Effect.map(Option.getOrThrow))
const stagesOf = (id: number) => Effect.map(runOf(id), (run) => Object.fromEntries(run.stages.map((s) => [s.stage, s])))

const userText = (r: LlmRequest) => String(typeof r.messages[0]!.content === "string" ? r.messages[0]!.content : "")

const APPLE_TEXT = "Apple Inc. is led by Tim Cook."
const appleGraph = ScriptedLlm.json({
  entities: [{ name: "Apple Inc.", type: "Organization" }, { name: "Tim Cook", type: "person" }],
  edges: [{ source: "Tim Cook", target: "Apple Inc.", relation: "leads", description: "Tim Cook leads Apple Inc." }]
})

/**
 * extract_graph: the Apple text, and any series observation (its text names the series and
 * its entity), which yields a dated fact about the entity's share price.
 */
const script =
  (extra: (r: LlmRequest) => ScriptedAnswer | undefined = () => undefined) => (r: LlmRequest): ScriptedAnswer => {
    const own = extra(r)
    if (own !== undefined) return own
    const text = userText(r)
    if (r.stage === "extract_graph" && text.includes("The time series")) {
      const about = /The time series (\S+) of ([^,]+?) (went|was)/.exec(text)
      const entity = about?.[2] ?? "Apple Inc."
      return ScriptedLlm.json({
        entities: [{ name: entity, type: "organization" }, { name: `${about?.[1] ?? "series"}`, type: "concept" }],
        edges: [{
          source: entity,
          target: about?.[1] ?? "series",
          relation: "has share price",
          description: text.slice(0, 120),
          valid_at: day(31)
        }]
      })
    }
    if (r.stage === "extract_graph") return appleGraph
    return { fail: { message: `unexpected call to ${r.stage}` } }
  }

const run = <A, E>(
  storage: () => StorageLayer,
  s: ReturnType<typeof script>,
  program: Effect.Effect<A, E, any>,
  options: RememberLayerOptions = {}
) =>
  program.pipe(Effect.provide(rememberLayer(storage(), s, options) as Layer.Layer<any, any, never>)) as Effect.Effect<
    A,
    E,
    never
  >

const failure = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

/** A provider given as a Layer, as an embedding application would: fixed answers per query. */
const fakeProvider = (
  answers: Record<string, ReadonlyArray<FetchedSeries> | string>,
  calls: Array<[string, string, string]> = []
): TimeseriesProvider => ({
  name: "prices",
  description: "Daily closing prices of listed stocks; query: a ticker such as AAPL.US",
  fetch: (query, from, to) =>
    Effect.suspend(() => {
      calls.push([query, from, to])
      const answer = answers[query]
      if (answer === undefined) return Effect.succeed([])
      return typeof answer === "string" ? Effect.fail(new ProviderFailed({ message: answer })) : Effect.succeed(answer)
    })
})

const resolveAnswer = (fetches: ReadonlyArray<Record<string, unknown>>): ScriptedAnswer => ScriptedLlm.json({ fetches })

forEachDialect((_dialect, makeLayer) => {
  it.live("stores series anchored to an entity, an edge and the artifact, with stats and the store_series stage", () =>
    run(
      makeLayer,
      script(),
      Effect.gen(function*() {
        const out = yield* remember({
          text: APPLE_TEXT,
          timeseries: {
            series: [
              {
                key: "AAPL.close",
                unit: "USD",
                points: [[day(1), 100], [day(2), 90], [day(3), 120], [day(4), 110]],
                anchors: [{ entity: { name: "apple  inc.", type: "Organization" } }, {
                  edge: { source: "Tim Cook", relation: "Leads" }
                }, { artifact: true }]
              },
              { key: "plain", points: [["2025-01-05", 1]] }
            ]
          }
        })
        const response = textBody(out)
        const apple = response.entities.find((e) => e.name === "Apple Inc.")!
        const leads = response.edges[0]
        expect(response.series).toEqual([
          {
            id: expect.any(Number),
            key: "AAPL.close",
            unit: "USD",
            created: true,
            points: 4,
            point_count: 4,
            stats: {
              from: day(1),
              to: day(4),
              count: 4,
              first: 100,
              last: 110,
              min: 90,
              max: 120,
              mean: 105,
              change: 10,
              change_pct: 10
            },
            artifact_id: response.artifact_id,
            anchors: [
              {
                entity: { name: "apple  inc.", type: "Organization" },
                required: true,
                matched: [{ entity_id: apple.id, name: "Apple Inc.", type: "organization" }]
              },
              {
                edge: { source: "Tim Cook", relation: "Leads" },
                required: true,
                matched: [{ edge_id: leads.id, source: "Tim Cook", relation: "leads", target: "Apple Inc." }]
              },
              { artifact: true, required: true, matched: [{ artifact_id: response.artifact_id }] }
            ]
          },
          expect.objectContaining({
            key: "plain",
            unit: null,
            points: 1,
            anchors: [{ artifact: true, required: true, matched: [{ artifact_id: response.artifact_id }] }]
          })
        ])
        expect(response).not.toHaveProperty("series_fetches")
        expect(response).not.toHaveProperty("series_observations")

        const series = yield* rows<any>("SELECT * FROM gb_series ORDER BY id")
        expect(series.map((s) => [s.key, s.unit, Number(s.dataset_id)])).toEqual([
          ["AAPL.close", "USD", out.dataset_id],
          ["plain", null, out.dataset_id]
        ])
        expect(yield* count("gb_series_points")).toBe(5)
        // the artifact selector and the implicit artifact anchor are one row
        const anchors = yield* rows<any>(
          `SELECT artifact_id, entity_id, edge_id FROM gb_series_anchors WHERE series_id = ${series[0].id} ORDER BY id`
        )
        expect(anchors.map((a) => [a.artifact_id, a.entity_id, a.edge_id].map((x) => (x === null ? null : Number(x)))))
          .toEqual([
            [response.artifact_id, null, null],
            [null, apple.id, null],
            [null, null, leads.id]
          ])
        expect(yield* count("gb_series_anchors", `series_id = ${series[1].id}`)).toBe(1)

        const stages = yield* stagesOf(out.runId)
        expect(stages.store_series!.status).toBe("succeeded")
        expect(stages.store_series!.detail).toEqual({ series: 2, created: 2, points: 5, anchors: 4 })
        expect(stages.store!.status).toBe("succeeded")
        expect(stages.fetch_series).toBeUndefined()
      })
    ))

  it.live("a required anchor that matches nothing: 422 and nothing at all is stored, the text included", () =>
    run(
      makeLayer,
      script(),
      Effect.gen(function*() {
        const exit = yield* Effect.exit(remember({
          text: APPLE_TEXT,
          timeseries: {
            series: [{
              key: "GOOG.close",
              points: [[day(1), 1]],
              anchors: [{ artifact: true }, { entity: { name: "Google" } }]
            }]
          }
        }))
        const error = failure(exit)
        expect(error?._tag).toBe("AnchorNotFound")
        expect(error?.message).toContain("timeseries.series[0].anchors[1]")
        expect(error?.message).toContain("\"Google\"")
        for (
          const table of [
            "gb_datasets",
            "gb_artifacts",
            "gb_entities",
            "gb_edges",
            "gb_series",
            "gb_series_points",
            "gb_series_anchors"
          ]
        ) {
          expect(yield* count(table), table).toBe(0)
        }
        const run = (yield* rows<any>("SELECT id, status FROM gb_remember_runs"))[0]
        expect(run.status).toBe("failed")
        const stages = yield* stagesOf(Number(run.id))
        expect(stages.store_series!.status).toBe("failed")
        expect(stages.store_series!.error).toContain("Google")
      })
    ))

  it.live("an entity of another type does not match; required: false is reported and the series stored", () =>
    run(
      makeLayer,
      script(),
      Effect.gen(function*() {
        const first = yield* remember({ text: APPLE_TEXT })
        const exit = yield* Effect.exit(remember({
          text: APPLE_TEXT,
          timeseries: {
            series: [{ key: "k", points: [[day(1), 1]], anchors: [{ entity: { name: "Apple Inc.", type: "fruit" } }] }]
          }
        }))
        expect(failure(exit)?._tag).toBe("AnchorNotFound")
        // the first text stays, the second left nothing
        expect(yield* count("gb_artifacts")).toBe(1)
        expect(textBody(first).artifact_id).toBeGreaterThan(0)

        const out = textBody(
          yield* remember({
            text: APPLE_TEXT,
            timeseries: {
              series: [{
                key: "k",
                points: [[day(1), 1]],
                anchors: [{ entity: { name: "Banana" }, required: false }, {
                  edge: { source: "Tim Cook", target: "Apple Inc." }
                }]
              }]
            }
          })
        )
        expect(itemsOf<SeriesItem>(out.series)[0].anchors.map((a) => a.matched.length)).toEqual([0, 1])
        expect(yield* count("gb_series_anchors")).toBe(2)
      })
    ))

  it.live("a repeated point overwrites; a later request adds to the series and keeps its unit", () =>
    run(
      makeLayer,
      script(),
      Effect.gen(function*() {
        const first = itemsOf<SeriesItem>(
          textBody(
            yield* remember({
              text: APPLE_TEXT,
              timeseries: { series: [{ key: "K", unit: "USD", points: [[day(1), 1], [day(2), 2]] }] }
            })
          ).series
        )
        const second = itemsOf<SeriesItem>(
          textBody(
            yield* remember({
              text: APPLE_TEXT,
              timeseries: { series: [{ key: "K", points: [[day(2), 20], [day(3), 3]] }] }
            })
          ).series
        )
        expect(second[0]).toMatchObject({
          id: first[0].id,
          created: false,
          unit: "USD",
          points: 2,
          point_count: 3
        })
        expect(second[0].stats).toMatchObject({ from: day(1), to: day(3), count: 3, first: 1, last: 3, max: 20 })
        const points = yield* rows<any>("SELECT ts, value FROM gb_series_points ORDER BY ts")
        expect(points.map((p) => [p.ts, Number(p.value)])).toEqual([[day(1), 1], [day(2), 20], [day(3), 3]])
        // anchored to both artifacts
        expect(yield* count("gb_series_anchors")).toBe(2)
        expect(yield* count("gb_series")).toBe(1)
      })
    ))

  it.live("fetch: resolve_series chooses, the Layer-provided provider runs, series stored and anchored to the entity and its artifact", () => {
    const calls: Array<[string, string, string]> = []
    const provider = fakeProvider({
      "AAPL.US": [{
        key: "AAPL.US.close",
        unit: "USD",
        points: [{ ts: "2025-01-30", value: 237 }, { ts: "2025-01-31", value: 236 }]
      }],
      "BAD": "HTTP 503: try later"
    }, calls)
    const s = script((r) =>
      r.stage === "resolve_series"
        ? resolveAnswer([
          { entity: "Apple Inc.", provider: "prices", query: "AAPL.US", reason: "its share price" },
          { entity: "Tim Cook", provider: "prices", query: "BAD", reason: "why not" },
          { entity: "Nobody", provider: "prices", query: "X" }
        ])
        : undefined
    )
    return run(
      makeLayer,
      s,
      Effect.gen(function*() {
        const out = yield* remember({
          text: APPLE_TEXT,
          timeseries: { fetch: { before: "7d", after: "0" } },
          models: { resolve_series: "m-series" }
        })
        const response = textBody(out)
        const apple = response.entities.find((e) => e.name === "Apple Inc.")!
        expect(response.series).toEqual([])
        expect(response.series_fetches).toEqual([
          {
            entity: "Apple Inc.",
            entity_id: apple.id,
            provider: "prices",
            query: "AAPL.US",
            reason: "its share price",
            from: "2025-01-25T00:00:00.000Z",
            to: REF,
            parent_artifact_id: response.artifact_id,
            series: [
              expect.objectContaining({
                key: "AAPL.US.close",
                unit: "USD",
                created: true,
                points: 2,
                point_count: 2,
                artifact_id: response.artifact_id
              })
            ]
          },
          expect.objectContaining({
            entity: "Tim Cook",
            query: "BAD",
            series: [],
            error: "prices failed: HTTP 503: try later"
          })
        ])
        expect(calls).toEqual([["AAPL.US", "2025-01-25T00:00:00.000Z", REF], ["BAD", "2025-01-25T00:00:00.000Z", REF]])
        const seriesId = itemsOf<FetchItem>(response.series_fetches)[0].series[0].id
        const anchors = yield* rows<any>(
          `SELECT artifact_id, entity_id FROM gb_series_anchors WHERE series_id = ${seriesId} ORDER BY id`
        )
        expect(
          anchors.map((
            a
          ) => [
            a.artifact_id === null ? null : Number(a.artifact_id),
            a.entity_id === null ? null : Number(a.entity_id)
          ])
        )
          .toEqual([[response.artifact_id, null], [null, apple.id]])

        // the prompt had the providers and the text's entities; the inference is filed under fetch_series
        const [call] = (yield* ScriptedLlm).callsFor("resolve_series")
        expect(call!.model).toBe("m-series")
        const sent = JSON.parse(userText(call!))
        expect(sent.providers.map((p: any) => p.name)).toEqual(["prices"])
        expect(sent.entities.map((e: any) => e.name)).toEqual(["Apple Inc.", "Tim Cook"])
        expect(sent.window).toEqual({ from: "2025-01-25T00:00:00.000Z", to: REF })
        const stages = yield* stagesOf(out.runId)
        expect(stages.fetch_series!.status).toBe("failed") // one fetch failed: the call still succeeded
        expect(stages.fetch_series!.error).toContain("HTTP 503")
        expect(stages.fetch_series!.inference_ids).toHaveLength(1)
        const inference =
          (yield* rows<any>(`SELECT stage FROM gb_inferences WHERE id = ${stages.fetch_series!.inference_ids[0]}`))[0]
        expect(inference.stage).toBe("resolve_series")
        expect(stages.store_series).toBeUndefined()
        expect((yield* runOf(out.runId)).status).toBe("succeeded")
      }),
      { timeseries: TimeseriesProvidersLive([provider]) }
    )
  })

  it.live("fetch: an unusable resolve_series answer fails the stage, never the call", () =>
    run(
      makeLayer,
      script((r) => (r.stage === "resolve_series" ? { text: "I cannot help with that." } : undefined)),
      Effect.gen(function*() {
        const out = yield* remember({ text: APPLE_TEXT, timeseries: { fetch: {} } })
        expect(textBody(out).series_fetches).toEqual([])
        const stages = yield* stagesOf(out.runId)
        expect(stages.fetch_series!.status).toBe("failed")
        expect(stages.fetch_series!.error).toMatch(/resolve_series/)
        expect(yield* count("gb_artifacts")).toBe(1)
      }),
      { timeseries: TimeseriesProvidersLive([fakeProvider({})]) }
    ))

  it.live("fetch: 503 without providers and 400 for a provider the server lacks, before any model call", () =>
    Effect.gen(function*() {
      const none = yield* run(
        makeLayer,
        script(),
        Effect.gen(function*() {
          const exit = yield* Effect.exit(remember({ text: APPLE_TEXT, timeseries: { fetch: {} } }))
          expect((yield* ScriptedLlm).calls).toHaveLength(0)
          expect(yield* count("gb_artifacts")).toBe(0)
          return failure(exit)
        })
      )
      expect(none?._tag).toBe("ServiceUnavailable")
      expect(none?.message).toContain("the server has no timeseries providers")
      const unknown = yield* run(
        makeLayer,
        script(),
        Effect.gen(function*() {
          const exit = yield* Effect.exit(
            remember({ text: APPLE_TEXT, timeseries: { fetch: { providers: ["weather"] } } })
          )
          expect((yield* ScriptedLlm).calls).toHaveLength(0)
          return failure(exit)
        }),
        { timeseries: TimeseriesProvidersLive([fakeProvider({})]) }
      )
      expect(unknown?._tag).toBe("InvalidRequest")
      expect(unknown?.message).toContain("timeseries.fetch.providers")
      expect(unknown?.message).toContain("\"weather\"")
    }))

  it.live("observations: each stored series is observed in a text extracted into facts, a child of its anchoring artifact", () => {
    const provider = fakeProvider({
      "AAPL.US": [{ key: "AAPL.US.close", unit: "USD", points: [{ ts: "2025-01-31", value: 236 }] }]
    })
    const s = script((r) =>
      r.stage === "resolve_series"
        ? resolveAnswer([{ entity: "Apple Inc.", provider: "prices", query: "AAPL.US", reason: "price" }])
        : r.stage === "resolve_edges"
        ? ScriptedLlm.json({ duplicates: [], contradictions: [] })
        : undefined
    )
    return run(
      makeLayer,
      s,
      Effect.gen(function*() {
        const out = yield* remember({
          text: APPLE_TEXT,
          timeseries: {
            series: [{
              key: "REV",
              unit: "USD bn",
              points: [[day(1), 100], [day(31), 124.3]],
              anchors: [{ entity: { name: "Apple Inc." } }]
            }],
            fetch: {},
            observations: true
          }
        })
        const response = textBody(out)
        const observations = itemsOf<ObservationItem>(response.series_observations)
        const series = itemsOf<SeriesItem>(response.series)
        expect(observations).toHaveLength(2)
        expect(observations[0]).toMatchObject({
          series_id: series[0].id,
          key: "REV",
          parent_artifact_id: response.artifact_id,
          query: null,
          from: day(1),
          to: day(31),
          artifact_id: expect.any(Number),
          entities: [expect.objectContaining({ name: "Apple Inc." }), expect.objectContaining({ name: "REV" })],
          edges: [expect.objectContaining({ source: "Apple Inc.", relation: "has_share_price", target: "REV" })]
        })
        expect(observations[0].text).toBe(
          "The time series REV of Apple Inc. went from 100 USD bn on 2025-01-01 to 124.3 USD bn on 2025-01-31, up 24.3 USD bn (+24.30%), over 2 values. " +
            "Its lowest value in that period was 100 USD bn on 2025-01-01 and its highest 124.3 USD bn on 2025-01-31; the mean was 112.15 USD bn."
        )
        expect(observations[0]).not.toHaveProperty("error")
        expect(observations[1]).toMatchObject({
          key: "AAPL.US.close",
          query: "AAPL.US",
          parent_artifact_id: response.artifact_id
        })
        expect(observations[1].text).toBe("The time series AAPL.US.close of Apple Inc. was 236 USD on 2025-01-31.")

        const artifact = (yield* rows<any>(`SELECT * FROM gb_artifacts WHERE id = ${observations[0].artifact_id}`))[0]
        expect(artifact).toMatchObject({ kind: "series_observation", text: observations[0].text })
        expect(Number(artifact.parent_id)).toBe(response.artifact_id)
        expect(JSON.parse(artifact.metadata)).toMatchObject({
          series_id: series[0].id,
          key: "REV",
          from: day(1),
          to: day(31)
        })
        expect((yield* rows<any>(`SELECT query FROM gb_artifacts WHERE id = ${observations[1].artifact_id}`))[0].query)
          .toBe("AAPL.US")
        // the fact was reconciled into the graph like any other
        expect(yield* count("gb_edges", "relation = 'has_share_price'")).toBe(2)

        const stages = yield* stagesOf(out.runId)
        expect(stages.observe_series!.status).toBe("succeeded")
        // the observations' extractions and fact comparisons are filed under observe_series, not the text's stages
        expect(stages.observe_series!.inference_ids).toHaveLength(4)
        expect(stages.extract_graph!.inference_ids).toHaveLength(1)
        const stagesOfInferences = yield* rows<any>(
          `SELECT stage FROM gb_inferences WHERE id IN (${stages.observe_series!.inference_ids.join(", ")})`
        )
        expect(stagesOfInferences.map((r) => r.stage).sort()).toEqual([
          "extract_graph",
          "extract_graph",
          "resolve_edges",
          "resolve_edges"
        ])
        expect(stages.resolve_edges).toBeUndefined()
      }),
      { timeseries: TimeseriesProvidersLive([provider]) }
    )
  })

  it.live("observations: a failed extraction is reported in its item; the call succeeds", () =>
    run(
      makeLayer,
      script((r) => (r.stage === "extract_graph" && userText(r).includes("The time series")
        ? { fail: { message: "HTTP 500" } }
        : undefined)
      ),
      Effect.gen(function*() {
        const out = yield* remember({
          text: APPLE_TEXT,
          timeseries: { series: [{ key: "K", points: [[day(1), 1]] }], observations: true }
        })
        const [item] = itemsOf<ObservationItem>(textBody(out).series_observations)
        expect(item).toMatchObject({
          key: "K",
          artifact_id: null,
          entities: [],
          edges: [],
          error: expect.stringContaining("HTTP 500")
        })
        expect(item.text).toBe("The time series K was 1 on 2025-01-01.")
        const stages = yield* stagesOf(out.runId)
        expect(stages.observe_series!.status).toBe("failed")
        expect(stages.observe_series!.inference_ids).toHaveLength(1)
        expect((yield* runOf(out.runId)).status).toBe("succeeded")
        expect(yield* count("gb_artifacts", "kind = 'series_observation'")).toBe(0)
      })
    ))

  const CHUNK_SIZE = 80
  const para = (n: number, who: string) =>
    `[P${n}] ${who} appears in this paragraph, number ${n} of the archive. It talks at some length about the weather, the harbour, ` +
    `the ships that came and went, and the people who watched them from the quay in the evening light.`
  const DOCUMENT = [para(1, "Alice"), para(2, "Bob"), para(3, "Carol")].join("\n\n")
  const chunkScript = script((r) => {
    const text = userText(r)
    if (r.stage === "summarize_chunk") return { text: "A summary." }
    if (r.stage === "extract_graph" && !text.includes("The time series")) {
      const names = [...text.matchAll(/\[P\d\] (\w+)/g)].map((m) => m[1]!)
      return ScriptedLlm.json({ entities: names.map((name) => ({ name, type: "person" })), edges: [] })
    }
    return undefined
  })

  it.live("a chunked text stores its series after the last chunk, anchored to the parent", () =>
    run(
      makeLayer,
      chunkScript,
      Effect.gen(function*() {
        const out = yield* remember({
          text: DOCUMENT,
          timeseries: {
            series: [{
              key: "K",
              points: [[day(1), 1]],
              anchors: [{ entity: { name: "Alice" } }, { entity: { name: "Carol" } }]
            }]
          }
        })
        const response = textBody(out)
        const [series] = itemsOf<SeriesItem>(response.series)
        expect(response.chunks!.length).toBeGreaterThan(1)
        expect(series.artifact_id).toBe(response.artifact_id)
        expect(series.anchors.map((a) => a.matched.map((m) => ("name" in m ? m.name : undefined)))).toEqual([
          ["Alice"],
          [
            "Carol"
          ]
        ])
        const parent =
          (yield* rows<any>(`SELECT kind, parent_id FROM gb_artifacts WHERE id = ${response.artifact_id}`))[0]
        expect(parent).toMatchObject({ kind: "knowledge", parent_id: null })
        const anchored = yield* rows<any>("SELECT artifact_id FROM gb_series_anchors WHERE artifact_id IS NOT NULL")
        expect(anchored.map((a) => Number(a.artifact_id))).toEqual([response.artifact_id])
        expect((yield* stagesOf(out.runId)).store_series!.status).toBe("succeeded")
      }),
      { settings: { chunkSize: CHUNK_SIZE, chunkConcurrency: 1 } }
    ))

  it.live("a chunked text whose required anchor cannot match stores no chunk at all", () =>
    run(
      makeLayer,
      chunkScript,
      Effect.gen(function*() {
        const exit = yield* Effect.exit(remember({
          text: DOCUMENT,
          timeseries: { series: [{ key: "K", points: [[day(1), 1]], anchors: [{ entity: { name: "Zed" } }] }] }
        }))
        expect(failure(exit)?._tag).toBe("AnchorNotFound")
        expect(failure(exit)?.message).toContain("timeseries.series[0].anchors[0]")
        expect(yield* count("gb_artifacts")).toBe(0)
        expect(yield* count("gb_series")).toBe(0)
        const run = (yield* rows<any>("SELECT id FROM gb_remember_runs"))[0]
        expect((yield* stagesOf(Number(run.id))).store_series!.status).toBe("failed")
        // one chunk at a time: the check still sees every chunk's extraction (it opens the window)
      }),
      { settings: { chunkSize: CHUNK_SIZE, chunkConcurrency: 1 } }
    ))
})
