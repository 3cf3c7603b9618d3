/**
 * Graph export on SQLite and PostgreSQL: JSON and GraphML well-formed on a dataset with closed
 * facts, the as_of / include_expired / session / known_at filters, paging across pages,
 * escaping of hostile text, every GraphML edge pointing at a node, and user isolation.
 */
import { expect, layer } from "@effect/vitest"
import { Chunk, Effect, Stream, TestClock } from "effect"
import { readDeps } from "../../src/query/deps.js"
import { EXPORT_PAGE, runExportGraph } from "../../src/query/export.js"
import type { GraphRequest } from "../../src/query/requests.js"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import { GraphRepo } from "../../src/services/GraphRepo.js"
import { forEachDialect } from "../support/databases.js"
import { seedGraph } from "../support/readSeed.js"
import { dataOf, parseXml, type XmlElement } from "../support/xml.js"
import { TODAY, World, worldLayer } from "./world.js"

const request = (rest: Partial<GraphRequest> = {}): GraphRequest => ({
  user_id: "alice",
  dataset: "main",
  include_expired: false,
  format: "json",
  ...rest
})

const exportPieces = (rest: Partial<GraphRequest> = {}) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(Date.parse(TODAY))
    const exported = yield* runExportGraph(yield* readDeps, request(rest))
    return { exported, pieces: Chunk.toReadonlyArray(yield* Stream.runCollect(exported.body)) }
  })

const exportJson = (rest: Partial<GraphRequest> = {}) =>
  Effect.map(exportPieces(rest), ({ pieces }) => JSON.parse(pieces.join("")))

const exportGraphml = (rest: Partial<GraphRequest> = {}) =>
  Effect.map(exportPieces({ ...rest, format: "graphml" }), ({ exported, pieces }) => ({
    exported,
    text: pieces.join(""),
    root: parseXml(pieces.join(""))
  }))

const graphOf = (root: XmlElement) => {
  const graph = root.children.find((c) => c.name === "graph")!
  const nodes = graph.children.filter((c) => c.name === "node")
  const edges = graph.children.filter((c) => c.name === "edge")
  return { graph, nodes, edges }
}

/** every edge's ends are nodes of the document, and node ids are unique */
const expectClosed = (root: XmlElement) => {
  const { edges, nodes } = graphOf(root)
  const ids = nodes.map((n) => n.attributes.id!)
  expect(new Set(ids).size).toBe(ids.length)
  for (const edge of edges) {
    expect(ids).toContain(edge.attributes.source)
    expect(ids).toContain(edge.attributes.target)
  }
}

const ids = (rows: ReadonlyArray<{ id: number }>) => rows.map((r) => r.id)

