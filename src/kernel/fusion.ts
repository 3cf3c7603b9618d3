/**
 * Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009): each ranked list gives an item
 * 1 / (k + rank), rank from 1; the sums order the fused list. Only ranks matter, so the
 * sources' own scores (bm25, ts_rank, cosine) never need to be comparable.
 */

export const SOURCES = ["fulltext", "vector", "graph"] as const
export type Source = (typeof SOURCES)[number]

/** The conventional constant: it damps the weight of the very first ranks. */
export const RRF_K = 60

/** One source's ranking, best first. Several lists may come from one source (e.g. two vector indexes). */
export interface RankedList<S extends string = Source> {
  readonly source: S
  readonly ids: ReadonlyArray<number>
}

export interface Fused {
  readonly id: number
  readonly score: number
  /** the sources that found it, in SOURCES order, joined by "+" (e.g. "fulltext+graph") */
  readonly found_by: string
}

/**
 * Fuses the lists: score = sum over the lists holding the id of 1 / (k + rank). An id repeated
 * within one list counts at its best rank. Ties go to the id with the better best rank, then
 * the smaller id, so the order is deterministic.
 */
export const fuseRanks = (lists: ReadonlyArray<RankedList>, k: number = RRF_K): ReadonlyArray<Fused> =>
  fuseRanksOf(SOURCES, lists, k)

/**
 * The same over any named sources (remember's candidate lists: name, similar, similar_fact);
 * `found_by` joins the sources in the order of `sources`.
 */
export const fuseRanksOf = <S extends string>(
  sources: ReadonlyArray<S>,
  lists: ReadonlyArray<RankedList<S>>,
  k: number = RRF_K
): ReadonlyArray<Fused> => {
  const acc = new Map<number, { score: number; best: number; sources: Set<S> }>()
  for (const list of lists) {
    const seen = new Set<number>()
    list.ids.forEach((id, index) => {
      if (seen.has(id)) return
      seen.add(id)
      const rank = index + 1
      const entry = acc.get(id) ?? { score: 0, best: rank, sources: new Set<S>() }
      entry.score += 1 / (k + rank)
      entry.best = Math.min(entry.best, rank)
      entry.sources.add(list.source)
      acc.set(id, entry)
    })
  }
  return [...acc.entries()]
    .sort(([idA, a], [idB, b]) => b.score - a.score || a.best - b.best || idA - idB)
    .map(([id, entry]) => ({
      id,
      score: entry.score,
      found_by: sources.filter((s) => entry.sources.has(s)).join("+")
    }))
}
