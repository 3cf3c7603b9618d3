// The memory view: a user's memory as that user's endpoints answer it (search, an entity's story,
// a fact's view), through the admin API's memory endpoints. An entity's facts are drawn on a time
// axis, one bar per fact from valid_at to invalid_at (or to now); a fact whose start is unknown
// (valid_at null: true at any time before its end) is an open bar from the axis' left edge. A
// fact opens with the texts it came from and what closed it. Every text is set as textContent
// (common.js `h`), never as HTML.
import { $, api, fmtTime, h, report, state } from "./common.js"

let searchSeq = 0
let entitySeq = 0
let factSeq = 0

const DAY = 86_400_000
const YEAR = 365.25 * DAY

/** The request's scope as the form has it (the dataset defaults to main on the server). */
const scope = () => ({ db: state.db, user_id: state.memory.user_id, dataset: state.memory.dataset })

const isClosed = (fact) => fact.invalid_at !== undefined || fact.expired_at !== undefined

/** valid_at null: the start is unknown (an end was stated without one) */
const UNKNOWN_START = "unknown start"
const startText = (validAt) => validAt ?? UNKNOWN_START

const factLine = (fact) => [`${fact.source} `, h("span", { class: "mono", text: fact.relation }), ` ${fact.target}`]

export const resetMemory = () => {
  searchSeq++
  entitySeq++
  factSeq++
  Object.assign(state.memory, { results: null, entity: null, fact: null })
  $("memory-results").hidden = true
  $("memory-entity").hidden = true
  $("memory-fact").hidden = true
  $("memory-timeline").replaceChildren()
}

/** The view opened: nothing to load until a user is chosen and a search is made. */
export const showMemory = () => {
  if (state.memory.user_id === "") $("memory-user").focus()
}

// ---------------------------------------------------------------------------------------------
// search

$("memory-form").addEventListener("submit", (event) => {
  event.preventDefault()
  const m = state.memory
  const user = $("memory-user").value.trim()
  const dataset = $("memory-dataset").value.trim()
  // another user or dataset: what was open belongs to the previous one
  if (user !== m.user_id || dataset !== m.dataset) resetMemory()
  Object.assign(m, {
    user_id: user,
    dataset,
    query: $("memory-query").value.trim(),
    as_of: $("memory-as-of").value.trim(),
    include_expired: $("memory-expired").checked
  })
  loadSearch().catch(report)
})

const loadSearch = async () => {
  const seq = ++searchSeq
  const m = state.memory
  const data = await api("memory/search", {
    ...scope(),
    query: m.query,
    as_of: m.as_of,
    include_expired: m.include_expired ? "true" : undefined
  })
  if (seq !== searchSeq) return
  m.results = data
  renderResults(data)
}

const renderResults = (data) => {
  $("memory-results").hidden = false
  $("memory-echo").textContent =
    `${data.dataset}: facts valid at ${fmtTime(data.as_of)} UTC${data.known_at ? `, as known at ${fmtTime(data.known_at)}` : ""}`
  $("memory-warnings").replaceChildren(...(data.warnings ?? []).map((w) => h("p", { class: "note", text: w })))
  $("memory-entities").replaceChildren(...data.entities.map((entity) =>
    resultItem(
      { testid: "memory-entity-row", data: { entityId: String(entity.id) }, title: `Open ${entity.name}'s story` },
      [h("strong", { text: entity.name }), " ", h("span", { class: "badge", text: entity.type })],
      entity.description,
      () => openEntity(entity.id)
    )))
  $("memory-entities-empty").hidden = data.entities.length > 0
  $("memory-facts").replaceChildren(...data.facts.map((fact) =>
    resultItem(
      { testid: "memory-fact-row", data: { factId: String(fact.id) }, title: "Open this fact" },
      [...factLine(fact), isClosed(fact) ? h("span", { class: "badge closed", text: "closed" }) : null],
      fact.description,
      () => openFact(fact.id)
    )))
  $("memory-facts-empty").hidden = data.facts.length > 0
}

const resultItem = (attrs, head, detail, open) => {
  const item = h("li", { class: "memory-item", tabindex: 0, ...attrs },
    h("div", {}, head),
    detail ? h("div", { class: "muted small", text: detail }) : null)
  item.addEventListener("click", open)
  item.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault()
      open()
    }
  })
  return item
}

// ---------------------------------------------------------------------------------------------
// an entity's story on a time axis

const openEntity = async (id) => {
  const seq = ++entitySeq
  const story = await api("memory/entity", { ...scope(), id })
  if (seq !== entitySeq) return
  state.memory.entity = story
  $("memory-fact").hidden = true
  renderEntity(story)
}

