/**
 * A chunked text stores each chunk in its own transaction and its series after the last one,
 * so an anchor found missing only then would leave the earlier chunks stored. Its required
 * anchors are therefore checked before the first chunk is stored, against what the dataset
 * holds and what the chunks' extractions will add: an entity selector against the extracted
 * entities and edge endpoints, an edge selector against the extracted facts. The check is
 * permissive (what may exist passes); the check inside the last transaction stays the
 * authority.
 */
import { Effect } from "effect"
import { AnchorNotFound } from "../../domain/Errors.js"
import type { AnchorSelector } from "../../domain/Timeseries.js"
import { nameKey, type NormalizedGraph, normalizeRelation, normalizeType } from "../../kernel/normalize.js"
import type { GraphRepo } from "../../services/GraphRepo.js"
import type { SeriesRepo } from "../../services/SeriesRepo.js"
import type { SeriesToStore } from "./store.js"

const extractedEntity = (graphs: ReadonlyArray<NormalizedGraph>, key: string, type: string | undefined): boolean =>
  graphs.some((g) =>
    g.entities.some((e) => e.name_key === key && (type === undefined || e.type === type)) ||
    // an endpoint no entity names becomes a new entity of type other
    ((type === undefined || type === "other") && g.edges.some((e) => e.source_key === key || e.target_key === key))
  )

const extractedEdge = (
  graphs: ReadonlyArray<NormalizedGraph>,
  source: string,
  relation: string | undefined,
  target: string | undefined
) =>
  graphs.some((g) =>
    g.edges.some((e) =>
      e.source_key === source && (relation === undefined || e.relation === relation) &&
      (target === undefined || e.target_key === target)
    )
  )

const mayMatch = (
  deps: { readonly graph: GraphRepo["Type"]; readonly series: SeriesRepo["Type"] },
  datasetId: number | null,
  graphs: ReadonlyArray<NormalizedGraph>,
  selector: AnchorSelector
): Effect.Effect<boolean> => {
  if ("entity" in selector) {
    const key = nameKey(selector.entity.name)
    const type = selector.entity.type === undefined ? undefined : normalizeType(selector.entity.type)
    if (extractedEntity(graphs, key, type)) return Effect.succeed(true)
    if (datasetId === null) return Effect.succeed(false)
    return Effect.map(
      deps.graph.findEntitiesByNameKeys(datasetId, [key]),
      (found) => found.some((e) => type === undefined || e.type === type)
    )
  }
  if ("edge" in selector) {
    const source = nameKey(selector.edge.source)
    const relation = selector.edge.relation === undefined ? undefined : normalizeRelation(selector.edge.relation)
    const target = selector.edge.target === undefined ? undefined : nameKey(selector.edge.target)
    if (extractedEdge(graphs, source, relation, target)) return Effect.succeed(true)
    if (datasetId === null) return Effect.succeed(false)
    return Effect.map(
      deps.series.findAnchorEdges(datasetId, { sourceKey: source, relation, targetKey: target }, []),
      (found) => found.length > 0
    )
  }
  return Effect.succeed(true)
}

/** Fails with AnchorNotFound for the first required selector that cannot match. */
export const precheckAnchors = (
  deps: { readonly graph: GraphRepo["Type"]; readonly series: SeriesRepo["Type"] },
  datasetId: number | null,
  graphs: ReadonlyArray<NormalizedGraph>,
  series: ReadonlyArray<SeriesToStore>
): Effect.Effect<void, AnchorNotFound> =>
  Effect.forEach(series, (s) =>
    Effect.forEach(s.anchors, (selector, j) =>
      selector.required
        ? Effect.flatMap(mayMatch(deps, datasetId, graphs, selector), (ok) =>
          ok
            ? Effect.void
            : Effect.fail(
              new AnchorNotFound({
                message: `${s.field}.anchors[${j}] (series ${
                  JSON.stringify(s.key)
                }) matches nothing in the dataset or the text; nothing was stored`
              })
            ))
        : Effect.void, { discard: true }), { discard: true })
