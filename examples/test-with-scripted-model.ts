/**
 * A test of your own code that uses gligabao: the scripted model answers instead of a provider,
 * and the memory is an in-memory SQLite database. Run it with `tsx --test` (node's test runner).
 */
import { Effect } from "effect"
import { Gligabao } from "gligabao"
import { ScriptedLlm } from "gligabao/testing"
import assert from "node:assert/strict"
import { tmpdir } from "node:os"
import { test } from "node:test"

// the code under test: it records a user's move and answers where they live
const noteMove = (user: string, city: string) => Gligabao.remember({ user_id: user, text: `${user} moved to ${city}.` })
const whereDoesLive = (user: string) =>
  Effect.map(
    Gligabao.search({ user_id: user, query: `where does ${user} live` }),
    (found) => found.facts.map((f) => f.description)
  )

const scripted = ScriptedLlm.layer({
  extract_graph: [ScriptedLlm.json({
    entities: [{ name: "Ada", type: "person", description: "a user" }, {
      name: "Lisbon",
      type: "place",
      description: "a city"
    }],
    edges: [{
      source: "Ada",
      target: "Lisbon",
      relation: "lives in",
      description: "Ada lives in Lisbon",
      valid_at: "2025-03-01T00:00:00Z",
      invalid_at: null
    }]
  })]
})

const TestMemory = Gligabao.layer({
  database: { path: ":memory:" },
  images: { directory: tmpdir() },
  layers: { llm: scripted }
})

test("a move is remembered and found", () =>
  Effect.runPromise(
    Effect.gen(function*() {
      yield* noteMove("Ada", "Lisbon")
      assert.deepEqual(yield* whereDoesLive("Ada"), ["Ada lives in Lisbon"])
    }).pipe(Effect.provide(TestMemory))
  ))
