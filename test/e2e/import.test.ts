/**
 * `gligabao import` end to end (docs/INGESTION.md): a directory imported locally (the manager
 * over the --db database), a JSONL file imported through a spawned server's batch endpoint
 * (--url), and the same import again storing nothing new (its items' keys name their runs).
 */
import { mkdirSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCli, startServer, tempDir } from "../support/cli.js"
import { anthropicMessage, EMPTY_GRAPH_TEXT, type FakeAnthropic, startFakeAnthropic } from "../support/fakeAnthropic.js"

let fake: FakeAnthropic
const dir = tempDir("gligabao-import-")
const env = () => ({ ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: fake.url })

beforeAll(async () => {
  fake = await startFakeAnthropic()
  fake.setHandler(() => anthropicMessage({ text: EMPTY_GRAPH_TEXT, usage: { input_tokens: 10, output_tokens: 5 } }))
})
afterAll(async () => {
  await fake.close()
  dir.remove()
})

const summaryOf = (stdout: string) => JSON.parse(stdout)

describe("gligabao import", () => {
  it("imports a directory's .txt and .md files locally; a second run stores nothing new", async () => {
    const notes = join(dir.path, "notes")
    mkdirSync(notes)
    writeFileSync(join(notes, "b.md"), "# Bob\nBob works at Acme.")
    writeFileSync(join(notes, "a.txt"), "Alice lives in Berlin.")
    writeFileSync(join(notes, "skip.json"), "{}")
    utimesSync(join(notes, "a.txt"), new Date("2024-03-01T00:00:00Z"), new Date("2024-03-01T00:00:00Z"))
    const db = join(dir.path, "local.db")
    const args = ["import", notes, "--user-id", "alice", "--dataset", "notes", "--db", db]
    const first = await runCli(args, { env: env(), timeoutMs: 90_000 })
    expect(first.code, first.stderr).toBe(0)
    expect(summaryOf(first.stdout)).toMatchObject({ items: 2, queued: 2, succeeded: 2, failed: 0 })
    expect(first.stderr).toMatch(/2\/2 items done, 0 failed, [\d.]+ items\/s/)
    const calls = fake.requests.length
    expect(calls).toBeGreaterThanOrEqual(2)

    const again = await runCli(args, { env: env(), timeoutMs: 90_000 })
    expect(again.code, again.stderr).toBe(0)
    expect(summaryOf(again.stdout)).toMatchObject({ items: 2, queued: 0, succeeded: 2, failed: 0 })
    expect(fake.requests.length).toBe(calls)

    // the runs, in name order, with the files' modification times
    const server = await startServer({ db, env: env() })
    try {
      const runs = await (await fetch(`${server.url}/v1/gb/runs?user_id=alice&dataset=notes`)).json() as any
      expect(runs.runs).toHaveLength(2)
      const [second, firstRun] = runs.runs
      expect(firstRun.params.reference_time).toBe("2024-03-01T00:00:00.000Z")
      expect(second.params.text_length).toBe("# Bob\nBob works at Acme.".length)
    } finally {
      await server.stop()
    }
  }, 240_000)

  it("imports a JSONL file through a running server (--url); a second run stores nothing new", async () => {
    const file = join(dir.path, "items.jsonl")
    writeFileSync(
      file,
      [
        JSON.stringify({ text: "Carol lives in Paris." }),
        "",
        JSON.stringify({ text: "Dave met Carol.", kind: "episode", reference_time: "2025-01-31T12:00:00Z" }),
        JSON.stringify({ text: "Eve lives in Rome." })
      ].join("\n")
    )
    const server = await startServer({ env: env() })
    try {
      const args = ["import", file, "--user-id", "carol", "--url", server.url]
      const before = fake.requests.length
      const first = await runCli(args, { timeoutMs: 90_000 })
      expect(first.code, first.stderr).toBe(0)
      expect(summaryOf(first.stdout)).toMatchObject({ items: 3, queued: 3, succeeded: 3, failed: 0 })
      const calls = fake.requests.length
      expect(calls - before).toBeGreaterThanOrEqual(3)
      const runs = await (await fetch(`${server.url}/v1/gb/runs?user_id=carol`)).json() as any
      expect(runs.runs.map((r: any) => r.params.kind)).toEqual(["knowledge", "episode", "knowledge"])

      const again = await runCli(args, { timeoutMs: 90_000 })
      expect(again.code, again.stderr).toBe(0)
      expect(summaryOf(again.stdout)).toMatchObject({ items: 3, queued: 0, succeeded: 3, failed: 0 })
      expect(fake.requests.length).toBe(calls)

      // a bad line is named, and nothing is queued
      writeFileSync(file, [JSON.stringify({ text: "fine" }), JSON.stringify({ text: "" })].join("\n"))
      const bad = await runCli(args, { timeoutMs: 90_000 })
      expect(bad.code).not.toBe(0)
      expect(bad.stderr).toMatch(/line 2: text must not be empty/)
      const after = await (await fetch(`${server.url}/v1/gb/runs?user_id=carol`)).json() as any
      expect(after.runs).toHaveLength(3)
    } finally {
      await server.stop()
    }
  }, 240_000)
})
