/**
 * The real server built in this process, as `gligabao serve` builds it (src/cli/main.ts): SQLite
 * with sqlite-vec in a temp file, the real pipeline, RememberManager and HTTP handlers, pointed at
 * model servers given by URL (the bench's fakes, scripts/benchmarks/fakes.ts), for the cpu
 * scenario's workload (scripts/benchmarks/cpuWorkload.ts). Shared by scripts/bench-ops.ts and
 * scripts/bench-alloc.ts (issue 39).
 */
import { NodeContext, NodeHttpServer } from "@effect/platform-node"
import { type Context, Effect, Exit, Layer } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { adminDatabasesFor, AppLive, httpSettingsFor } from "../../layers/App.js"
import { loggingFor } from "../../src/cli/options.js"
import { AppConfigTag, loadConfig } from "../../src/Config.js"
import { HttpAppLive } from "../../src/http/Http.js"
import { createStartupAwareServer } from "../../src/http/nodeServer.js"
import { DIMS } from "./cpuWorkload.js"

// ---- the app, as `gligabao serve` composes it ----

export interface ModelUrls {
  readonly anthropicUrl: string
  readonly openAiUrl: string
}

/**
 * Builds the server on a temp directory, runs `use` with its URL, and tears it all down.
 * `wrap` changes the whole program before it runs (a Supervisor, runtime flags).
 */
export const withInProcessServer = async <A>(
  models: ModelUrls,
  use: (url: string) => Promise<A>,
  wrap: <X, E>(program: Effect.Effect<X, E>) => Effect.Effect<X, E> = (program) => program
): Promise<A> => {
  const dir = mkdtempSync(join(tmpdir(), "gligabao-inprocess-"))
  const configFile = join(dir, "gligabao.toml")
  writeFileSync(configFile, "")
  const env = {
    ANTHROPIC_API_KEY: "bench",
    ANTHROPIC_BASE_URL: models.anthropicUrl,
    OPENAI_API_KEY: "bench",
    GLIGABAO_EMBEDDING_BASE_URL: models.openAiUrl,
    GLIGABAO_EMBEDDING_DIMENSIONS: String(DIMS),
    GLIGABAO_LOG_LEVEL: "warning",
    GLIGABAO_CONFIG: configFile
  }
  const program = Effect.gen(function*() {
    const config = yield* loadConfig({ config: configFile, db: join(dir, "bench.db"), port: 0 }, env)
    const ServerLive = NodeHttpServer.layer(() => createStartupAwareServer(), { port: 0, host: "127.0.0.1" })
    const served = HttpAppLive.pipe(
      Layer.provide(adminDatabasesFor(config, [])),
      Layer.provide(AppLive),
      Layer.provide(httpSettingsFor(config)),
      Layer.provideMerge(ServerLive),
      Layer.provide(Layer.succeed(AppConfigTag, config)),
      Layer.provide(loggingFor(config))
    )
    const context = yield* Layer.build(served)
    const server = (context as Context.Context<any>).unsafeMap.get("@effect/platform/HttpServer") as {
      address: { _tag: string; hostname: string; port: number }
    }
    return yield* Effect.promise(() => use(`http://${server.address.hostname}:${server.address.port}`))
  }).pipe(Effect.scoped, Effect.provide(NodeContext.layer))
  try {
    const exit = await Effect.runPromiseExit(wrap(program))
    if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
    return exit.value
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** `flag N` among the tools' arguments, a positive integer, or `fallback` when it is absent. */
export const positiveOption = (argv: ReadonlyArray<string>, flag: string, fallback: number): number => {
  const i = argv.indexOf(flag)
  const n = i === -1 ? fallback : Number(argv[i + 1])
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} takes a positive integer`)
  return n
}
