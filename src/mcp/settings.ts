/**
 * What the MCP server is told by the composition root: the user its tools act for when
 * authentication is off (`mcp.user_id`, `--user-id`). Every composition that serves `/mcp`
 * provides it; `McpSettings.default` configures no user: without a user token, every tool then
 * takes a `user_id` argument.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Caller } from "../auth/tokens.js"
import { Corrections, Forgets } from "../forget/Forgets.js"
import { RememberManager } from "../pipeline/RememberManager.js"
import { RunScheduler } from "../pipeline/RunScheduler.js"
import { Reads } from "../query/Reads.js"
import { RunLogRepo } from "../services/RunLogRepo.js"
import type { McpDeps, McpUser } from "./tools.js"

export interface McpSettingsShape {
  readonly userId: Option.Option<string>
  /** how long remember waits for its run (`mcp.remember_wait_ms`); absent: MCP_REMEMBER_WAIT_MS */
  readonly rememberWaitMs?: number | undefined
}

export class McpSettings extends Context.Tag("gligabao/McpSettings")<McpSettings, McpSettingsShape>() {
  /** No configured user (`mcp.user_id` unset). */
  static readonly default: Layer.Layer<McpSettings> = Layer.succeed(this, { userId: Option.none() })
}

/** Who a caller's tools act for: a user token's user, else the configured user, else a `user_id` argument. */
export const mcpUserFor = (caller: Caller, settings: McpSettingsShape): McpUser => {
  if (caller._tag === "User") return { _tag: "Fixed", userId: caller.userId }
  return Option.match(settings.userId, {
    onNone: () => ({ _tag: "Argument" }),
    onSome: (userId) => ({ _tag: "Fixed", userId })
  })
}

/** The tools' services from the context: the ones the HTTP handlers call. */
export const mcpDeps: Effect.Effect<
  McpDeps,
  never,
  RememberManager | RunLogRepo | RunScheduler | Reads | Forgets | Corrections
> = Effect.gen(function*() {
  return {
    manager: yield* RememberManager,
    scheduler: yield* RunScheduler,
    runLog: yield* RunLogRepo,
    reads: yield* Reads,
    forgets: yield* Forgets,
    corrections: yield* Corrections
  }
})
