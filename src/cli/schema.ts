/**
 * `gligabao schema get|set`: a dataset's schema without a server (docs/SCHEMA.md), printed as
 * `GET /v1/gb/datasets/{name}/schema` answers it. `set` reads the schema document from `--file`
 * (or stdin) and validates it as the endpoint does, so a bad field fails with the endpoint's
 * message. main.ts passes the layer that provides Reads.
 *
 *   gligabao schema get --user-id U [--dataset D]
 *   gligabao schema set --user-id U [--dataset D] [--file schema.json]
 */
import { Command, Options } from "@effect/cli"
import { Effect, Either, type Layer, Option } from "effect"
import { readFileSync } from "node:fs"
import { type AppConfig } from "../Config.js"
import { DatasetSchemaDocument } from "../domain/DatasetSchema.js"
import { decodeRequest } from "../domain/Wire.js"
import { Reads } from "../query/Reads.js"
import { validateScope } from "../query/requests.js"
import { configOption, databaseUrlOption, dbOption, flags, printJson, withConfig } from "./options.js"

const schemaOptions = {
  config: configOption,
  db: dbOption,
  databaseUrl: databaseUrlOption,
  userId: Options.text("user-id").pipe(Options.withDescription("the user who owns the dataset")),
  dataset: Options.text("dataset").pipe(Options.withDescription("the dataset (default main)"), Options.optional)
}

const decodeSchema = decodeRequest(DatasetSchemaDocument)

/** The flags as the endpoint's scope, checked as its parameters are. */
const scopeOf = (o: { readonly userId: string; readonly dataset: Option.Option<string> }) =>
  Either.match(validateScope({ user_id: o.userId, dataset: Option.getOrUndefined(o.dataset) }), {
    onLeft: (e) => Effect.fail(new Error(e.message)),
    onRight: Effect.succeed
  })

/** The schema document of `file` (stdin when absent), parsed and validated as the endpoint's body. */
const readDocument = (file: Option.Option<string>) =>
  Effect.gen(function*() {
    const source = Option.getOrElse(file, () => "stdin")
    const text = yield* Effect.try({
      try: () => readFileSync(Option.getOrElse(file, () => 0 as const), "utf8"),
      catch: (e) => new Error(`cannot read ${source}: ${(e as Error).message}`)
    })
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (e) => new Error(`${source} is not JSON: ${(e as Error).message}`)
    })
    return yield* Either.match(decodeSchema(json), {
      onLeft: (e) => Effect.fail(new Error(e.message)),
      onRight: Effect.succeed
    })
  })

/** `schema get` and `schema set`, through the layer `readLayerFor` builds from the configuration. */
export const schemaCommand = <E>(readLayerFor: (config: AppConfig) => Layer.Layer<Reads, E>) => {
  const get = Command.make("get", schemaOptions, (o) =>
    withConfig(flags(o), (config) =>
      Effect.gen(function*() {
        const scope = yield* scopeOf(o)
        yield* printJson(yield* (yield* Reads).datasetSchema(scope))
      }).pipe(Effect.provide(readLayerFor(config))))).pipe(
      Command.withDescription("print a dataset's schema as JSON (the empty schema when it has none)")
    )

  const set = Command.make(
    "set",
    {
      ...schemaOptions,
      file: Options.file("file").pipe(
        Options.withDescription("the schema document, as the endpoint's body (default: stdin)"),
        Options.optional
      )
    },
    (o) =>
      withConfig(flags(o), (config) =>
        Effect.gen(function*() {
          const scope = yield* scopeOf(o)
          const schema = yield* readDocument(o.file)
          yield* printJson(yield* (yield* Reads).setDatasetSchema(scope, schema))
        }).pipe(Effect.provide(readLayerFor(config))))
  ).pipe(
    Command.withDescription(
      "set a dataset's schema for the remembers that start after it (the stored graph is not rewritten); " +
        "prints it as stored"
    )
  )

  return Command.make("schema").pipe(
    Command.withDescription("a dataset's entity and edge types and extraction instructions (docs/SCHEMA.md)"),
    Command.withSubcommands([get, set])
  )
}
