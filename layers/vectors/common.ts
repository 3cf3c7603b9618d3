/** What every VectorStore adapter checks and computes the same way. */
import { VectorWriteFailed } from "../../src/domain/Errors.js"
import type { VectorItem, VectorMatch } from "../../src/services/VectorStore.js"

export type Metadata = VectorMatch["metadata"]

/** A message naming the vector, when `values` cannot be stored or searched with `dimensions` numbers. */
export const vectorProblem = (values: ReadonlyArray<number>, dimensions: number | undefined): string | undefined => {
  if (values.length === 0) return "is empty"
  if (dimensions !== undefined && values.length !== dimensions) {
    return `has ${values.length} numbers, the store holds ${dimensions}-dimensional vectors`
  }
  for (const value of values) if (!Number.isFinite(value)) return "contains a number that is not finite"
  return undefined
}

/** Checks every item (and that no id is empty) before anything is written. */
export const checkItems = (
  store: string,
  index: string,
  items: ReadonlyArray<VectorItem>,
  dimensions: number | undefined
): VectorWriteFailed | undefined => {
  if (index === "") return new VectorWriteFailed({ message: `${store}: the index name is empty` })
  for (const item of items) {
    if (item.id === "") return new VectorWriteFailed({ message: `${store}: a vector for ${index} has an empty id` })
    const problem = vectorProblem(item.values, dimensions)
    if (problem !== undefined) {
      return new VectorWriteFailed({ message: `${store}: vector ${item.id} for ${index} ${problem}` })
    }
  }
  return undefined
}

export const checkQuery = (
  store: string,
  index: string,
  vector: ReadonlyArray<number>,
  dimensions: number | undefined
): VectorWriteFailed | undefined => {
  const problem = vectorProblem(vector, dimensions)
  return problem === undefined
    ? undefined
    : new VectorWriteFailed({ message: `${store}: the query vector for ${index} ${problem}` })
}

/** One item per id, the last one winning (as consecutive upserts would). */
export const lastPerId = (items: ReadonlyArray<VectorItem>): ReadonlyArray<VectorItem> => [
  ...new Map(items.map((item) => [item.id, item] as const)).values()
]

/** Cosine similarity; 0 when either vector has no length (nothing is similar to nothing). */
export const cosine = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!
    const y = b[i]!
    dot += x * y
    na += x * x
    nb += y * y
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}

/**
 * Best first; equal scores (the same text embedded twice) by id, so that a search answers the
 * same whatever order its rows came in.
 */
export const byScore = (a: { readonly score: number; readonly id: string }, b: typeof a): number =>
  b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** Best first, only score >= minScore, at most k (k <= 0 gives nothing). */
export const bestMatches = (matches: ReadonlyArray<VectorMatch>, k: number, minScore: number) =>
  matches
    .filter((match) => match.score >= minScore)
    .sort(byScore)
    .slice(0, Math.max(0, Math.floor(k)))

/** Metadata as the port types it: values that are not string, number or boolean are dropped. */
export const toMetadata = (raw: unknown): Metadata => {
  if (typeof raw !== "object" || raw === null) return {}
  const out: Record<string, string | number | boolean> = {}
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") out[key] = value
  }
  return out
}

/** Splits `items` into consecutive batches of at most `size`. */
export const chunksOf = <A>(items: ReadonlyArray<A>, size: number): ReadonlyArray<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}
