// gligabao admin page, the entry module: authentication, the database picker, the views, boot.
// The data is untrusted user text, so the DOM is built with textContent only, never innerHTML.
import { $, api, clearError, h, report, state, storage } from "./common.js"
import { destroyGraph, loadDatasets } from "./graph.js"
import { loadInferences } from "./inferences.js"
import { resetMemory, showMemory } from "./memory.js"
import { loadRuns, openRun, stopPolling } from "./runs.js"

// authentication

export const askForToken = (message, isError) => {
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

const VIEWS = ["runs", "inferences", "graph", "memory"]

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
  resetMemory()
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
  if (state.view === "memory") showMemory()
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

window.addEventListener("unhandledrejection", (event) => report(event.reason))
state.view = VIEWS.includes(location.hash.slice(1)) ? location.hash.slice(1) : "runs"
boot()
