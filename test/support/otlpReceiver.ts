/**
 * A local OTLP/HTTP receiver for tests: accepts `POST /v1/traces` and `POST /v1/metrics` with
 * JSON bodies (what @effect/opentelemetry's JSON serialization sends), keeps the decoded bodies
 * and flattens them into spans and metric data points.
 */
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"

export interface OtlpValue {
  readonly stringValue?: string
  readonly intValue?: number | string
  readonly doubleValue?: number
  readonly boolValue?: boolean
}
interface KeyValue {
  readonly key: string
  readonly value: OtlpValue
}

export interface ReceivedSpan {
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly attributes: Readonly<Record<string, string | number | boolean>>
  /** the resource's attributes (service.name, ...) */
  readonly resource: Readonly<Record<string, string | number | boolean>>
}

export interface ReceivedPoint {
  readonly metric: string
  readonly kind: "sum" | "gauge" | "histogram"
  readonly attributes: Readonly<Record<string, string | number | boolean>>
  /** a sum's or a gauge's value; a histogram's count */
  readonly value: number
  readonly sum?: number
}

const valueOf = (v: OtlpValue): string | number | boolean =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.doubleValue ?? v.boolValue ?? "")

export const attributesOf = (kvs: ReadonlyArray<KeyValue> | undefined): Record<string, string | number | boolean> =>
  Object.fromEntries((kvs ?? []).map((kv) => [kv.key, valueOf(kv.value)]))

export interface OtlpReceiver {
  /** the base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it */
  readonly url: string
  /** every request, decoded: the path and the JSON body */
  readonly requests: ReadonlyArray<{ readonly path: string; readonly body: any }>
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  /** the data points of the latest export of each metric (the metrics are cumulative) */
  readonly latestPoints: () => ReadonlyArray<ReceivedPoint>
  readonly close: () => Promise<void>
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

export const startOtlpReceiver = async (): Promise<OtlpReceiver> => {
  const requests: Array<{ path: string; body: any }> = []
  const server = createServer(async (req, res) => {
    const text = await readBody(req)
    const path = req.url ?? ""
    if (req.method !== "POST" || (path !== "/v1/traces" && path !== "/v1/metrics")) {
      res.writeHead(404).end()
      return
    }
    requests.push({ path, body: JSON.parse(text) })
    res.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo

  const spans = () =>
    requests.filter((r) => r.path === "/v1/traces").flatMap((r) =>
      (r.body.resourceSpans ?? []).flatMap((rs: any) =>
        (rs.scopeSpans ?? []).flatMap((ss: any) =>
          (ss.spans ?? []).map((s: any): ReceivedSpan => ({
            name: s.name,
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId || undefined,
            attributes: attributesOf(s.attributes),
            resource: attributesOf(rs.resource?.attributes)
          }))
        )
      )
    )

  const latestPoints = () => {
    const latest = new Map<string, ReadonlyArray<ReceivedPoint>>()
    for (const r of requests.filter((r) => r.path === "/v1/metrics")) {
      for (const rm of r.body.resourceMetrics ?? []) {
        for (const sm of rm.scopeMetrics ?? []) {
          for (const m of sm.metrics ?? []) {
            const kind = m.sum !== undefined ? "sum" : m.gauge !== undefined ? "gauge" : "histogram"
            const points = (m[kind]?.dataPoints ?? []).map((p: any): ReceivedPoint => ({
              metric: m.name,
              kind,
              attributes: attributesOf(p.attributes),
              value: kind === "histogram" ? Number(p.count) : Number(p.asDouble ?? p.asInt ?? 0),
              ...(kind === "histogram" ? { sum: Number(p.sum) } : {})
            }))
            latest.set(m.name, points)
          }
        }
      }
    }
    return [...latest.values()].flat()
  }

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans,
    latestPoints,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
