/**
 * The `gligabao` command: the composition root, and the only file of src/ that imports layers/.
 *
 *   gligabao serve [--db PATH]... [--database-url URL] [--image-dir DIR] [--geo] [--host H] [--port P] [--insecure-bind] [--config FILE]
 *   gligabao migrate [--db PATH] [--database-url URL] [--config FILE]
 *   gligabao search QUERY --user-id U [--dataset D] [--as-of T] [--known-at T] [--include-expired] [--session-id S] [--kind K] [--limit N] [--hops N]
 *   gligabao query QUESTION --user-id U [the same] [--model M] [--reasoning LEVEL]
 *   gligabao export --user-id U [--dataset D] [--format json|graphml] [--output FILE] [filters]
 *   gligabao schema get|set --user-id U [--dataset D] [--file schema.json] [--db PATH] [--database-url URL] [--config FILE]
 *   gligabao import PATH --user-id U [--dataset D] [--kind K] [--url URL] [--token T] [--db PATH] [--database-url URL] [--config FILE]
 *   gligabao eval DIR [--provider P] [--base-url URL] [--model M] [--models stage=model,...] [--output DIR] [--user-id U] [--db PATH] [--database-url URL] [--config FILE]
 *   gligabao forget user USER_ID | dataset NAME --user-id U | artifact ID --user-id U [--dataset D]  [--db PATH] [--database-url URL] [--image-dir DIR] [--config FILE]
 *   gligabao runs cancel --user-id U [--dataset D] (--run ID | --queued) [--db PATH] [--database-url URL] [--config FILE] [--url URL] [--token T]
 *   gligabao backup --to DIR [--force] | restore --from DIR [--force]  [--db PATH] [--image-dir DIR] [--config FILE]
 *   gligabao dump --to FILE [--user-id U [--dataset D]] [--no-vectors] | load --from FILE  [--db PATH | --database-url URL] [--image-dir DIR] [--config FILE]
 */
import { Args, Command, Options, ValidationError } from "@effect/cli"
import { HttpServer } from "@effect/platform"
import { NodeContext, NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Either, Fiber, Layer, Option, Schedule } from "effect"
import { readFileSync } from "node:fs"
import {
  adminDatabasesFor,
  AppLive,
  embeddingsFor,
  httpSettingsFor,
  llmFor,
  missingLlm,
  settingsFor,
  storageFor,
  vectorStoreFor
} from "../../layers/App.js"
import { LocalImageStoreLive } from "../../layers/files/LocalImageStore.js"
import { SqliteFilesLive } from "../../layers/sql/SqliteFiles.js"
import { otlpExportFor } from "../../layers/telemetry/OtlpExport.js"
import { transferLayerFor } from "../../layers/TransferLive.js"
import { bindRefusal, isLoopback } from "../auth/bind.js"
import { type AppConfig, AppConfigTag, describeConfig, GLIGABAO_VERSION, loadConfig } from "../Config.js"
import { dataFolderNotice } from "../config/dataFolder.js"
import { validateRememberRequest } from "../domain/Remember.js"
import { ForgetsLive } from "../forget/Forgets.js"
import { HttpAppLive } from "../http/Http.js"
import { createStartupAwareServer } from "../http/nodeServer.js"
import { serveMcpStdio } from "../mcp/stdio.js"
import { reembed } from "../pipeline/reembed.js"
import { RememberManager } from "../pipeline/RememberManager.js"
import { ReadsLive } from "../query/Reads.js"
import { Embeddings } from "../services/Embeddings.js"
import { RunLogRepo } from "../services/RunLogRepo.js"
import { backupCommand, restoreCommand } from "./backup.js"
import { evalLlmEnv, runEvalCommand } from "./eval.js"
import { forgetCommand } from "./forget.js"
import { runImport } from "./importCommand.js"
import {
  announceListening,
  configOption,
  databaseUrlOption,
  dbOption,
  flags,
  geoOption,
  HEADERS_TIMEOUT_MS,
  hostOption,
  imageDirOption,
  insecureBindOption,
  portOption,
  REQUEST_TIMEOUT_MS,
  stderrLoggingFor,
  withConfig
} from "./options.js"
import { progressBar } from "./progress.js"
import { readCommands } from "./readCommands.js"
import { runsCommand, storageTargetFor } from "./runs.js"
import { schemaCommand } from "./schema.js"
import { transferCommands } from "./transfer.js"

