/**
 * The Prometheus text rendering of a metric snapshot, as a pure function: each metric type,
 * label escaping, name sanitising, one HELP/TYPE block per name, read back with the npm parser.
 * The snapshots are built by hand (MetricPair.unsafeMake), so the global registry is not involved
 * except in the last test.
 */
import { Metric, MetricBoundaries, MetricKey, MetricPair, MetricState, Option } from "effect"
import { describe, expect, it } from "vitest"
import {
  escapeLabelValue,
  renderPrometheus,
  sanitizeLabelName,
  sanitizeMetricName
} from "../../src/telemetry/prometheus.js"
import { families, samples, sampleValue } from "../support/prometheusText.js"

const pair = (key: MetricKey.MetricKey.Untyped, state: MetricState.MetricState.Untyped) =>
  MetricPair.unsafeMake(key as any, state as any) as MetricPair.MetricPair.Untyped

const counterKey = (name: string, description?: string) =>
  MetricKey.counter(name, description === undefined ? {} : { description })

describe("renderPrometheus", () => {
  it("a counter with labels and HELP, a gauge, once each", () => {
    const key = MetricKey.tagged(counterKey("jobs_total", "Jobs done"), "status", "ok")
    const text = renderPrometheus([
      pair(key, MetricState.counter(3)),
      pair(MetricKey.tagged(counterKey("jobs_total"), "status", "failed"), MetricState.counter(1)),
      pair(MetricKey.gauge("depth"), MetricState.gauge(7))
    ])
    expect(text).toBe(
      [
        "# HELP jobs_total Jobs done",
        "# TYPE jobs_total counter",
        "jobs_total{status=\"ok\"} 3",
        "jobs_total{status=\"failed\"} 1",
        "# TYPE depth gauge",
        "depth 7",
        ""
      ].join("\n")
    )
  })

  it("a histogram: cumulative _bucket lines ending with le=\"+Inf\", _sum and _count", () => {
    const key = MetricKey.tagged(
      MetricKey.histogram("took_seconds", MetricBoundaries.fromIterable([0.1, 1])),
      "stage",
      "store"
    )
    const state = MetricState.histogram({
      buckets: [[0.1, 1], [1, 2], [Infinity, 3]],
      count: 3,
      min: 0.05,
      max: 4,
      sum: 4.55
    })
    const text = renderPrometheus([pair(key, state)])
    expect(text).toContain("# TYPE took_seconds histogram\n")
    expect(text).toContain("took_seconds_bucket{stage=\"store\",le=\"0.1\"} 1\n")
    expect(text).toContain("took_seconds_bucket{stage=\"store\",le=\"1\"} 2\n")
    expect(text).toContain("took_seconds_bucket{stage=\"store\",le=\"+Inf\"} 3\n")
    expect(text).toContain("took_seconds_sum{stage=\"store\"} 4.55\n")
    expect(text).toContain("took_seconds_count{stage=\"store\"} 3\n")
    expect(families(text).map((f) => [f.name, f.type])).toEqual([["took_seconds", "HISTOGRAM"]])
    const all = samples(text)
    expect(sampleValue(all, "took_seconds_bucket", { stage: "store", le: "+Inf" })).toBe(3)
    expect(sampleValue(all, "took_seconds_count", { stage: "store" })).toBe(3)
  })

  it("adds le=\"+Inf\" when the boundaries lack it", () => {
    const state = MetricState.histogram({ buckets: [[1, 2]], count: 5, min: 0, max: 9, sum: 20 })
    const text = renderPrometheus([pair(MetricKey.histogram("h", MetricBoundaries.fromIterable([1])), state)])
    expect(text).toContain("h_bucket{le=\"+Inf\"} 5\n")
  })

  it("escapes label values and HELP, sanitises metric and label names", () => {
    const key = MetricKey.tagged(counterKey("model.calls-total", "line one\nline \\ two"), "model name", "a\"b\\c\nd")
    const text = renderPrometheus([pair(key, MetricState.counter(1))])
    expect(text).toBe(
      [
        "# HELP model_calls_total line one\\nline \\\\ two",
        "# TYPE model_calls_total counter",
        "model_calls_total{model_name=\"a\\\"b\\\\c\\nd\"} 1",
        ""
      ].join("\n")
    )
    expect(samples(text)[0]!.labels).toEqual({ model_name: "a\"b\\c\nd" })
    expect(sanitizeMetricName("1st:metric")).toBe("_1st:metric")
    expect(sanitizeLabelName("a:b")).toBe("a_b")
    expect(escapeLabelValue("plain")).toBe("plain")
  })

  it("a name registered again with another type is left out, not duplicated", () => {
    const text = renderPrometheus([
      pair(counterKey("x"), MetricState.counter(1)),
      pair(MetricKey.gauge("x"), MetricState.gauge(2))
    ])
    expect(text).toBe("# TYPE x counter\nx 1\n")
  })

  it("frequencies as counters by key, summaries with quantiles; big integers and non-finite values", () => {
    const text = renderPrometheus([
      pair(MetricKey.frequency("seen"), MetricState.frequency(new Map([["a", 2]]))),
      pair(
        MetricKey.summary({ name: "lat", maxAge: "1 minute", maxSize: 10, error: 0.01, quantiles: [0.5] }),
        MetricState.summary({ error: 0.01, quantiles: [[0.5, Option.some(3)]], count: 2, min: 1, max: 5, sum: 6 })
      ),
      pair(MetricKey.counter("big", { bigint: true }), MetricState.counter(BigInt(2) ** BigInt(60))),
      pair(MetricKey.gauge("inf"), MetricState.gauge(Infinity))
    ])
    expect(text).toContain("# TYPE seen counter\nseen{key=\"a\"} 2\n")
    expect(text).toContain("lat{quantile=\"0.5\"} 3\nlat_sum 6\nlat_count 2\n")
    expect(text).toContain("big 1152921504606846976\n")
    expect(text).toContain("inf +Inf\n")
    expect(families(text).map((f) => f.name)).toEqual(["seen", "lat", "big", "inf"])
  })

  it("the global registry's snapshot renders and parses (what GET /metrics serves)", async () => {
    const { Effect } = await import("effect")
    const c = Metric.counter("gligabao_test_render_total").pipe(Metric.tagged("k", "v"))
    await Effect.runPromise(Metric.increment(c))
    const text = renderPrometheus(Metric.unsafeSnapshot())
    const family = families(text).find((f) => f.name === "gligabao_test_render_total")
    expect(family?.metrics).toEqual([{ value: "1", labels: { k: "v" } }])
  })
})
