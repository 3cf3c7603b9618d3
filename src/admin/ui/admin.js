// gligabao admin page: plain browser JavaScript (an ES module, no build step). Everything it
// shows comes from the admin JSON API (docs/ADMIN.md). The data is untrusted user text, so the
// DOM is built with textContent only, never innerHTML.

// the API sits next to the page: this file is /v1/gb/admin/assets/admin.js
const API_BASE = new URL("../api/", import.meta.url)
const TOKEN_KEY = "gligabao-admin-token"
const POLL_MS = 2000
const RUNS_PAGE = 100
const DATASETS_PAGE = 100
const SVG_NS = "http://www.w3.org/2000/svg"

const FLAG_TITLE =
  "Flagged: the call succeeded (its data is stored) but a stage failed: an enrichment " +
  "(web search, geo, series) or a vector write after commit. See the stages table."

// model stages in pipeline order: a stage keeps its colour across periods
const STAGE_ORDER = [
  "classify_complexity", "extract_graph", "summarize_chunk", "resolve_edges", "resolve_series",
  "detect_geo", "web_search", "extract_image", "embed", "query"
]
const PALETTE = [
  "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
  "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#2f4b7c", "#a05195"
]

// ---------------------------------------------------------------------------------------------
// DOM helpers

const $ = (id) => {
  const node = document.getElementById(id)
  if (node === null) throw new Error(`the page has no #${id}`)
  return node
}

/** An element with attributes (`text` sets textContent, `testid` data-testid) and children. */
const h = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue
    if (key === "text") node.textContent = String(value)
    else if (key === "class") node.className = value
    else if (key === "testid") node.dataset.testid = value
    else if (key === "data") Object.assign(node.dataset, value)
    // through the CSSOM, which a Content-Security-Policy never blocks
    else if (key === "style") Object.assign(node.style, value)
    else node.setAttribute(key, value === true ? "" : String(value))
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue
    node.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
  return node
}

const svg = (tag, attrs = {}, ...children) => {
  const node = document.createElementNS(SVG_NS, tag)
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue
    if (key === "text") node.textContent = String(value)
    else node.setAttribute(key, String(value))
  }
  for (const child of children) if (child) node.append(child)
  return node
}

const td = (value, attrs = {}) => h("td", attrs, value === null || value === undefined || value === "" ? "–" : value)

// ---------------------------------------------------------------------------------------------
// formatting (times in UTC, as the API stores them)

const pad = (n) => String(n).padStart(2, "0")

/** `2026-11-29 14:03:12` (UTC) */
const fmtTime = (iso) => {
  if (iso === null || iso === undefined) return null
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return String(iso)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
}

/** `13:51:00.123` (UTC): a stage's start, the day being the run's */
const fmtClock = (iso) => {
  if (iso === null || iso === undefined) return null
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return String(iso)
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${String(d.getUTCMilliseconds()).padStart(3, "0")}`
}

/** a time cell: readable, with the exact value as tooltip */
const timeCell = (iso, format = fmtTime) => td(format(iso), { title: iso ?? undefined, class: "mono" })

const fmtDuration = (ms) => {
  if (ms === null || ms === undefined) return null
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`
  const minutes = Math.floor(ms / 60_000)
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`
}

const intFmt = new Intl.NumberFormat("en-US")
const fmtInt = (n) => intFmt.format(n ?? 0)

const fmtCost = (usd) => {
  const v = usd ?? 0
  if (v === 0) return "$0"
  if (v >= 100) return `$${intFmt.format(Math.round(v))}`
  if (v >= 1) return `$${v.toFixed(2)}`
  if (v >= 0.0001) return `$${v.toFixed(4)}`
  return `$${v.toPrecision(2)}`
}

const statusBadge = (status) => h("span", { class: `badge status-${status}`, text: status.replace("_", " "), testid: "status-badge" })
const flagBadge = () => h("span", { class: "badge flag", text: "⚑ flagged", title: FLAG_TITLE, testid: "flag-badge" })

// ---------------------------------------------------------------------------------------------
// the API

class ApiError extends Error {}
/** the page is now asking for a token: nothing more to show for this call */
class AuthNeeded extends Error {}

const storage = {
  get: () => {
    try { return sessionStorage.getItem(TOKEN_KEY) } catch { return null }
  },
  set: (token) => {
    try { sessionStorage.setItem(TOKEN_KEY, token) } catch { /* storage off: the token lives in memory */ }
  },
  clear: () => {
    try { sessionStorage.removeItem(TOKEN_KEY) } catch { /* nothing stored */ }
  }
}

const state = {
  token: storage.get(),
  databases: [],
  db: null,
  view: "runs",
  runs: { status: "", user_id: "", dataset: "", offset: 0, data: null, openId: null, openRun: null, openCalls: null },
  inf: { period: "7d", metric: "cost", data: null },
  graph: { offset: 0, datasetId: null, data: null, cy: null, loadedFor: null }
}

const api = async (path, params = {}) => {
  const url = new URL(path, API_BASE)
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, String(value))
  }
  const headers = { accept: "application/json" }
  if (state.token) headers.authorization = `Bearer ${state.token}`
  let res
  try {
    res = await fetch(url, { headers, cache: "no-store" })
  } catch (e) {
    throw new ApiError(`The server did not answer (${e instanceof Error ? e.message : e}).`)
  }
  const text = await res.text()
  let body = null
  try { body = JSON.parse(text) } catch { /* reported below */ }
  if (res.status === 401) {
    askForToken(state.token ? "This token was not accepted." : "This server needs an admin token.", Boolean(state.token))
    throw new AuthNeeded()
  }
  if (res.status === 403) {
    askForToken("This token is not an admin token.", true)
    throw new AuthNeeded()
  }
  if (!res.ok) {
    const message = body !== null && typeof body.error === "string" ? body.error : `${res.status} ${res.statusText}`
    throw new ApiError(message)
  }
  if (body === null) throw new ApiError(`The server's answer to ${url.pathname} is not JSON.`)
  return body
}

