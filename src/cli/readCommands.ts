/**
 * The read commands (search, query, export): the Reads service over the storage, without a
 * server. main.ts passes the layer that provides Reads (the composition root builds it).
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Either, type Layer, Option } from "effect"
import { type AppConfig } from "../Config.js"
import { Reads } from "../query/Reads.js"
import { validateGraphRequest, validateQueryRequest, validateSearchRequest } from "../query/requests.js"
import { configOption, databaseUrlOption, dbOption, flags, printJson, withConfig } from "./options.js"
import { readBody, type ReadFlags, readParams, writeDocument } from "./read.js"

const readOptions = {
  config: configOption,
  db: dbOption,
  databaseUrl: databaseUrlOption,
  userId: Options.text("user-id").pipe(Options.withDescription("the user whose data is read")),
  dataset: Options.text("dataset").pipe(Options.withDescription("the dataset (default main)"), Options.optional),
  asOf: Options.text("as-of").pipe(
    Options.withDescription("event time, RFC 3339: facts valid then (default now)"),
    Options.optional
  ),
  knownAt: Options.text("known-at").pipe(
    Options.withDescription("ingestion time, RFC 3339: what was known then"),
    Options.optional
  ),
  includeExpired: Options.boolean("include-expired").pipe(
    Options.withDescription("also facts that had ended by --as-of")
  ),
  sessionId: Options.text("session-id").pipe(
    Options.withDescription("only what this session discovered"),
    Options.optional
  ),
  kind: Options.text("kind").pipe(Options.withDescription("only what artifacts of this kind support"), Options.optional)
}

const rankingOptions = {
  limit: Options.integer("limit").pipe(Options.withDescription("results per list (1-100)"), Options.optional),
  hops: Options.integer("hops").pipe(
    Options.withDescription("graph neighbourhood depth, 0-2 (default 1)"),
    Options.optional
  )
}

const searchBody = (
  o: ReadFlags & { readonly limit: Option.Option<number>; readonly hops: Option.Option<number> },
  query: string
) => ({
  ...readBody(o),
  query,
  limit: Option.getOrUndefined(o.limit),
  hops: Option.getOrUndefined(o.hops)
})

/** `search`, `query` and `export`, reading through the layer `readLayerFor` builds from the configuration. */
export const readCommands = <E>(readLayerFor: (config: AppConfig) => Layer.Layer<Reads, E>) => {
  const searchCommand = Command.make(
    "search",
    { query: Args.text({ name: "QUERY" }), ...readOptions, ...rankingOptions },
    (o) =>
      withConfig(flags(o), (config) =>
        Effect.gen(function*() {
          const valid = validateSearchRequest(searchBody(o, o.query))
          if (Either.isLeft(valid)) return yield* Effect.fail(new Error(valid.left.message))
          yield* printJson(yield* (yield* Reads).search(valid.right))
        }).pipe(Effect.provide(readLayerFor(config))))
  ).pipe(Command.withDescription("search a dataset without a server: ranked facts, entities and chunks as JSON"))

  const queryCommand = Command.make(
    "query",
    {
      question: Args.text({ name: "QUESTION" }),
      ...readOptions,
      ...rankingOptions,
      model: Options.text("model").pipe(Options.withDescription("the model of the query stage"), Options.optional),
      reasoning: Options.text("reasoning").pipe(
        Options.withDescription("none (default), low, medium or high"),
        Options.optional
      )
    },
    (o) =>
      withConfig(flags(o), (config) =>
        Effect.gen(function*() {
          const valid = validateQueryRequest({
            ...searchBody(o, o.question),
            models: { query: Option.getOrUndefined(o.model) },
            reasoning: { query: Option.getOrUndefined(o.reasoning) }
          })
          if (Either.isLeft(valid)) return yield* Effect.fail(new Error(valid.left.message))
          yield* printJson(yield* (yield* Reads).query(valid.right))
        }).pipe(Effect.provide(readLayerFor(config))))
  ).pipe(Command.withDescription("answer a question from a dataset's facts without a server (one LLM call), as JSON"))

  const exportCommand = Command.make(
    "export",
    {
      ...readOptions,
      format: Options.text("format").pipe(Options.withDescription("json (default) or graphml"), Options.optional),
      output: Options.text("output").pipe(
        Options.withDescription("write to this file instead of stdout"),
        Options.optional
      )
    },
    (o) =>
      withConfig(flags(o), (config) =>
        Effect.gen(function*() {
          const valid = validateGraphRequest({ ...readParams(o), format: Option.getOrUndefined(o.format) })
          if (Either.isLeft(valid)) return yield* Effect.fail(new Error(valid.left.message))
          const exported = yield* (yield* Reads).exportGraph(valid.right)
          yield* writeDocument(exported.body, o.output)
        }).pipe(Effect.provide(readLayerFor(config))))
  ).pipe(Command.withDescription("export a dataset's graph as JSON or GraphML without a server (streamed)"))

  return [searchCommand, queryCommand, exportCommand] as const
}