const renderEntity = (story) => {
  const { entity, facts, neighbours } = story
  $("memory-entity").hidden = false
  $("memory-entity").dataset.entityId = String(entity.id)
  $("memory-entity-title").textContent = entity.name
  $("memory-entity-type").textContent = entity.type
  // what all its texts said of it (the summary), and the other names a merge gave it
  const aka = entity.aliases === undefined ? "" : ` (also ${entity.aliases.join(", ")})`
  $("memory-entity-description").textContent = `${entity.summary ?? entity.description}${aka}`
  const closed = facts.filter(isClosed).length
  $("memory-entity-counts").textContent = `${facts.length} facts (${closed} closed), ${entity.artifact_ids.length} artifacts`
  $("memory-timeline").replaceChildren(...timeline(facts))
  $("memory-neighbours").replaceChildren(...neighbours.map((n) => {
    const button = h("button", { type: "button", class: "link-button", testid: "memory-neighbour", text: n.name, title: n.type })
    button.addEventListener("click", () => openEntity(n.id).catch(report))
    return button
  }))
  $("memory-neighbours-empty").hidden = neighbours.length > 0
}

/**
 * The axis' range: the first known valid_at (or end) to the last end (or now), padded. An unknown
 * start has no time to place, so it is left out; with one, the left pad is wider, for the open
 * bars that run in from the edge.
 */
const rangeOf = (facts, now) => {
  const times = facts.flatMap((f) => [
    ...(f.valid_at === null ? [] : [Date.parse(f.valid_at)]),
    f.invalid_at ? Date.parse(f.invalid_at) : now
  ])
  let from = Math.min(...times)
  let to = Math.max(now, ...times)
  if (!(to - from > DAY)) {
    from -= DAY
    to += DAY
  }
  const openStart = facts.some((f) => f.valid_at === null)
  return { from: from - (to - from) * (openStart ? 0.12 : 0.03), to: to + (to - from) * 0.03 }
}

const niceStep = (steps, span, unit, most) => steps.find((s) => span / (s * unit) <= most) ?? steps.at(-1)

/** Tick times and labels: years, months or days, at most about 10. */
const ticksOf = (from, to) => {
  const span = to - from
  const out = []
  const start = new Date(from)
  if (span > 3 * YEAR) {
    const step = niceStep([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000], span, YEAR, 10)
    for (let y = Math.ceil(start.getUTCFullYear() / step) * step; ; y += step) {
      const t = Date.UTC(y, 0, 1)
      if (t > to) break
      if (t >= from) out.push({ t, label: String(y) })
    }
  } else if (span > 60 * DAY) {
    const step = niceStep([1, 2, 3, 6, 12], span, 30.4 * DAY, 10)
    const y = start.getUTCFullYear()
    for (let m = Math.ceil(start.getUTCMonth() / step) * step; ; m += step) {
      const t = Date.UTC(y, m, 1)
      if (t > to) break
      const d = new Date(t)
      if (t >= from) out.push({ t, label: `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, "0")}` })
    }
  } else {
    const step = niceStep([1, 2, 7, 14], span, DAY, 10)
    for (let t = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + 1); t <= to; t += step * DAY) {
      out.push({ t, label: new Date(t).toISOString().slice(0, 10) })
    }
  }
  return out
}

const timeline = (facts) => {
  if (facts.length === 0) return [h("p", { class: "empty", text: "This entity has no facts." })]
  const now = Date.now()
  const { from, to } = rangeOf(facts, now)
  const at = (t) => `${((t - from) / (to - from)) * 100}%`
  const nowMark = () => h("div", { class: "now-mark", style: { left: at(now) }, title: `now (${fmtTime(new Date(now).toISOString())} UTC)` })
  const ticks = ticksOf(from, to)
  // a tick next to "now" would be drawn over it
  const labelled = ticks.filter((tick) => Math.abs(tick.t - now) / (to - from) > 0.05)
  const gridlines = () => ticks.map((tick) => h("span", { class: "gridline", style: { left: at(tick.t) } }))
  const axis = h("div", { class: "timeline-row timeline-axis", testid: "timeline-axis" },
    h("div", { class: "timeline-label muted small", text: "UTC" }),
    h("div", { class: "timeline-track" },
      labelled.map((tick) => h("span", { class: "tick", style: { left: at(tick.t) }, text: tick.label })),
      h("span", { class: "tick now-label", style: { left: at(now) }, text: "now" })))
  const rows = facts.map((fact) => {
    const openStart = fact.valid_at === null
    // an unknown start runs in from the axis' left edge
    const start = openStart ? from : Date.parse(fact.valid_at)
    const end = fact.invalid_at ? Date.parse(fact.invalid_at) : Math.max(now, start)
    const closed = isClosed(fact)
    const span = `${startText(fact.valid_at)} → ${fact.invalid_at ?? "now"}`
    const title = `${fact.source} ${fact.relation} ${fact.target}\n${span}` +
      (fact.expired_at ? `\nsuperseded at ${fact.expired_at}` : "")
    const bar = h("button", {
      type: "button",
      class: `fact-bar ${closed ? "closed" : "live"}${fact.invalid_at ? "" : " open-ended"}${openStart ? " open-start" : ""}`,
      style: { left: at(start), width: `${((end - start) / (to - from)) * 100}%` },
      title,
      testid: "fact-bar",
      data: { factId: String(fact.id), closed: String(closed), openStart: String(openStart) },
      "aria-label": `${fact.source} ${fact.relation} ${fact.target}, ${startText(fact.valid_at)} to ${fact.invalid_at ?? "now"}`
    })
    const label = h("button", { type: "button", class: "timeline-label link-button", title: fact.description }, factLine(fact))
    const row = h("div", { class: `timeline-row${closed ? " closed" : ""}`, testid: "timeline-row", data: { factId: String(fact.id) } },
      label,
      h("div", { class: "timeline-track" }, gridlines(), nowMark(), bar))
    for (const target of [bar, label]) target.addEventListener("click", () => openFact(fact.id).catch(report))
    return row
  })
  return [axis, ...rows]
}

