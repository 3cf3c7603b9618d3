/**
 * What a bench run found: figures per scenario, the bars (PASS or MISS; timings never fail the
 * run) and the correctness checks (a failed one makes the bench exit non-zero). Rendered as
 * markdown tables and as JSON.
 */
import { cpus, freemem, loadavg, totalmem } from "node:os"

export interface Stats {
  readonly n: number
  readonly p50: number
  readonly p95: number
  readonly mean: number
  readonly min: number
  readonly max: number
}

export const stats = (xs: ReadonlyArray<number>): Stats => {
  const s = [...xs].sort((a, b) => a - b)
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN
  return {
    n: s.length,
    p50: q(0.5),
    p95: q(0.95),
    mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length),
    min: s[0] ?? NaN,
    max: s[s.length - 1] ?? NaN
  }
}

export interface Bar {
  readonly scenario: string
  readonly name: string
  readonly value: number
  readonly op: "<" | "<=" | ">="
  readonly threshold: number
  readonly unit: string
  readonly pass: boolean
  /** measured in --quick mode (smaller sizes, shorter latencies) */
  readonly quick: boolean
}

export interface Check {
  readonly scenario: string
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

/** One line of the summary table: the figure under each configuration. */
export interface Row {
  readonly scenario: string
  readonly measure: string
  readonly seed?: string
  readonly defaults?: string
  readonly c16?: string
  readonly ratio?: string
  readonly bar?: Bar
}

export class Report {
  readonly rows: Array<Row> = []
  readonly bars: Array<Bar> = []
  readonly checks: Array<Check> = []
  readonly figures: Record<string, unknown> = {}
  /** extra markdown tables, per scenario */
  readonly tables: Array<{ readonly title: string; readonly lines: Array<string> }> = []
  readonly errors: Array<{ readonly scenario: string; readonly error: string }> = []

  constructor(readonly quick: boolean) {}

  bar(scenario: string, name: string, value: number, op: Bar["op"], threshold: number, unit: string): Bar {
    const pass = Number.isFinite(value) &&
      (op === "<" ? value < threshold : op === "<=" ? value <= threshold : value >= threshold)
    const bar = { scenario, name, value, op, threshold, unit, pass, quick: this.quick }
    this.bars.push(bar)
    return bar
  }

  check(scenario: string, name: string, ok: boolean, detail = ""): void {
    this.checks.push({ scenario, name, ok, detail })
  }

  row(row: Row): void {
    this.rows.push(row)
  }

  table(title: string, header: ReadonlyArray<string>, body: ReadonlyArray<ReadonlyArray<string | number>>): void {
    this.tables.push({
      title,
      lines: [
        `| ${header.join(" | ")} |`,
        `| ${header.map(() => "---").join(" | ")} |`,
        ...body.map((cells) => `| ${cells.join(" | ")} |`)
      ]
    })
  }

  get failed(): boolean {
    return this.checks.some((c) => !c.ok) || this.errors.length > 0
  }
}

export const barText = (bar: Bar) =>
  `${bar.op} ${Number.isInteger(bar.threshold) ? count(bar.threshold) : fmt(bar.threshold)}${bar.unit}`
export const resultText = (bar: Bar) => `${bar.pass ? "PASS" : "**MISS**"}${bar.quick ? " (quick)" : ""}`

/** A number for a table: 3 significant figures at most, thousands separated. */
export const fmt = (x: number | undefined, digits = 1): string => {
  if (x === undefined || !Number.isFinite(x)) return "–"
  if (Math.abs(x) >= 100) return Math.round(x).toLocaleString("en-US")
  if (Math.abs(x) >= 10) return x.toFixed(Math.min(digits, 1))
  return x.toFixed(Math.max(digits, 2))
}

/** A count, or a mean count: whole numbers without decimals. */
export const count = (x: number): string => {
  const r = Math.round(x * 100) / 100
  return Number.isInteger(r) ? r.toLocaleString("en-US") : r.toFixed(2)
}

export const ratio = (a: number, b: number) => `${fmt(a / b)}x`

export const machine = () => {
  const cpu = cpus()
  return {
    cpu: cpu[0]?.model ?? "unknown",
    cores: cpu.length,
    memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    free_memory_gib: Math.round((freemem() / 2 ** 30) * 10) / 10,
    load_average: loadavg().map((x) => Math.round(x * 100) / 100),
    node: process.version,
    platform: `${process.platform} ${process.arch}`
  }
}

export const markdown = (report: Report, header: ReadonlyArray<string>): string => {
  const hasC16 = report.rows.some((r) => r.c16 !== undefined)
  const cols = [
    "scenario",
    "measure",
    "seed",
    "defaults",
    ...(hasC16 ? ["concurrency 16"] : []),
    "ratio",
    "bar",
    "result"
  ]
  const lines = [...header, "", `| ${cols.join(" | ")} |`, `| ${cols.map(() => "---").join(" | ")} |`]
  for (const r of report.rows) {
    const cells = [
      r.scenario,
      r.measure,
      r.seed ?? "",
      r.defaults ?? "",
      ...(hasC16 ? [r.c16 ?? ""] : []),
      r.ratio ?? "",
      r.bar === undefined ? "" : barText(r.bar),
      r.bar === undefined ? "" : resultText(r.bar)
    ]
    lines.push(`| ${cells.join(" | ")} |`)
  }
  for (const t of report.tables) lines.push("", t.title, "", ...t.lines)
  lines.push("", "Correctness checks (a failure makes the bench exit non-zero):", "")
  for (const c of report.checks) {
    lines.push(`- ${c.ok ? "ok" : "**FAILED**"}: ${c.scenario}: ${c.name}${c.detail === "" ? "" : ` (${c.detail})`}`)
  }
  for (const e of report.errors) lines.push(`- **FAILED**: ${e.scenario}: ${e.error}`)
  return lines.join("\n")
}
