/**
 * gligabao's memory as an `@effect/ai` toolkit: remember, search, get_context and correct, with
 * MCP's descriptions and arguments (definitions.ts). Each handler runs the library's operation
 * (src/operations.ts: the HTTP endpoint's program, its request decoded by the contract's schema),
 * for the user and dataset of `MemoryScope`, which the application provides, never the model.
 *
 *   LanguageModel.generateText({ prompt, toolkit: GligabaoToolkit }).pipe(
 *     Effect.provide(GligabaoToolkitLive),
 *     Effect.provideService(MemoryScope, { user_id: "alice" }))
 */
import { Tool, Toolkit } from "@effect/ai"
import { Context, Effect, Layer, Schema } from "effect"
import { type DomainError, statusOf } from "../domain/Errors.js"
import { RememberSuccess } from "../domain/Responses.js"
import type { Corrections } from "../forget/Forgets.js"
import { CorrectResponse } from "../forget/schemas.js"
import { contextMemory, correctMemory, remember, searchMemory } from "../operations.js"
import type { RememberManager } from "../pipeline/RememberManager.js"
import { RunScheduler } from "../pipeline/RunScheduler.js"
import type { Reads } from "../query/Reads.js"
import { ContextResponse, SearchResponse } from "../query/responses.js"
import { TOOL_DEFINITIONS } from "./definitions.js"

/** Whose memory the tools read and write: fixed by the application, per agent or per request. */
export class MemoryScope extends Context.Tag("gligabao/ai/MemoryScope")<MemoryScope, {
  readonly user_id: string
  /** default main */
  readonly dataset?: string | undefined
}>() {
  /** A layer with a fixed scope, for an agent that serves one user. */
  static readonly layer = (scope: MemoryScope["Type"]) => Layer.succeed(MemoryScope, scope)
}

/**
 * A failed call as the model reads it: the HTTP API's `{"error"}` body and its status. A tool
 * answers it (failure mode "return") so the model can fix its arguments and call again.
 */
export const ToolError = Schema.Struct({
  error: Schema.String,
  status: Schema.Number
}).annotations({ identifier: "ToolError" })
export type ToolError = typeof ToolError.Type

type Definition = (typeof TOOL_DEFINITIONS)[keyof typeof TOOL_DEFINITIONS]

/**
 * A tool's parameters: each argument as the model sends it, shown with its JSON Schema. The
 * toolkit checks no more than that it is an object; the operation decodes the arguments with
 * the request's schema, so a bad one is a ToolError naming it, as the API answers.
 */
type Parameters<D extends Definition> = {
  readonly [K in keyof D["inputSchema"]["properties"]]: K extends D["inputSchema"]["required"][number]
    ? typeof Schema.Unknown
    : Schema.optional<typeof Schema.Unknown>
}

const parametersOf = <D extends Definition>(definition: D): Parameters<D> => {
  const required = new Set<string>(definition.inputSchema.required)
  return Object.fromEntries(
    Object.entries(definition.inputSchema.properties).map(([name, jsonSchema]) => {
      const field = Schema.Unknown.annotations({ jsonSchema })
      return [name, required.has(name) ? field : Schema.optional(field)]
    })
  ) as unknown as Parameters<D>
}

const tool = <const Name extends keyof typeof TOOL_DEFINITIONS, S extends Schema.Schema.Any>(
  name: Name,
  success: S
) =>
  Tool.make(name, {
    description: TOOL_DEFINITIONS[name].description,
    parameters: parametersOf(TOOL_DEFINITIONS[name]),
    success,
    failure: ToolError,
    failureMode: "return",
    dependencies: [MemoryScope]
  })

export const RememberTool = tool("remember", RememberSuccess)
export const SearchTool = tool("search", SearchResponse)
export const ContextTool = tool("get_context", ContextResponse)
export const CorrectTool = tool("correct", CorrectResponse)

/** The four memory tools; `Toolkit.merge` adds them to an agent's own. */
export const GligabaoToolkit = Toolkit.make(RememberTool, SearchTool, ContextTool, CorrectTool)

/** The services the handlers run on: what `Gligabao.layer` provides. */
export type ToolkitServices = RememberManager | Reads | Corrections | RunScheduler

/**
 * The handlers, over the application's memory (`Gligabao.layer`, or any composition that
 * provides the remember manager, the reads and the corrections).
 */
export const GligabaoToolkitLive = GligabaoToolkit.toLayer(Effect.gen(function*() {
  const services = yield* Effect.context<ToolkitServices>()
  const { reading } = yield* RunScheduler
  /** the arguments for the scope's user and dataset, run on the app's services; a failure as the model reads it */
  const run = <A>(
    params: object,
    operation: (input: any) => Effect.Effect<A, DomainError, ToolkitServices>
  ): Effect.Effect<A, ToolError, MemoryScope> =>
    Effect.flatMap(MemoryScope, (scope) =>
      operation({
        ...params,
        user_id: scope.user_id,
        ...(scope.dataset === undefined ? {} : { dataset: scope.dataset })
      }).pipe(
        Effect.mapError((e): ToolError => ({ error: e.message, status: statusOf(e) })),
        Effect.provide(services)
      ))
  return GligabaoToolkit.of({
    remember: (params) => run(params, remember),
    // reads are marked as the HTTP doors mark them: the runs take shorter slices meanwhile
    search: (params) => reading(run(params, searchMemory)),
    get_context: (params) => reading(run(params, contextMemory)),
    correct: (params) => run(params, correctMemory)
  })
}))
