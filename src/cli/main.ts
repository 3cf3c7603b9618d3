/**
 * The `gligabao` command: the composition root, and the only file of src/ that imports layers/.
 *
 *   gligabao serve [--db PATH] [--database-url URL] [--image-dir DIR] [--geo] [--host H] [--port P] [--config FILE]
 *   gligabao migrate [--db PATH] [--database-url URL] [--config FILE]
 */
import { Command, Options } from "@effect/cli"
import { HttpServer } from "@effect/platform"
import { NodeContext, NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Logger, LogLevel, Option } from "effect"
import { createServer } from "node:http"
import { AppLive, embeddingsFor, storageFor, vectorStoreFor } from "../../layers/App.js"
import { type AppConfig, AppConfigTag, type ConfigFlags, describeConfig, GLIGABAO_VERSION, loadConfig } from "../Config.js"
import { HttpAppLive } from "../http/Http.js"
import { reembed } from "../pipeline/reembed.js"
import { Database } from "../services/Database.js"
import { DatasetsRepo } from "../services/DatasetsRepo.js"
import { Embeddings } from "../services/Embeddings.js"
import { GraphRepo } from "../services/GraphRepo.js"
import { InferencesRepo } from "../services/InferencesRepo.js"
import { VectorOutbox } from "../services/VectorOutbox.js"
import { VectorStore } from "../services/VectorStore.js"

const configOption = Options.file("config").pipe(
  Options.withDescription("the configuration file (default ./gligabao.toml; a missing default file is fine)"),
  Options.optional
)
const dbOption = Options.text("db").pipe(
  Options.withDescription("the SQLite database file (default build/gligabao.db)"),
  Options.optional
)
const databaseUrlOption = Options.text("database-url").pipe(
  Options.withDescription("a PostgreSQL URL; when set, PostgreSQL is used instead of SQLite"),
  Options.optional
)
const imageDirOption = Options.text("image-dir").pipe(
  Options.withDescription("where image files are kept (default: next to the SQLite file)"),
  Options.optional
)
const geoOption = Options.boolean("geo").pipe(Options.withDescription("resolve places to coordinates (geo stage)"))
const hostOption = Options.text("host").pipe(Options.withDescription("the address to listen on (default 127.0.0.1)"), Options.optional)
const portOption = Options.integer("port").pipe(Options.withDescription("the port to listen on (default 8080; 0 = any free port)"), Options.optional)

const flags = (o: {
  readonly config: Option.Option<string>
  readonly db: Option.Option<string>
  readonly databaseUrl: Option.Option<string>
  readonly imageDir?: Option.Option<string>
  readonly geo?: boolean
  readonly host?: Option.Option<string>
  readonly port?: Option.Option<number>
}): ConfigFlags => ({
  config: Option.getOrUndefined(o.config),
  db: Option.getOrUndefined(o.db),
  databaseUrl: Option.getOrUndefined(o.databaseUrl),
  imageDir: o.imageDir === undefined ? undefined : Option.getOrUndefined(o.imageDir),
  geo: o.geo,
  host: o.host === undefined ? undefined : Option.getOrUndefined(o.host),
  port: o.port === undefined ? undefined : Option.getOrUndefined(o.port)
})

/** Logging as configured: JSON lines or pretty, at the configured minimum level. */
const loggingFor = (config: AppConfig) =>
  Layer.mergeAll(
    config.logFormat === "json" ? Logger.json : Logger.pretty,
    Logger.minimumLogLevel(LogLevel.fromLiteral(config.logLevel === "warning" ? "Warning" : capitalize(config.logLevel)))
  )

const capitalize = (s: string) => (s.charAt(0).toUpperCase() + s.slice(1)) as "Debug" | "Info" | "Error"

const withConfig = <A, E, R>(f: ConfigFlags, program: (config: AppConfig) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const config = yield* loadConfig(f, process.env)
    return yield* program(config).pipe(Effect.provide(loggingFor(config)))
  })

const serve = Command.make(
  "serve",
  {
    config: configOption,
    db: dbOption,
    databaseUrl: databaseUrlOption,
    imageDir: imageDirOption,
    geo: geoOption,
    host: hostOption,
    port: portOption
  },
  (o) =>
    withConfig(flags(o), (config) =>
      Effect.gen(function*() {
        yield* Effect.logInfo("gligabao starting", describeConfig(config))
        if (Option.isNone(config.openaiApiKey)) {
          yield* Effect.logWarning("no OPENAI_API_KEY: the graph is stored but nothing is embedded")
        }
        const ServerLive = NodeHttpServer.layer(createServer, { port: config.server.port, host: config.server.host })
        const announce = Layer.effectDiscard(
          HttpServer.addressFormattedWith((address) =>
            Effect.sync(() => console.log(`gligabao ${GLIGABAO_VERSION} listening on ${address}`))
          )
        )
        return yield* Layer.launch(
          Layer.mergeAll(HttpAppLive, announce).pipe(
            Layer.provide(AppLive),
            Layer.provide(ServerLive),
            Layer.provide(Layer.succeed(AppConfigTag, config))
          )
        )
      }))
).pipe(Command.withDescription("start the HTTP server (SQLite at build/gligabao.db unless --database-url is given)"))

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

const userIdOption = Options.text("user-id").pipe(Options.withDescription("only this user's datasets"), Options.optional)
const datasetOption = Options.text("dataset").pipe(Options.withDescription("only datasets of this name"), Options.optional)

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
          database: yield* Database,
          datasets: yield* DatasetsRepo,
          graph: yield* GraphRepo,
          inferences: yield* InferencesRepo,
          embeddings,
          vectors: yield* VectorStore,
          outbox: yield* VectorOutbox,
          prices: config.prices
        }, { userId: Option.getOrUndefined(o.userId), dataset: Option.getOrUndefined(o.dataset) })
        console.log(`reembedded ${result.entities} entities and ${result.edges} edges in ${result.datasets} datasets`)
      }).pipe(
        Effect.provide(
          Layer.mergeAll(embeddingsFor(config), vectorStoreFor(config)).pipe(Layer.provideMerge(storageFor(config)))
        )
      ))
).pipe(Command.withDescription("embed the entities and edges stored before embeddings were configured"))

const gligabao = Command.make("gligabao").pipe(
  Command.withDescription("a memory server for AI agents: texts in, a bi-temporal knowledge graph out"),
  Command.withSubcommands([serve, migrate, reembedCommand])
)

const cli = Command.run(gligabao, { name: "gligabao", version: GLIGABAO_VERSION })

cli(process.argv).pipe(
  Effect.tapErrorCause((cause) => Effect.logError(cause)),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
