/**
 * Runs of one dataset ahead of their turn (issue 21, item 5; remember.lookahead): while runs
 * wait for their dataset, their extraction runs ahead, and only the reads and writes of the
 * graph run in submission order. The same texts remembered one at a time and all at once,
 * with lookahead 1, 4 and 16, must give the same graph. The model is the bench's
 * deterministic fake (a sentence "<Name> <relation> <Name> in <year>." is a fact; a new
 * `lives in` contradicts the stored ones elsewhere), each call after a seeded random delay so
 * that work finishes out of order.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { expect } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer, textRequest } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"

/** Twelve texts about the same people: repeats (texts 3, 7) and contradictions (lives in). */
const TEXTS = [
  "Alice Novak works at Acme in 2019.",
  "Alice Novak lives in Berlin in 2018. Bruno Diaz knows Alice Novak in 2015.",
  "Bruno Diaz works at Globex in 2020.",
  "Alice Novak works at Acme in 2019.",
  "Alice Novak lives in Lisbon in 2021.",
  "Chen Wei knows Bruno Diaz in 2016. Chen Wei visited Osaka in 2022.",
  "Bruno Diaz lives in Osaka in 2019.",
  "Bruno Diaz knows Alice Novak in 2015.",
  "Chen Wei works at Acme in 2021.",
  "Bruno Diaz lives in Quito in 2023.",
  "Dara Okafor knows Chen Wei in 2017. Dara Okafor lives in Berlin in 2020.",
  "Alice Novak lives in Berlin in 2024."
].map((t, i) => `Note ${i}. ${t}`)

const userText = (r: LlmRequest): string => {
  const content = r.messages[0]?.content
  return typeof content === "string" ? content : JSON.stringify(content)
}

/** The run (index into TEXTS) an extract_graph call is for. */
const runOf = (r: LlmRequest): number => TEXTS.findIndex((t) => userText(r).includes(`<text>\n${t}\n</text>`))

/** A text with "Broken" gets an unusable extraction: its run fails ahead of its turn. */
const script = (r: LlmRequest) =>
  r.stage === "extract_graph" && userText(r).includes("Broken") ? { text: "no graph here" } : { text: answer(r).text }

/** A seeded generator, so a failure reproduces. */
const rng = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

interface Observed {
  readonly events: Array<string>
  /** most extract_graph calls in flight at once */
  maxExtracting: number
}

const layerFor = (storage: StorageLayer, lookahead: number, seed: number, observed: Observed) => {
  const random = rng(seed)
  let extracting = 0
  return rememberLayer(storage, script, {
    lookahead,
    concurrency: 16,
    llmDelayMs: (r) => {
      if (r.stage === "extract_graph") {
        observed.events.push(`extract ${runOf(r)}`)
        extracting++
        observed.maxExtracting = Math.max(observed.maxExtracting, extracting)
        // the delay ends before the answer: counted out again right after it
        const ms = Math.floor(random() * 40)
        setTimeout(() => extracting--, ms)
        return ms
      }
      return Math.floor(random() * 15)
    }
  }) as Layer.Layer<any, any, never>
}

const query = <A extends object>(text: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text)).pipe(Effect.orDie)

