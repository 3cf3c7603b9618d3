/**
 * The read commands of the real CLI (`gligabao search`, `query`, `export`) on a SQLite file
 * migrated by `gligabao migrate` and filled with plain SQL (so the full-text triggers are
 * exercised as any writer would). Alice lived in Hamburg until 2024 from an unknown start
 * (valid_at NULL), then in Berlin, then in Paris.
 */
import Database from "better-sqlite3"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { NOTHING_KNOWN } from "../../src/query/answer.js"
import { runCli, tempDir } from "../support/cli.js"
import { dataOf, parseXml } from "../support/xml.js"

const dir = tempDir("gligabao-e2e-read-")
const db = join(dir.path, "read.db")
const T0 = "2024-01-01T00:00:00.000Z"
const T1 = "2025-01-01T00:00:00.000Z"

beforeAll(async () => {
  const migrated = await runCli(["migrate", "--db", db])
  expect(migrated.code, migrated.stderr).toBe(0)
  const conn = new Database(db)
  try {
    conn.exec(`
      INSERT INTO gb_datasets (user_id, name, created_at) VALUES ('alice', 'main', '${T0}');
      INSERT INTO gb_artifacts (dataset_id, kind, text, session_id, valid_at, created_at)
        VALUES (1, 'knowledge', 'Alice lives in Berlin.', 's1', '${T0}', '${T0}'),
               (1, 'knowledge', 'Alice moved to Paris.', 's2', '${T1}', '${T1}');
      INSERT INTO gb_entities (dataset_id, name, name_key, type, description, created_at, updated_at)
        VALUES (1, 'Alice', 'alice', 'person', 'an engineer', '${T0}', '${T0}'),
               (1, 'Berlin', 'berlin', 'place', '', '${T0}', '${T0}'),
               (1, 'Paris', 'paris', 'place', '', '${T1}', '${T1}'),
               (1, 'Hamburg', 'hamburg', 'place', '', '${T0}', '${T0}');
      INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, description, valid_at, invalid_at, created_at, expired_at, artifact_id)
        VALUES (1, 1, 2, 'lives_in', 'Alice lives in Berlin', '${T0}', '${T1}', '${T0}', '${T1}', 1),
               (1, 1, 3, 'lives_in', 'Alice lives in Paris', '${T1}', NULL, '${T1}', NULL, 2),
               (1, 1, 4, 'lives_in', 'Alice lives in Hamburg', NULL, '${T0}', '${T0}', NULL, 1);
      INSERT INTO gb_entity_artifacts (entity_id, artifact_id) VALUES (1, 1), (2, 1), (1, 2), (3, 2), (4, 1);
      INSERT INTO gb_edge_artifacts (edge_id, artifact_id) VALUES (1, 1), (2, 2), (3, 1);
      INSERT INTO gb_edge_sessions VALUES (1, 's1'), (2, 's2'), (3, 's1');
    `)
  } finally {
    conn.close()
  }
}, 120_000)

afterAll(() => dir.remove())

const cli = (...args: ReadonlyArray<string>) => runCli([...args, "--db", db])

// one at a time: each command loads the TypeScript sources, which is slow on a small machine
describe("read commands", { timeout: 60_000 }, () => {
  it("search prints the ranked results as JSON: facts valid now, or as of a time", async () => {
    const now = await cli("search", "Where does Alice live?", "--user-id", "alice")
    expect(now.code, now.stderr).toBe(0)
    const out = JSON.parse(now.stdout)
    expect(out.facts.map((f: { description: string }) => f.description)).toEqual(["Alice lives in Paris"])
    expect(out.facts[0].found_by).toContain("fulltext")

    const then = await cli(
      "search",
      "Alice Berlin",
      "--user-id",
      "alice",
      "--as-of",
      "2024-06-01T00:00:00Z",
      "--hops",
      "0"
    )
    expect(JSON.parse(then.stdout).facts.map((f: { target: string }) => f.target)).toEqual(["Berlin"])

    // an unknown start: true at any time before its end
    const unknown = await cli("search", "Alice Hamburg", "--user-id", "alice", "--as-of", "2023-06-01T00:00:00Z")
    expect(unknown.code, unknown.stderr).toBe(0)
    expect(JSON.parse(unknown.stdout).facts).toEqual([
      expect.objectContaining({ target: "Hamburg", valid_at: null, invalid_at: T0 })
    ])
  })

  it("export writes GraphML to a file and JSON to stdout", async () => {
    const file = join(dir.path, "out.graphml")
    const written = await cli(
      "export",
      "--user-id",
      "alice",
      "--format",
      "graphml",
      "--output",
      file,
      "--include-expired"
    )
    expect(written.code, written.stderr).toBe(0)
    expect(written.stdout).toBe("")
    const graph = parseXml(readFileSync(file, "utf8")).children.find((c) => c.name === "graph")!
    const facts = graph.children.filter((c) => c.name === "edge" && dataOf(c).e_kind === "fact")
    expect(facts).toHaveLength(3)
    // no valid_at for an unknown start, as no invalid_at for an open end
    expect(facts.map((f) => [dataOf(f).e_valid_at, dataOf(f).e_invalid_at])).toEqual([
      [T0, T1],
      [T1, undefined],
      [undefined, T0]
    ])

    const json = await cli("export", "--user-id", "alice", "--session-id", "s2")
    expect(json.code, json.stderr).toBe(0)
    const doc = JSON.parse(json.stdout)
    expect(doc.edges.map((e: { target: string }) => e.target)).toEqual(["Paris"])
    expect(doc.session_id).toBe("s2")
  })

  it("query with nothing found answers so without an LLM; with facts and no LLM key it fails naming the key", async () => {
    const nothing = await cli("query", "Who is Zebedee?", "--user-id", "alice")
    expect(nothing.code, nothing.stderr).toBe(0)
    expect(JSON.parse(nothing.stdout)).toMatchObject({ answer: NOTHING_KNOWN, inference: null, citations: [] })

    const noKey = await cli("query", "Where does Alice live?", "--user-id", "alice")
    expect(noKey.code).not.toBe(0)
    expect(noKey.stderr).toMatch(/ANTHROPIC_API_KEY/)
  })

  it("errors are one line naming the problem", async () => {
    // a user with nothing stored searches and exports empty: not an error
    const other = await cli("search", "Alice", "--user-id", "bob")
    expect(other.code).toBe(0)
    expect(JSON.parse(other.stdout)).toMatchObject({ dataset: "main", facts: [], entities: [] })
    const empty = await cli("export", "--user-id", "bob")
    expect(empty.code).toBe(0)
    expect(JSON.parse(empty.stdout)).toMatchObject({
      dataset: { id: null, name: "main", created_at: null },
      entities: [],
      edges: [],
      artifacts: []
    })
    const limit = await cli("search", "Alice", "--user-id", "alice", "--limit", "500")
    expect(limit.stderr).toMatch(/limit must be an integer from 1 to 100/)
    const format = await cli("export", "--user-id", "alice", "--format", "csv")
    expect(format.stderr).toMatch(/format must be json or graphml/)
  })
})
