/** Helpers shared by the SQL repositories. */

/**
 * Rows per multi-row statement: keeps every statement far below SQLite's bound-parameter limit
 * (32766) and PostgreSQL's (65535) whatever the column count.
 */
export const BATCH_ROWS = 500

export const chunksOf = <A>(items: ReadonlyArray<A>, size: number = BATCH_ROWS): Array<ReadonlyArray<A>> => {
  const chunks: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size))
  return chunks
}

/** JSON columns are TEXT on both dialects. */
export const encodeJson = (
  value: unknown
): string | null => (value === null || value === undefined ? null : JSON.stringify(value))

export const decodeJson = <A>(text: unknown): A | null =>
  text === null || text === undefined ? null : (JSON.parse(String(text)) as A)

export const unique = <A>(items: ReadonlyArray<A>): Array<A> => Array.from(new Set(items))
