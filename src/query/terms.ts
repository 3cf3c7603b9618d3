/**
 * The words of a query, for full-text search. Any matching word counts (the engines OR them and
 * rank by how many and how rare), so a question in plain language works: "Where does Alice
 * live?" searches `alice` and `live`. The engines stem the words themselves.
 */

/** Common English words that would match half a dataset and rank nothing. */
const STOP_WORDS = new Set(
  (
    "a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its " +
    "me my no not of on or our she so that the their them then there these they this those to was we were what when " +
    "where which who whom whose why will with would you your about any all also am just more most now only other " +
    "over same some such than too very know known tell"
  ).split(" ")
)

/** At most this many words: a pasted paragraph must not become a query of hundreds of terms. */
export const MAX_TERMS = 24

/**
 * Lowercased words (runs of letters and digits, NFKC-normalized), without stop words (unless
 * the query has nothing else, as in "The Who"), each once, in order, at most MAX_TERMS.
 */
export const queryTerms = (query: string): ReadonlyArray<string> => {
  const words = query.normalize("NFKC").toLowerCase().match(/[\p{L}\p{M}\p{N}]+/gu) ?? []
  const unique = [...new Set(words)]
  const content = unique.filter((w) => !STOP_WORDS.has(w))
  return (content.length > 0 ? content : unique).slice(0, MAX_TERMS)
}