const serve = Command.make(
  "serve",
  {
    config: configOption,
    dbs: Options.text("db").pipe(
      Options.withDescription(
        "a SQLite database file (default data/gligabao.db); give several to see them all in the admin UI, the first serves the API"
      ),
      Options.repeated
    ),
    databaseUrl: databaseUrlOption,
    imageDir: imageDirOption,
    geo: geoOption,
    host: hostOption,
    port: portOption,
    insecureBind: insecureBindOption
  },
  (o) =>
    withConfig(flags({ ...o, db: Option.fromNullable(o.dbs[0]) }), (config) =>
      Effect.gen(function*() {
        const refusal = bindRefusal(config.server.host, config.auth.tokens.length > 0, o.insecureBind)
        if (refusal !== undefined) return yield* Effect.fail(new Error(refusal))
        if (o.insecureBind && config.auth.tokens.length === 0 && !isLoopback(config.server.host)) {
          yield* Effect.logWarning(`listening on ${config.server.host} without authentication (--insecure-bind)`)
        }
        yield* Effect.logInfo("gligabao starting", describeConfig(config))
        // files of the old default location (build/): where they are and how to move them (issue 41)
        const oldData = dataFolderNotice(config)
        if (oldData !== undefined) yield* Effect.logWarning(oldData)
        const noLlm = missingLlm(config)
        if (noLlm !== undefined) yield* Effect.logWarning(`${noLlm}; until then every remember is refused (503)`)
        if (Option.isNone(config.openaiApiKey)) {
          yield* Effect.logWarning("no OPENAI_API_KEY: the graph is stored but nothing is embedded")
        }
        // Bounded request reading: a client that trickles or stalls its request is cut off (408)
        // instead of holding a connection for Node's default 300 s. Covers receiving the request
        // only, never a slow model call behind it. The port is bound first (a taken port fails
        // before any migration), and until the app is attached, once the storage, the vector
        // store and the rest are built, every request is answered 503 {"error": "starting"}
        // (src/http/nodeServer.ts).
        const ServerLive = NodeHttpServer.layer(
          () => createStartupAwareServer({ requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS }),
          { port: config.server.port, host: config.server.host }
        )
        const announce = Layer.effectDiscard(
          HttpServer.addressFormattedWith((address) => announceListening(config, address))
        )
        return yield* Layer.launch(
          Layer.mergeAll(HttpAppLive, announce).pipe(
            // with PostgreSQL serving the API, every --db file is an extra one for the admin UI
            Layer.provide(adminDatabasesFor(config, Option.isSome(config.database.url) ? o.dbs : o.dbs.slice(1))),
            Layer.provide(AppLive),
            Layer.provide(httpSettingsFor(config)),
            Layer.provide(ServerLive),
            Layer.provide(Layer.succeed(AppConfigTag, config)),
            // first built, last released: everything above traces into it, and it flushes at exit
            Layer.provide(otlpExportFor(config))
          )
        ).pipe(Effect.onInterrupt(() => Effect.logInfo("gligabao stopped")))
      }))
).pipe(Command.withDescription("start the HTTP server (SQLite at data/gligabao.db unless --database-url is given)"))

const migrate = Command.make(
  "migrate",
  { config: configOption, db: dbOption, databaseUrl: databaseUrlOption },
  (o) =>
    withConfig(flags(o), (config) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Layer.build(storageFor(config)))
        console.log(
          Option.isSome(config.database.url)
            ? "migrated the PostgreSQL database"
            : `migrated the SQLite database ${config.database.path}`
        )
      }))
).pipe(Command.withDescription("create or update the database schema, then exit"))

