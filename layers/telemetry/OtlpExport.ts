/**
 * Traces and metrics over OTLP/HTTP with JSON bodies, through @effect/opentelemetry's own
 * exporters (no OpenTelemetry SDK: Effect's spans and metric registry are sent as they are, over
 * @effect/platform's HttpClient). Only when `telemetry.otlp_endpoint` is set; otherwise nothing
 * is installed and no connection is ever made. Provided beneath the server so every layer built
 * after it (the HTTP server, the remember manager's workers) traces into it; released last, so
 * what in-flight work recorded is flushed at shutdown.
 */
import { FetchHttpClient } from "@effect/platform"
// the modules themselves: the package's index also loads its SDK-based modules, which need the SDK
import * as OtlpMetrics from "@effect/opentelemetry/OtlpMetrics"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { Duration, Layer, Option } from "effect"
import { type AppConfig, GLIGABAO_VERSION } from "../../src/Config.js"

/** The collector's signal URLs: the endpoint is a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is. */
export const otlpUrls = (endpoint: string) => {
  const base = endpoint.replace(/\/+$/, "")
  return { traces: `${base}/v1/traces`, metrics: `${base}/v1/metrics` }
}

export const otlpExportFor = (config: AppConfig): Layer.Layer<never> =>
  Option.match(config.telemetry.otlpEndpoint, {
    onNone: () => Layer.empty,
    onSome: (endpoint) => {
      const urls = otlpUrls(endpoint)
      const resource = { serviceName: config.telemetry.serviceName, serviceVersion: GLIGABAO_VERSION }
      const exportInterval = Duration.millis(config.telemetry.exportIntervalMs)
      return Layer.mergeAll(
        OtlpTracer.layer({ url: urls.traces, resource, exportInterval }),
        OtlpMetrics.layer({ url: urls.metrics, resource, exportInterval })
      ).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
    }
  })
