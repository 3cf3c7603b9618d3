// The inferences view: model usage and cost over a period, as a chart and two tables.
import { $, api, ApiError, clearError, fmtCost, fmtInt, fmtTime, h, pad, PALETTE, report, STAGE_ORDER, state, svg, td } from "./common.js"

// ---------------------------------------------------------------------------------------------
// inferences

let infSeq = 0
const HOUR = 3_600_000
const DAY = 24 * HOUR

const periodRange = () => {
  const now = Date.now()
  switch (state.inf.period) {
    case "24h": return { from: new Date(now - DAY), to: new Date(now) }
    case "30d": return { from: new Date(now - 30 * DAY), to: new Date(now) }
    case "custom": {
      // datetime-local values are the browser's local time
      const from = new Date($("period-from").value)
      const to = new Date($("period-to").value)
      if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) throw new ApiError("Choose both a from and a to time.")
      if (from >= to) throw new ApiError("The period's from must be before its to.")
      return { from, to }
    }
    default: return { from: new Date(now - 7 * DAY), to: new Date(now) }
  }
}

export const loadInferences = async () => {
  renderInferenceControls()
  const { from, to } = periodRange()
  const seq = ++infSeq
  const data = await api("inferences", { db: state.db, from: from.toISOString(), to: to.toISOString() })
  if (seq !== infSeq) return
  state.inf.data = data
  renderInferences()
}

const renderInferenceControls = () => {
  for (const button of document.querySelectorAll(".period")) {
    button.setAttribute("aria-pressed", String(button.dataset.period === state.inf.period))
  }
  for (const button of document.querySelectorAll(".metric")) {
    button.setAttribute("aria-pressed", String(button.dataset.metric === state.inf.metric))
  }
  $("custom-period").hidden = state.inf.period !== "custom"
}

for (const button of document.querySelectorAll(".period")) {
  button.addEventListener("click", () => {
    state.inf.period = button.dataset.period
    if (state.inf.period === "custom") {
      // start from the period shown, so Apply with no edit is meaningful
      const toLocal = (iso) => {
        const d = new Date(iso)
        return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
      }
      if ($("period-from").value === "" && state.inf.data) $("period-from").value = toLocal(state.inf.data.from)
      if ($("period-to").value === "" && state.inf.data) $("period-to").value = toLocal(state.inf.data.to)
      renderInferenceControls()
      return
    }
    clearError()
    loadInferences().catch(report)
  })
}
$("custom-period").addEventListener("submit", (event) => {
  event.preventDefault()
  clearError()
  loadInferences().catch(report)
})
for (const button of document.querySelectorAll(".metric")) {
  button.addEventListener("click", () => {
    state.inf.metric = button.dataset.metric
    renderInferenceControls()
    if (state.inf.data) renderInferences()
  })
}

const stageRank = (stage) => {
  const i = STAGE_ORDER.indexOf(stage)
  return i === -1 ? STAGE_ORDER.length : i
}
const sortStages = (stages) => [...stages].sort((a, b) => stageRank(a) - stageRank(b) || a.localeCompare(b))
const stageColour = (stage) => {
  const i = STAGE_ORDER.indexOf(stage)
  if (i !== -1) return PALETTE[i % PALETTE.length]
  let hash = 0
  for (const ch of stage) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0
  return PALETTE[hash % PALETTE.length]
}

const metricOf = (row) => state.inf.metric === "cost" ? (row.cost_usd ?? 0) : (row.input_tokens ?? 0) + (row.output_tokens ?? 0)
const fmtMetric = (value) => state.inf.metric === "cost" ? fmtCost(value) : fmtInt(Math.round(value))

const renderInferences = () => {
  const data = state.inf.data
  const bucketWord = data.bucket === "hour" ? "hourly" : "daily"
  $("inf-period").textContent = `${fmtTime(data.from)} to ${fmtTime(data.to)} UTC, ${bucketWord} buckets`
  const t = data.totals
  const total = (label, value, testid) =>
    h("div", { class: "total", testid }, h("span", { class: "label", text: label }), h("span", { class: "value", text: value }))
  $("inf-totals").replaceChildren(
    total("calls", fmtInt(t.calls), "total-calls"),
    total("failed", fmtInt(t.failed), "total-failed"),
    total("input tokens", fmtInt(t.input_tokens), "total-input"),
    total("output tokens", fmtInt(t.output_tokens), "total-output"),
    total("cost", fmtCost(t.cost_usd), "total-cost")
  )
  const empty = t.calls === 0
  $("inf-empty").hidden = !empty
  $("inf-content").hidden = empty
  if (empty) return
  renderChart(data)
  const usageCells = (row) => [
    td(fmtInt(row.calls), { class: "num" }),
    td(fmtInt(row.failed), { class: `num${row.failed > 0 ? " error-cell" : ""}` }),
    td(fmtInt(row.input_tokens), { class: "num" }),
    td(fmtInt(row.output_tokens), { class: "num" }),
    td(fmtCost(row.cost_usd), { class: "num" })
  ]
  const totalsRow = (span) => h("tfoot", {}, h("tr", {}, h("td", { colspan: span, text: "total" }), ...usageCells(t)))
  $("by-stage-body").replaceChildren(...data.by_stage.map((row) =>
    h("tr", { testid: "by-stage-row", data: { stage: row.stage } },
      h("td", { class: "mono" }, h("span", { class: "swatch", style: { background: stageColour(row.stage) } }), " ", row.stage),
      ...usageCells(row))))
  $("by-model-body").replaceChildren(...data.by_model.map((row) =>
    h("tr", { testid: "by-model-row" }, td(row.provider), td(row.model, { class: "mono" }), ...usageCells(row))))
  for (const [body, span] of [["by-stage-body", 1], ["by-model-body", 2]]) {
    const table = $(body).parentElement
    table.querySelector("tfoot")?.remove()
    table.append(totalsRow(span))
  }
}

