/**
 * The forget property (docs/FORGET.md): remembering texts T0..Tn and then forgetting Tk leaves
 * the live graph that remembering the texts without Tk gives: entities by (name, type), live
 * facts by (source, relation, target, valid_at, invalid_at) with their supporting artifacts,
 * and the session links of both. Generated with fast-check over the bench's deterministic model
 * (a sentence "<Name> <relation> <Name> in <year>." is a fact; the same triple again is a
 * duplicate, whatever its year; a new `lives in` contradicts the person's other places), on both
 * databases, with: repeats (also copies of whole texts), duplicates stated with another year,
 * names spelled in other cases (one entity), places restated after they were closed, ends stated
 * without a start ("lived in <place> until <year>"), newer,
 * older and equally old contradictions, chains of them, shared entities, sessions and chunked
 * texts. FORGET_RUNS sets the number of runs.
 *
 * Left out, as cases where the two worlds differ (docs/FORGET.md, "where it cannot hold"; pinned
 * in forget.test.ts): two places of one person in one text (never compared with each other), a
 * place restated with another year (the forget moves the fact's time, and with it which later
 * facts were compared with it), and an older state naming a place stated before (it is such a
 * restatement). Which later facts were repeats and which were compared depends on the forgotten
 * text having been there; only a replay of the later texts could give the other world exactly.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, type Layer, Runtime } from "effect"
import fc from "fast-check"
import { expect } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { Forgets } from "../../src/forget/Forgets.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer, textBody, textRequest } from "../support/app.js"
import { forEachDialect } from "../support/databases.js"

const PEOPLE = ["Alice Novak", "Bruno Diaz", "Chen Wei"]
const PLACES = ["Berlin", "Lisbon", "Osaka", "Quito", "Tunis", "Hanoi"]
const ORGS = ["Acme", "Globex"]
const FILLER = "The archive keeps a long note about the harbour, the weather and the ships of that day."

interface Sentence {
  readonly kind: "knows" | "works" | "lives" | "ended"
  readonly a: number
  readonly b: number
  readonly year: number
  /** the person's name as this sentence spells it (one entity: names match case-insensitively) */
  readonly spelling: number
}

interface Text {
  readonly sentences: ReadonlyArray<Sentence>
  readonly session: string | null
  readonly chunked: boolean
  /** a copy of an earlier text (its index), as a repeat */
  readonly copyOf: number | null
}

const sentence: fc.Arbitrary<Sentence> = fc.record({
  kind: fc.oneof(
    { arbitrary: fc.constant("lives" as const), weight: 3 },
    { arbitrary: fc.constant("knows" as const), weight: 1 },
    { arbitrary: fc.constant("works" as const), weight: 1 },
    // "<person> lived in <place> until <year>.": an end without a start
    { arbitrary: fc.constant("ended" as const), weight: 1 }
  ),
  // two people, so their places contradict often
  a: fc.integer({ min: 0, max: 1 }),
  b: fc.integer({ min: 0, max: 2 }),
  year: fc.integer({ min: 0, max: 3 }),
  spelling: fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: 2 }), weight: 1 })
})

const spelled = (name: string, spelling: number) =>
  spelling === 0
    ? name
    : spelling === 1
    ? name.toUpperCase()
    : name.replace(/ (.*)/, (_m, last: string) => ` ${last.toUpperCase()}`)

const textArb: fc.Arbitrary<Text> = fc.record({
  sentences: fc.array(sentence, { minLength: 1, maxLength: 3 }),
  session: fc.constantFrom(null, "s1", "s2"),
  chunked: fc.boolean(),
  copyOf: fc.oneof({ arbitrary: fc.constant(null), weight: 6 }, { arbitrary: fc.nat(), weight: 1 })
})

