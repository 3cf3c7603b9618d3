// The runs view: counts by status, the list, the open run with its stages and model calls.
import { $, api, flagBadge, fmtClock, fmtCost, fmtDuration, fmtInt, fmtTime, h, POLL_MS, report, RUNS_PAGE, state, statusBadge, td, timeCell } from "./common.js"

// ---------------------------------------------------------------------------------------------
// runs

let runsSeq = 0
let pollTimer = null

export const stopPolling = () => {
  if (pollTimer !== null) clearTimeout(pollTimer)
  pollTimer = null
  $("live").hidden = true
}

/** Polls while something shown is in progress, the runs view is open and the tab is visible. */
const schedulePoll = () => {
  stopPolling()
  const r = state.runs
  const running = (status) => status === "started" || status === "queued"
  const inProgress = (r.data?.runs ?? []).some((run) => running(run.status)) || running(r.openRun?.status)
  if (!inProgress || state.view !== "runs" || document.hidden) return
  $("live").hidden = false
  pollTimer = setTimeout(() => {
    pollTimer = null
    loadRuns().catch(report)
  }, POLL_MS)
}

document.addEventListener("visibilitychange", () => {
  if (document.hidden) stopPolling()
  else if (state.view === "runs" && state.runs.data !== null) loadRuns().catch(report)
})

export const loadRuns = async () => {
  const seq = ++runsSeq
  const r = state.runs
  const data = await api("remember-runs", {
    db: state.db,
    status: r.status,
    user_id: r.user_id,
    dataset: r.dataset,
    limit: RUNS_PAGE,
    offset: r.offset
  })
  if (seq !== runsSeq) return
  // a page past the end (the filter shrank the list): back to the first page
  if (data.runs.length === 0 && r.offset > 0) {
    r.offset = 0
    return loadRuns()
  }
  r.data = data
  // the open run is fetched by id: it stays fresh even when it leaves the list's page or filter
  if (r.openId !== null) await loadOpenRun(seq)
  if (seq !== runsSeq) return
  renderRuns()
  if (r.openRun !== null) renderRunDetail()
  schedulePoll()
}

/** The open run and its model calls, unless a newer load started meanwhile. */
const loadOpenRun = async (seq) => {
  const r = state.runs
  const id = r.openId
  const detail = await api(`remember-runs/${id}`, { db: state.db })
  if (seq !== runsSeq || r.openId !== id) return
  r.openRun = detail.run
  r.openCalls = detail.inferences
}

const renderRuns = () => {
  const r = state.runs
  const data = r.data
  for (const button of document.querySelectorAll(".count")) {
    const status = button.dataset.status
    const value = status === "" ? data.counts.total : data.counts[status]
    button.querySelector(".value").textContent = fmtInt(value)
    button.setAttribute("aria-pressed", String(status !== "" && status === r.status))
    button.title = status === ""
      ? "All runs (clears the status filter)"
      : r.status === status ? `Showing ${status} runs: click to clear` : `Show only ${status} runs`
  }
  const filters = [
    r.status && `status ${r.status}`,
    r.user_id && `user_id "${r.user_id}"`,
    r.dataset && `dataset "${r.dataset}"`
  ].filter(Boolean)
  $("runs-filter-note").textContent = filters.length === 0
    ? "All runs, newest first. Times in UTC."
    : `Filtered by ${filters.join(", ")}: ${fmtInt(data.total)} run${data.total === 1 ? "" : "s"}.`
  $("clear-filter").disabled = filters.length === 0

  // a refresh redraws the rows: keep the keyboard on the row it was on
  const focused = document.activeElement instanceof HTMLElement ? document.activeElement.dataset.runId : undefined
  $("runs-body").replaceChildren(...data.runs.map(runRow))
  if (focused !== undefined) $("runs-body").querySelector(`[data-run-id="${focused}"]`)?.focus()
  $("runs-empty").hidden = data.runs.length > 0
  $("runs-empty").textContent = filters.length === 0 ? "No runs yet." : "No runs match this filter."

  const first = data.runs.length === 0 ? 0 : data.offset + 1
  const last = data.offset + data.runs.length
  $("runs-range").textContent = `${fmtInt(first)}–${fmtInt(last)} of ${fmtInt(data.total)}`
  $("runs-prev").disabled = data.offset === 0
  $("runs-next").disabled = last >= data.total
}

