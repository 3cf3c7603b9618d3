/**
 * The read services' method spans (`Reads.search`, `SearchRepo.*`) exist only where traces go:
 * the app built without an OTLP endpoint runs them bare (issue 39: each span copies the fiber's
 * whole context), and with one it keeps them, as a library user's layers do by default.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schema, Tracer } from "effect"
import { join } from "node:path"
import { appLayerFor } from "../../layers/App.js"
import { type AppConfig, defaultConfig } from "../../src/Config.js"
import { Reads } from "../../src/query/Reads.js"
import { SearchRequest } from "../../src/query/requests.js"
import { tempDir } from "../support/cli.js"

/** The span names a search through the app's Reads makes. */
const searchSpans = (otlpEndpoint: Option.Option<string>) =>
  Effect.gen(function*() {
    const dir = tempDir("gligabao-service-spans-")
    yield* Effect.addFinalizer(() => Effect.sync(() => dir.remove()))
    const config: AppConfig = {
      ...defaultConfig,
      database: { ...defaultConfig.database, path: join(dir.path, "spans.db") },
      imageDir: join(dir.path, "images"),
      telemetry: { ...defaultConfig.telemetry, otlpEndpoint }
    }
    const reads = Context.get(yield* Layer.build(appLayerFor(config)), Reads)
    const names: Array<string> = []
    const native = yield* Effect.tracer
    const tracer = Tracer.make({
      span: (name, ...rest) => {
        names.push(name)
        return native.span(name, ...rest)
      },
      context: native.context
    })
    const request = Schema.decodeUnknownSync(SearchRequest)({ user_id: "alice", query: "Where does Alice live?" })
    yield* reads.search(request).pipe(Effect.withTracer(tracer))
    return names
  })

describe("service spans follow the trace export", () => {
  it.scoped("without an OTLP endpoint a search makes no Reads or SearchRepo span", () =>
    Effect.gen(function*() {
      const names = yield* searchSpans(Option.none())
      expect(names.filter((n) => n.startsWith("Reads.") || n.startsWith("SearchRepo."))).toEqual([])
    }))

  it.scoped("with one it makes them: Reads.search and SearchRepo.dataset", () =>
    Effect.gen(function*() {
      // the endpoint is only read here: nothing is exported by a search alone
      const names = yield* searchSpans(Option.some("http://127.0.0.1:9/v1/traces"))
      expect(names).toContain("Reads.search")
      expect(names).toContain("SearchRepo.dataset")
    }))
})
