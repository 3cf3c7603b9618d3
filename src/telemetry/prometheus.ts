/**
 * Effect's metric snapshot in the Prometheus text exposition format (version 0.0.4), as
 * `GET /metrics` serves it. A pure function of the snapshot, so it is tested without a server.
 * Metrics of one name share one `# HELP`/`# TYPE` block whatever order the registry lists them
 * in; a name registered again with another type is left out (Prometheus rejects the whole page
 * otherwise).
 */
import { type MetricPair, MetricState, Option } from "effect"

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

type Pair = MetricPair.MetricPair.Untyped
type Labels = ReadonlyArray<readonly [string, string]>

/** A metric name as Prometheus allows it: `[a-zA-Z_:][a-zA-Z0-9_:]*`. */
export const sanitizeMetricName = (name: string): string => {
  const cleaned = name.replace(/[^a-zA-Z0-9_:]/g, "_")
  return /^[0-9]/.test(cleaned) ? `_${cleaned}` : cleaned === "" ? "_" : cleaned
}

/** A label name: `[a-zA-Z_][a-zA-Z0-9_]*` (no colons, unlike metric names). */
export const sanitizeLabelName = (name: string): string => {
  const cleaned = name.replace(/[^a-zA-Z0-9_]/g, "_")
  return /^[0-9]/.test(cleaned) ? `_${cleaned}` : cleaned === "" ? "_" : cleaned
}

/** Inside a label value's quotes: backslash, double quote and line feed are escaped. */
export const escapeLabelValue = (value: string): string =>
  value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")

/** In HELP text only backslash and line feed are escaped. */
const escapeHelp = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

export const formatValue = (value: number | bigint): string => {
  if (typeof value === "bigint") return value.toString()
  if (Number.isNaN(value)) return "NaN"
  if (value === Infinity) return "+Inf"
  if (value === -Infinity) return "-Inf"
  return String(value)
}

const formatLabels = (labels: Labels): string =>
  labels.length === 0
    ? ""
    : `{${labels.map(([k, v]) => `${sanitizeLabelName(k)}="${escapeLabelValue(v)}"`).join(",")}}`

const sample = (name: string, labels: Labels, value: number | bigint) =>
  `${name}${formatLabels(labels)} ${formatValue(value)}`

type Kind = "counter" | "gauge" | "histogram" | "summary"

const kindOf = (pair: Pair): Kind | undefined => {
  const state = pair.metricState
  if (MetricState.isCounterState(state)) return "counter"
  if (MetricState.isGaugeState(state)) return "gauge"
  if (MetricState.isHistogramState(state)) return "histogram"
  if (MetricState.isSummaryState(state)) return "summary"
  // a frequency counts occurrences of each value: a counter with the value as a label
  if (MetricState.isFrequencyState(state)) return "counter"
  return undefined
}

const samplesOf = (name: string, pair: Pair): ReadonlyArray<string> => {
  const state = pair.metricState
  const labels: Labels = pair.metricKey.tags.map((tag) => [tag.key, tag.value] as const)
  if (MetricState.isCounterState(state)) return [sample(name, labels, state.count)]
  if (MetricState.isGaugeState(state)) return [sample(name, labels, state.value)]
  if (MetricState.isFrequencyState(state)) {
    return [...state.occurrences].map(([key, count]) => sample(name, [...labels, ["key", key]], count))
  }
  if (MetricState.isHistogramState(state)) {
    // Effect's buckets are already cumulative and end with +Inf; one is added if a boundary list lacks it
    const buckets = state.buckets.map(([le, count]) =>
      sample(`${name}_bucket`, [...labels, ["le", formatValue(le)]], count)
    )
    const hasInf = state.buckets.some(([le]) => le === Infinity)
    return [
      ...buckets,
      ...(hasInf ? [] : [sample(`${name}_bucket`, [...labels, ["le", "+Inf"]], state.count)]),
      sample(`${name}_sum`, labels, state.sum),
      sample(`${name}_count`, labels, state.count)
    ]
  }
  if (MetricState.isSummaryState(state)) {
    return [
      ...state.quantiles.flatMap(([q, value]) =>
        Option.isSome(value) ? [sample(name, [...labels, ["quantile", formatValue(q)]], value.value)] : []
      ),
      sample(`${name}_sum`, labels, state.sum),
      sample(`${name}_count`, labels, state.count)
    ]
  }
  return []
}

/**
 * Effect's own fiber metrics are left out: `effect_fiber_active` is a counter that goes down (a
 * gauge in truth) without help text, which `promtool check metrics` rejects, and the runtime's
 * fiber counts say nothing an operator of gligabao acts on.
 */
const isEffectRuntimeMetric = (name: string) => name.startsWith("effect_fiber_")

/** The page for a snapshot (e.g. `Metric.unsafeSnapshot()`), newline-terminated. */
export const renderPrometheus = (snapshot: ReadonlyArray<Pair>): string => {
  const families = new Map<string, { kind: Kind; help: string | undefined; lines: Array<string> }>()
  for (const pair of snapshot) {
    if (isEffectRuntimeMetric(pair.metricKey.name)) continue
    const kind = kindOf(pair)
    if (kind === undefined) continue
    const name = sanitizeMetricName(pair.metricKey.name)
    const family = families.get(name) ??
      { kind, help: Option.getOrUndefined(pair.metricKey.description), lines: [] }
    if (family.kind !== kind) continue
    family.help ??= Option.getOrUndefined(pair.metricKey.description)
    family.lines.push(...samplesOf(name, pair))
    families.set(name, family)
  }
  const out: Array<string> = []
  for (const [name, family] of families) {
    if (family.help !== undefined) out.push(`# HELP ${name} ${escapeHelp(family.help)}`)
    out.push(`# TYPE ${name} ${family.kind}`, ...family.lines)
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`
}
