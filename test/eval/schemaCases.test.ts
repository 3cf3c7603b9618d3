/**
 * The knowledge cases with a dataset schema (evals/knowledge/schema-*.json; docs/SCHEMA.md),
 * replayed through the runner on both databases with a scripted model that follows the prompt
 * (test/support/schemaModel.ts): the custom types and attributes, the exclusive relations decided
 * in code (no resolve_edges call at all), the instructions that leave facts out. They score
 * perfectly; the same cases with a model that ignores the instructions do not.
 */
import { NodeContext } from "@effect/platform-node"
import { it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { join } from "node:path"
import { describe, expect } from "vitest"
import { ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { loadCases } from "../../src/eval/cases.js"
import { formatReport, runEvals } from "../../src/eval/runner.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect } from "../support/databases.js"
import { schemaModel, type ScriptGraph } from "../support/schemaModel.js"

const CASES_DIR = join(import.meta.dirname, "../../evals/knowledge")

/** What a model following the prompt answers to each text of the two cases. */
const TEXTS: Record<string, ScriptGraph> = {
  "Acme Corp filed ticket T-100: login fails for all users. High priority. Assigned to Bob Chen.\n-- \nDana Lee, Account Manager at Helpdesk Inc":
    {
      entities: [
        { name: "Acme Corp", types: ["customer", "organization"] },
        { name: "T-100", types: ["ticket", "product"], attributes: { priority: "high", component: "login" } },
        { name: "Bob Chen", types: ["person"] },
        { name: "Dana Lee", types: ["person"], excludedBy: "Ignore email signatures" },
        { name: "Helpdesk Inc", types: ["customer", "organization"], excludedBy: "Ignore email signatures" }
      ],
      edges: [
        { source: "Acme Corp", target: "T-100", relations: ["files", "filed"] },
        { source: "T-100", target: "Bob Chen", relations: ["assigned_to", "assigned to"] },
        {
          source: "Dana Lee",
          target: "Helpdesk Inc",
          relations: ["works_at", "works at"],
          excludedBy: "Ignore email signatures"
        }
      ]
    },
  "Ticket T-100 was reassigned to Carol Diaz on 5 March 2025.": {
    entities: [{ name: "T-100", types: ["ticket"] }, { name: "Carol Diaz", types: ["person"] }],
    edges: [{
      source: "T-100",
      target: "Carol Diaz",
      relations: ["assigned_to", "assigned to"],
      valid_at: "2025-03-05"
    }]
  },
  "Maya Cohen, a nurse, lives in Haifa with her cat Luna.": {
    entities: [
      { name: "Maya Cohen", types: ["person"], attributes: { occupation: "nurse" } },
      { name: "Haifa", types: ["city", "place"] },
      { name: "Luna", types: ["other"], excludedBy: "Ignore pets" }
    ],
    edges: [
      { source: "Maya Cohen", target: "Haifa", relations: ["lives_in", "lives in"] },
      { source: "Maya Cohen", target: "Luna", relations: ["has_pet", "owns"], excludedBy: "Ignore pets" },
      { source: "Luna", target: "Haifa", relations: ["lives_in", "lives in"], excludedBy: "Ignore pets" }
    ]
  },
  "Maya Cohen moved to Tel Aviv in June 2024.": {
    entities: [{ name: "Maya Cohen", types: ["person"] }, { name: "Tel Aviv", types: ["city", "place"] }],
    edges: [{ source: "Maya Cohen", target: "Tel Aviv", relations: ["lives_in", "moved to"], valid_at: "2024-06-01" }]
  },
  "Back in 2021 Maya Cohen lived in Jerusalem.": {
    entities: [{ name: "Maya Cohen", types: ["person"] }, { name: "Jerusalem", types: ["city", "place"] }],
    edges: [{ source: "Maya Cohen", target: "Jerusalem", relations: ["lives_in", "lived in"], valid_at: "2021-01-01" }]
  }
}

/** The same model, but one that reads no instructions (its prompt's instructions block is dropped). */
const ignoringInstructions = (r: LlmRequest) =>
  schemaModel(TEXTS)({ ...r, system: r.system.replace(/<instructions>[\s\S]*<\/instructions>/, "") })

/** The schema cases through the runner, over whatever model the test provides. */
const replay = (label: string) =>
  Effect.gen(function*() {
    const cases = (yield* loadCases(CASES_DIR)).filter((c) => c.name.startsWith("schema-"))
    expect(cases.map((c) => c.name)).toEqual(["schema-exclusive-home", "schema-support-tickets"])
    return yield* runEvals(cases, { label, outputDir: null })
  })

forEachDialect((_dialect, makeLayer) => {
  describe("the knowledge cases with a schema", () => {
    it.live("score perfectly with a model that follows the prompt, and need no resolve_edges call", () =>
      Effect.gen(function*() {
        const report = yield* replay("s1")
        expect(report.summary.failed_runs).toBe(0)
        for (const c of report.cases) {
          expect([c.name, c.score.entities.precision, c.score.entities.recall]).toEqual([c.name, 1, 1])
          expect([c.name, c.score.facts.precision, c.score.facts.recall]).toEqual([c.name, 1, 1])
          expect([c.name, c.score.invalidation.accuracy, c.score.dates.accuracy]).toEqual([c.name, 1, 1])
          expect(c.score.types.wrong).toEqual([])
        }
        expect(report.summary.types).toMatchObject({ checked: 8, correct: 8 })
        // every contradiction here is of an exclusive relation: code decided them all
        expect((yield* ScriptedLlm).callsFor("resolve_edges")).toHaveLength(0)
        expect((yield* ScriptedLlm).callsFor("extract_graph")).toHaveLength(5)
        expect(formatReport(report)).toMatch(
          /schema-support-tickets\s+2\/2\s+100%\/100%\s+100%\/100%\s+3\/3\s+1\/1\s+-\s+4\/4/
        )
      }).pipe(
        Effect.provide(
          Layer.mergeAll(rememberLayer(makeLayer(), schemaModel(TEXTS)), NodeContext.layer) as Layer.Layer<
            any,
            any,
            never
          >
        )
      ) as Effect.Effect<void, unknown, never>)

    it.live("score lower with a model that ignores the instructions", () =>
      Effect.gen(function*() {
        const report = yield* replay("s2")
        const [home, tickets] = report.cases
        expect(home!.score.entities.unexpected).toEqual(["Luna (other)"])
        expect([...tickets!.score.entities.unexpected].sort()).toEqual(["Dana Lee (person)", "Helpdesk Inc (customer)"])
        // a relation the schema does not allow is never answered: the signature's job is not there either way
        expect(tickets!.score.facts.precision).toBe(1)
        expect(tickets!.score.entities.precision).toBeLessThan(1)
        expect(home!.score.facts.precision).toBeLessThan(1)
      }).pipe(
        Effect.provide(
          Layer.mergeAll(rememberLayer(makeLayer(), ignoringInstructions), NodeContext.layer) as Layer.Layer<
            any,
            any,
            never
          >
        )
      ) as Effect.Effect<void, unknown, never>)
  })
})
