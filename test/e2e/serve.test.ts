import { createHash } from "node:crypto"
/**
 * End to end: the real `gligabao` CLI as a child process, talked to over HTTP. Without a key
 * the server starts and answers 503; with ANTHROPIC_BASE_URL at the fake Anthropic server it
 * remembers two contradicting texts, and the SQLite file agrees with the responses. Also the
 * one-shot commands (migrate, a missing --config, --help). One server per describe block.
 */
import Database from "better-sqlite3"
import { Schema } from "effect"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { GLIGABAO_VERSION } from "../../src/Config.js"
import { RememberResponse } from "../../src/domain/Responses.js"
import { RememberRun } from "../../src/domain/runView.js"
import { TEXT_STAGES } from "../../src/domain/Stages.js"
import { Error503 } from "../../src/http/ErrorBodies.js"
import { readResolveEdgesPrompt } from "../../src/pipeline/prompts/resolveEdges.js"
import { runCli, type SpawnedServer, startServer, tempDir } from "../support/cli.js"
import {
  anthropicMessage,
  type FakeAnthropic,
  type RecordedRequest,
  startFakeAnthropic
} from "../support/fakeAnthropic.js"

const post = async (url: string, body: unknown) => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: res.status, json: (await res.json()) as Readonly<Record<string, unknown>> }
}
const getJson = async (url: string) => {
  const res = await fetch(url)
  return { status: res.status, json: (await res.json()) as Readonly<Record<string, unknown>> }
}
// every answer is a JSON object; a test reads it with the endpoint's schema
const remembered = (json: unknown) => Schema.decodeUnknownSync(RememberResponse)(json)
const runOf = (json: unknown) => Schema.decodeUnknownSync(RememberRun)(json)

const EXTRACT_MARK = "You extract a knowledge graph"
const RESOLVE_MARK = "You compare new facts"

const livesIn = (city: string, validAt: string) => ({
  entities: [{ name: "Alice Smith", type: "person", description: "an engineer" }, {
    name: city,
    type: "place",
    description: "a city"
  }],
  edges: [{
    source: "Alice Smith",
    target: city,
    relation: "lives in",
    description: `Alice Smith lives in ${city}`,
    valid_at: validAt,
    invalid_at: null
  }]
})

/** Answers like the model would, told apart by the system prompt (contracts sections 1 and 2). */
const answer = (request: RecordedRequest): string => {
  const system = JSON.stringify(request.body.system)
  const user = JSON.stringify(request.body.messages)
  if (system.includes(EXTRACT_MARK)) {
    // prose and a fence around the JSON are tolerated (contracts section 1)
    const graph = user.includes("Paris")
      ? livesIn("Paris", "2025-01-15T00:00:00Z")
      : livesIn("Berlin", "2024-03-01T00:00:00Z")
    return `Here is the graph:\n\`\`\`json\n${JSON.stringify(graph)}\n\`\`\``
  }
  if (system.includes(RESOLVE_MARK)) {
    const data = readResolveEdgesPrompt(request.body.messages[0].content)
    const moved = data.new_facts.find((f: any) => f.target === "Paris")
    const old = data.existing_facts.filter((f: any) => f.target === "Berlin").map((f: any) => f.id)
    return JSON.stringify({
      duplicates: [],
      contradictions: moved && old.length > 0 ? [{ new: moved.index, existing: old }] : []
    })
  }
  throw new Error(`unexpected system prompt: ${system.slice(0, 80)}`)
}

// Both servers start together: a start is mostly the CLI's load time.
// the API reports a dated snapshot of the requested alias; gligabao records what is reported
const REPORTED_MODEL = "claude-haiku-5-5-20260101"
let fake: FakeAnthropic
let bare: SpawnedServer
let backed: SpawnedServer
// the backed server's database outlives it, to be read after its shutdown
const backedDir = tempDir()
beforeAll(async () => {
  fake = await startFakeAnthropic()
  fake.setHandler((request) => {
    if (request.path !== "/v1/messages") {
      return { status: 404, json: { type: "error", error: { type: "not_found_error", message: request.path } } }
    }
    return anthropicMessage({
      text: answer(request),
      model: REPORTED_MODEL,
      usage: { input_tokens: 120, output_tokens: 45 }
    })
  })
  const [a, b] = await Promise.allSettled([
    startServer(),
    startServer({ env: { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: fake.url }, db: join(backedDir.path, "x.db") })
  ])
  // keep whichever started, so afterAll stops it even when the other failed
  if (a.status === "fulfilled") bare = a.value
  if (b.status === "fulfilled") backed = b.value
  for (const result of [a, b]) if (result.status === "rejected") throw result.reason
})
afterAll(async () => {
  await Promise.all([bare?.stop(), backed?.stop()])
  await fake?.close()
  backedDir.remove()
})

