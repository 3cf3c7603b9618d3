// The graph view: a dataset picked from the list, drawn with Cytoscape.js (served by gligabao).
import { $, api, DATASETS_PAGE, fmtInt, h, report, state, td } from "./common.js"

// ---------------------------------------------------------------------------------------------
// graph

let datasetsSeq = 0
let graphSeq = 0
// for tests and debugging: the Cytoscape instance on screen
window.gligabaoAdmin = { cy: null }

export const loadDatasets = async () => {
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

export const destroyGraph = () => {
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
      // null: the start is unknown (true at any time before invalid_at)
      ["valid_at", edge.valid_at ?? "unknown start"],
      ["invalid_at", edge.invalid_at],
      ["created_at", edge.created_at],
      ["expired_at", edge.expired_at],
      ["id", edge.id]
    ]),
    h("h3", { text: `Supporting artifacts (${edge.artifact_ids.length})` }),
    ...supporting
  )
}
