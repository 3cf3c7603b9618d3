/**
 * MCP over Streamable HTTP at /mcp, through the official SDK's client (docs/MCP.md), on both
 * databases: initialize and tools/list (names, arguments, output schemas), a call of every tool,
 * the asynchronous remember polled with remember_status, tool errors for bad input, the graph
 * resource, and authentication (no token: 401; a user token fixes the user).
 */
import { HttpServer } from "@effect/platform"
import { it } from "@effect/vitest"
import { type Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect, Layer, Redacted } from "effect"
import { describe, expect } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { Authentication } from "../../src/auth/Authentication.js"
import { tokenTable } from "../../src/auth/tokens.js"
import type { AuthToken } from "../../src/config/tables.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { serveTest } from "../support/http.js"
import { MCP_TOOLS, mcpClient } from "../support/mcp.js"

/** The bench model for remember; a query is answered citing the first fact it was shown. */
const script = (r: LlmRequest) => {
  const scripted = answer(r)
  if (scripted.stage !== "other") return { text: scripted.text }
  const facts = JSON.parse(r.messages[0]!.content as string).facts as Array<{ id: number }>
  return { text: JSON.stringify({ answer: "Alice lives in Lisbon.", citations: facts.slice(0, 1).map((f) => f.id) }) }
}

const TOKENS: ReadonlyArray<AuthToken> = [
  { kind: "plain", secret: Redacted.make("alice-secret"), userId: "alice", admin: false },
  { kind: "plain", secret: Redacted.make("bob-secret"), userId: "bob", admin: false }
]

const withApp = <A, E>(
  storage: StorageLayer,
  program: (url: URL) => Effect.Effect<A, E, any>,
  auth?: ReadonlyArray<AuthToken>
) => {
  const services = rememberLayer(storage, script)
  const layer = auth === undefined ? services : Layer.merge(services, Layer.succeed(Authentication, tokenTable(auth)))
  return Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const address = server.address as HttpServer.TcpAddress
    return yield* program(new URL(`http://127.0.0.1:${address.port}/mcp`))
  }).pipe(Effect.provide(serveTest(layer) as Layer.Layer<any, any, never>)) as Effect.Effect<A, E, never>
}

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  Effect.promise(() => client.callTool({ name, arguments: args })) as Effect.Effect<any>

/** A successful tool result's structured content; its text is plain for a model, or the same JSON. */
const ok = (result: any) => {
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false)
  const text: string = result.content[0].text
  if (text.startsWith("{")) expect(JSON.parse(text)).toEqual(result.structuredContent)
  else expect(text.length).toBeGreaterThan(0)
  return result.structuredContent
}

const errorOf = (result: any): string => {
  expect(result.isError).toBe(true)
  return JSON.parse(result.content[0].text).error
}

