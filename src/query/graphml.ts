/**
 * GraphML (http://graphml.graphdrawing.org/) pieces for the graph export, pure. Entities and
 * artifacts are nodes (`node_kind`), facts and artifact-to-entity mentions are edges
 * (`edge_kind`); every attribute is a declared key, so Gephi and yEd show them as columns.
 * `label` is the attribute Gephi takes for a node's and an edge's label.
 */
import type { ArtifactOut, FactOut, LinkedEntityOut } from "./views.js"

type KeyType = "string" | "long"

interface Key {
  readonly id: string
  readonly for: "graph" | "node" | "edge"
  readonly name: string
  readonly type: KeyType
}

const key = (id: string, target: Key["for"], name: string, type: KeyType = "string"): Key => ({
  id,
  for: target,
  name,
  type
})

export const GRAPHML_KEYS: ReadonlyArray<Key> = [
  key("g_dataset", "graph", "dataset"),
  key("g_as_of", "graph", "as_of"),
  key("g_known_at", "graph", "known_at"),
  key("n_kind", "node", "node_kind"),
  key("n_label", "node", "label"),
  key("n_type", "node", "type"),
  key("n_description", "node", "description"),
  key("n_model_id", "node", "model_id", "long"),
  key("n_model", "node", "model"),
  key("n_created_at", "node", "created_at"),
  key("n_artifact_ids", "node", "artifact_ids"),
  key("n_session_ids", "node", "session_ids"),
  key("n_artifact_kind", "node", "artifact_kind"),
  key("n_text", "node", "text"),
  key("n_parent_id", "node", "parent_id", "long"),
  key("n_session_id", "node", "session_id"),
  key("n_valid_at", "node", "valid_at"),
  key("e_kind", "edge", "edge_kind"),
  key("e_label", "edge", "label"),
  key("e_description", "edge", "description"),
  key("e_valid_at", "edge", "valid_at"),
  key("e_invalid_at", "edge", "invalid_at"),
  key("e_created_at", "edge", "created_at"),
  key("e_expired_at", "edge", "expired_at"),
  key("e_artifact_id", "edge", "artifact_id", "long"),
  key("e_model_id", "edge", "model_id", "long"),
  key("e_model", "edge", "model"),
  key("e_artifact_ids", "edge", "artifact_ids"),
  key("e_session_ids", "edge", "session_ids")
]

/** Characters XML 1.0 cannot hold at all (controls other than tab and line breaks, lone surrogates, U+FFFE/U+FFFF). */
const NOT_XML = /[^\u0009\u000A\u000D\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu

/** Text for an XML attribute or element: forbidden characters dropped, markup escaped. */
export const xmlText = (value: string): string =>
  value
    .replace(NOT_XML, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;")

const data = (id: string, value: string | number | undefined | null): string =>
  value === undefined || value === null ? "" : `<data key="${id}">${xmlText(String(value))}</data>`

/** Lists as one attribute: ids space-separated; session labels (which may hold spaces) as a JSON array. */
const idList = (ids: ReadonlyArray<number>) => (ids.length === 0 ? undefined : ids.join(" "))
const labelList = (labels: ReadonlyArray<string>) => (labels.length === 0 ? undefined : JSON.stringify(labels))

export const graphmlHeader = (
  graph: { readonly id: string; readonly dataset: string; readonly asOf: string; readonly knownAt: string }
) =>
  [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`,
    `    xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">`,
    ...GRAPHML_KEYS.map((k) => `  <key id="${k.id}" for="${k.for}" attr.name="${k.name}" attr.type="${k.type}"/>`),
    `  <graph id="${xmlText(graph.id)}" edgedefault="directed">`,
    `    ${data("g_dataset", graph.dataset)}${data("g_as_of", graph.asOf)}${data("g_known_at", graph.knownAt)}`,
    ""
  ].join("\n")

export const graphmlFooter = "  </graph>\n</graphml>\n"

export const entityNodeId = (id: number) => `e${id}`
export const artifactNodeId = (id: number) => `a${id}`

export const entityNode = (e: LinkedEntityOut): string =>
  `    <node id="${entityNodeId(e.id)}">${data("n_kind", "entity")}${data("n_label", e.name)}${
    data("n_type", e.type)
  }` +
  `${data("n_description", e.description)}${data("n_model_id", e.model_id)}${data("n_model", e.model)}` +
  `${data("n_created_at", e.created_at)}${data("n_artifact_ids", idList(e.artifact_ids))}` +
  `${data("n_session_ids", labelList(e.session_ids))}</node>\n`

export const artifactNode = (a: ArtifactOut): string =>
  `    <node id="${artifactNodeId(a.id)}">${data("n_kind", "artifact")}${data("n_label", `${a.kind} ${a.id}`)}` +
  `${data("n_artifact_kind", a.kind)}${data("n_text", a.text)}${data("n_parent_id", a.parent_id)}` +
  `${data("n_session_id", a.session_id)}${data("n_valid_at", a.valid_at)}${data("n_created_at", a.created_at)}</node>\n`

/**
 * A fact's times as its JSON form has them, but an absent value is no `<data>` at all: no
 * `valid_at` is an unknown start (true at any time before `invalid_at`), as no `invalid_at` is
 * an open end. An empty string would not be a time.
 */
export const factEdge = (f: FactOut): string =>
  `    <edge id="f${f.id}" source="${entityNodeId(f.source_id)}" target="${entityNodeId(f.target_id)}">` +
  `${data("e_kind", "fact")}${data("e_label", f.relation)}${data("e_description", f.description)}` +
  `${data("e_valid_at", f.valid_at)}${data("e_invalid_at", f.invalid_at)}${data("e_created_at", f.created_at)}` +
  `${data("e_expired_at", f.expired_at)}${data("e_artifact_id", f.artifact_id)}${data("e_model_id", f.model_id)}` +
  `${data("e_model", f.model)}${data("e_artifact_ids", idList(f.artifact_ids))}` +
  `${data("e_session_ids", labelList(f.session_ids))}</edge>\n`

/** The artifact `artifactId` mentions (yields) the entity. */
export const mentionEdge = (artifactId: number, entityId: number): string =>
  `    <edge id="m${artifactId}-${entityId}" source="${artifactNodeId(artifactId)}" target="${
    entityNodeId(entityId)
  }">` +
  `${data("e_kind", "mentions")}${data("e_label", "mentions")}</edge>\n`