const userIdOption = Options.text("user-id").pipe(
  Options.withDescription("only this user's datasets"),
  Options.optional
)
const datasetOption = Options.text("dataset").pipe(
  Options.withDescription("only datasets of this name"),
  Options.optional
)

const reembedCommand = Command.make(
  "reembed",
  { config: configOption, db: dbOption, databaseUrl: databaseUrlOption, userId: userIdOption, dataset: datasetOption },
  (o) =>
    withConfig(flags(o), (config) =>
      Effect.gen(function*() {
        const embeddings = yield* Embeddings
        if (!embeddings.enabled) {
          return yield* Effect.fail(new Error("reembed needs embeddings: set OPENAI_API_KEY (or embedding_base_url)"))
        }
        const result = yield* reembed({
          userId: Option.getOrUndefined(o.userId),
          dataset: Option.getOrUndefined(o.dataset)
        })
        console.log(`reembedded ${result.entities} entities and ${result.edges} edges in ${result.datasets} datasets`)
      }).pipe(
        Effect.provide(
          // the settings price the embedding calls ([prices])
          Layer.mergeAll(embeddingsFor(config), vectorStoreFor(config), settingsFor(config)).pipe(
            Layer.provideMerge(storageFor(config))
          )
        )
      ))
).pipe(Command.withDescription("embed the entities and edges stored before embeddings were configured"))

const rememberCommand = Command.make(
  "remember",
  {
    file: Args.file({ name: "FILE", exists: "yes" }),
    config: configOption,
    db: dbOption,
    databaseUrl: databaseUrlOption,
    userId: Options.text("user-id").pipe(Options.withDescription("the user who owns the dataset")),
    dataset: Options.text("dataset").pipe(Options.withDescription("the dataset (default main)"), Options.optional),
    kind: Options.text("kind").pipe(Options.withDescription("knowledge (default) or episode"), Options.optional),
    referenceTime: Options.text("reference-time").pipe(
      Options.withDescription("RFC 3339; default now"),
      Options.optional
    ),
    sessionId: Options.text("session-id").pipe(Options.optional)
  },
  (o) =>
    withConfig(flags(o), (config) =>
      Effect.gen(function*() {
        const valid = validateRememberRequest({
          user_id: o.userId,
          text: readFileSync(o.file, "utf8"),
          dataset: Option.getOrUndefined(o.dataset),
          kind: Option.getOrUndefined(o.kind),
          reference_time: Option.getOrUndefined(o.referenceTime),
          session_id: Option.getOrUndefined(o.sessionId)
        })
        if (Either.isLeft(valid)) return yield* Effect.fail(new Error(valid.left.message))
        const manager = yield* RememberManager
        const runLog = yield* RunLogRepo
        const run = yield* manager.enqueue(valid.right)
        // the run log is the source of truth for progress, as it is for an HTTP client
        const showProgress = runLog.get(run.runId).pipe(
          Effect.flatMap((row) =>
            Effect.sync(() => {
              const progress = Option.flatMap(row, (r) =>
                Option.fromNullable(r.stages.find((s) => s.stage === "chunk_text")?.progress))
              if (Option.isSome(progress) && process.stderr.isTTY) {
                process.stderr.write(`\r${progressBar(progress.value.chunks_done, progress.value.chunks_total)}`)
              }
            })
          ),
          Effect.repeat(Schedule.spaced("200 millis")),
          Effect.fork
        )
        const bar = yield* showProgress
        const outcome = yield* run.await.pipe(Effect.ensuring(Fiber.interrupt(bar)))
        if (process.stderr.isTTY) {
          process.stderr.write("\n")
        }
        console.log(JSON.stringify({ remember_run_id: outcome.runId, ...outcome.response }, null, 2))
      }).pipe(Effect.provide(AppLive), Effect.provide(Layer.succeed(AppConfigTag, config))))
).pipe(Command.withDescription("remember a text file without a server (long files show a progress bar)"))