forEachDialect((_dialect, makeLayer) => {
  describe("MCP over Streamable HTTP", () => {
    it.live("tools/list: the tools with their arguments; user_id is an argument without a fixed user", () =>
      withApp(makeLayer(), () =>
        Effect.scoped(Effect.gen(function*() {
          const client = yield* mcpClient()
          expect(client.getServerVersion()?.name).toBe("gligabao")
          const { tools } = yield* Effect.promise(() => client.listTools())
          expect(tools.map((t) => t.name)).toEqual(MCP_TOOLS)
          const byName = new Map(tools.map((t) => [t.name, t]))
          const props = (name: string) => Object.keys(byName.get(name)!.inputSchema.properties ?? {})
          expect(props("remember")).toEqual(
            [
              "user_id",
              "text",
              "messages",
              "dataset",
              "kind",
              "reference_time",
              "session_id",
              "metadata",
              "instructions",
              "wait"
            ]
          )
          expect(props("search")).toEqual(
            ["user_id", "query", "dataset", "as_of", "known_at", "include_expired", "session_id", "filters", "limit"]
          )
          expect(props("query")).toEqual(["user_id", "query", "dataset", "as_of", "session_id"])
          expect(props("remember_status")).toEqual(["user_id", "remember_run_id"])
          expect(props("get_entity")).toEqual(["user_id", "name", "id", "dataset", "include_expired"])
          expect(props("get_context")).toEqual([
            "user_id",
            "query",
            "dataset",
            "session_id",
            "as_of",
            "filters",
            "max_tokens"
          ])
          expect(props("list_datasets")).toEqual(["user_id"])
          expect(props("forget")).toEqual(["user_id", "artifact_id", "dataset"])
          // sized for a model: the list in under 12,000 characters, no output schemas (issue 40)
          expect(JSON.stringify({ tools }).length).toBeLessThan(12_000)
          for (const tool of tools) {
            expect(tool.inputSchema.required ?? []).toContain("user_id")
            expect(tool.outputSchema, tool.name).toBeUndefined()
            for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
              expect((schema as any).description, `${tool.name}.${name}`).toMatch(/\w/)
            }
          }
        }))))

    it.live("every tool: remember at once and poll its run, search, query, an entity, a context block, datasets, sessions, the graph, forget", () =>
      withApp(makeLayer(), () =>
        Effect.scoped(Effect.gen(function*() {
          const client = yield* mcpClient()
          const queued = ok(
            yield* call(client, "remember", {
              user_id: "alice",
              text: "Alice Novak lives in Berlin in 2020.",
              session_id: "chat-1",
              wait: false
            })
          )
          expect(queued).toMatchObject({ remember_run_id: expect.any(Number), status: "queued" })
          let run: any
          for (let i = 0; i < 200; i++) {
            run = ok(
              yield* call(client, "remember_status", { user_id: "alice", remember_run_id: queued.remember_run_id })
            )
            if (run.status === "succeeded" || run.status === "failed") break
            yield* Effect.sleep("25 millis")
          }
          expect(run.status).toBe("succeeded")
          expect(run.response.edges).toHaveLength(1)
          const waited = ok(
            yield* call(client, "remember", {
              user_id: "alice",
              text: "Alice Novak lives in Lisbon in 2021.",
              wait: true
            })
          )
          expect(waited.invalidated_edges).toEqual([run.response.edges[0].id])
          const conversation = ok(
            yield* call(client, "remember", {
              user_id: "alice",
              messages: [{ role: "user", content: "Bruno Diaz works at Acme in 2019." }],
              wait: true
            })
          )
          expect(conversation).toMatchObject({ kind: "episode" })

          const found = ok(yield* call(client, "search", { user_id: "alice", query: "Where does Alice Novak live?" }))
          expect(found.facts.length).toBeGreaterThan(0)
          const lisbon = found.facts.find((f: any) => f.description.includes("Lisbon"))
          expect(lisbon).toMatchObject({ valid_at: "2021-01-01T00:00:00.000Z", artifact_ids: [waited.artifact_id] })
          const history = ok(
            yield* call(client, "search", {
              user_id: "alice",
              query: "Alice Novak Berlin",
              as_of: "2020-06-01T00:00:00Z"
            })
          )
          expect(history.facts.map((f: any) => f.description)).toContain("Alice Novak lives in Berlin since 2020")

          const answered = ok(yield* call(client, "query", { user_id: "alice", query: "Where does Alice live?" }))
          expect(answered.answer).toBe("Alice lives in Lisbon.")
          expect(answered.citations).toHaveLength(1)

          const story = ok(yield* call(client, "get_entity", { user_id: "alice", name: "alice novak" }))
          expect(story.entity.name).toBe("Alice Novak")
          expect(story.facts.map((f: any) => [f.target, f.valid_at, f.invalid_at])).toEqual([
            ["Berlin", "2020-01-01T00:00:00.000Z", "2021-01-01T00:00:00.000Z"],
            ["Lisbon", "2021-01-01T00:00:00.000Z", undefined] // an open fact has no invalid_at
          ])
          expect(ok(yield* call(client, "get_entity", { user_id: "alice", id: story.entity.id })).entity.name).toBe(
            "Alice Novak"
          )

          const block = ok(
            yield* call(client, "get_context", {
              user_id: "alice",
              query: "Where does Alice Novak live?",
              max_tokens: 60
            })
          )
          expect(block.context).toBe(
            "# Facts\n- Alice Novak lives in Lisbon since 2021 (since 2021-01-01)\n" +
              "# Entities\n- Alice Novak (person): a person\n- Lisbon (place): a place"
          )
          expect(block.facts.map((f: any) => f.target)).toEqual(["Lisbon"])
          expect(block.tokens).toBeLessThanOrEqual(60)

          const datasets = ok(yield* call(client, "list_datasets", { user_id: "alice" }))
          expect(datasets.datasets.map((d: any) => d.name)).toEqual(["main"])
          const sessions = ok(yield* call(client, "list_sessions", { user_id: "alice" }))
          expect(sessions.sessions.map((s: any) => s.session_id)).toEqual(["chat-1"])

          const templates = yield* Effect.promise(() => client.listResourceTemplates())
          expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(["gligabao://datasets/{dataset}/graph"])

          const forgotten = ok(yield* call(client, "forget", { user_id: "alice", artifact_id: waited.artifact_id }))
          expect(forgotten.reopened_facts).toEqual([run.response.edges[0].id])
          const after = ok(yield* call(client, "search", { user_id: "alice", query: "Alice Novak Lisbon" }))
          expect(after.facts.map((f: any) => f.description)).not.toContain("Alice Novak lives in Lisbon since 2021")
        }))))

    it.live("bad input and unknown things are tool errors with the HTTP API's message", () =>
      withApp(makeLayer(), () =>
        Effect.scoped(Effect.gen(function*() {
          const client = yield* mcpClient()
          expect(errorOf(yield* call(client, "search", { user_id: "alice" }))).toMatch(/^query/)
          expect(errorOf(yield* call(client, "remember", { user_id: "alice", text: "x", kind: "poem" }))).toMatch(
            /^kind/
          )
          expect(errorOf(yield* call(client, "remember", { text: "no user" }))).toMatch(/^user_id/)
          expect(errorOf(yield* call(client, "remember_status", { user_id: "alice", remember_run_id: 0 }))).toMatch(
            /^remember_run_id/
          )
          expect(errorOf(yield* call(client, "remember_status", { user_id: "alice", remember_run_id: 999 }))).toMatch(
            /no remember run/
          )
          // a user with nothing stored yet has no sessions: not an error
          const none = yield* call(client, "list_sessions", { user_id: "nobody" })
          expect(none.isError).toBeFalsy()
          expect(none.structuredContent).toEqual({ dataset: "main", sessions: [] })
          expect(errorOf(yield* call(client, "forget", { user_id: "alice", artifact_id: 5 }))).toMatch(/not found/)
          expect(errorOf(yield* call(client, "get_entity", { user_id: "alice" }))).toMatch(/name|id/)
          expect(errorOf(yield* call(client, "get_context", { user_id: "alice", max_tokens: 0 }))).toMatch(
            /^max_tokens must be an integer from 1 to 8000/
          )
          expect(errorOf(yield* call(client, "no_such_tool"))).toMatch(/no tool named no_such_tool/)
        }))))

    it.live("with tokens: no token is a 401; a user token fixes the user and hides the others' memory", () =>
      withApp(makeLayer(), (url) =>
        Effect.scoped(Effect.gen(function*() {
          const refused = yield* Effect.promise(() =>
            fetch(url, {
              method: "POST",
              headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
              body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
            })
          )
          expect(refused.status).toBe(401)
          expect(yield* Effect.promise(() => refused.json())).toEqual({
            error: "authentication required: send Authorization: Bearer <token>"
          })

          // stateless: no stream to open
          const get = yield* Effect.promise(() =>
            fetch(url, { headers: { authorization: "Bearer alice-secret", accept: "text/event-stream" } })
          )
          expect(get.status).toBe(405)
          expect(get.headers.get("allow")).toBe("POST")

          const alice = yield* mcpClient("alice-secret")
          const { tools } = yield* Effect.promise(() => alice.listTools())
          expect(tools.find((t) => t.name === "remember")!.inputSchema.properties).not.toHaveProperty("user_id")
          const stored = ok(
            yield* call(alice, "remember", { text: "Alice Novak lives in Berlin in 2020.", wait: true })
          )
          const bob = yield* mcpClient("bob-secret")
          expect(errorOf(yield* call(bob, "remember_status", { remember_run_id: stored.remember_run_id }))).toMatch(
            /no remember run/
          )
          expect(errorOf(yield* call(bob, "search", { user_id: "alice", query: "Berlin" }))).toMatch(
            /may not act for that user_id/
          )
          // bob's own memory: none of alice's
          const own = yield* call(bob, "search", { query: "Alice Novak Berlin" })
          expect(own.isError).toBeFalsy()
          expect(own.structuredContent).toMatchObject({ dataset: "main", facts: [], entities: [], chunks: [] })
          // the fixed user's datasets are resources too, and the graph is the JSON export
          const listed = yield* Effect.promise(() => alice.listResources())
          expect(listed.resources.map((r) => r.uri)).toEqual(["gligabao://datasets/main/graph"])
          expect(listed.resources[0]!.description).toMatch(/^The dataset main: /)
          const graph = yield* Effect.promise(() => alice.readResource({ uri: "gligabao://datasets/main/graph" }))
          const exported = JSON.parse((graph.contents[0] as { text: string }).text)
          expect(exported.edges.map((f: any) => f.id)).toEqual(stored.edges.map((e: any) => e.id))
          // an error says what is wrong once: the SDK client adds its "MCP error <code>: " itself
          const missing = yield* Effect.flip(
            Effect.tryPromise(() => alice.readResource({ uri: "gligabao://datasets/nope/graph" }))
          )
          const message = String((missing.cause as Error).message)
          expect(message.match(/MCP error/g)).toHaveLength(1)
          expect(message).toMatch(/^MCP error -32602: /)
          // tool arguments are the contract too: an unknown one is refused, named with the closest known one
          expect(errorOf(yield* call(alice, "search", { query: "Berlin", limt: 3 }))).toBe(
            "unknown field \"limt\" (did you mean \"limit\"?)"
          )
        })), TOKENS))
  })
})