/** The graph as the tests compare it: entities and facts by name, with their times. */
const graphOf = Effect.gen(function*() {
  const entities = yield* query<{ name: string; type: string }>(
    "SELECT name, type FROM gb_entities ORDER BY name, type"
  )
  const edges = yield* query<Record<string, unknown>>(
    `SELECT s.name AS source, e.relation AS relation, t.name AS target, e.valid_at AS valid_at,
        e.invalid_at AS invalid_at, CASE WHEN e.expired_at IS NULL THEN 1 ELSE 0 END AS live
      FROM gb_edges e JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id`
  )
  const facts = edges
    .map((e) => ({
      source: e.source,
      relation: e.relation,
      target: e.target,
      valid_at: e.valid_at === null ? null : new Date(e.valid_at as string).toISOString(),
      invalid_at: e.invalid_at === null ? null : new Date(e.invalid_at as string).toISOString(),
      live: Number(e.live) === 1
    }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
  const runs = yield* query<{ status: string; n: number }>(
    "SELECT status, COUNT(*) AS n FROM gb_remember_runs GROUP BY status"
  )
  return {
    entities: entities.map((e) => ({ name: e.name, type: e.type })),
    live: facts.filter((f) => f.live),
    all: facts,
    runs: runs.map((r) => ({ status: r.status, n: Number(r.n) }))
  }
})

const oneAtATime = Effect.gen(function*() {
  const manager = yield* RememberManager
  for (const text of TEXTS) yield* manager.submit(textRequest(text))
  return yield* graphOf
})

const allAtOnce = (observed: Observed) =>
  Effect.gen(function*() {
    const manager = yield* RememberManager
    const runs = yield* Effect.forEach(TEXTS, (text) => manager.enqueue(textRequest(text)))
    yield* Effect.forEach(
      runs,
      (run, i) => Effect.tap(run.await, () => Effect.sync(() => observed.events.push(`done ${i}`))),
      { concurrency: "unbounded" }
    )
    return yield* graphOf
  })

const fresh = (): Observed => ({ events: [], maxExtracting: 0 })

/** Some extract_graph call of a later run started before an earlier run had finished. */
const overlapped = (events: ReadonlyArray<string>): boolean =>
  events.some((e, at) => {
    if (!e.startsWith("extract ")) return false
    const k = Number(e.slice(8))
    return TEXTS.some((_, j) => j < k && events.indexOf(`done ${j}`) > at)
  })

forEachDialect((_dialect, makeLayer) => {
  it.live("one at a time and all at once with lookahead 1, 4 and 16 give the same graph", () =>
    Effect.gen(function*() {
      const expected = yield* oneAtATime.pipe(Effect.provide(layerFor(makeLayer(), 4, 1, fresh())))
      expect(expected.runs).toEqual([{ status: "succeeded", n: TEXTS.length }])
      // the texts' facts, repeats merged (10 live of 14 stated); the contradictions closed the older homes
      expect(expected.live).toHaveLength(10)
      expect(expected.all.filter((f) => !f.live && f.invalid_at !== null)).toHaveLength(3)
      for (const [lookahead, seed] of [[1, 2], [4, 3], [16, 4], [4, 5]] as const) {
        const observed = fresh()
        const got = yield* allAtOnce(observed).pipe(Effect.provide(layerFor(makeLayer(), lookahead, seed, observed)))
        expect({ lookahead, ...got }).toEqual({ lookahead, ...expected })
        if (lookahead === 1) {
          // one run after another: never two extractions at once
          expect(observed.maxExtracting).toBe(1)
        } else {
          expect(overlapped(observed.events)).toBe(true)
          expect(observed.maxExtracting).toBeGreaterThan(1)
        }
      }
    }), 60_000)

  it.live("a run whose extraction fails ahead fails alone; nothing of it is stored", () =>
    Effect.gen(function*() {
      const manager = yield* RememberManager
      const texts = [TEXTS[0]!, "Note x. Broken Alice Novak works at Globex in 2020.", TEXTS[1]!]
      const runs = yield* Effect.forEach(texts, (text) => manager.enqueue(textRequest(text)))
      const outcomes = yield* Effect.forEach(runs, (run) => Effect.either(run.await), { concurrency: "unbounded" })
      expect(outcomes.map((o) => o._tag)).toEqual(["Right", "Left", "Right"])
      expect(outcomes[1]!._tag === "Left" && outcomes[1]!.left._tag).toBe("LlmFailed")
      expect(yield* query<{ n: number }>("SELECT COUNT(*) AS n FROM gb_artifacts")).toEqual([{ n: 2 }])
      const stored = yield* graphOf
      expect(stored.all.some((f) => f.target === "Globex")).toBe(false)
      expect(stored.runs).toEqual([{ status: "failed", n: 1 }, { status: "succeeded", n: 2 }])
    }).pipe(Effect.provide(layerFor(makeLayer(), 4, 7, fresh()))))
})