// ---------------------------------------------------------------------------------------------
// a fact's view: where it came from, what closed it

const openFact = async (id) => {
  const seq = ++factSeq
  const view = await api("memory/fact", { ...scope(), id })
  if (seq !== factSeq) return
  state.memory.fact = view
  for (const row of document.querySelectorAll("#memory-timeline .timeline-row[data-fact-id]")) {
    row.classList.toggle("selected", row.dataset.factId === String(id))
  }
  renderFact(view)
}

const metaList = (pairs) => h("dl", { class: "meta" }, pairs.flatMap(([key, value]) => [
  h("dt", { text: key }),
  h("dd", { text: value === null || value === undefined || value === "" ? "–" : value, testid: `fact-${key}` })
]))

const sourceBlock = (source, role) => h("div", { class: "artifact", testid: "memory-source", data: { artifactId: String(source.id), role } },
  h("div", {},
    h("span", { class: "badge", text: role }), " ",
    h("span", { class: "badge", text: source.kind }), " ",
    h("span", { class: "muted small", text: `artifact #${source.id} · valid_at ${source.valid_at} · created_at ${source.created_at}` })),
  h("pre", { class: "artifact-text", text: source.excerpt, testid: "memory-source-text" }),
  source.statement
    ? h("div", { class: "small statement" },
      h("span", { class: "muted", text: "stated: " }), source.statement.description,
      h("span", { class: "muted", text: ` (${startText(source.statement.valid_at)} → ${source.statement.invalid_at ?? "no end stated"})` }))
    : null)

const closureItem = (closure) => {
  const byFact = closure.by_fact
    ? h("button", { type: "button", class: "link-button", text: `fact #${closure.by_fact.id}: ${closure.by_fact.description}` })
    : null
  byFact?.addEventListener("click", () => openFact(closure.by_fact.id).catch(report))
  return h("li", { testid: "memory-closure", data: { kind: closure.kind } },
    h("span", { class: "badge closed", text: closure.kind }), " ",
    closure.kind === "hand" ? "closed by hand" : byFact ?? "a repeat stated its end", " ",
    h("span", { class: "muted small", text: `ends ${closure.invalid_at} · decided ${closure.at}${closure.artifact ? ` by artifact #${closure.artifact.id}` : ""}` }))
}

const renderFact = (view) => {
  const { closed_by, created_by, fact, restated_by } = view
  const panel = $("memory-fact")
  panel.hidden = false
  panel.dataset.factId = String(fact.id)
  const closed = isClosed(fact)
  panel.replaceChildren(
    h("div", { class: "detail-head" },
      h("h3", { class: "fact-title", testid: "memory-fact-title" }, factLine(fact)),
      h("span", { class: `badge ${closed ? "closed" : "live"}`, text: closed ? "closed" : "holds" }),
      (() => {
        const close = h("button", { type: "button", class: "link-button", "aria-label": "Close", text: "×" })
        close.addEventListener("click", () => (panel.hidden = true))
        return close
      })()),
    metaList([
      ["description", fact.description],
      ["valid_at", startText(fact.valid_at)],
      ["invalid_at", fact.invalid_at],
      ["created_at", fact.created_at],
      ["expired_at", fact.expired_at],
      ["model", fact.model],
      ["id", fact.id]
    ]),
    ...(closed_by.length > 0
      ? [h("h3", { text: "Closed by" }), h("ul", { class: "closures", testid: "memory-closures" }, closed_by.map(closureItem))]
      : []),
    h("h3", { text: `Texts it came from (${(created_by ? 1 : 0) + restated_by.length})` }),
    created_by ? sourceBlock(created_by, "created") : h("p", { class: "muted small", text: "No artifact is recorded as its source." }),
    ...restated_by.map((source) => sourceBlock(source, "restated"))
  )
}