/** The texts in words (see the file's comment for what the generator leaves out). */
const render = (texts: ReadonlyArray<Text>): Array<{ text: string; session: string | null }> => {
  const out: Array<{ text: string; session: string | null }> = []
  const latest = new Map<number, number>()
  const firstYear = new Map<string, number>()
  texts.forEach((t, i) => {
    // a copy restates its facts
    const copied = t.copyOf !== null && i > 0 ? out[t.copyOf % i]! : undefined
    if (copied !== undefined) {
      out.push(copied)
      return
    }
    // one place per person per text: a text does not contradict itself
    const placed = new Set<number>()
    const words = t.sentences.flatMap((s) => {
      const a = spelled(PEOPLE[s.a]!, s.spelling)
      if (s.kind === "knows") return s.a === s.b ? [] : [`${a} knows ${PEOPLE[s.b]} in ${2010 + s.year}.`]
      if (s.kind === "works") return [`${a} works at ${ORGS[s.b % 2]} in ${2010 + s.year}.`]
      if (placed.has(s.a)) return []
      placed.add(s.a)
      if (s.kind === "ended") {
        // the end of a place stated before (a year after it began), or of one not stated yet
        const first = firstYear.get(`${s.a}:${s.b}`)
        return [`${a} lived in ${PLACES[s.b]} until ${2021 + (first ?? s.year)}.`]
      }
      // a place restated keeps the year it was first stated with; an older state names a place of its own
      const first = firstYear.get(`${s.a}:${s.b}`)
      const older = first === undefined && s.year < (latest.get(s.a) ?? -1)
      const year = first ?? s.year
      const place = older ? `${PLACES[3 + s.a]}${i}` : PLACES[s.b]!
      if (!older) firstYear.set(`${s.a}:${s.b}`, year)
      latest.set(s.a, Math.max(year, latest.get(s.a) ?? -1))
      return [`${a} lives in ${place} in ${2020 + year}.`]
    })
    const body = words.length === 0 ? [`${PEOPLE[0]} works at ${ORGS[0]} in 2010.`] : words
    out.push({
      text: `Note ${i}. ${t.chunked ? body.map((w) => `${w}\n\n${FILLER}`).join("\n\n") : body.join(" ")}`,
      session: t.session
    })
  })
  return out
}

const script = (r: LlmRequest) => ({ text: answer(r).text })

const rows = <A extends object>(query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(query)).pipe(Effect.orDie)

/** A user's live graph, its artifacts named by (text index, chunk index) so two worlds compare. */
const snapshot = (user: string, textIndexOfRoot: (rootOrder: number) => number) =>
  Effect.gen(function*() {
    const roots = yield* rows<{ id: number }>(
      `SELECT a.id FROM gb_artifacts a JOIN gb_datasets d ON d.id = a.dataset_id
      WHERE d.user_id = '${user}' AND a.parent_id IS NULL ORDER BY a.id`
    )
    const rootLabel = new Map(roots.map((r, i) => [Number(r.id), textIndexOfRoot(i)]))
    const artifacts = yield* rows<{ id: number; parent_id: number | null; metadata: string | null }>(
      `SELECT a.id, a.parent_id, a.metadata FROM gb_artifacts a JOIN gb_datasets d ON d.id = a.dataset_id
      WHERE d.user_id = '${user}'`
    )
    const label = new Map(artifacts.map((a) => {
      const root = a.parent_id === null ? Number(a.id) : Number(a.parent_id)
      const chunk = a.metadata === null ? "" : `#${JSON.parse(a.metadata).index ?? ""}`
      return [Number(a.id), `${rootLabel.get(root)}${chunk}`]
    }))
    const entities = yield* rows<{ name: string; type: string; description: string }>(
      `SELECT e.name, e.type, e.description FROM gb_entities e JOIN gb_datasets d ON d.id = e.dataset_id
      WHERE d.user_id = '${user}' ORDER BY e.name, e.type`
    )
    const facts = yield* rows<any>(
      `SELECT e.id, s.name AS source, e.relation, t.name AS target, e.valid_at, e.invalid_at, e.description
      FROM gb_edges e JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id
      JOIN gb_datasets d ON d.id = e.dataset_id WHERE d.user_id = '${user}' AND e.expired_at IS NULL`
    )
    const links = yield* rows<{ edge_id: number; artifact_id: number }>(
      `SELECT ea.edge_id, ea.artifact_id FROM gb_edge_artifacts ea JOIN gb_edges e ON e.id = ea.edge_id
      JOIN gb_datasets d ON d.id = e.dataset_id WHERE d.user_id = '${user}'`
    )
    const sessions = yield* rows<{ name: string; session_id: string }>(
      `SELECT n.name, s.session_id FROM gb_entity_sessions s JOIN gb_entities n ON n.id = s.entity_id
      JOIN gb_datasets d ON d.id = n.dataset_id WHERE d.user_id = '${user}' ORDER BY n.name, s.session_id`
    )
    return {
      entities: entities.map((e) => `${e.name} (${e.type}): ${e.description}`),
      facts: facts.map((f) =>
        [
          `${f.source} ${f.relation} ${f.target} ${f.valid_at} ${f.invalid_at} "${f.description}"`,
          links.filter((l) => Number(l.edge_id) === Number(f.id)).map((l) => label.get(Number(l.artifact_id))).sort()
            .join(",")
        ].join(" <- ")
      ).sort(),
      sessions: sessions.map((s) => `${s.name}@${s.session_id}`)
    }
  })