describe("serve without an LLM key", () => {
  let server: SpawnedServer
  beforeAll(() => {
    server = bare
  })

  it("announces its version and a loopback URL", () => {
    expect(server.version).toBe(GLIGABAO_VERSION)
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
  })

  it("GET /healthz is 200", async () => {
    expect(await getJson(`${server.url}/healthz`)).toEqual({ status: 200, json: { status: "ok" } })
  })

  it("GET /readyz is 200: the SQLite file migrated, sqlite-vec answering", async () => {
    const { status, json } = await getJson(`${server.url}/readyz`)
    expect(status).toBe(200)
    expect(json).toMatchObject({
      status: "ready",
      database: { dialect: "sqlite", migration: expect.stringMatching(/^\d{4}_/) },
      vector_store: { name: "sqlite-vec", search: "sqlite-vec binary codes" },
      llm: { provider: "none", configured: false }
    })
    // and it said so when it started
    expect(server.output()).toMatch(/no LLM is configured: set ANTHROPIC_API_KEY.*every remember is refused \(503\)/)
  })

  it("POST /v1/gb/remember is 503 naming the missing key, at once, with nothing queued", async () => {
    for (const wait of [true, false]) {
      const res = await post(`${server.url}/v1/gb/remember`, { user_id: "alice", text: "Alice lives in Berlin.", wait })
      expect(res.status).toBe(503)
      expect(Object.keys(res.json)).toEqual(["error"])
      expect(Schema.decodeUnknownSync(Error503)(res.json).error).toMatch(/ANTHROPIC_API_KEY/)
    }
    // no run was written: an agent is told now, not by a run failing in the background
    expect((await getJson(`${server.url}/v1/gb/runs?user_id=alice`)).json).toMatchObject({ runs: [] })
    expect((await getJson(`${server.url}/v1/gb/runs/1`)).status).toBe(404)
  })

  it("a bad request is still a 400 with {error}", async () => {
    const res = await post(`${server.url}/v1/gb/remember`, { text: "no user" })
    expect(res).toEqual({ status: 400, json: { error: expect.stringMatching(/user_id/) } })
  })

  it("SIGTERM: the process exits with code 0", async () => {
    expect(await server.stop()).toEqual({ code: 0, signal: null })
  })
})