/** Shows what went wrong; an AuthNeeded is already on screen. */
const report = (error) => {
  if (error instanceof AuthNeeded) return
  const message = error instanceof Error ? error.message : String(error)
  $("error-text").textContent = message
  $("error").hidden = false
}
const clearError = () => {
  $("error").hidden = true
  $("error-text").textContent = ""
}

// ---------------------------------------------------------------------------------------------
// authentication

const askForToken = (message, isError) => {
  stopPolling()
  state.token = null
  storage.clear()
  $("sign-out").hidden = true
  $("loading").hidden = true
  for (const view of document.querySelectorAll(".view")) view.hidden = true
  const msg = $("auth-message")
  msg.textContent = message
  msg.classList.toggle("auth-error", isError)
  $("auth").hidden = false
  document.body.classList.add("needs-auth")
  $("auth-token").value = ""
  $("auth-token").focus()
}

$("auth-form").addEventListener("submit", (event) => {
  event.preventDefault()
  const token = $("auth-token").value.trim()
  if (token === "") return
  state.token = token
  storage.set(token)
  $("auth").hidden = true
  boot()
})

$("sign-out").addEventListener("click", () => {
  state.token = null
  storage.clear()
  resetDatabaseState()
  boot()
})

// ---------------------------------------------------------------------------------------------
// databases and views

const VIEWS = ["runs", "inferences", "graph"]

const boot = async () => {
  clearError()
  $("loading").hidden = false
  $("sign-out").hidden = !state.token
  try {
    const body = await api("databases")
    state.databases = body.databases ?? []
    const select = $("db-select")
    select.replaceChildren(...state.databases.map((db) =>
      h("option", { value: db.name, text: `${db.name} (${db.dialect}${db.primary ? ", primary" : ""})` })))
    select.disabled = state.databases.length < 2
    $("loading").hidden = true
    $("auth").hidden = true
    document.body.classList.remove("needs-auth")
    if (state.databases.length === 0) {
      report(new Error("The server has no database."))
      return
    }
    if (!state.databases.some((db) => db.name === state.db)) {
      state.db = state.databases[0].name
      resetDatabaseState()
    }
    select.value = state.db
    showView(state.view)
  } catch (error) {
    $("loading").hidden = true
    report(error)
  }
}

const resetDatabaseState = () => {
  stopPolling()
  Object.assign(state.runs, { status: "", user_id: "", dataset: "", offset: 0, data: null, openId: null, openRun: null, openCalls: null })
  $("filter-user").value = ""
  $("filter-dataset").value = ""
  state.inf.data = null
  destroyGraph()
  Object.assign(state.graph, { offset: 0, datasetId: null, data: null, loadedFor: null })
}

$("db-select").addEventListener("change", (event) => {
  state.db = event.target.value
  resetDatabaseState()
  clearError()
  showView(state.view)
})

