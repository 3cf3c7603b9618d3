/**
 * `timeseries` over HTTP: a malformed field is a 400 naming it with nothing queued or stored,
 * a required anchor that matches nothing is a 422 with nothing stored, and a stored series
 * comes back in the response.
 */
import { SqlClient } from "@effect/sql"
import { it, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { expect } from "vitest"
import { ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { graph, rememberLayer } from "../support/app.js"
import { sqliteLayer } from "../support/databases.js"
import { postJson, serveTest, type TestResponse } from "../support/http.js"

const REMEMBER = "/v1/gb/remember"
const text = { user_id: "alice", text: "Apple Inc. makes phones." }
const P = [["2025-01-31T00:00:00Z", 222]]

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`)).pipe(
    Effect.map((rows) => Number(rows[0]!.n)),
    Effect.orDie
  )

const expectError = (res: TestResponse, status: number, message: RegExp) => {
  expect(res.status, res.text.slice(0, 300)).toBe(status)
  expect(Object.keys(res.json ?? {})).toEqual(["error"])
  expect(res.json.error).toMatch(message)
}

const REJECTED: ReadonlyArray<readonly [string, unknown, RegExp]> = [
  ["no series nor fetch", {}, /^timeseries must have series or fetch/],
  ["a series without key", { series: [{ points: P }] }, /^timeseries\.series\[0\]\.key/],
  [
    "a non-numeric value",
    { series: [{ key: "k", points: [["2025-01-31T00:00:00Z", "222"]] }] },
    /^timeseries\.series\[0\]\.points\[0\]\[1\] must be a finite number/
  ],
  ["a bad time", { series: [{ key: "k", points: [["31.01.2025", 1]] }] }, /^timeseries\.series\[0\]\.points\[0\]\[0\]/],
  [
    "a duplicate time",
    { series: [{ key: "k", points: [...P, ...P] }] },
    /^timeseries\.series\[0\]\.points\[1\] repeats the time/
  ],
  [
    "a malformed anchor",
    { series: [{ key: "k", points: P, anchors: [{ entity: { type: "organization" } }] }] },
    /^timeseries\.series\[0\]\.anchors\[0\]\.entity\.name/
  ],
  ["a bad duration", { fetch: { before: "a month" } }, /^timeseries\.fetch\.before/]
]

layer(serveTest(rememberLayer(sqliteLayer(), {})), { excludeTestServices: true })("malformed timeseries", (it) => {
  for (const [what, timeseries, message] of REJECTED) {
    it.effect(`400: ${what}`, () =>
      Effect.gen(function*() {
        expectError(yield* postJson(REMEMBER, { ...text, timeseries }), 400, message)
        expect(yield* count("gb_remember_runs")).toBe(0)
        expect(yield* count("gb_artifacts")).toBe(0)
        expect((yield* ScriptedLlm).calls).toHaveLength(0)
      }))
  }
})

const apple = graph([{ name: "Apple Inc.", type: "organization" }], [])
const withApp = <A, E>(program: Effect.Effect<A, E, any>) =>
  program.pipe(
    Effect.provide(
      serveTest(rememberLayer(sqliteLayer(), { extract_graph: [apple, apple] })) as Layer.Layer<any, any, never>
    )
  ) as Effect.Effect<A, E, never>

it.live("422 when a required anchor matches nothing: nothing stored; then 200 with the series", () =>
  withApp(Effect.gen(function*() {
    const missing = yield* postJson(REMEMBER, {
      ...text,
      timeseries: {
        series: [{ key: "AAPL.close", points: P, anchors: [{ entity: { name: "Apple Inc.", type: "fruit" } }] }]
      }
    })
    expectError(missing, 422, /timeseries\.series\[0\]\.anchors\[0\].*"Apple Inc\." of type fruit/)
    expect(yield* count("gb_artifacts")).toBe(0)
    expect(yield* count("gb_series")).toBe(0)

    const ok = yield* postJson(REMEMBER, {
      ...text,
      timeseries: {
        series: [{ key: "AAPL.close", unit: "USD", points: P, anchors: [{ entity: { name: "Apple Inc." } }] }]
      }
    })
    expect(ok.status, ok.text.slice(0, 300)).toBe(200)
    expect(ok.json.series).toEqual([expect.objectContaining({
      key: "AAPL.close",
      unit: "USD",
      created: true,
      points: 1,
      point_count: 1,
      stats: expect.objectContaining({ from: "2025-01-31T00:00:00.000Z", count: 1, first: 222, last: 222 }),
      anchors: [expect.objectContaining({ matched: [expect.objectContaining({ name: "Apple Inc." })] })]
    })])
    expect(ok.json).not.toHaveProperty("series_fetches")
  })))