forEachDialect((_dialect, makeLayer) => {
  layer(worldLayer(makeLayer()))("export", (it) => {
    it.effect("JSON: the dataset as of now (closed facts out), every entity and artifact, with models and links", () =>
      Effect.gen(function*() {
        const { alice, mallory } = yield* World
        const doc = yield* exportJson()
        expect(Object.keys(doc)).toEqual([
          "dataset",
          "as_of",
          "known_at",
          "include_expired",
          "entities",
          "edges",
          "artifacts"
        ])
        expect(doc.dataset).toMatchObject({ id: alice.datasetId, name: "main" })
        expect(doc).toMatchObject({ as_of: TODAY, known_at: TODAY, include_expired: false })
        expect(doc.entities).toHaveLength(9)
        expect(doc.artifacts).toHaveLength(7)
        expect(ids(doc.edges).sort((a: number, b: number) => a - b)).toEqual(
          ["F3", "F7", "F4", "F5", "F6", "F2"].map(alice.fact).sort((a, b) => a - b)
        )
        expect(ids(doc.edges)).not.toContain(alice.fact("F1"))
        expect(doc.edges.find((e: { id: number }) => e.id === alice.fact("F2"))).toMatchObject({
          source: "Alice Smith",
          target: "Paris",
          model: "extractor-1",
          model_id: expect.any(Number),
          artifact_ids: [alice.artifact("A3")],
          session_ids: ["s3"]
        })
        expect(doc.entities.find((e: { name: string }) => e.name === "Alice Smith")).toMatchObject({
          model: "extractor-1",
          artifact_ids: ["A1", "A2", "A3"].map(alice.artifact),
          session_ids: ["s1", "s2", "s3"]
        })
        expect(doc.artifacts.find((a: { id: number }) => a.id === alice.artifact("C1"))).toMatchObject({
          kind: "chunk",
          parent_id: alice.artifact("A4")
        })
        expect(ids(doc.entities)).not.toContain(mallory.entity("Alice Smith"))
        expect(ids(doc.edges)).not.toContain(mallory.fact("M1"))
      }))

    it.effect("JSON filters: include_expired, as_of, session_id, known_at", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        const all = yield* exportJson({ include_expired: true })
        expect(all.edges).toHaveLength(7)
        expect(all.edges.find((e: { id: number }) => e.id === alice.fact("F1"))).toMatchObject({
          invalid_at: "2025-05-01T00:00:00.000Z",
          expired_at: "2025-05-01T00:00:00.000Z"
        })
        const then = yield* exportJson({ as_of: "2025-04-01T00:00:00.000Z" })
        expect(ids(then.edges)).toContain(alice.fact("F1"))
        expect(ids(then.edges)).not.toContain(alice.fact("F2"))

        const s2 = yield* exportJson({ session_id: "s2" })
        expect(s2.session_id).toBe("s2")
        expect(ids(s2.edges).sort()).toEqual([alice.fact("F4"), alice.fact("F5")].sort())
        expect(s2.entities.map((e: { name: string }) => e.name).sort()).toEqual(["Alice Smith", "Bob", "Chess"])
        expect(ids(s2.artifacts)).toEqual([alice.artifact("A2")])

        const early = yield* exportJson({ known_at: "2024-01-15T00:00:00.000Z" })
        expect(early.known_at).toBe("2024-01-15T00:00:00.000Z")
        expect(early.entities.map((e: { name: string }) => e.name).sort()).toEqual([
          "Acme",
          "Alice Smith",
          "Berlin",
          "Carol",
          "Rome"
        ])
        // the Berlin fact was open then
        const f1 = early.edges.find((e: { id: number }) => e.id === alice.fact("F1"))
        expect(f1).toBeDefined()
        expect(f1.invalid_at).toBeUndefined()
      }))

    it.effect("GraphML: well-formed, entity and artifact nodes, fact and mention edges, closed facts with include_expired", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        const { exported, root } = yield* exportGraphml({ include_expired: true })
        expect(exported.contentType).toContain("application/graphml+xml")
        expect(exported.filename).toBe("main.graphml")
        expect(root.name).toBe("graphml")
        expect(root.attributes.xmlns).toBe("http://graphml.graphdrawing.org/xmlns")
        const keys = root.children.filter((c) => c.name === "key")
        expect(keys.map((k) => k.attributes["attr.name"])).toEqual(
          expect.arrayContaining(["label", "node_kind", "edge_kind"])
        )
        const { edges, graph, nodes } = graphOf(root)
        expect(graph.attributes.edgedefault).toBe("directed")
        expect(dataOf(graph)).toMatchObject({ g_dataset: "main", g_as_of: TODAY })
        expect(nodes.filter((n) => dataOf(n).n_kind === "entity")).toHaveLength(9)
        expect(nodes.filter((n) => dataOf(n).n_kind === "artifact")).toHaveLength(7)
        const facts = edges.filter((e) => dataOf(e).e_kind === "fact")
        expect(facts).toHaveLength(7)
        // 12 entity-artifact links in the world
        expect(edges.filter((e) => dataOf(e).e_kind === "mentions")).toHaveLength(12)
        const f1 = facts.find((e) => e.attributes.id === `f${alice.fact("F1")}`)!
        expect(f1.attributes).toMatchObject({
          source: `e${alice.entity("Alice Smith")}`,
          target: `e${alice.entity("Berlin")}`
        })
        expect(dataOf(f1)).toMatchObject({
          e_label: "lives in",
          e_invalid_at: "2025-05-01T00:00:00.000Z",
          e_model: "extractor-1",
          e_artifact_ids: String(alice.artifact("A1")),
          e_session_ids: "[\"s1\"]"
        })
        const aliceNode = nodes.find((n) => n.attributes.id === `e${alice.entity("Alice Smith")}`)!
        expect(dataOf(aliceNode)).toMatchObject({ n_label: "Alice Smith", n_type: "person" })
        expectClosed(root)
      }))

    it.effect("GraphML: a fact whose endpoints the filter left out brings its endpoint nodes along", () =>
      Effect.gen(function*() {
        const { alice } = yield* World
        const { root } = yield* exportGraphml({ session_id: "s4" })
        const { edges, nodes } = graphOf(root)
        expect(edges.map((e) => e.attributes.id)).toEqual([`f${alice.fact("F6")}`])
        expect(nodes.map((n) => n.attributes.id).sort()).toEqual(
          [`e${alice.entity("Acme")}`, `e${alice.entity("Bremen")}`].sort()
        )
        expectClosed(root)
      }))

    it.effect("hostile text is escaped (markup, quotes) or dropped (characters XML cannot hold)", () =>
      Effect.gen(function*() {
        yield* seedGraph({
          user: "weird",
          artifacts: [{
            key: "W",
            text: "]]> <script>alert('x')</script> & \u0001\uFFFE done",
            at: "2024-01-01T00:00:00.000Z"
          }],
          entities: [
            {
              name: "<Tom & \"Jerry\">",
              type: "person",
              description: "a cat's \u0007bell 🐱",
              at: "2024-01-01T00:00:00.000Z",
              artifacts: ["W"]
            },
            { name: "Ünïcødé", type: "place", at: "2024-01-01T00:00:00.000Z", artifacts: ["W"] }
          ],
          facts: [{
            key: "X",
            source: "<Tom & \"Jerry\">",
            target: "Ünïcødé",
            relation: "a<b",
            description: "x & y < z",
            valid_at: "2024-01-01T00:00:00.000Z",
            at: "2024-01-01T00:00:00.000Z",
            artifacts: ["W"],
            sessions: ["with space"]
          }]
        })
        const { root } = yield* exportGraphml({ user_id: "weird" })
        const { edges, nodes } = graphOf(root)
        const tom = nodes.find((n) => dataOf(n).n_type === "person")!
        expect(dataOf(tom).n_label).toBe("<Tom & \"Jerry\">")
        expect(dataOf(tom).n_description).toBe("a cat's bell 🐱")
        expect(dataOf(nodes.find((n) => dataOf(n).n_kind === "artifact")!).n_text).toBe(
          "]]> <script>alert('x')</script> &  done"
        )
        const fact = edges.find((e) => dataOf(e).e_kind === "fact")!
        expect(dataOf(fact)).toMatchObject({
          e_label: "a<b",
          e_description: "x & y < z",
          e_session_ids: "[\"with space\"]"
        })
        // JSON keeps the text as stored
        const doc = yield* exportJson({ user_id: "weird" })
        expect(doc.entities[0].description).toBe("a cat's \u0007bell 🐱")
      }))

    it.effect("pages: a dataset larger than a page comes out whole, in order, in pieces", () =>
      Effect.gen(function*() {
        const datasets = yield* DatasetsRepo
        const graph = yield* GraphRepo
        const dataset = yield* datasets.getOrCreate("big", "main", "2024-01-01T00:00:00.000Z")
        const n = EXPORT_PAGE * 2 + 1
        const entities = yield* graph.upsertEntities(
          dataset.id,
          Array.from({ length: n }, (_, i) => ({
            name: `Person ${i}`,
            name_key: `person ${i}`,
            type: "person",
            description: "",
            model_id: null,
            created_at: "2024-01-01T00:00:00.000Z"
          }))
        )
        yield* graph.insertEdges(entities.map((e, i) => ({
          dataset_id: dataset.id,
          source_id: e.id,
          target_id: entities[(i + 1) % n]!.id,
          relation: "knows",
          description: `Person ${i} knows the next one`,
          valid_at: "2024-01-01T00:00:00.000Z",
          invalid_at: null,
          created_at: "2024-01-01T00:00:00.000Z",
          expired_at: null,
          artifact_id: null,
          model_id: null
        })))
        const { pieces } = yield* exportPieces({ user_id: "big" })
        // header, 3 pages of entities, separator, 3 pages of edges, separator, end
        expect(pieces.length).toBeGreaterThanOrEqual(9)
        const doc = JSON.parse(pieces.join(""))
        expect(doc.entities).toHaveLength(n)
        expect(doc.edges).toHaveLength(n)
        expect(ids(doc.edges)).toEqual([...ids(doc.edges)].sort((a, b) => a - b))
        expect(new Set(ids(doc.entities)).size).toBe(n)
        const { root } = yield* exportGraphml({ user_id: "big" })
        expect(graphOf(root).edges).toHaveLength(n)
        expectClosed(root)
      }))

    it.effect("a dataset the user has stored nothing in exports empty, even if another user has one of that name", () =>
      Effect.gen(function*() {
        const doc = yield* exportJson({ user_id: "eve" })
        expect(doc).toMatchObject({
          dataset: { id: null, name: "main", created_at: null },
          entities: [],
          edges: [],
          artifacts: []
        })
      }))
  })
})
