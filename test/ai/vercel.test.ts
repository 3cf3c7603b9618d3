/**
 * The Vercel AI SDK tools (src/ai/vercel.ts) against a real `gligabao serve` with the fake model:
 * a turn of `generateText` whose mock model calls them, the scope's user and never the model's,
 * a bad argument answered as the server's error naming it, each correction action, and the input
 * schemas the SDK sends a model.
 */
import { asSchema, generateText, type ToolExecutionOptions } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { TOOL_DEFINITIONS } from "../../src/ai/definitions.js"
import { gligabaoTools } from "../../src/ai/vercel.js"
import { Gligabao } from "../../src/client/Gligabao.js"
import { type SpawnedServer, startServer } from "../support/cli.js"
import { type FakeAnthropic, startFakeAnthropic } from "../support/fakeAnthropic.js"

let fake: FakeAnthropic
let server: SpawnedServer
let client: Gligabao

beforeAll(async () => {
  fake = await startFakeAnthropic({ text: (request) => answer(request.body).text })
  server = await startServer({ env: { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: fake.url } })
  client = new Gligabao({ baseUrl: server.url })
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await fake?.close()
})

const options = { toolCallId: "call_1", messages: [] } as unknown as ToolExecutionOptions<any>
/** A tool's execute as the SDK calls it, with the arguments as the model sent them. */
const execute = (tools: ReturnType<typeof gligabaoTools>, name: keyof typeof tools, input: object): Promise<any> =>
  (tools[name].execute as (input: unknown, options: ToolExecutionOptions<any>) => Promise<unknown>)(input, options)

const modelCalling = (toolName: string, input: object) =>
  new MockLanguageModelV4({
    doGenerate: {
      content: [{ type: "tool-call", toolCallId: "call_1", toolName, input: JSON.stringify(input) }],
      finishReason: { unified: "tool-calls", raw: undefined },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 }
      },
      warnings: []
    }
  })

describe("the Vercel AI SDK tools", () => {
  it("run a model's calls against the server, for the scope's user", async () => {
    const tools = gligabaoTools(client, { user_id: "alice", dataset: "vercel" })
    const stored = await generateText({
      model: modelCalling("remember", { text: "Alice Novak works at Acme in 2020." }),
      tools,
      prompt: "Remember where Alice works."
    })
    const [remembered] = stored.toolResults
    expect(remembered?.toolName).toBe("remember")
    expect((remembered?.output as any).edges.map((e: any) => e.description)).toEqual([
      "Alice Novak works at Acme since 2020"
    ])

    const found = await generateText({
      model: modelCalling("search", { query: "Where does Alice work?", user_id: "bob", dataset: "main" }),
      tools,
      prompt: "Where does Alice work?"
    })
    // the model's user_id and dataset are not sent: the scope's are
    expect((found.toolResults[0]?.output as any).facts.map((f: any) => f.description)).toEqual([
      "Alice Novak works at Acme since 2020"
    ])
    const bobs = gligabaoTools(client, { user_id: "bob", dataset: "vercel" })
    expect((await execute(bobs, "search", { query: "Acme" })).facts).toEqual([])
    const main = gligabaoTools(client, { user_id: "alice" })
    expect((await execute(main, "search", { query: "Acme" })).facts).toEqual([])

    const context = await execute(tools, "get_context", { query: "Alice" })
    expect(context.context).toContain("Alice Novak works at Acme")
  })

  it("answer a bad argument with the server's error naming it, and store nothing", async () => {
    const tools = gligabaoTools(client, { user_id: "carol" })
    expect(await execute(tools, "search", { query: "Acme", limit: 500 })).toEqual({
      error: "limit must be an integer from 1 to 100",
      status: 400
    })
    expect(await execute(tools, "remember", { text: "" })).toEqual({ error: "text must not be empty", status: 400 })
    expect(await execute(tools, "correct", { action: "close" })).toEqual({
      error: "id is required for action close",
      status: 400
    })
    expect(await execute(tools, "correct", { action: "reopen", id: 999999 })).toMatchObject({ status: 404 })
    expect(await client.datasets({ user_id: "carol" })).toMatchObject({ datasets: [] })
  })

  it("correct closes, reopens and deletes a fact and merges entities", async () => {
    const tools = gligabaoTools(client, { user_id: "dana" })
    const first = await execute(tools, "remember", { text: "Dana Reed works at Globex in 2019." })
    const fact = first.edges[0].id
    const closed = await execute(tools, "correct", { action: "close", id: fact, invalid_at: "2023-01-01T00:00:00Z" })
    expect(closed.fact.invalid_at).toBe("2023-01-01T00:00:00.000Z")
    expect((await execute(tools, "correct", { action: "reopen", id: fact })).fact.invalid_at ?? null).toBeNull()

    const second = await execute(tools, "remember", { text: "D Reed visited Lisbon in 2021." })
    const dana = first.entities.find((e: any) => e.name === "Dana Reed").id
    const alias = second.entities.find((e: any) => e.name === "D Reed").id
    const merged = await execute(tools, "correct", { action: "merge", into: dana, from: [alias] })
    expect(merged.merged).toEqual([alias])
    expect(await execute(tools, "correct", { action: "delete_fact", id: fact })).toMatchObject({
      deleted: { facts: 1 }
    })
    const left = await execute(tools, "search", { query: "Dana Reed" })
    expect(left.facts.map((f: any) => f.description)).toEqual(["D Reed visited Lisbon since 2021"])
  })

  it("show a model MCP's arguments, without user_id and dataset", async () => {
    const tools = gligabaoTools(client, { user_id: "alice" })
    for (const name of ["remember", "search", "get_context", "correct"] as const) {
      expect(tools[name].description).toBe(TOOL_DEFINITIONS[name].description)
      expect(await asSchema(tools[name].inputSchema as never).jsonSchema).toEqual(TOOL_DEFINITIONS[name].inputSchema)
    }
  })
})