const importCommand = Command.make(
  "import",
  {
    path: Args.path({ name: "PATH", exists: "yes" }),
    config: configOption,
    db: dbOption,
    databaseUrl: databaseUrlOption,
    userId: Options.text("user-id").pipe(Options.withDescription("the user who owns the dataset")),
    dataset: Options.text("dataset").pipe(Options.withDescription("the dataset (default main)"), Options.optional),
    kind: Options.text("kind").pipe(
      Options.withDescription("knowledge (default) or episode, for items that do not say"),
      Options.optional
    ),
    url: Options.text("url").pipe(
      Options.withDescription("a running server (e.g. http://127.0.0.1:8080) to import through; default: this process"),
      Options.optional
    ),
    token: Options.text("token").pipe(
      Options.withDescription("the bearer token for --url (default $GLIGABAO_TOKEN)"),
      Options.optional
    )
  },
  (o) =>
    runImport(
      {
        path: o.path,
        userId: o.userId,
        dataset: Option.getOrUndefined(o.dataset),
        kind: Option.getOrUndefined(o.kind)
      },
      Option.match(o.url, {
        onSome: (url) => ({
          _tag: "Remote" as const,
          url,
          token: Option.getOrUndefined(o.token) ?? process.env.GLIGABAO_TOKEN,
          tokenFlag: Option.isSome(o.token)
        }),
        onNone: () => ({
          _tag: "Local" as const,
          // the manager of this process over the configured database; `runs cancel` is told which
          inApp: (program) =>
            withConfig(flags(o), (config) =>
              program(storageTargetFor(config)).pipe(
                Effect.provide(AppLive),
                Effect.provide(Layer.succeed(AppConfigTag, config))
              ))
        })
      })
    )
).pipe(
  Command.withDescription(
    "remember a JSONL file (one batch item a line) or a directory's .txt/.md files, through the queue; " +
      "resumable (a second run stores nothing twice)"
  )
)

/** What the read commands use: the storage, and the models when configured (no remember machinery). */
const readLayerFor = (config: AppConfig) =>
  ReadsLive.pipe(
    Layer.provideMerge(
      Layer.mergeAll(llmFor(config), embeddingsFor(config), vectorStoreFor(config), settingsFor(config))
    ),
    Layer.provideMerge(storageFor(config))
  )

const [searchCommand, queryCommand, exportCommand] = readCommands(readLayerFor)

const evalCommand = Command.make(
  "eval",
  {
    dir: Args.directory({ name: "DIR", exists: "yes" }),
    config: configOption,
    db: dbOption,
    databaseUrl: databaseUrlOption,
    provider: Options.text("provider").pipe(
      Options.withDescription("the LLM provider, anthropic or openai (over llm.provider)"),
      Options.optional
    ),
    baseUrl: Options.text("base-url").pipe(
      Options.withDescription("the LLM's base URL, e.g. a local OpenAI-compatible server (over llm.base_url)"),
      Options.optional
    ),
    model: Options.text("model").pipe(
      Options.withDescription("the model of every stage a case or --models does not name (over llm.default_model)"),
      Options.optional
    ),
    models: Options.text("models").pipe(
      Options.withDescription("stage=model pairs, comma-separated, for every text (over a case's own models)"),
      Options.optional
    ),
    output: Options.text("output").pipe(
      Options.withDescription("where trajectories and results.json go (default build/evals/<label>)"),
      Options.optional
    ),
    userId: Options.text("user-id").pipe(
      Options.withDescription("the user owning the eval datasets (default gligabao-eval)"),
      Options.optional
    )
  },
  (o) =>
    Either.match(
      evalLlmEnv({
        provider: Option.getOrUndefined(o.provider),
        baseUrl: Option.getOrUndefined(o.baseUrl),
        model: Option.getOrUndefined(o.model)
      }),
      {
        onLeft: (message) => Effect.fail(new Error(message)),
        onRight: (llmEnv) =>
          withConfig(flags(o), (config) =>
            runEvalCommand(o.dir, {
              models: Option.getOrUndefined(o.models),
              output: Option.getOrUndefined(o.output),
              userId: Option.getOrUndefined(o.userId)
            }).pipe(Effect.provide(AppLive), Effect.provide(Layer.succeed(AppConfigTag, config))), {
            ...process.env,
            ...llmEnv
          })
      }
    )
).pipe(
  Command.withDescription(
    "run the knowledge eval cases of DIR (each into a fresh dataset) and print their scores, tokens and cost"
  )
)

