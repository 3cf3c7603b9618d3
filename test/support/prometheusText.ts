/**
 * Reading a Prometheus text page in tests with the npm parser `parse-prometheus-text-format`.
 * Its histogram support merges every label set of a family into one entry and drops labelled
 * `_sum`/`_count`, so samples are also read one line at a time (a lone sample line parses as an
 * untyped family of its own name, labels unescaped by the parser).
 */
import parsePrometheus, { type PromFamily } from "parse-prometheus-text-format"

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export const families = (text: string): ReadonlyArray<PromFamily> => parsePrometheus(text)

export const samples = (text: string): ReadonlyArray<Sample> =>
  text.split("\n").filter((line) => line !== "" && !line.startsWith("#")).map((line) => {
    const [family] = parsePrometheus(`${line}\n`)
    const metric = family!.metrics[0]!
    return { name: family!.name, labels: metric.labels ?? {}, value: Number(metric.value) }
  })

/** The one sample of `name` whose labels include `labels`; undefined when there is none. */
export const sampleValue = (
  all: ReadonlyArray<Sample>,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): number | undefined => {
  const found = all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value
}
