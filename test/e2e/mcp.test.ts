/**
 * The MCP server as an agent host meets it, through the official SDK's client: `gligabao mcp`
 * spawned over stdio, and /mcp of a spawned `gligabao serve`, both with the fake Anthropic
 * server answering as the bench's model. A session remembers at once and polls remember_status
 * until the run succeeded; a query without an LLM is a clear tool error.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { BIN, type SpawnedServer, startServer, tempDir } from "../support/cli.js"
import { anthropicMessage, type FakeAnthropic, startFakeAnthropic } from "../support/fakeAnthropic.js"
import { MCP_TOOLS } from "../support/mcp.js"

let fake: FakeAnthropic
const dir = tempDir("gligabao-e2e-mcp-")
const db = join(dir.path, "mcp.db")

beforeAll(async () => {
  fake = await startFakeAnthropic()
  fake.setHandler((request) => anthropicMessage({ text: answer(request.body).text }))
})
afterAll(async () => {
  await fake?.close()
  dir.remove()
})

/** `gligabao mcp` on the test database, as a host spawns it. */
const stdioClient = async (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", "--db", db, ...args],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NO_COLOR: "1", ...env },
    // not the checkout: its gligabao.toml is not this test's
    cwd: dir.path,
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr?.on("data", (chunk) => (stderr += String(chunk)))
  const client = new Client({ name: "gligabao-e2e", version: "1.0.0" })
  await client.connect(transport)
  return { client, stderr: () => stderr }
}

const structured = (result: any) => {
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false)
  return result.structuredContent
}

const untilDone = async (client: Client, runId: number, args: Record<string, unknown> = {}) => {
  for (let i = 0; i < 400; i++) {
    const run = structured(
      await client.callTool({ name: "remember_status", arguments: { remember_run_id: runId, ...args } })
    )
    if (run.status === "succeeded" || run.status === "failed") return run
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`run ${runId} did not finish`)
}

describe("gligabao mcp (stdio)", () => {
  it("initializes, lists the tools, remembers at once and polls until the run succeeded, searches", async () => {
    const { client, stderr } = await stdioClient(["--user-id", "alice"], {
      ANTHROPIC_API_KEY: "test",
      ANTHROPIC_BASE_URL: fake.url,
      GLIGABAO_LOG_LEVEL: "info"
    })
    try {
      expect(client.getServerVersion()?.name).toBe("gligabao")
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toEqual(MCP_TOOLS)
      // the user is fixed by --user-id: no tool asks for it
      for (const tool of tools) expect(Object.keys(tool.inputSchema.properties ?? {})).not.toContain("user_id")
      // remember waits for its run (mcp.remember_wait_ms) and answers what was learned
      const learned = structured(
        await client.callTool({ name: "remember", arguments: { text: "Alice Novak lives in Berlin in 2020." } })
      )
      expect(learned.edges).toHaveLength(1)
      const run = await untilDone(client, learned.remember_run_id)
      expect(run.status).toBe("succeeded")
      expect(run.response.edges).toHaveLength(1)
      const found = structured(await client.callTool({ name: "search", arguments: { query: "Alice Novak Berlin" } }))
      expect(found.facts[0]).toMatchObject({
        valid_at: "2020-01-01T00:00:00.000Z",
        artifact_ids: [run.response.artifact_id]
      })
      // a correction over stdio: the fact closed, as the user said
      const closed = structured(
        await client.callTool({
          name: "correct",
          arguments: { action: "close", id: found.facts[0].id, invalid_at: "2024-01-01T00:00:00Z" }
        })
      )
      expect(closed.fact).toMatchObject({ id: found.facts[0].id, invalid_at: "2024-01-01T00:00:00.000Z" })
      // and reopened: the user took it back (the next test asks about it)
      const reopened = structured(
        await client.callTool({ name: "correct", arguments: { action: "reopen", id: found.facts[0].id } })
      )
      expect(reopened.fact.invalid_at ?? null).toBeNull()
      // the logs went to stderr; stdout carried only the protocol (or the client would have failed)
      expect(stderr()).toContain("gligabao MCP server on stdio")
    } finally {
      await client.close()
    }
  })

  it("get_entity finds a name by one of its words, and answers the candidates of an ambiguous one", async () => {
    const { client } = await stdioClient(["--user-id", "alice"], {
      ANTHROPIC_API_KEY: "test",
      ANTHROPIC_BASE_URL: fake.url
    })
    try {
      structured(
        await client.callTool({ name: "remember", arguments: { text: "Alice Berg works at Initech in 2021." } })
      )
      const berg: any = await client.callTool({ name: "get_entity", arguments: { name: "berg" } })
      expect(structured(berg).entity.name).toBe("Alice Berg")
      expect(berg.content[0].text).toMatch(
        /^\[\d+\] Alice Berg \(person\)\na person\nFacts:\n\[\d+\] Alice Berg works at Initech/
      )
      // "alice" is Alice Novak (the first test's) and Alice Berg: the model is asked to choose
      const both: any = await client.callTool({ name: "get_entity", arguments: { name: "ALICE" } })
      expect(structured(both).candidates.map((c: any) => c.name).sort()).toEqual(["Alice Berg", "Alice Novak"])
      expect(both.content[0].text).toMatch(/^"ALICE" may mean 2 entities; call get_entity again with the id/)
      expect(both.content[0].text).toMatch(/\n\[\d+\] Alice Novak \(person\), 1 fact: a person/)
    } finally {
      await client.close()
    }
  })

  it("without an LLM, query is a clear tool error (and the rest still works)", async () => {
    const { client } = await stdioClient(["--user-id", "alice"], {})
    try {
      const result: any = await client.callTool({ name: "query", arguments: { query: "Where does Alice live?" } })
      expect(result.isError).toBe(true)
      expect(JSON.parse(result.content[0].text).error).toMatch(/LLM|ANTHROPIC_API_KEY|model/i)
      const datasets = structured(await client.callTool({ name: "list_datasets", arguments: {} }))
      expect(datasets.datasets.map((d: any) => d.name)).toEqual(["main"])
    } finally {
      await client.close()
    }
  })
})

describe("/mcp of gligabao serve (Streamable HTTP)", () => {
  let server: SpawnedServer
  beforeAll(async () => {
    server = await startServer({ env: { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: fake.url } })
  })
  afterAll(async () => {
    await server?.stop()
  })

  it("initializes, lists the tools (user_id an argument), remembers and polls, searches", async () => {
    const client = new Client({ name: "gligabao-e2e", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)))
    try {
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toEqual(MCP_TOOLS)
      for (const tool of tools) expect(tool.inputSchema.required).toContain("user_id")
      const queued = structured(
        await client.callTool({
          name: "remember",
          arguments: { user_id: "bob", text: "Bruno Diaz works at Acme in 2019." }
        })
      )
      const run = await untilDone(client, queued.remember_run_id, { user_id: "bob" })
      expect(run.status).toBe("succeeded")
      const found = structured(
        await client.callTool({ name: "search", arguments: { user_id: "bob", query: "Bruno Diaz Acme" } })
      )
      expect(found.facts.map((f: any) => f.description)).toContain("Bruno Diaz works at Acme since 2019")
    } finally {
      await client.close()
    }
  })
})
