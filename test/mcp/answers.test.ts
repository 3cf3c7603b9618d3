/** What a model reads of a tool's answer (src/mcp/answers.ts): plain lines, the answer first, no JSON. */
import { describe, expect, it } from "vitest"
import { contextText, day, factLine, queryText, rememberText, runText, searchText } from "../../src/mcp/answers.js"

const fact = (over: Record<string, unknown> = {}) =>
  ({
    id: 12,
    source: "Alice Smith",
    source_id: 1,
    target: "Berlin",
    target_id: 2,
    relation: "lives_in",
    description: "Alice Smith lives in Berlin.",
    valid_at: "2020-01-01T00:00:00.000Z",
    created_at: "2026-12-04T10:00:00.000Z",
    artifact_ids: [3],
    session_ids: [],
    score: 0.0327868852459016,
    found_by: ["fulltext", "vector"],
    ...over
  }) as any

describe("answers for a model", () => {
  it("a fact is one line: its id, its words, since and until (dates without midnight's time)", () => {
    expect(factLine(fact())).toBe("[12] Alice Smith lives in Berlin. (since 2020-01-01)")
    expect(factLine(fact({ invalid_at: "2023-06-01T12:30:00.000Z" }))).toBe(
      "[12] Alice Smith lives in Berlin. (since 2020-01-01, until 2023-06-01T12:30:00.000Z)"
    )
    expect(factLine(fact({ valid_at: null, invalid_at: "2021-01-01T00:00:00.000Z", description: "" }))).toBe(
      "[12] Alice Smith lives_in Berlin (until 2021-01-01)"
    )
    expect(day("2025-11-20T00:00:00.000Z")).toBe("2025-11-20")
  })

  it("search: facts, then entities; nothing found says so", () => {
    const text = searchText({
      dataset: "main",
      query: "Alice",
      as_of: "2026-12-04T10:00:00.000Z",
      facts: [fact()],
      entities: [{ id: 1, name: "Alice Smith", type: "person", description: "an engineer" } as any],
      chunks: []
    })
    expect(text).toBe(
      "Facts:\n[12] Alice Smith lives in Berlin. (since 2020-01-01)\nEntities:\n[1] Alice Smith (person): an engineer"
    )
    expect(text).not.toMatch(/0\.03|fulltext|created_at/)
    expect(searchText({ dataset: "main", query: "x", as_of: "t", facts: [], entities: [], chunks: [] })).toBe(
      "Nothing found."
    )
  })

  it("query: the answer first, then the facts it cites", () => {
    const text = queryText({
      dataset: "main",
      query: "Where does Alice live?",
      as_of: "t",
      answer: "Alice lives in Berlin [12].",
      citations: [12],
      facts: [fact(), fact({ id: 13, description: "Alice Smith works at Acme." })],
      entities: [],
      artifacts: [],
      inference: null
    } as any)
    expect(text).toBe("Alice lives in Berlin [12].\nCited facts:\n[12] Alice Smith lives in Berlin. (since 2020-01-01)")
  })

  it("context: the block itself", () => {
    expect(contextText({ context: "# Facts\n- Alice lives in Berlin", facts: [], entities: [], tokens: 8 } as any))
      .toBe(
        "# Facts\n- Alice lives in Berlin"
      )
    expect(contextText({ context: "", facts: [], entities: [], tokens: 0 } as any)).toBe("Nothing is known yet.")
  })

  it("remember: what was learned and what it closed, or the run to poll", () => {
    expect(rememberText({ remember_run_id: 4, edges: [fact()], entities: [], invalidated_edges: [7] } as any)).toBe(
      "Learned:\n[12] Alice Smith lives in Berlin. (since 2020-01-01)\nClosed (no longer true): [7]"
    )
    expect(rememberText({ remember_run_id: 4, edges: [], entities: [], invalidated_edges: [] } as any)).toBe(
      "Nothing new was learned."
    )
    expect(rememberText({ remember_run_id: 4, status: "started" })).toBe(
      "Remember run 4 is started: call remember_status with this id for its outcome."
    )
  })

  it("remember_status: the status, the counts and the error", () => {
    expect(runText({ id: 4, status: "failed", error: "extract_graph: the answer is not JSON" } as any)).toBe(
      "Remember run 4: failed.\nError: extract_graph: the answer is not JSON"
    )
    expect(runText({
      id: 4,
      status: "succeeded",
      error: null,
      response: { edges: [fact()], entities: [{}, {}], invalidated_edges: [] }
    } as any)).toBe("Remember run 4: succeeded.\nStored 1 fact(s) and 2 entities; closed 0.")
  })
})
