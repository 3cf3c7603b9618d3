/**
 * `gligabao mcp`: the MCP server on stdin and stdout for one host (docs/MCP.md). Stdout carries
 * the protocol only, so everything else this process prints goes to stderr. It runs until the
 * host closes stdin, over the same manager and storage a server uses.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Option } from "effect"
import { GLIGABAO_VERSION } from "../Config.js"
import type { Corrections, Forgets } from "../forget/Forgets.js"
import type { RememberManager } from "../pipeline/RememberManager.js"
import type { RunScheduler } from "../pipeline/RunScheduler.js"
import type { Reads } from "../query/Reads.js"
import type { RunLogRepo } from "../services/RunLogRepo.js"
import { makeMcpServer } from "./server.js"
import { mcpDeps } from "./settings.js"

export interface StdioOptions {
  /** the user the tools act for; none: a `user_id` argument */
  readonly userId: Option.Option<string>
  /** the dataset when a call names none (default main) */
  readonly dataset: Option.Option<string>
  /** how long remember waits for its run (`mcp.remember_wait_ms`) */
  readonly rememberWaitMs?: number | undefined
}

/** The version a client asked for, as the SDK's server settles it. */
const negotiated = (requested: unknown): string =>
  typeof requested === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION

export const serveMcpStdio = (
  options: StdioOptions
): Effect.Effect<void, never, RememberManager | RunLogRepo | RunScheduler | Reads | Forgets | Corrections> =>
  Effect.gen(function*() {
    const deps = yield* mcpDeps
    const runtime = yield* Effect.runtime<never>()
    let protocolVersion: string | undefined
    const server = makeMcpServer({
      deps,
      user: Option.match(options.userId, {
        onNone: () => ({ _tag: "Argument" as const }),
        onSome: (userId) => ({ _tag: "Fixed" as const, userId })
      }),
      defaults: { dataset: Option.getOrUndefined(options.dataset), rememberWaitMs: options.rememberWaitMs },
      version: GLIGABAO_VERSION,
      protocolVersion: () => protocolVersion,
      runtime
    })
    const transport = new StdioServerTransport()
    yield* Effect.promise(() => server.connect(transport))
    yield* Effect.logInfo("gligabao MCP server on stdio", {
      user_id: Option.getOrElse(options.userId, () => "(an argument)"),
      dataset: Option.getOrElse(options.dataset, () => "main")
    })
    // the protocol version comes with the host's initialize
    const deliver = transport.onmessage
    transport.onmessage = (message) => {
      if ("method" in message && message.method === "initialize") {
        protocolVersion = negotiated((message.params as { protocolVersion?: unknown } | undefined)?.protocolVersion)
      }
      deliver?.(message)
    }
    yield* Effect.async<void>((resume) => {
      const done = () => resume(Effect.void)
      process.stdin.once("end", done)
      process.stdin.once("close", done)
      server.onclose = done
    })
    yield* Effect.promise(() => server.close())
  })
