/**
 * The passages of a search: chunks by their own vectors and by their summaries' (both
 * "vector"), and the texts the ranked facts were extracted from, best fact first ("graph":
 * provenance links). A short text that was not chunked is its own passage.
 */
import { Effect } from "effect"
import type { ArtifactRow } from "../domain/Rows.js"
import { fuseRanks } from "../kernel/fusion.js"
import type { ReadFilters } from "../services/SearchRepo.js"
import type { ReadDeps } from "./deps.js"
import { artifactOut, type ChunkOut, type FactOut, type Scored } from "./views.js"

/**
 * `summaries` are the rows of the summary hits (read beside the ranked facts); `facts` the
 * ranked facts, with their links.
 */
export const rankPassages = (
  deps: ReadDeps,
  datasetId: number,
  filters: ReadFilters,
  hits: { readonly chunks: ReadonlyArray<number>; readonly summaries: ReadonlyArray<number> },
  summaries: ReadonlyArray<ArtifactRow>,
  facts: ReadonlyArray<FactOut>,
  k: number,
  limit: number
): Effect.Effect<ReadonlyArray<ChunkOut & Scored>> =>
  Effect.gen(function*() {
    const { search } = deps
    const summaryParent = new Map(
      summaries.flatMap((s) => (s.parent_id === null ? [] : [[s.id, s.parent_id] as const]))
    )
    const bySummary = hits.summaries.flatMap((id) => summaryParent.get(id) ?? [])
    const provenance = [...new Set(facts.flatMap((f) => [...f.artifact_ids].reverse()))].slice(0, k)
    const rows = new Map(
      (yield* search.artifacts(datasetId, [...hits.chunks, ...bySummary, ...provenance], filters)).map((r) => [r.id, r])
    )
    const present = (ids: ReadonlyArray<number>) => ids.filter((id) => rows.has(id))
    const fused = fuseRanks([
      { source: "vector", ids: present(hits.chunks) },
      { source: "vector", ids: present(bySummary) },
      { source: "graph", ids: present(provenance) }
    ]).slice(0, limit)
    const summaryOf = new Map<number, ArtifactRow>()
    for (const s of yield* search.summariesOf(datasetId, fused.map((f) => f.id))) {
      if (s.parent_id !== null && !summaryOf.has(s.parent_id)) summaryOf.set(s.parent_id, s)
    }
    return fused.flatMap((f) => {
      const row = rows.get(f.id)
      if (row === undefined) return []
      const summary = summaryOf.get(f.id)
      return [{
        ...artifactOut(row),
        ...(summary === undefined ? {} : { summary: summary.text }),
        score: f.score,
        found_by: f.found_by
      }]
    })
  }).pipe(Effect.withSpan("Retrieval.passages"))