describe("serve with the fake Anthropic API", () => {
  let server: SpawnedServer
  beforeAll(() => {
    server = backed
  })

  let first: RememberResponse
  let second: RememberResponse

  it("remembers a text, then a contradicting one that closes the first fact", async () => {
    const a = await post(`${server.url}/v1/gb/remember`, {
      user_id: "alice",
      text: "Alice lives in Berlin.",
      reference_time: "2024-03-01T00:00:00Z"
    })
    expect(a.status, JSON.stringify(a.json)).toBe(200)
    first = remembered(a.json)
    expect(first.edges).toHaveLength(1)
    expect(first.edges[0]).toMatchObject({
      source: "Alice Smith",
      target: "Berlin",
      relation: "lives_in",
      valid_at: "2024-03-01T00:00:00.000Z"
    })
    expect(first.invalidated_edges).toEqual([])

    const b = await post(`${server.url}/v1/gb/remember`, {
      user_id: "alice",
      text: "Alice moved to Paris on 2025-01-15.",
      reference_time: "2025-02-01T00:00:00Z",
      session_id: "chat-7"
    })
    expect(b.status, JSON.stringify(b.json)).toBe(200)
    second = remembered(b.json)
    expect(second.invalidated_edges).toEqual([first.edges[0].id])
    expect(second.session_id).toBe("chat-7")
    expect(second.edges[0]).toMatchObject({ target: "Paris", valid_at: "2025-01-15T00:00:00.000Z" })
    expect(second.edges[0]).not.toHaveProperty("expired_at")
    // the same entity, not a second Alice
    expect(second.entities.find((e) => e.name === "Alice Smith")!.id).toBe(
      first.entities.find((e) => e.name === "Alice Smith")!.id
    )
  })

  it("the fake saw the key and three calls: extract, extract, resolve with the stored fact", () => {
    const calls = fake.requests.filter((r) => r.path === "/v1/messages")
    const kinds = calls.map((r) => (JSON.stringify(r.body.system).includes(EXTRACT_MARK) ? "extract" : "resolve"))
    expect(kinds).toEqual(["extract", "extract", "resolve"])
    for (const call of calls) {
      expect(call.headers["x-api-key"] ?? call.headers.authorization).toMatch(/test/)
      expect(call.body.model).toBe("claude-haiku-5-5")
    }
    const resolve = readResolveEdgesPrompt(calls[2]!.body.messages[0].content)
    expect(resolve.existing_facts).toEqual([expect.objectContaining({ id: first.edges[0].id, target: "Berlin" })])
  })

  it("GET /v1/gb/runs/{id} of both runs shows succeeded stages with their inference ids", async () => {
    const a = runOf((await getJson(`${server.url}/v1/gb/runs/${first.remember_run_id}`)).json)
    const b = runOf((await getJson(`${server.url}/v1/gb/runs/${second.remember_run_id}`)).json)
    for (const run of [a, b]) {
      expect(run.status).toBe("succeeded")
      expect(Object.keys(run.stages)).toEqual([...TEXT_STAGES])
      expect(run.stages.extract_graph).toMatchObject({ status: "succeeded", inference_ids: [expect.any(Number)] })
      expect(run.stages.store.status).toBe("succeeded")
    }
    expect(a.stages.resolve_edges.status).toBe("not_started")
    expect(b.stages.resolve_edges).toMatchObject({ status: "succeeded", inference_ids: [expect.any(Number)] })
    expect(b.artifact_id).toBe(second.artifact_id)
  })

  it("the SQLite file agrees: edges, the closed edge, inferences, provenance", async () => {
    const db = new Database(server.db, { readonly: true, fileMustExist: true })
    try {
      const edges = db.prepare("SELECT * FROM gb_edges ORDER BY id").all() as Array<any>
      expect(edges).toHaveLength(2)
      const [berlin, paris] = edges
      expect(berlin).toMatchObject({
        id: first.edges[0].id,
        relation: "lives_in",
        invalid_at: "2025-01-15T00:00:00.000Z",
        expired_at: expect.any(String)
      })
      expect(paris).toMatchObject({
        id: second.edges[0].id,
        invalid_at: null,
        expired_at: null,
        artifact_id: second.artifact_id
      })

      const inferences = db.prepare("SELECT * FROM gb_inferences ORDER BY id").all() as Array<any>
      expect(inferences.map((i) => [i.stage, i.run_id])).toEqual([
        ["extract_graph", first.remember_run_id],
        ["extract_graph", second.remember_run_id],
        ["resolve_edges", second.remember_run_id]
      ])
      for (const i of inferences) {
        expect(i).toMatchObject({
          type: "remember",
          provider: "anthropic",
          model: REPORTED_MODEL,
          reasoning: "none",
          input_tokens: 120,
          output_tokens: 45,
          error: null
        })
        expect(i.cost_usd).toBeGreaterThan(0)
      }
      const models = db.prepare("SELECT id, provider, name FROM gb_models").all() as Array<any>
      expect(models).toEqual([{ id: inferences[0].model_id, provider: "anthropic", name: REPORTED_MODEL }])
      // the extracting model is the model of the knowledge
      expect(edges.map((e) => e.model_id)).toEqual([models[0].id, models[0].id])

      // a contradicted edge is not linked to the artifact that contradicted it
      const links = db.prepare("SELECT edge_id, artifact_id FROM gb_edge_artifacts ORDER BY edge_id, artifact_id").all()
      expect(links).toEqual([
        { edge_id: berlin.id, artifact_id: first.artifact_id },
        { edge_id: paris.id, artifact_id: second.artifact_id }
      ])
      const sessions = db.prepare("SELECT edge_id, session_id FROM gb_edge_sessions").all()
      expect(sessions).toEqual([{ edge_id: paris.id, session_id: "chat-7" }])
      const runs = db.prepare("SELECT id, status, artifact_id FROM gb_remember_runs ORDER BY id").all()
      expect(runs).toEqual([
        { id: first.remember_run_id, status: "succeeded", artifact_id: first.artifact_id },
        { id: second.remember_run_id, status: "succeeded", artifact_id: second.artifact_id }
      ])
    } finally {
      db.close()
    }
  })

  it("SIGTERM with a run in flight: the run finishes, its client gets the answer, the process exits 0", async () => {
    const before = fake.requests.length
    fake.setLatency(1500)
    const pending = post(`${server.url}/v1/gb/remember`, { user_id: "alice", text: "Alice lives in Paris." })
    // wait until the run is at the model, then ask the server to stop
    while (fake.requests.length === before) await new Promise((resolve) => setTimeout(resolve, 20))
    const exited = server.stop()
    const res = await pending
    expect(res.status, JSON.stringify(res.json)).toBe(200)
    expect(await exited).toEqual({ code: 0, signal: null })
    const db = new Database(server.db, { readonly: true, fileMustExist: true })
    try {
      expect(db.prepare("SELECT status FROM gb_remember_runs WHERE id = ?").get(remembered(res.json).remember_run_id))
        .toEqual({
          status: "succeeded"
        })
    } finally {
      db.close()
    }
  })
})