const runRow = (run) => {
  const row = h("tr", {
    class: `clickable${run.id === state.runs.openId ? " selected" : ""}`,
    tabindex: 0,
    testid: "run-row",
    data: { runId: String(run.id), status: run.status, flagged: String(Boolean(run.flagged)) },
    title: `Open run #${run.id}`
  },
  td(run.id, { class: "num" }),
  h("td", {}, statusBadge(run.status), run.flagged ? flagBadge() : null),
  td(run.pipeline, { class: "wide-only" }),
  td(run.user_id, { class: "ellipsis", title: run.user_id }),
  td(run.dataset, { class: "ellipsis", title: run.dataset }),
  timeCell(run.queued_at),
  td(fmtDuration(run.duration_ms), { class: "num wide-only" }),
  td(run.error, { class: `wide-only${run.error ? " error-cell" : ""}`, title: run.error ?? undefined }))
  const open = () => openRun(run)
  row.addEventListener("click", open)
  row.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault()
      open()
    }
  })
  return row
}

export const openRun = (run) => {
  state.runs.openId = run.id
  state.runs.openRun = run
  state.runs.openCalls = null
  for (const row of $("runs-body").children) row.classList.toggle("selected", row.dataset.runId === String(run.id))
  renderRunDetail()
  const seq = runsSeq
  loadOpenRun(seq).then(() => {
    if (state.runs.openId === run.id) renderRunDetail()
    schedulePoll()
  }).catch(report)
}

$("run-close").addEventListener("click", () => {
  state.runs.openId = null
  state.runs.openRun = null
  state.runs.openCalls = null
  $("run-detail").hidden = true
  $("view-runs").classList.remove("with-detail")
  for (const row of $("runs-body").children) row.classList.remove("selected")
  schedulePoll()
})

const renderRunDetail = () => {
  const run = state.runs.openRun
  const pane = $("run-detail")
  pane.hidden = false
  $("view-runs").classList.add("with-detail")
  pane.dataset.runId = String(run.id)
  $("run-title").textContent = `Run #${run.id}`
  $("run-badges").replaceChildren(statusBadge(run.status), run.flagged ? flagBadge() : "")

  const meta = [
    ["pipeline", run.pipeline],
    ["user_id", run.user_id],
    ["dataset", run.dataset_id === null ? run.dataset : `${run.dataset} (id ${run.dataset_id})`],
    ["artifact_id", run.artifact_id],
    ["queued", fmtTime(run.queued_at)],
    ["started", fmtTime(run.started_at)],
    ["attempts", String(run.attempts ?? 0)],
    ["finished", fmtTime(run.finished_at)],
    ["duration", fmtDuration(run.duration_ms)],
    ["error", run.error]
  ]
  $("run-meta").replaceChildren(...meta.flatMap(([key, value]) => [
    h("dt", { text: key }),
    h("dd", { text: value === null || value === undefined ? "–" : value, class: key === "error" && value ? "error-value" : "" })
  ]))

  // pipeline order from the response, then any stage it does not list
  const order = state.runs.data?.stages ?? []
  const present = Object.keys(run.stages ?? {})
  const names = [...order.filter((name) => present.includes(name)), ...present.filter((name) => !order.includes(name))]
  $("stages-body").replaceChildren(...names.flatMap((name) => stageRows(name, run.stages[name])))
  $("run-params").textContent = JSON.stringify(run.params ?? {}, null, 2)
  renderCalls(state.runs.openCalls)
}