/** What the forget commands use: the forgets over the storage, the vector store and the image files (no remember). */
const forgetLayerFor = (config: AppConfig) =>
  ForgetsLive.pipe(
    Layer.provide(
      Layer.mergeAll(
        embeddingsFor(config),
        vectorStoreFor(config),
        settingsFor(config),
        LocalImageStoreLive(config.imageDir)
      ).pipe(Layer.provideMerge(storageFor(config)))
    )
  )

const forget = forgetCommand({
  options: { config: configOption, db: dbOption, databaseUrl: databaseUrlOption, imageDir: imageDirOption },
  run: (o, program) => withConfig(flags(o), (config) => program.pipe(Effect.provide(forgetLayerFor(config))))
})

const runs = runsCommand({
  options: { config: configOption, db: dbOption, databaseUrl: databaseUrlOption },
  run: (o, program) => withConfig(flags(o), (config) => program.pipe(Effect.provide(storageFor(config))))
})

const mcpCommand = Command.make(
  "mcp",
  {
    config: configOption,
    db: dbOption,
    databaseUrl: databaseUrlOption,
    imageDir: imageDirOption,
    userId: Options.text("user-id").pipe(
      Options.withDescription("the user the tools act for (default: mcp.user_id; neither: a user_id argument)"),
      Options.optional
    ),
    dataset: Options.text("dataset").pipe(
      Options.withDescription("the dataset when a tool call names none (default main)"),
      Options.optional
    )
  },
  (o) =>
    Effect.gen(function*() {
      // stdout is the protocol's: whatever else would print there goes to stderr
      console.log = console.error
      const config = yield* loadConfig(flags(o), process.env)
      yield* serveMcpStdio({
        userId: Option.orElse(o.userId, () => config.mcp.userId),
        dataset: o.dataset,
        rememberWaitMs: config.mcp.rememberWaitMs
      }).pipe(
        Effect.provide(AppLive),
        Effect.provide(Layer.succeed(AppConfigTag, config)),
        Effect.provide(stderrLoggingFor(config))
      )
    })
).pipe(Command.withDescription("serve MCP on stdin and stdout for one agent host (docs/MCP.md)"))

const gligabao = Command.make("gligabao").pipe(
  Command.withDescription("a memory server for AI agents: texts in, a bi-temporal knowledge graph out"),
  Command.withSubcommands([
    serve,
    migrate,
    reembedCommand,
    rememberCommand,
    importCommand,
    searchCommand,
    queryCommand,
    exportCommand,
    schemaCommand(readLayerFor),
    evalCommand,
    forget,
    runs,
    mcpCommand,
    backupCommand(SqliteFilesLive),
    restoreCommand(SqliteFilesLive),
    ...transferCommands(transferLayerFor)
  ])
)

const cli = Command.run(gligabao, { name: "gligabao", version: GLIGABAO_VERSION })

cli(process.argv).pipe(
  // a failure the user can act on is one line naming the problem; a defect keeps its trace
  Effect.tapErrorCause((cause) => {
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure) && !ValidationError.isValidationError(failure.value)) {
      const message = (failure.value as { message?: unknown }).message
      return Effect.sync(() =>
        console.error(`gligabao: ${typeof message === "string" ? message : String(failure.value)}`)
      )
    }
    return Option.isSome(failure) ? Effect.void : Effect.logError(cause)
  }),
  Effect.provide(NodeContext.layer),
  // the commands log as configured (options.ts): runMain's own pretty logger would write every
  // line a second time
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
