/** The options and the configuration loading every `gligabao` command shares (src/cli/main.ts composes them). */
import { Options } from "@effect/cli"
import { Effect, Layer, Logger, LogLevel, Option } from "effect"
import { type AppConfig, type ConfigFlags, GLIGABAO_VERSION, loadConfig } from "../Config.js"

export const configOption = Options.file("config").pipe(
  Options.withDescription("the configuration file (default ./gligabao.toml; a missing default file is fine)"),
  Options.optional
)
export const dbOption = Options.text("db").pipe(
  Options.withDescription("the SQLite database file (default data/gligabao.db)"),
  Options.optional
)
export const databaseUrlOption = Options.text("database-url").pipe(
  Options.withDescription("a PostgreSQL URL; when set, PostgreSQL is used instead of SQLite"),
  Options.optional
)
export const imageDirOption = Options.text("image-dir").pipe(
  Options.withDescription("where image files are kept (default: next to the SQLite file)"),
  Options.optional
)
export const geoOption = Options.boolean("geo").pipe(
  Options.withDescription("resolve places to coordinates (geo stage)")
)
export const hostOption = Options.text("host").pipe(
  Options.withDescription("the address to listen on (default 127.0.0.1)"),
  Options.optional
)
export const insecureBindOption = Options.boolean("insecure-bind").pipe(
  Options.withDescription("allow a non-loopback --host without [auth] tokens (something in front authenticates)")
)
export const portOption = Options.integer("port").pipe(
  Options.withDescription("the port to listen on (default 8080; 0 = any free port)"),
  Options.optional
)

/** A whole request (headers and body) must arrive within this; its headers within the next. */
export const REQUEST_TIMEOUT_MS = 60_000
export const HEADERS_TIMEOUT_MS = 15_000

export const flags = (o: {
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
export const loggingFor = (config: AppConfig) =>
  Layer.mergeAll(
    config.logFormat === "json" ? Logger.json : Logger.pretty,
    Logger.minimumLogLevel(
      LogLevel.fromLiteral(config.logLevel === "warning" ? "Warning" : capitalize(config.logLevel))
    )
  )

const capitalize = (s: string) => (s.charAt(0).toUpperCase() + s.slice(1)) as "Debug" | "Info" | "Error"

export const withConfig = <A, E, R>(
  f: ConfigFlags,
  program: (config: AppConfig) => Effect.Effect<A, E, R>,
  env: Readonly<Record<string, string | undefined>> = process.env
) =>
  Effect.gen(function*() {
    const config = yield* loadConfig(f, env)
    return yield* program(config).pipe(Effect.provide(loggingFor(config)))
  })

/** Logging as configured, on stderr: for `mcp`, whose stdout is the protocol's. */
export const stderrLoggingFor = (config: AppConfig) =>
  Layer.mergeAll(
    Logger.replace(
      Logger.defaultLogger,
      // the pretty logger writes its lines itself (withConsoleError would print its result, undefined)
      config.logFormat === "json" ? Logger.withConsoleError(Logger.jsonLogger) : Logger.prettyLogger({ stderr: true })
    ),
    Logger.minimumLogLevel(
      LogLevel.fromLiteral(config.logLevel === "warning" ? "Warning" : capitalize(config.logLevel))
    )
  )

/**
 * The line that says the server is up (tests and scripts wait for "listening on"): plain text,
 * or with `log_format = "json"` a JSON object like every other line, whatever the log level.
 */
export const announceListening = (config: AppConfig, address: string) =>
  Effect.sync(() => {
    const text = `gligabao ${GLIGABAO_VERSION} listening on ${address}`
    console.log(
      config.logFormat === "json"
        ? JSON.stringify({ message: text, logLevel: "INFO", timestamp: new Date().toISOString(), address })
        : text
    )
  })

export const printJson = (value: unknown) => Effect.sync(() => console.log(JSON.stringify(value, null, 2)))
