/**
 * The stats of a series (spec/contracts.md section 11): pure, over points in time order.
 */

export interface SeriesStats {
  /** the first and last times; null for an empty series */
  readonly from: string | null
  readonly to: string | null
  readonly count: number
  /** the values at `from` and `to` */
  readonly first: number | null
  readonly last: number | null
  readonly min: number | null
  readonly max: number | null
  readonly mean: number | null
  /** last - first */
  readonly change: number | null
  /** change as a percentage of |first|; null when first is 0 */
  readonly change_pct: number | null
}

export interface TimedValue {
  readonly ts: string
  readonly value: number
}

export const EMPTY_STATS: SeriesStats = {
  from: null,
  to: null,
  count: 0,
  first: null,
  last: null,
  min: null,
  max: null,
  mean: null,
  change: null,
  change_pct: null
}

/** Stats over `points`, which must be in time order (the repository returns them so). */
export const seriesStats = (points: ReadonlyArray<TimedValue>): SeriesStats => {
  if (points.length === 0) return EMPTY_STATS
  const first = points[0]!
  const last = points[points.length - 1]!
  let min = first.value
  let max = first.value
  let sum = 0
  for (const p of points) {
    if (p.value < min) min = p.value
    if (p.value > max) max = p.value
    sum += p.value
  }
  const change = last.value - first.value
  return {
    from: first.ts,
    to: last.ts,
    count: points.length,
    first: first.value,
    last: last.value,
    min,
    max,
    mean: sum / points.length,
    change,
    change_pct: first.value === 0 ? null : (change / Math.abs(first.value)) * 100
  }
}

/** Where the minimum and maximum first occur (for the observation text). */
export const extremes = (
  points: ReadonlyArray<TimedValue>
): { readonly minAt: string | null; readonly maxAt: string | null } => {
  let minP: TimedValue | undefined
  let maxP: TimedValue | undefined
  for (const p of points) {
    if (minP === undefined || p.value < minP.value) minP = p
    if (maxP === undefined || p.value > maxP.value) maxP = p
  }
  return { minAt: minP?.ts ?? null, maxAt: maxP?.ts ?? null }
}