/** The run's model calls: what each inference id of the stages table cost. */
const renderCalls = (calls) => {
  $("calls-body").replaceChildren(...(calls ?? []).flatMap((call) => {
    const row = h("tr", { testid: "call-row", data: { inferenceId: String(call.id), stage: call.stage } },
      td(call.id, { class: "num" }),
      td(call.stage, { class: "mono" }),
      td(call.reasoning && call.reasoning !== "none" ? `${call.model} (${call.reasoning})` : call.model, { class: "mono ellipsis", title: `${call.provider} ${call.model}` }),
      td(fmtInt(call.input_tokens), { class: "num" }),
      td(fmtInt(call.output_tokens), { class: "num" }),
      td(fmtCost(call.cost_usd), { class: "num" }),
      td(fmtDuration(call.latency_ms), { class: "num" }))
    if (!call.error) return [row]
    return [row, h("tr", { class: "stage-extra" }, h("td", { colspan: 7 }, h("div", { class: "stage-error", text: call.error })))]
  }))
  $("calls-empty").hidden = calls === null || calls === undefined || calls.length > 0
}

/** A stage's row, and under it a row with its error and detail when it has any. */
const stageRows = (name, stage) => {
  const progress = stage.progress
    ? `${fmtInt(stage.progress.chunks_done)} / ${fmtInt(stage.progress.chunks_total)} chunks`
    : null
  const ids = stage.inference_ids ?? []
  const facts = Object.entries(stage.detail ?? {})
  const row = h("tr", {
    class: `${stage.status === "not_started" ? "not-started" : ""}${stage.error || facts.length > 0 ? " has-extra" : ""}`,
    testid: "stage-row",
    data: { stage: name, status: stage.status }
  },
  h("td", { class: "mono", text: name }),
  h("td", {}, statusBadge(stage.status), progress ? h("div", { class: "small muted", text: progress, testid: "stage-progress" }) : null),
  timeCell(stage.started_at, fmtClock),
  td(fmtDuration(stage.duration_ms), { class: "num" }),
  td(ids.length === 0 ? null : ids.join(", "), { class: "mono" }))
  if (!stage.error && facts.length === 0) return [row]
  const extra = h("tr", { class: "stage-extra", testid: "stage-extra", data: { stage: name } },
    h("td", { colspan: 5 },
      stage.error ? h("div", { class: "stage-error", text: stage.error }) : null,
      facts.length > 0
        ? h("div", {
          class: "stage-detail",
          text: facts.map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`).join(" · ")
        })
        : null))
  return [row, extra]
}

for (const button of document.querySelectorAll(".count")) {
  button.addEventListener("click", () => {
    const status = button.dataset.status
    const r = state.runs
    r.status = status === "" || r.status === status ? "" : status
    r.offset = 0
    loadRuns().catch(report)
  })
}

const applyTextFilters = () => {
  const r = state.runs
  const user = $("filter-user").value.trim()
  const dataset = $("filter-dataset").value.trim()
  if (user === r.user_id && dataset === r.dataset) return
  r.user_id = user
  r.dataset = dataset
  r.offset = 0
  loadRuns().catch(report)
}
$("run-filters").addEventListener("submit", (event) => {
  event.preventDefault()
  applyTextFilters()
})
// the search inputs' own clear button
for (const id of ["filter-user", "filter-dataset"]) $(id).addEventListener("search", applyTextFilters)

$("clear-filter").addEventListener("click", () => {
  const r = state.runs
  r.status = ""
  r.user_id = ""
  r.dataset = ""
  r.offset = 0
  $("filter-user").value = ""
  $("filter-dataset").value = ""
  loadRuns().catch(report)
})

$("runs-prev").addEventListener("click", () => {
  state.runs.offset = Math.max(0, state.runs.offset - RUNS_PAGE)
  loadRuns().catch(report)
})
$("runs-next").addEventListener("click", () => {
  state.runs.offset += RUNS_PAGE
  loadRuns().catch(report)
})
