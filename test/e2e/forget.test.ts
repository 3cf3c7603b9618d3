/**
 * The forget commands of the real CLI (`gligabao forget artifact`, `forget dataset`, `forget
 * user`) on a SQLite file migrated by `gligabao migrate` and filled with plain SQL: each prints
 * the endpoint's response, removes what it says, and fails with one line naming the problem.
 */
import Database from "better-sqlite3"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCli, tempDir } from "../support/cli.js"

const dir = tempDir("gligabao-e2e-forget-")
const db = join(dir.path, "forget.db")
const images = join(dir.path, "images")
const T0 = "2024-01-01T00:00:00.000Z"
const T1 = "2025-01-01T00:00:00.000Z"

const query = <A = any>(sql: string): Array<A> => {
  const conn = new Database(db, { readonly: true })
  try {
    return conn.prepare(sql).all() as Array<A>
  } finally {
    conn.close()
  }
}
const count = (sql: string): number => Number((query<{ n: number }>(sql)[0]!).n)

beforeAll(async () => {
  const migrated = await runCli(["migrate", "--db", db])
  expect(migrated.code, migrated.stderr).toBe(0)
  const conn = new Database(db)
  try {
    conn.exec(`
      INSERT INTO gb_datasets (id, user_id, name, created_at, deleted_at) VALUES
        (1, 'alice', 'main', '${T0}', NULL), (2, 'alice', 'work', '${T0}', '${T1}'), (3, 'alice', 'work', '${T1}', NULL),
        (4, 'bob', 'main', '${T0}', NULL);
      INSERT INTO gb_artifacts (id, dataset_id, kind, text, valid_at, created_at) VALUES
        (1, 1, 'knowledge', 'Alice lives in Berlin.', '${T0}', '${T0}'),
        (2, 1, 'knowledge', 'Alice moved to Paris.', '${T1}', '${T1}'),
        (3, 2, 'knowledge', 'Alice worked at Acme.', '${T0}', '${T0}'),
        (4, 3, 'knowledge', 'Alice works at Initech.', '${T1}', '${T1}'),
        (5, 4, 'knowledge', 'Bob lives in Rome.', '${T0}', '${T0}');
      INSERT INTO gb_entities (id, dataset_id, name, name_key, type, created_at, updated_at) VALUES
        (1, 1, 'Alice', 'alice', 'person', '${T0}', '${T0}'), (2, 1, 'Berlin', 'berlin', 'place', '${T0}', '${T0}'),
        (3, 1, 'Paris', 'paris', 'place', '${T1}', '${T1}'), (4, 3, 'Initech', 'initech', 'organization', '${T1}', '${T1}'),
        (5, 4, 'Bob', 'bob', 'person', '${T0}', '${T0}'), (6, 4, 'Rome', 'rome', 'place', '${T0}', '${T0}');
      INSERT INTO gb_edges (id, dataset_id, source_id, target_id, relation, description, valid_at, created_at, artifact_id)
        VALUES (1, 1, 1, 2, 'lives_in', 'Alice lives in Berlin', '${T0}', '${T0}', 1),
               (2, 1, 1, 3, 'lives_in', 'Alice lives in Paris', '${T1}', '${T1}', 2),
               (3, 4, 5, 6, 'lives_in', 'Bob lives in Rome', '${T0}', '${T0}', 5);
      INSERT INTO gb_entity_artifacts (entity_id, artifact_id) VALUES (1, 1), (2, 1), (1, 2), (3, 2), (4, 4), (5, 5), (6, 5);
      INSERT INTO gb_edge_artifacts (edge_id, artifact_id) VALUES (1, 1), (2, 2), (3, 5);
      INSERT INTO gb_remember_runs (id, pipeline, user_id, dataset, dataset_id, status, params, queued_at, instance_id)
        VALUES (1, 'text', 'alice', 'main', 1, 'succeeded', '{}', '${T0}', 'gone'),
               (2, 'text', 'alice', 'notes', NULL, 'queued', '{}', '${T1}', 'gone'),
               (3, 'text', 'bob', 'main', 4, 'succeeded', '{}', '${T0}', 'gone');
      INSERT INTO gb_remember_run_stages (run_id, stage, status) VALUES (1, 'store', 'succeeded'), (3, 'store', 'succeeded');
      INSERT INTO gb_remember_queue (run_id, request) VALUES (2, '{"user_id":"alice","text":"Alice knows Ann."}');
      INSERT INTO gb_remember_idempotency (user_id, idempotency_key, request_hash, run_id, created_at)
        VALUES ('alice', 'k1', 'h', 2, '${T1}');
      INSERT INTO gb_inferences (id, type, stage, provider, model, reasoning, started_at, error, run_id, dataset_id)
        VALUES (1, 'remember', 'extract_graph', 'anthropic', 'm', 'none', '${T0}', 'the model said: Alice lives in Berlin', 1, 1),
               (2, 'remember', 'extract_graph', 'anthropic', 'm', 'none', '${T0}', NULL, 3, 4);
      INSERT INTO gb_image_artifacts (id, dataset_id, sha256, path, media_type, bytes, valid_at, created_at)
        VALUES (1, 1, 'abc', '1/abc.png', 'image/png', 3, '${T0}', '${T0}');
    `)
  } finally {
    conn.close()
  }
  mkdirSync(join(images, "1"), { recursive: true })
  writeFileSync(join(images, "1", "abc.png"), "png")
}, 120_000)

