/**
 * The MCP protocol side (docs/MCP.md): the official TypeScript SDK's low-level `Server`, serving
 * the tools of src/mcp/tools.ts and the graph resource. From protocol 2025-06-18 on a tool's success
 * is `structuredContent` (its JSON) and a text a model reads (answers.ts; JSON for the tools
 * without one); before, its JSON as text. No output schemas are listed (docs/MCP.md). A
 * failure is `isError: true` with the HTTP API's `{"error"}`; a defect is logged and answered as
 * a tool error naming the tool, never a crash. DECISIONS.md says why this is not @effect/ai's McpServer.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Exit, Option, Runtime } from "effect"
import { GRAPH_TEMPLATE, type McpDefaults, type McpDeps, mcpTools, type McpUser, readGraphResource } from "./tools.js"

export const MCP_SERVER_NAME = "gligabao"

/** The first protocol version with tool output schemas and `structuredContent`. */
const STRUCTURED_SINCE = "2025-06-18"

/** Whether a negotiated protocol version (YYYY-MM-DD) has structured tool results. */
export const hasStructuredResults = (version: string | undefined): boolean =>
  version !== undefined && version >= STRUCTURED_SINCE

export interface McpServerOptions {
  readonly deps: McpDeps
  readonly user: McpUser
  readonly defaults?: McpDefaults
  readonly version: string
  /** the protocol version in use, once known */
  readonly protocolVersion: () => string | undefined
  readonly runtime: Runtime.Runtime<never>
}

/**
 * A JSON-RPC error the SDK sends as it is: its code, and a message that says what is wrong once
 * (the SDK's McpError puts "MCP error <code>: " before the message, and the code is sent anyway).
 */
const rpcError = (code: number, message: string): Error & { readonly code: number } =>
  Object.assign(new Error(message), { code })

const text = (value: unknown) => [{ type: "text" as const, text: JSON.stringify(value) }]

/** An SDK server for one connection (stdio) or one request (stateless HTTP). */
export const makeMcpServer = (options: McpServerOptions): Server => {
  const tools = mcpTools(options.deps, options.user, options.defaults)
  const byName = new Map(tools.map((t) => [t.name, t]))
  const run = Runtime.runPromiseExit(options.runtime)
  const server = new Server(
    { name: MCP_SERVER_NAME, version: options.version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions: "gligabao is a temporal memory: remember texts, then search or query what they said, " +
        "as of any time. Start with get_context. remember answers what it learned; correct fixes what the " +
        "user says is wrong."
    }
  )

  // no output schemas: they were three times the size of the rest of the list (docs/MCP.md, sizes)
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as { type: "object" }
    }))
  }))

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name)
    if (tool === undefined) {
      return { content: text({ error: `no tool named ${request.params.name}` }), isError: true }
    }
    const exit = await run(tool.call(request.params.arguments ?? {}))
    if (Exit.isSuccess(exit)) {
      // from 2025-06-18 on the JSON travels as structuredContent, and the text is for the model
      const structured = hasStructuredResults(options.protocolVersion())
      if (!structured) return { content: text(exit.value) }
      return {
        content: tool.text === undefined ? text(exit.value) : [{ type: "text", text: tool.text(exit.value) }],
        structuredContent: exit.value as Record<string, unknown>
      }
    }
    const failure = Cause.failureOption(exit.cause)
    if (Option.isSome(failure)) return { content: text({ error: failure.value.message }), isError: true }
    await run(Effect.logError(`mcp: the tool ${tool.name} failed`, exit.cause))
    return { content: text({ error: `internal error in the tool ${tool.name}` }), isError: true }
  })

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [{
      uriTemplate: GRAPH_TEMPLATE,
      name: "dataset graph",
      description: "A dataset's entities, live facts and artifacts: the JSON export of GET /v1/gb/graph.",
      mimeType: "application/json"
    }]
  }))

  // the fixed user's datasets as resources, for hosts that list them rather than fill in a template
  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    if (options.user._tag === "Argument") return { resources: [] }
    const call = byName.get("list_datasets")!.call({})
    const exit = await run(call)
    if (Exit.isFailure(exit)) return { resources: [] }
    const datasets = (exit.value as { datasets: ReadonlyArray<{ name: string }> }).datasets
    return {
      resources: datasets.map((d) => ({
        uri: GRAPH_TEMPLATE.replace("{dataset}", encodeURIComponent(d.name)),
        name: `${d.name} graph`,
        // optional in the schema, but the conformance suite's resources-list asks every resource for one
        description: `The dataset ${d.name}: its entities, live facts and artifacts (GET /v1/gb/graph).`,
        mimeType: "application/json"
      }))
    }
  })

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri
    const exit = await run(readGraphResource(options.deps, options.user, uri))
    if (Exit.isSuccess(exit)) return { contents: [{ uri, mimeType: "application/json", text: exit.value }] }
    const failure = Cause.failureOption(exit.cause)
    if (Option.isSome(failure)) throw rpcError(ErrorCode.InvalidParams, failure.value.message)
    await run(Effect.logError("mcp: reading a resource failed", exit.cause))
    throw rpcError(ErrorCode.InternalError, `internal error while reading ${uri}`)
  })

  return server
}
