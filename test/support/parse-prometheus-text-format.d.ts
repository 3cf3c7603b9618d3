/** The npm package ships no types; this is the shape its README documents. */
declare module "parse-prometheus-text-format" {
  export interface PromSample {
    readonly value?: string
    readonly labels?: Readonly<Record<string, string>>
    /** histograms: cumulative counts by upper bound (`le`) */
    readonly buckets?: Readonly<Record<string, string>>
    readonly count?: string
    readonly sum?: string
    readonly quantiles?: Readonly<Record<string, string>>
  }
  export interface PromFamily {
    readonly name: string
    readonly help: string
    readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED"
    readonly metrics: ReadonlyArray<PromSample>
  }
  const parsePrometheusTextFormat: (text: string) => ReadonlyArray<PromFamily>
  export default parsePrometheusTextFormat
}