afterAll(() => dir.remove())

const cli = (...args: ReadonlyArray<string>) => runCli([...args, "--db", db, "--image-dir", images])

// one at a time: each command loads the TypeScript sources, which is slow on a small machine
describe("forget commands", { timeout: 60_000 }, () => {
  it("forget artifact prints what it removed; the fact only it supported and its place go", async () => {
    const out = await cli("forget", "artifact", "2", "--user-id", "alice")
    expect(out.code, out.stderr).toBe(0)
    expect(JSON.parse(out.stdout)).toEqual({
      deleted: { artifacts: 1, entities: 1, facts: 1, vectors: 0 },
      reopened_facts: [],
      reanchored_facts: []
    })
    expect(query("SELECT id FROM gb_artifacts WHERE dataset_id = 1")).toEqual([{ id: 1 }])
    expect(query("SELECT name FROM gb_entities WHERE dataset_id = 1 ORDER BY id")).toEqual([
      { name: "Alice" },
      { name: "Berlin" }
    ])
  })

  it("forget dataset removes every dataset of the name, the soft-deleted one too", async () => {
    const out = await cli("forget", "dataset", "work", "--user-id", "alice")
    expect(out.code, out.stderr).toBe(0)
    expect(JSON.parse(out.stdout)).toEqual({
      user_id: "alice",
      dataset: "work",
      dataset_ids: [2, 3],
      deleted: { datasets: 2, artifacts: 2, entities: 1, facts: 0, vectors: 0, images: 0, runs: 0 }
    })
    expect(query("SELECT id FROM gb_datasets ORDER BY id")).toEqual([{ id: 1 }, { id: 4 }])
  })

  it("forget user removes the rest of the user's memory, runs and files; the model calls stay, scrubbed", async () => {
    const out = await cli("forget", "user", "alice")
    expect(out.code, out.stderr).toBe(0)
    expect(JSON.parse(out.stdout)).toEqual({
      user_id: "alice",
      deleted: { datasets: 1, artifacts: 1, entities: 2, facts: 1, vectors: 0, images: 1, runs: 2 }
    })
    for (
      const table of [
        "gb_remember_queue",
        "gb_remember_idempotency",
        "gb_image_artifacts",
        "gb_entity_artifacts WHERE entity_id < 5",
        "gb_edge_artifacts WHERE edge_id < 3"
      ]
    ) {
      expect(count(`SELECT COUNT(*) AS n FROM ${table}`), table).toBe(0)
    }
    expect(query("SELECT user_id FROM gb_datasets")).toEqual([{ user_id: "bob" }])
    expect(query("SELECT id, user_id FROM gb_remember_runs")).toEqual([{ id: 3, user_id: "bob" }])
    expect(query("SELECT run_id FROM gb_remember_run_stages")).toEqual([{ run_id: 3 }])
    expect(query("SELECT id, run_id, dataset_id, error FROM gb_inferences ORDER BY id")).toEqual([
      { id: 1, run_id: null, dataset_id: null, error: "removed: its user or dataset was forgotten" },
      { id: 2, run_id: 3, dataset_id: 4, error: null }
    ])
    expect(existsSync(join(images, "1", "abc.png"))).toBe(false)
    expect(count("SELECT COUNT(*) AS n FROM gb_edges")).toBe(1)
  })

  it("errors are one line naming the problem", async () => {
    const again = await cli("forget", "user", "alice")
    expect(again.code).not.toBe(0)
    expect(again.stderr.trim()).toBe("gligabao: this user has nothing stored")
    const id = await cli("forget", "artifact", "abc", "--user-id", "bob")
    expect(id.code).not.toBe(0)
    expect(id.stderr.trim()).toMatch(/^gligabao: artifact_id must be an integer from 1 to/)
    const missing = await cli("forget", "dataset", "nothing", "--user-id", "bob")
    expect(missing.stderr.trim()).toBe("gligabao: no dataset \"nothing\" for this user")
    expect(count("SELECT COUNT(*) AS n FROM gb_artifacts")).toBe(1)
  })
})
