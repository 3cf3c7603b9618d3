/**
 * `GET /v1/gb/graph`: a dataset's entities, facts and artifacts as one JSON document or as
 * GraphML, produced page by page (keyset paging by id) so that a large dataset never sits in
 * memory whole. The pages are read as of one instant: `known_at` defaults to the moment the
 * export starts, so remembers that commit while it streams do not show up halfway.
 */
import { Chunk, Clock, Effect, Option, Stream } from "effect"
import { toIso } from "../domain/time.js"
import type { ReadFilters } from "../services/SearchRepo.js"
import { datasetOf, filtersAt, type ReadDeps } from "./deps.js"
import { artifactNode, entityNode, factEdge, graphmlFooter, graphmlHeader, mentionEdge } from "./graphml.js"
import type { GraphFormat, GraphRequest } from "./requests.js"
import { artifactOut, entityItem, entityOut, factOut, linked } from "./views.js"

/** The GraphML export's media type (documented in the OpenAPI document beside the JSON). */
export const GRAPHML_MEDIA_TYPE = "application/graphml+xml"

/** Rows per page (and per SQL statement of links). */
export const EXPORT_PAGE = 500

export interface GraphExport {
  readonly format: GraphFormat
  readonly contentType: string
  /** a suggested file name */
  readonly filename: string
  /** the document, in pieces */
  readonly body: Stream.Stream<string>
}

/** Pages of rows by ascending id, until a short page. */
const paged = <A extends { readonly id: number }>(
  page: (afterId: number) => Effect.Effect<ReadonlyArray<A>>
): Stream.Stream<ReadonlyArray<A>> =>
  Stream.paginateEffect(0, (afterId) =>
    Effect.map(page(afterId), (rows) => {
      const last = rows[rows.length - 1]
      return [rows, rows.length < EXPORT_PAGE || last === undefined ? Option.none() : Option.some(last.id)] as const
    })).pipe(Stream.filter((rows) => rows.length > 0))

/** A JSON array's elements, comma-separated across pages. */
const jsonElements = <A>(pages: Stream.Stream<ReadonlyArray<A>>, encode: (a: A) => unknown) =>
  pages.pipe(
    Stream.mapAccum(true, (first, rows) => [
      false,
      (first ? "\n" : ",\n") + rows.map((r) => JSON.stringify(encode(r))).join(",\n")
    ])
  )

const asJson = (
  deps: ReadDeps,
  datasetId: number,
  filters: ReadFilters,
  head: Record<string, unknown>
): Stream.Stream<string> => {
  const { search } = deps
  const opening = JSON.stringify(head).slice(0, -1)
  return Stream.concatAll(Chunk.make(
    Stream.succeed(`${opening},"entities":[`),
    jsonElements(paged((after) => search.page("entities", datasetId, filters, after, EXPORT_PAGE)), entityOut),
    Stream.succeed(`\n],"edges":[`),
    jsonElements(
      paged((after) => search.page("facts", datasetId, filters, after, EXPORT_PAGE)),
      (f) => factOut(f, filters.knownAt)
    ),
    Stream.succeed(`\n],"artifacts":[`),
    jsonElements(paged((after) => search.page("artifacts", datasetId, filters, after, EXPORT_PAGE)), artifactOut),
    Stream.succeed("\n]}\n")
  ))
}

/**
 * Artifacts first, then entities (with a `mentions` edge from each exported artifact that
 * yielded them), then facts. A fact whose endpoint the filters left out (a session that
 * restated a fact without naming an endpoint again) brings that endpoint's node along, so every
 * edge points at a node of the document.
 */
const asGraphml = (
  deps: ReadDeps,
  datasetId: number,
  filters: ReadFilters,
  graph: Parameters<typeof graphmlHeader>[0]
) =>
  // the sets of exported ids belong to one run of the stream
  Stream.suspend(() => graphmlPieces(deps, datasetId, filters, graph))

