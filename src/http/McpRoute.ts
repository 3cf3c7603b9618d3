/**
 * MCP over Streamable HTTP at `/mcp` (docs/MCP.md), beside the API in the same process: the
 * same manager and storage, behind the same authentication middleware (no token: 401). Stateless:
 * each request gets its own SDK server and transport, which answer JSON; a user token fixes the
 * user the tools act for, an admin token is refused (403) as on every user endpoint.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { Effect } from "effect"
import { currentCaller } from "../auth/Authentication.js"
import { ADMIN_ONLY } from "../auth/tokens.js"
import { GLIGABAO_VERSION } from "../Config.js"
import { makeMcpServer } from "../mcp/server.js"
import { mcpDeps, McpSettings, mcpUserFor } from "../mcp/settings.js"
import { TEXT_BODY_LIMIT } from "./Handlers.js"
import { errorResponse } from "./responses.js"

export const MCP_PATH = "/mcp"

/** A tool call is at most a remember's text body. */
const MAX_MCP_BODY = TEXT_BODY_LIMIT

export const McpRouteLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const deps = yield* mcpDeps
    const settings = yield* McpSettings
    const runtime = yield* Effect.runtime<never>()
    const handle = Effect.gen(function*() {
      const caller = yield* currentCaller
      if (caller._tag === "Admin") return errorResponse(403, ADMIN_ONLY)
      const request = yield* HttpServerRequest.HttpServerRequest
      // stateless: there is no stream to open (GET) and no session to end (DELETE)
      if (request.method !== "POST") {
        return HttpServerResponse.setHeader(
          errorResponse(405, `${request.method} ${MCP_PATH}: this MCP server is stateless; POST JSON-RPC messages`),
          "allow",
          "POST"
        )
      }
      const web = yield* HttpServerRequest.toWeb(request)
      const server = makeMcpServer({
        deps,
        user: mcpUserFor(caller, settings),
        defaults: { rememberWaitMs: settings.rememberWaitMs },
        version: GLIGABAO_VERSION,
        // after initialize, a client names the negotiated version on every request
        protocolVersion: () => request.headers["mcp-protocol-version"],
        runtime
      })
      const transport = new WebStandardStreamableHTTPServerTransport({
        enableJsonResponse: true,
        maxRequestBodySize: MAX_MCP_BODY
      })
      yield* Effect.promise(() => server.connect(transport))
      const response = yield* Effect.promise(() => transport.handleRequest(web))
      // the JSON answer is complete: nothing of this request's server outlives it
      yield* Effect.promise(() => server.close())
      return HttpServerResponse.fromWeb(response)
    })
    yield* router.all(MCP_PATH, handle)
  })
)