let sample = 0

forEachDialect((dialect, makeLayer) => {
  it.live(
    "property: remembering texts and forgetting one leaves the graph of remembering the others",
    () =>
      Effect.gen(function*() {
        const runtime = yield* Effect.runtime<RememberManager | SqlClient.SqlClient>()
        const forgets = yield* Forgets
        const check = (texts: ReadonlyArray<Text>, pick: number) =>
          Effect.gen(function*() {
            const manager = yield* RememberManager
            const rendered = render(texts)
            const k = pick % rendered.length
            const n = sample++
            const remember = (user: string, only: (i: number) => boolean) =>
              Effect.forEach(
                rendered.flatMap((t, i) => (only(i) ? [{ ...t, i }] : [])),
                (t) =>
                  manager.submit(textRequest(t.text, {
                    user_id: user,
                    reference_time: `2030-01-0${1 + (t.i % 9)}T00:00:00.000Z`,
                    ...(t.session === null ? {} : { session_id: t.session })
                  })).pipe(Effect.map(textBody))
              )
            const all = yield* remember(`all-${n}`, () => true)
            yield* remember(`kept-${n}`, (i) => i !== k)
            const forgotten = yield* forgets.forgetArtifact({
              user_id: `all-${n}`,
              dataset: "main",
              artifact_id: all[k]!.artifact_id
            })
            expect(forgotten.deleted.artifacts).toBeGreaterThan(0)
            const kept = [...rendered.keys()].filter((i) => i !== k)
            const after = yield* snapshot(`all-${n}`, (order) => kept[order]!)
            const without = yield* snapshot(`kept-${n}`, (order) => kept[order]!)
            expect({ texts: rendered.map((t) => t.text), k, ...after }).toEqual({
              texts: rendered.map((t) => t.text),
              k,
              ...without
            })
          })
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(
              fc.array(textArb, { minLength: 3, maxLength: 5 }),
              fc.nat(),
              (texts, pick) => Runtime.runPromise(runtime)(check(texts, pick))
            ),
            {
              numRuns: Number(process.env.FORGET_RUNS ?? (dialect === "sqlite" ? 60 : 20)),
              endOnFailure: true,
              ...(process.env.FORGET_SEED === undefined ? {} : { seed: Number(process.env.FORGET_SEED) }),
              ...(process.env.FORGET_PATH === undefined ? {} : { path: process.env.FORGET_PATH })
            }
          )
        )
      }).pipe(
        Effect.provide(
          rememberLayer(
            makeLayer(),
            script,
            { settings: { chunkSize: 64, chunkOverlapPercent: 0 } }
          ) as unknown as Layer.Layer<RememberManager | SqlClient.SqlClient | Forgets>
        )
      ),
    180_000
  )
})
