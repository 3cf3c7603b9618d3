/**
 * The exporter the CLI installs (layers/telemetry/OtlpExport.ts): nothing at all, and no
 * connection ever attempted, without `telemetry.otlp_endpoint`; spans and metrics sent to the
 * endpoint's /v1/traces and /v1/metrics when it is set (flushed when the layer is released).
 * And how the configuration reads the endpoint and service name, OTEL_* variables included.
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Metric, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { otlpExportFor, otlpUrls } from "../../layers/telemetry/OtlpExport.js"
import { type AppConfig, defaultConfig, loadConfig } from "../../src/Config.js"
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlpReceiver.js"

const withEndpoint = (endpoint: string | undefined): AppConfig => ({
  ...defaultConfig,
  telemetry: { ...defaultConfig.telemetry, otlpEndpoint: Option.fromNullable(endpoint), exportIntervalMs: 60_000 }
})

/** a span and a metric update under the exporter layer, then the layer released */
const traced = (config: AppConfig, counter: string) =>
  Effect.runPromise(
    Effect.gen(function*() {
      // metrics are global: each test its own counter
      yield* Metric.increment(Metric.counter(counter))
      yield* Effect.void.pipe(Effect.withSpan("test.span", { attributes: { k: "v" } }))
    }).pipe(Effect.provide(otlpExportFor(config)))
  )

const loaded = (env: Record<string, string>) =>
  Effect.runPromise(
    loadConfig({}, env, { defaultPath: "/nonexistent/gligabao.toml" }).pipe(Effect.provide(NodeContext.layer))
  )

describe("the OTLP exporter layer", () => {
  let receiver: OtlpReceiver
  const realFetch = globalThis.fetch
  const fetched: Array<string> = []

  beforeAll(async () => {
    receiver = await startOtlpReceiver()
    globalThis.fetch = ((input: any, init?: any) => {
      fetched.push(typeof input === "string" ? input : input instanceof URL ? input.href : input.url)
      return realFetch(input, init)
    }) as typeof fetch
  })
  afterAll(async () => {
    globalThis.fetch = realFetch
    await receiver?.close()
  })

  it("without an endpoint: no exporter, no request of any kind", async () => {
    await traced(withEndpoint(undefined), "gligabao_test_unexported_total")
    expect(fetched).toEqual([])
    expect(receiver.requests).toEqual([])
  })

  it("with an endpoint: the span and the metrics reach /v1/traces and /v1/metrics at release", async () => {
    await traced(withEndpoint(`${receiver.url}/`), "gligabao_test_export_total")
    expect(new Set(fetched)).toEqual(new Set([`${receiver.url}/v1/traces`, `${receiver.url}/v1/metrics`]))
    const span = receiver.spans().find((s) => s.name === "test.span")
    expect(span?.attributes).toEqual({ k: "v" })
    expect(span?.resource["service.name"]).toBe("gligabao")
    expect(receiver.latestPoints().find((p) => p.metric === "gligabao_test_export_total")?.value).toBe(1)
  })

  it("the signal URLs are appended to the endpoint's path, as OTEL_EXPORTER_OTLP_ENDPOINT is read", () => {
    expect(otlpUrls("http://collector:4318/otlp/")).toEqual({
      traces: "http://collector:4318/otlp/v1/traces",
      metrics: "http://collector:4318/otlp/v1/metrics"
    })
  })
})

describe("telemetry configuration", () => {
  it("defaults: no endpoint, service gligabao", async () => {
    const config = await loaded({})
    expect(config.telemetry).toEqual({ otlpEndpoint: Option.none(), serviceName: "gligabao", exportIntervalMs: 5000 })
  })

  it("honours OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME; gligabao's own variables win", async () => {
    const otel = await loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel:4318", OTEL_SERVICE_NAME: "memory" })
    expect(otel.telemetry.otlpEndpoint).toEqual(Option.some("http://otel:4318"))
    expect(otel.telemetry.serviceName).toBe("memory")
    const ours = await loaded({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel:4318",
      GLIGABAO_TELEMETRY_OTLP_ENDPOINT: "http://mine:4318",
      OTEL_SERVICE_NAME: "memory",
      GLIGABAO_TELEMETRY_SERVICE_NAME: "gb-a"
    })
    expect(ours.telemetry.otlpEndpoint).toEqual(Option.some("http://mine:4318"))
    expect(ours.telemetry.serviceName).toBe("gb-a")
  })

  it("an empty endpoint is unset; one that is not an http URL stops startup naming the key", async () => {
    expect((await loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: "" })).telemetry.otlpEndpoint).toEqual(Option.none())
    await expect(loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://otel:4317" })).rejects.toThrow(
      /telemetry\.otlp_endpoint/
    )
  })
})