const showView = (view) => {
  state.view = VIEWS.includes(view) ? view : "runs"
  for (const tab of document.querySelectorAll(".tab")) {
    if (tab.dataset.view === state.view) tab.setAttribute("aria-current", "page")
    else tab.removeAttribute("aria-current")
  }
  for (const name of VIEWS) $(`view-${name}`).hidden = name !== state.view
  if (location.hash !== `#${state.view}`) history.replaceState(null, "", `#${state.view}`)
  stopPolling()
  if (state.db === null) return
  if (state.view === "runs") loadRuns().catch(report)
  if (state.view === "inferences") loadInferences().catch(report)
  if (state.view === "graph") loadDatasets().catch(report)
}

for (const tab of document.querySelectorAll(".tab")) {
  tab.addEventListener("click", () => {
    clearError()
    showView(tab.dataset.view)
  })
}
window.addEventListener("hashchange", () => {
  const view = location.hash.slice(1)
  if (view !== state.view && VIEWS.includes(view)) showView(view)
})
$("error-close").addEventListener("click", clearError)

// ---------------------------------------------------------------------------------------------
// runs

let runsSeq = 0
let pollTimer = null

const stopPolling = () => {
  if (pollTimer !== null) clearTimeout(pollTimer)
  pollTimer = null
  $("live").hidden = true
}