const graphmlPieces = (
  deps: ReadDeps,
  datasetId: number,
  filters: ReadFilters,
  graph: Parameters<typeof graphmlHeader>[0]
) => {
  const { search } = deps
  const artifacts = new Set<number>()
  const entities = new Set<number>()
  const artifactNodes = paged((after) => search.page("artifacts", datasetId, filters, after, EXPORT_PAGE)).pipe(
    Stream.map((rows) =>
      rows.map((a) => {
        artifacts.add(a.id)
        return artifactNode(artifactOut(a))
      }).join("")
    )
  )
  const entityNodes = paged((after) => search.page("entities", datasetId, filters, after, EXPORT_PAGE)).pipe(
    Stream.map((rows) =>
      rows.map((e) => {
        entities.add(e.id)
        const mentions = e.artifact_ids.filter((a) => artifacts.has(a)).map((a) => mentionEdge(a, e.id)).join("")
        return entityNode(entityOut(e)) + mentions
      }).join("")
    )
  )
  // a fact's endpoint comes along whatever the filters said of entities
  const endpointsOnly = { ...filters, sessionId: null, kind: null, conditions: null }
  const factEdges = paged((after) => search.page("facts", datasetId, filters, after, EXPORT_PAGE)).pipe(
    Stream.mapEffect((rows) =>
      Effect.gen(function*() {
        const missing = [...new Set(rows.flatMap((f) => [f.source_id, f.target_id]))].filter((id) => !entities.has(id))
        const [extra, extraLinks] = missing.length === 0 ? [[], new Map()] : yield* Effect.all([
          search.entities(datasetId, missing, endpointsOnly),
          search.links("entity", missing, endpointsOnly)
        ], { concurrency: "unbounded" })
        const nodes = extra.map((e) => {
          entities.add(e.id)
          return entityNode(linked(entityItem(e), extraLinks.get(e.id)!))
        }).join("")
        return nodes + rows.map((f) => factEdge(factOut(f, filters.knownAt))).join("")
      })
    )
  )
  return Stream.concatAll(Chunk.make(
    Stream.succeed(graphmlHeader(graph)),
    artifactNodes,
    entityNodes,
    factEdges,
    Stream.succeed(graphmlFooter)
  ))
}

/**
 * The export of the request's dataset. A dataset the user has stored nothing in exports as an
 * empty graph, its `id` and `created_at` null (GraphML: the graph `dataset-none`).
 */
export const runExportGraph = (deps: ReadDeps, request: GraphRequest): Effect.Effect<GraphExport> =>
  Effect.gen(function*() {
    const found = Option.getOrNull(yield* datasetOf(deps, request))
    const name = found?.name ?? request.dataset
    const now = toIso(yield* Clock.currentTimeMillis)
    const filters: ReadFilters = { ...filtersAt(request, now), knownAt: request.known_at ?? now }
    const safeName = name.replace(/[^A-Za-z0-9._-]+/g, "_") || "dataset"
    if (request.format === "graphml") {
      const graph = {
        id: `dataset-${found?.id ?? "none"}`,
        dataset: name,
        asOf: filters.asOf,
        knownAt: filters.knownAt!
      }
      return {
        format: "graphml",
        contentType: `${GRAPHML_MEDIA_TYPE}; charset=utf-8`,
        filename: `${safeName}.graphml`,
        body: found === null
          ? Stream.succeed(graphmlHeader(graph) + graphmlFooter)
          : asGraphml(deps, found.id, filters, graph)
      }
    }
    const head = {
      dataset: { id: found?.id ?? null, name, created_at: found?.created_at ?? null },
      as_of: filters.asOf,
      known_at: filters.knownAt,
      include_expired: filters.includeExpired,
      ...(filters.sessionId === null ? {} : { session_id: filters.sessionId }),
      ...(filters.kind === null ? {} : { kind: filters.kind })
    }
    return {
      format: "json",
      contentType: "application/json",
      filename: `${safeName}.json`,
      body: found === null
        ? Stream.succeed(`${JSON.stringify({ ...head, entities: [], edges: [], artifacts: [] })}\n`)
        : asJson(deps, found.id, filters, head)
    }
  })