/** 1, 2 or 5 times a power of ten, so the axis has about `count` ticks up to `max`. */
const niceStep = (max, count) => {
  const raw = max / count
  const power = 10 ** Math.floor(Math.log10(raw))
  const unit = raw / power
  return (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power
}

const bucketLabel = (ms, bucket) => {
  const d = new Date(ms)
  const day = `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`
  return bucket === "hour" ? `${day} ${pad(d.getUTCHours())}h` : day
}

/** A stacked bar chart (one bar per bucket, one segment per stage) as inline SVG. */
const renderChart = (data) => {
  const step = data.bucket === "hour" ? HOUR : DAY
  const first = Math.floor(Date.parse(data.from) / step) * step
  const count = Math.max(1, Math.ceil((Date.parse(data.to) - first) / step))
  const stages = sortStages([...new Set(data.buckets.map((b) => b.stage))])
  // per bucket index, per stage: the metric summed over models
  const sums = Array.from({ length: count }, () => new Map())
  for (const b of data.buckets) {
    const i = Math.floor((Date.parse(b.start) - first) / step)
    if (i < 0 || i >= count) continue
    const sum = sums[i].get(b.stage) ?? { value: 0, calls: 0 }
    sum.value += metricOf(b)
    sum.calls += b.calls ?? 0
    sums[i].set(b.stage, sum)
  }
  const totals = sums.map((m) => [...m.values()].reduce((acc, s) => acc + s.value, 0))
  const max = Math.max(0, ...totals)

  const W = 1000
  const H = 280
  const M = { top: 12, right: 12, bottom: 30, left: 72 }
  const plotW = W - M.left - M.right
  const plotH = H - M.top - M.bottom
  const yStep = max > 0 ? niceStep(max, 4) : 1
  const yMax = max > 0 ? Math.ceil(max / yStep) * yStep : 1
  const y = (v) => M.top + plotH - (v / yMax) * plotH
  const slot = plotW / count
  const barW = Math.max(1, slot * 0.78)

  const root = svg("svg", {
    viewBox: `0 0 ${W} ${H}`,
    role: "img",
    "aria-label": `${state.inf.metric === "cost" ? "Cost" : "Tokens"} per ${data.bucket}, stacked by stage`,
    "data-testid": "chart-svg"
  })
  const axis = svg("g", { class: "axis" })
  for (let v = 0; v <= yMax + yStep / 2; v += yStep) {
    axis.append(svg("line", { class: "gridline", x1: M.left, x2: W - M.right, y1: y(v), y2: y(v) }))
    axis.append(svg("text", { x: M.left - 8, y: y(v) + 4, "text-anchor": "end", text: fmtMetric(v) }))
  }
  const every = Math.ceil(count / 12)
  for (let i = 0; i < count; i += every) {
    axis.append(svg("text", {
      x: M.left + slot * i + slot / 2,
      y: H - 10,
      "text-anchor": "middle",
      text: bucketLabel(first + i * step, data.bucket)
    }))
  }
  root.append(axis)

  const bars = svg("g", { class: "bars" })
  sums.forEach((byStage, i) => {
    let base = 0
    for (const stage of stages) {
      const sum = byStage.get(stage)
      if (sum === undefined || sum.value <= 0) continue
      const top = y(base + sum.value)
      const rect = svg("rect", {
        class: "bar",
        x: M.left + slot * i + (slot - barW) / 2,
        y: top,
        width: barW,
        // at least a hairline, so a tiny value is still seen
        height: Math.max(1, y(base) - top),
        fill: stageColour(stage),
        "data-stage": stage
      })
      rect.append(svg("title", {
        text: `${bucketLabel(first + i * step, data.bucket)} UTC · ${stage}: ${fmtMetric(sum.value)} (${fmtInt(sum.calls)} calls)`
      }))
      bars.append(rect)
      base += sum.value
    }
  })
  root.append(bars)
  if (max === 0) {
    root.append(svg("text", {
      x: M.left + plotW / 2,
      y: M.top + plotH / 2,
      "text-anchor": "middle",
      fill: "#667085",
      text: state.inf.metric === "cost" ? "Every call in this period cost $0 (no price known for its model)." : "No tokens in this period."
    }))
  }
  $("chart").replaceChildren(root)
  $("chart-legend").replaceChildren(...stages.map((stage) =>
    h("li", {}, h("span", { class: "swatch", style: { background: stageColour(stage) } }), stage)))
}