/** Polls while something shown is in progress, the runs view is open and the tab is visible. */
const schedulePoll = () => {
  stopPolling()
  const r = state.runs
  const inProgress = (r.data?.runs ?? []).some((run) => run.status === "started") || r.openRun?.status === "started"
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

const loadRuns = async () => {
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

const openRun = (run) => {
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

const loadInferences = async () => {
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

// ---------------------------------------------------------------------------------------------
// graph

let datasetsSeq = 0
let graphSeq = 0
// for tests and debugging: the Cytoscape instance on screen
window.gligabaoAdmin = { cy: null }

const loadDatasets = async () => {
  const seq = ++datasetsSeq
  const g = state.graph
  const data = await api("datasets", { db: state.db, limit: DATASETS_PAGE, offset: g.offset })
  if (seq !== datasetsSeq) return
  $("datasets-body").replaceChildren(...data.datasets.map(datasetRow))
  $("datasets-empty").hidden = data.datasets.length > 0
  const last = data.offset + data.datasets.length
  $("datasets-range").textContent = `${fmtInt(data.datasets.length === 0 ? 0 : data.offset + 1)}–${fmtInt(last)} of ${fmtInt(data.total)}`
  $("datasets-prev").disabled = data.offset === 0
  $("datasets-next").disabled = last >= data.total
}

const datasetRow = (ds) => {
  const row = h("tr", {
    class: `clickable${ds.id === state.graph.datasetId ? " selected" : ""}`,
    tabindex: 0,
    testid: "dataset-row",
    data: { datasetId: String(ds.id), user: ds.user_id, name: ds.name },
    title: `Draw ${ds.user_id} / ${ds.name}`
  },
  td(ds.user_id),
  h("td", {}, ds.name, ds.deleted_at ? " " : "", ds.deleted_at ? h("span", { class: "badge deleted", text: "deleted", title: `deleted at ${ds.deleted_at}` }) : null),
  td(fmtInt(ds.artifacts), { class: "num" }),
  td(fmtInt(ds.entities), { class: "num" }),
  td(fmtInt(ds.edges), { class: "num" }))
  const pick = () => {
    for (const other of $("datasets-body").children) other.classList.toggle("selected", other === row)
    loadGraph(ds.id).catch(report)
  }
  row.addEventListener("click", pick)
  row.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault()
      pick()
    }
  })
  return row
}

$("datasets-prev").addEventListener("click", () => {
  state.graph.offset = Math.max(0, state.graph.offset - DATASETS_PAGE)
  loadDatasets().catch(report)
})
$("datasets-next").addEventListener("click", () => {
  state.graph.offset += DATASETS_PAGE
  loadDatasets().catch(report)
})

const loadGraph = async (datasetId) => {
  const seq = ++graphSeq
  state.graph.datasetId = datasetId
  $("graph-title").textContent = "Loading…"
  const data = await api("graph", { db: state.db, dataset_id: datasetId, limit: $("graph-limit").value })
  if (seq !== graphSeq) return
  state.graph.data = data
  drawGraph(data)
}

$("graph-limit").addEventListener("change", () => {
  if (state.graph.datasetId !== null) loadGraph(state.graph.datasetId).catch(report)
})
$("graph-layout").addEventListener("change", () => {
  if (state.graph.cy) runLayout(state.graph.cy)
})

const destroyGraph = () => {
  state.graph.cy?.destroy()
  state.graph.cy = null
  window.gligabaoAdmin.cy = null
  const canvas = $("graph-canvas")
  canvas.replaceChildren()
  delete canvas.dataset.ready
  delete canvas.dataset.nodeCount
  delete canvas.dataset.edgeCount
  $("graph-title").textContent = "Pick a dataset"
  $("graph-truncated").hidden = true
  $("graph-empty").hidden = true
  showInfoHint()
}

const showInfoHint = () => $("graph-info").replaceChildren(h("p", { class: "muted", text: "Click an entity or a fact to see it here." }))

const isClosed = (edge) => edge.invalid_at !== null || edge.expired_at !== null

const GRAPH_STYLE = [
  {
    selector: "node",
    style: {
      "background-color": "data(colour)",
      label: "data(label)",
      "font-size": 13,
      color: "#1d2430",
      "text-valign": "bottom",
      "text-margin-y": 4,
      "text-wrap": "ellipsis",
      "text-max-width": "140px",
      width: 22,
      height: 22,
      "border-width": 1,
      "border-color": "#ffffff"
    }
  },
  {
    selector: "edge",
    style: {
      width: 1.6,
      "curve-style": "bezier",
      "line-color": "#3a6fd8",
      "target-arrow-color": "#3a6fd8",
      "target-arrow-shape": "triangle",
      "arrow-scale": 0.9,
      label: "data(label)",
      "font-size": 10,
      color: "#3b4657",
      "text-rotation": "autorotate",
      "text-background-color": "#ffffff",
      "text-background-opacity": 0.85,
      "text-background-padding": "2px"
    }
  },
  {
    selector: "edge.closed",
    style: { "line-style": "dashed", "line-color": "#b8bec8", "target-arrow-color": "#b8bec8", color: "#9aa1ad" }
  },
  { selector: "node:selected", style: { "border-width": 3, "border-color": "#1d2430" } },
  { selector: "edge:selected", style: { width: 3.5, "line-color": "#1d2430", "target-arrow-color": "#1d2430" } }
]

const TYPE_COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#9c755f", "#edc948"]

const runLayout = (cy) => {
  const canvas = $("graph-canvas")
  delete canvas.dataset.ready
  const name = $("graph-layout").value
  const options = name === "concentric"
    ? { name: "concentric", animate: false, fit: true, padding: 30, minNodeSpacing: 24, concentric: (n) => n.degree(), levelWidth: () => 2 }
    : {
      name: "cose",
      animate: false,
      fit: true,
      padding: 30,
      randomize: true,
      nodeDimensionsIncludeLabels: true,
      // longer edges than the defaults, so the relation labels can be read
      idealEdgeLength: () => 110,
      nodeRepulsion: () => 400_000,
      nodeOverlap: 20,
      componentSpacing: 80
    }
  const layout = cy.layout(options)
  layout.one("layoutstop", () => {
    // a small graph fitted to the canvas would be drawn huge
    if (cy.zoom() > 1.25) {
      cy.zoom(1.25)
      cy.center()
    }
    canvas.dataset.ready = "true"
  })
  layout.run()
}

const drawGraph = (data) => {
  destroyGraph()
  const ds = data.dataset
  const closed = data.edges.filter(isClosed).length
  $("graph-title").textContent =
    `${ds.user_id} / ${ds.name}: ${fmtInt(data.entities.length)} entities, ${fmtInt(data.edges.length)} facts (${fmtInt(closed)} closed)`
  $("graph-truncated").hidden = !data.truncated
  $("graph-truncated").textContent = data.truncated
    ? `Truncated: only the ${fmtInt(data.edges.length)} most recent facts are drawn; the dataset has more (raise "facts" above).`
    : ""
  $("graph-empty").hidden = data.entities.length > 0
  if (data.entities.length === 0) return
  if (typeof window.cytoscape !== "function") {
    report(new Error("The graph library (assets/cytoscape.min.js) did not load."))
    return
  }
  const types = [...new Set(data.entities.map((e) => e.type))]
  const typeColour = (type) => TYPE_COLOURS[types.indexOf(type) % TYPE_COLOURS.length]
  const entities = new Map(data.entities.map((e) => [e.id, e]))
  const edges = new Map(data.edges.map((e) => [e.id, e]))
  const elements = [
    ...data.entities.map((e) => ({ group: "nodes", data: { id: `n${e.id}`, entityId: e.id, label: e.name, colour: typeColour(e.type) } })),
    // an edge needs both its ends drawn
    ...data.edges.filter((e) => entities.has(e.source_id) && entities.has(e.target_id)).map((e) => ({
      group: "edges",
      data: { id: `e${e.id}`, edgeId: e.id, source: `n${e.source_id}`, target: `n${e.target_id}`, label: e.relation },
      classes: isClosed(e) ? "closed" : ""
    }))
  ]
  const canvas = $("graph-canvas")
  const cy = window.cytoscape({
    container: canvas,
    elements,
    style: GRAPH_STYLE,
    layout: { name: "preset" },
    minZoom: 0.05,
    maxZoom: 4,
    selectionType: "single"
  })
  state.graph.cy = cy
  window.gligabaoAdmin.cy = cy
  cy.on("tap", "node", (event) => showEntity(entities.get(event.target.data("entityId"))))
  cy.on("tap", "edge", (event) => showFact(edges.get(event.target.data("edgeId")), entities, data.artifacts))
  cy.on("tap", (event) => {
    if (event.target === cy) showInfoHint()
  })
  canvas.dataset.nodeCount = String(cy.nodes().length)
  canvas.dataset.edgeCount = String(cy.edges().length)
  runLayout(cy)
  const legend = h("ul", { class: "legend", testid: "type-legend" }, types.slice(0, TYPE_COLOURS.length).map((type) =>
    h("li", {}, h("span", { class: "swatch", style: { background: typeColour(type) } }), type)))
  $("graph-info").replaceChildren(h("p", { class: "muted", text: "Click an entity or a fact to see it here. Entity types:" }), legend)
}

const metaList = (pairs) => h("dl", { class: "meta" }, pairs.flatMap(([key, value]) => [
  h("dt", { text: key }),
  h("dd", { text: value === null || value === undefined || value === "" ? "–" : value, testid: `info-${key}` })
]))

const showEntity = (entity) => {
  if (entity === undefined) return
  $("graph-info").replaceChildren(
    h("h4", { text: entity.name, testid: "info-title" }),
    metaList([
      ["type", entity.type],
      ["description", entity.description],
      ["created_at", entity.created_at],
      ["id", entity.id]
    ])
  )
}

const showFact = (edge, entities, artifacts) => {
  if (edge === undefined) return
  const name = (id) => entities.get(id)?.name ?? `#${id}`
  const byId = new Map(artifacts.map((a) => [a.id, a]))
  const supporting = edge.artifact_ids.map((id) => {
    const a = byId.get(id)
    if (a === undefined) return h("div", { class: "artifact muted", text: `artifact #${id} (not in this slice)` })
    return h("div", { class: "artifact", testid: "info-artifact" },
      h("div", {},
        h("span", { class: "badge", text: a.kind }), " ",
        h("span", { class: "muted small", text: `#${a.id} · valid_at ${a.valid_at} · created_at ${a.created_at}${a.session_id ? ` · session ${a.session_id}` : ""}` })),
      h("pre", { class: "artifact-text", text: a.text + (a.text_truncated ? " …" : "") }),
      a.text_truncated ? h("div", { class: "muted small", text: "Text cut to its first 2,000 characters." }) : null)
  })
  $("graph-info").replaceChildren(
    h("h4", { testid: "info-title" }, `${name(edge.source_id)} `, h("span", { class: "mono", text: edge.relation }), ` ${name(edge.target_id)}`,
      isClosed(edge) ? h("span", { class: "badge", text: "closed", title: "invalid_at or expired_at is set" }) : null),
    metaList([
      ["description", edge.description],
      ["valid_at", edge.valid_at],
      ["invalid_at", edge.invalid_at],
      ["created_at", edge.created_at],
      ["expired_at", edge.expired_at],
      ["id", edge.id]
    ]),
    h("h3", { text: `Supporting artifacts (${edge.artifact_ids.length})` }),
    ...supporting
  )
}

// ---------------------------------------------------------------------------------------------

window.addEventListener("unhandledrejection", (event) => report(event.reason))
state.view = VIEWS.includes(location.hash.slice(1)) ? location.hash.slice(1) : "runs"
boot()
