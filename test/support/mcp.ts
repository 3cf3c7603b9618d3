import { HttpServer } from "@effect/platform"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"

/** The MCP tools as an agent host must see them (docs/MCP.md), in `tools/list` order. */
export const MCP_TOOLS = [
  "remember",
  "remember_status",
  "search",
  "query",
  "get_entity",
  "get_context",
  "list_datasets",
  "list_sessions",
  "forget",
  "correct"
]

/**
 * The official SDK client connected over Streamable HTTP to the `/mcp` of the app a test serves
 * (`serveTest`), with a bearer token if given; closed with the scope.
 */
export const mcpClient = (token?: string) =>
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const address = server.address as HttpServer.TcpAddress
    const url = new URL(`http://127.0.0.1:${address.port}/mcp`)
    return yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new Client({ name: "gligabao-test", version: "1.0.0" })
        await client.connect(
          new StreamableHTTPClientTransport(url, {
            requestInit: token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } }
          })
        )
        return client
      }),
      (client) => Effect.promise(() => client.close())
    )
  })