// ---------------------------------------------------------------------------------------------

describe.concurrent("one-shot commands", () => {
  it("migrate --db creates the schema and exits 0", async () => {
    const dir = tempDir()
    try {
      const db = join(dir.path, "nested", "m.db")
      const result = await runCli(["migrate", "--db", db])
      expect(result.code, result.stdout + result.stderr).toBe(0)
      expect(result.stdout).toContain(db)
      expect(existsSync(db)).toBe(true)
      const conn = new Database(db, { readonly: true })
      try {
        const tables =
          (conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((
            t
          ) => t.name)
        expect(tables).toEqual(
          expect.arrayContaining([
            "gb_datasets",
            "gb_artifacts",
            "gb_entities",
            "gb_edges",
            "gb_remember_runs",
            "gb_inferences"
          ])
        )
      } finally {
        conn.close()
      }
    } finally {
      dir.remove()
    }
  })

  it("serve --config with a missing file exits non-zero naming the file", async () => {
    const result = await runCli(["serve", "--port", "0", "--config", "/nonexistent.toml"])
    expect(result.code).not.toBe(0)
    expect(result.code).not.toBeNull()
    expect(result.stdout + result.stderr).toContain("/nonexistent.toml")
    expect(result.stdout).not.toMatch(/listening on/)
  })

  it("serve with [auth] tokens enforces them: 401 without a token, 403 for another user, /healthz open", async () => {
    const dir = tempDir()
    try {
      const config = `${dir.path}/auth.toml`
      // the user's token is given hashed, as an operator may keep it in the file
      const digest = createHash("sha256").update("alice-secret").digest("hex")
      writeFileSync(
        config,
        `[auth]\ntokens = [{ token = "sha256:${digest}", user_id = "alice" }, { token = "ops-0123456789abcdefghijklm", admin = true }]\n`
      )
      const server = await startServer({ args: ["--config", config] })
      try {
        expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
        const anonymous = await fetch(`${server.url}/v1/gb/datasets?user_id=alice`)
        expect(anonymous.status).toBe(401)
        expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/)
        expect(await anonymous.json()).toEqual({ error: expect.stringContaining("Bearer") })
        const alice = { authorization: "Bearer alice-secret" }
        expect((await fetch(`${server.url}/v1/gb/datasets?user_id=alice`, { headers: alice })).status).toBe(200)
        const other = await fetch(`${server.url}/v1/gb/datasets?user_id=bob`, { headers: alice })
        expect(other.status).toBe(403)
        expect(await other.json()).toEqual({ error: expect.stringContaining("user_id") })
        const admin = await fetch(`${server.url}/v1/gb/admin/api/databases`, {
          headers: { authorization: "Bearer ops-0123456789abcdefghijklm" }
        })
        expect(admin.status).toBe(200)
        expect((await fetch(`${server.url}/v1/gb/admin/api/databases`, { headers: alice })).status).toBe(403)
      } finally {
        await server.stop()
      }
    } finally {
      dir.remove()
    }
  })

  it("serve refuses a non-loopback host without [auth], saying why", async () => {
    const dir = tempDir()
    try {
      const result = await runCli(["serve", "--port", "0", "--host", "0.0.0.0", "--db", `${dir.path}/x.db`])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("without authentication")
      expect(result.stderr).toContain("--insecure-bind")
      expect(result.stdout).not.toMatch(/listening on/)
    } finally {
      dir.remove()
    }
  })

  it("--help prints usage with the commands", async () => {
    const result = await runCli(["--help"])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/USAGE/)
    expect(result.stdout).toMatch(/serve/)
    expect(result.stdout).toMatch(/migrate/)
  })
})
