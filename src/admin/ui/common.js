// gligabao admin page, what every view shares: constants, DOM helpers (textContent only, never
// innerHTML: the data is untrusted user text), formatting, the page's state, and the API client.
// Plain browser ES modules, no build step. Everything shown comes from the admin JSON API
// (docs/ADMIN.md).
import { askForToken } from "./admin.js"

// the API sits next to the page: this file is /v1/gb/admin/assets/common.js
const API_BASE = new URL("../api/", import.meta.url)
const TOKEN_KEY = "gligabao-admin-token"
export const POLL_MS = 2000
export const RUNS_PAGE = 100
export const DATASETS_PAGE = 100
const SVG_NS = "http://www.w3.org/2000/svg"

const FLAG_TITLE =
  "Flagged: the call succeeded (its data is stored) but a stage failed: an enrichment " +
  "(web search, geo, series) or a vector write after commit. See the stages table."

// model stages in pipeline order: a stage keeps its colour across periods
export const STAGE_ORDER = [
  "classify_complexity", "extract_graph", "summarize_chunk", "resolve_edges", "resolve_series",
  "detect_geo", "web_search", "extract_image", "embed", "query"
]
export const PALETTE = [
  "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
  "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#2f4b7c", "#a05195"
]

// ---------------------------------------------------------------------------------------------
// DOM helpers

export const $ = (id) => {
  const node = document.getElementById(id)
  if (node === null) throw new Error(`the page has no #${id}`)
  return node
}

/** An element with attributes (`text` sets textContent, `testid` data-testid) and children. */
export const h = (tag, attrs = {}, ...children) => {
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

export const svg = (tag, attrs = {}, ...children) => {
  const node = document.createElementNS(SVG_NS, tag)
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue
    if (key === "text") node.textContent = String(value)
    else node.setAttribute(key, String(value))
  }
  for (const child of children) if (child) node.append(child)
  return node
}

export const td = (value, attrs = {}) => h("td", attrs, value === null || value === undefined || value === "" ? "–" : value)

// ---------------------------------------------------------------------------------------------
// formatting (times in UTC, as the API stores them)

export const pad = (n) => String(n).padStart(2, "0")

/** `2026-11-29 14:03:12` (UTC) */
export const fmtTime = (iso) => {
  if (iso === null || iso === undefined) return null
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return String(iso)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
}

/** `13:51:00.123` (UTC): a stage's start, the day being the run's */
export const fmtClock = (iso) => {
  if (iso === null || iso === undefined) return null
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return String(iso)
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${String(d.getUTCMilliseconds()).padStart(3, "0")}`
}

/** a time cell: readable, with the exact value as tooltip */
export const timeCell = (iso, format = fmtTime) => td(format(iso), { title: iso ?? undefined, class: "mono" })

export const fmtDuration = (ms) => {
  if (ms === null || ms === undefined) return null
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`
  const minutes = Math.floor(ms / 60_000)
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`
}

const intFmt = new Intl.NumberFormat("en-US")
export const fmtInt = (n) => intFmt.format(n ?? 0)

export const fmtCost = (usd) => {
  const v = usd ?? 0
  if (v === 0) return "$0"
  if (v >= 100) return `$${intFmt.format(Math.round(v))}`
  if (v >= 1) return `$${v.toFixed(2)}`
  if (v >= 0.0001) return `$${v.toFixed(4)}`
  return `$${v.toPrecision(2)}`
}

export const statusBadge = (status) => h("span", { class: `badge status-${status}`, text: status.replace("_", " "), testid: "status-badge" })
export const flagBadge = () => h("span", { class: "badge flag", text: "⚑ flagged", title: FLAG_TITLE, testid: "flag-badge" })

// ---------------------------------------------------------------------------------------------
// the API

export class ApiError extends Error {}
/** the page is now asking for a token: nothing more to show for this call */
class AuthNeeded extends Error {}

export const storage = {
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

export const state = {
  token: storage.get(),
  databases: [],
  db: null,
  view: "runs",
  runs: { status: "", user_id: "", dataset: "", offset: 0, data: null, openId: null, openRun: null, openCalls: null },
  inf: { period: "7d", metric: "cost", data: null },
  graph: { offset: 0, datasetId: null, data: null, cy: null, loadedFor: null },
  memory: { user_id: "", dataset: "", query: "", as_of: "", include_expired: false, results: null, entity: null, fact: null }
}

export const api = async (path, params = {}) => {
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
export const report = (error) => {
  if (error instanceof AuthNeeded) return
  const message = error instanceof Error ? error.message : String(error)
  $("error-text").textContent = message
  $("error").hidden = false
}
export const clearError = () => {
  $("error").hidden = true
  $("error-text").textContent = ""
}

// ---------------------------------------------------------------------------------------------
