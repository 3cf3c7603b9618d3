/**
 * gligabao's memory as Vercel AI SDK tools (`ai` 6 or 7): remember, search, get_context and
 * correct, with MCP's descriptions and arguments (definitions.ts), run by the plain client
 * against a server, for the user and dataset the application fixes.
 *
 *   const tools = gligabaoTools(new Gligabao({ baseUrl, token }), { user_id: "alice" })
 *   await generateText({ model, tools, prompt })
 *
 * The input schemas are `jsonSchema()`s of definitions.ts (no zod), and nothing of Effect is
 * imported: this module (`gligabao/ai/vercel`) loads wherever the plain client and `ai` do.
 */
import { jsonSchema, type JSONSchema7, type Tool } from "ai"
import { GligabaoError } from "../client/errors.js"
import type { Gligabao, RememberResult } from "../client/Gligabao.js"
import type {
  ContextRequest,
  ContextResponse,
  FactResponse,
  ForgetArtifactResponse,
  MergeEntitiesResponse,
  RememberRequest,
  SearchRequest,
  SearchResponse
} from "../client/types.js"
import { TOOL_DEFINITIONS } from "./definitions.js"

/** Whose memory the tools read and write; the model never chooses it. */
export interface MemoryScope {
  readonly user_id: string
  /** default main */
  readonly dataset?: string | undefined
}

/** A failed call as the model reads it: the server's `{"error"}` text and its status. */
export interface ToolError {
  readonly error: string
  readonly status: number
}

type Definitions = typeof TOOL_DEFINITIONS
type Arguments<N extends keyof Definitions> = keyof Definitions[N]["inputSchema"]["properties"]

/** A tool's input: the request's fields the tool shows the model. */
export type RememberInput = Pick<RememberRequest, Arguments<"remember"> & keyof RememberRequest>
export type SearchInput = Pick<SearchRequest, Arguments<"search"> & keyof SearchRequest>
export type ContextInput = Pick<ContextRequest, Arguments<"get_context"> & keyof ContextRequest>
export interface CorrectInput {
  readonly action: "close" | "reopen" | "delete_fact" | "delete_entity" | "merge"
  readonly id?: number | null
  readonly invalid_at?: string | null
  readonly into?: number | null
  readonly from?: ReadonlyArray<number> | null
}
export type CorrectResult = FactResponse | ForgetArtifactResponse | MergeEntitiesResponse

/** One tool as `ai` takes it in `tools`: the SDK runs `execute` with the model's arguments. */
export type MemoryTool<Input, Output> = Tool<Input, Output | ToolError>

/** A type, not an interface: `ai`'s `ToolSet` is an index signature, which only a type alias meets. */
export type GligabaoTools = {
  readonly remember: MemoryTool<RememberInput, RememberResult>
  readonly search: MemoryTool<SearchInput, SearchResponse>
  readonly get_context: MemoryTool<ContextInput, ContextResponse>
  readonly correct: MemoryTool<CorrectInput, CorrectResult>
}

/** The client's methods the tools call (a `Gligabao` has them). */
export type MemoryClient = Pick<
  Gligabao,
  | "remember"
  | "search"
  | "context"
  | "correctInvalidateFact"
  | "correctReopenFact"
  | "correctDeleteFact"
  | "correctDeleteEntity"
  | "correctMergeEntities"
>

/** The server's answer, or its error as the model reads it; no answer at all is thrown (a tool error). */
const answer = async <A>(call: () => Promise<A>): Promise<A | ToolError> => {
  try {
    return await call()
  } catch (e) {
    if (e instanceof GligabaoError) return { error: e.error, status: e.status }
    throw e
  }
}

const needs = <A>(value: A | null | undefined, field: string, action: string): A => {
  if (value === undefined || value === null) {
    throw new GligabaoError({
      status: 400,
      error: `${field} is required for action ${action}`,
      body: undefined,
      request: "correct"
    })
  }
  return value
}

/** The four memory tools, over `client`, for `scope`'s user and dataset. */
export const gligabaoTools = (client: MemoryClient, scope: MemoryScope): GligabaoTools => {
  const fixed = { user_id: scope.user_id, ...(scope.dataset === undefined ? {} : { dataset: scope.dataset }) }
  const scoped = <I extends object>(input: I) => ({ ...input, ...fixed })
  const tool = <N extends keyof Definitions, I, O>(name: N, execute: (input: I) => Promise<O>): MemoryTool<I, O> => {
    const shown = Object.keys(TOOL_DEFINITIONS[name].inputSchema.properties)
    // ai's Tool is conditional on its output type, which a generic O leaves undecided
    const made = {
      description: TOOL_DEFINITIONS[name].description,
      // the server decodes the arguments with the request's schema: a bad one is a ToolError naming it
      inputSchema: jsonSchema<I>(TOOL_DEFINITIONS[name].inputSchema as unknown as JSONSchema7),
      // only the arguments the model is shown: its user_id, dataset or wait are not sent
      execute: (input: I) =>
        answer(() =>
          execute(Object.fromEntries(Object.entries(input as object).filter(([key]) => shown.includes(key))) as I)
        )
    }
    return made as unknown as MemoryTool<I, O>
  }
  return {
    remember: tool(
      "remember",
      (input: RememberInput) => client.remember({ ...scoped(input), wait: true } as RememberRequest)
    ),
    search: tool("search", (input: SearchInput) => client.search(scoped(input))),
    get_context: tool("get_context", (input: ContextInput) => client.context(scoped(input))),
    correct: tool("correct", async (input: CorrectInput): Promise<CorrectResult> => {
      const { action } = input
      switch (action) {
        case "close":
          return client.correctInvalidateFact(needs(input.id, "id", action), {
            ...fixed,
            ...(input.invalid_at === undefined || input.invalid_at === null ? {} : { invalid_at: input.invalid_at })
          })
        case "reopen":
          return client.correctReopenFact(needs(input.id, "id", action), fixed)
        case "delete_fact":
          return client.correctDeleteFact({ ...fixed, id: needs(input.id, "id", action) })
        case "delete_entity":
          return client.correctDeleteEntity({ ...fixed, id: needs(input.id, "id", action) })
        case "merge":
          return client.correctMergeEntities({
            ...fixed,
            into: needs(input.into, "into", action),
            from: needs(input.from, "from", action)
          })
        default:
          return client.correctDeleteFact(unknownAction(action))
      }
    })
  }
}

/** An action the tool does not have, as the server words it. */
const unknownAction = (action: never): never => {
  throw new GligabaoError({
    status: 400,
    error: "action must be one of close, reopen, delete_fact, delete_entity, merge",
    body: { action },
    request: "correct"
  })
}
