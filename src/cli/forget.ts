/**
 * `gligabao forget ...`: the forget operations without a server, each printing the response the
 * endpoint answers (docs/FORGET.md). The flags become the same request the endpoint decodes, so
 * a bad one fails with the endpoint's message; the storage and its layers come from main.ts.
 *
 *   gligabao forget user USER_ID
 *   gligabao forget dataset NAME --user-id U
 *   gligabao forget artifact ID --user-id U [--dataset D]
 *
 * Run it against the database a server uses only on PostgreSQL (the dataset locks are advisory
 * locks there); on SQLite stop the server first, or call the endpoint instead.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { forgetArtifactMemory, forgetUserMemory, hardDeleteDatasetMemory } from "../operations.js"

/** The storage flags every command takes, as main.ts declares them. */
export interface StorageFlags {
  readonly config: Option.Option<string>
  readonly db: Option.Option<string>
  readonly databaseUrl: Option.Option<string>
  readonly imageDir: Option.Option<string>
}

type ForgetProgram = ReturnType<typeof forgetUserMemory | typeof hardDeleteDatasetMemory | typeof forgetArtifactMemory>

/** What the forget commands need of main.ts: its storage options, and a way to run a program over the storage. */
export interface ForgetCommandShared<R> {
  readonly options: { readonly [K in keyof StorageFlags]: Options.Options<StorageFlags[K]> }
  readonly run: <A>(
    flags: StorageFlags,
    program: Effect.Effect<A, Effect.Effect.Error<ForgetProgram>, Effect.Effect.Context<ForgetProgram>>
  ) => Effect.Effect<A, unknown, R>
}

const printJson = (value: unknown) => Effect.sync(() => console.log(JSON.stringify(value, null, 2)))

const userIdOption = Options.text("user-id").pipe(Options.withDescription("the user who owns the data"))

export const forgetCommand = <R>(shared: ForgetCommandShared<R>) => {
  const user = Command.make(
    "user",
    { userId: Args.text({ name: "USER_ID" }), ...shared.options },
    (o) => shared.run(o, Effect.flatMap(forgetUserMemory({ user_id: o.userId }), printJson))
  ).pipe(
    Command.withDescription(
      "forget a user: every dataset (soft-deleted ones too), run, vector and image file of theirs, for good"
    )
  )

  const dataset = Command.make(
    "dataset",
    { name: Args.text({ name: "NAME" }), userId: userIdOption, ...shared.options },
    (o) => shared.run(o, Effect.flatMap(hardDeleteDatasetMemory({ user_id: o.userId, dataset: o.name }), printJson))
  ).pipe(
    Command.withDescription("hard-delete a dataset: every dataset of the name, with everything in it, for good")
  )

  const artifact = Command.make(
    "artifact",
    {
      id: Args.text({ name: "ID" }),
      userId: userIdOption,
      dataset: Options.text("dataset").pipe(Options.withDescription("the dataset (default main)"), Options.optional),
      ...shared.options
    },
    (o) =>
      shared.run(
        o,
        Effect.flatMap(
          forgetArtifactMemory({
            user_id: o.userId,
            dataset: Option.getOrUndefined(o.dataset),
            // the command line is text: digits are the id; anything else is left for the contract to name
            artifact_id: /^\s*\d+\s*$/.test(o.id) ? Number(o.id) : o.id
          }),
          printJson
        )
      )
  ).pipe(
    Command.withDescription(
      "forget an artifact: it and what was derived from it go, the facts it closed are reopened"
    )
  )

  return Command.make("forget").pipe(
    Command.withDescription("delete memory for good, without a server (docs/FORGET.md)"),
    Command.withSubcommands([user, dataset, artifact])
  )
}
