/**
 * Scores the graph a case left in its dataset against what the case expects (pure; see
 * evals/knowledge/README.md for the rules in prose).
 *
 * Matching is fuzzy because models name things in many ways:
 * - names: lowercased, accents and punctuation removed, a leading "the" dropped, whitespace
 *   collapsed; two names match when equal, or when the words of one are all words of the
 *   other ("Alice" and "Alice Smith"); an expected entity also matches by any of its aliases;
 * - relations: split into words (`_`, `-`, spaces), stop words ("in", "at", "of", "is", ...)
 *   dropped, a crude suffix stripping ("lives", "lived", "living" -> "liv"); two relations
 *   match when one's words are all words of the other's; an expected fact may list several
 *   acceptable relations;
 * - a fact matches when its source, relation and target match (either direction for a fact
 *   marked `symmetric`).
 * Each expected item matches at most one stored item and the other way round (so a fact
 * stored twice counts once, and the second copy lowers precision).
 */

export interface ExpectedEntity {
  readonly name: string
  readonly aliases?: ReadonlyArray<string> | undefined
  /** sessions that must have discovered it (exactly these) */
  readonly sessions?: ReadonlyArray<string> | undefined
  /** the type it must be stored with (a dataset schema's, or a built-in one), compared lowercased */
  readonly type?: string | undefined
  /** attributes it must have (a dataset schema's), each with exactly this value; others may be there too */
  readonly attributes?: Readonly<Record<string, string | number | boolean>> | undefined
}

export interface ExpectedFact {
  readonly source: string
  /** one acceptable relation or several */
  readonly relation: string | ReadonlyArray<string>
  readonly target: string
  readonly symmetric?: boolean | undefined
  /** a date prefix (`2025`, `2025-01`, `2025-01-15`): the stored valid_at must start with it */
  readonly valid_at?: string | undefined
  /** the same for invalid_at (closed facts) */
  readonly invalid_at?: string | undefined
  readonly sessions?: ReadonlyArray<string> | undefined
}

export interface Expected {
  readonly entities: ReadonlyArray<ExpectedEntity>
  /** facts still true at the end (no invalid_at, not expired) */
  readonly live: ReadonlyArray<ExpectedFact>
  /** facts known to have ended (invalid_at or expired_at set) */
  readonly closed: ReadonlyArray<ExpectedFact>
}

/** What a dataset holds at the end of a case. */
export interface GraphSnapshot {
  readonly entities: ReadonlyArray<
    {
      readonly id: number
      readonly name: string
      readonly type: string
      readonly session_ids?: ReadonlyArray<string>
      readonly attributes?: Readonly<Record<string, string | number | boolean>> | undefined
    }
  >
  readonly edges: ReadonlyArray<{
    readonly id: number
    readonly source: string
    readonly relation: string
    readonly target: string
    readonly valid_at: string | null
    readonly invalid_at: string | null
    readonly expired_at: string | null
    readonly session_ids?: ReadonlyArray<string>
  }>
}

export interface Ratio {
  readonly expected: number
  readonly actual: number
  readonly matched: number
  readonly precision: number
  readonly recall: number
  readonly f1: number
}

export interface Check {
  readonly checked: number
  readonly correct: number
  readonly accuracy: number
  readonly wrong: ReadonlyArray<string>
}

export interface CaseScore {
  readonly entities: Ratio & { readonly missing: ReadonlyArray<string>; readonly unexpected: ReadonlyArray<string> }
  readonly facts: Ratio & { readonly missing: ReadonlyArray<string>; readonly unexpected: ReadonlyArray<string> }
  /** of the matched expected facts: is each live or closed as expected (and closed at the expected date) */
  readonly invalidation: Check
  /** of the matched expected facts with a valid_at: does the stored one start with it */
  readonly dates: Check
  /** of the matched expected items with sessions: are they exactly the stored ones */
  readonly sessions: Check
  /** of the matched expected entities with a type or attributes: stored with that type and those values */
  readonly types: Check
}

// ---------------------------------------------------------------------------------------------
// names and relations

const STOP_WORDS = new Set([
  "a",
  "an",
  "the",
  "in",
  "at",
  "of",
  "to",
  "for",
  "on",
  "by",
  "with",
  "from",
  "as",
  "is",
  "are",
  "was",
  "were",
  "be",
  "been",
  "has",
  "have",
  "had",
  "its",
  "their",
  "his",
  "her"
])

export const normalizeName = (name: string): string =>
  name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()
    .replace(/^the /, "")

const words = (normalized: string): ReadonlyArray<string> => normalized.split(" ").filter((w) => w.length > 0)

const subsetOf = <A>(small: ReadonlySet<A>, big: ReadonlySet<A>) =>
  small.size > 0 && [...small].every((x) => big.has(x))

/** Whether `actual` is one of `names`, fuzzily (see the module comment). */
export const nameMatches = (names: ReadonlyArray<string>, actual: string): boolean => {
  const a = normalizeName(actual)
  const aw = new Set(words(a))
  return names.some((name) => {
    const n = normalizeName(name)
    if (n === a) return true
    const nw = new Set(words(n))
    return subsetOf(nw, aw) || subsetOf(aw, nw)
  })
}

/** Crude stemming: enough to tell "lives", "lived" and "living" are one word. */
const stem = (word: string): string => {
  if (word.length <= 3) return word
  if ((word.endsWith("ies") || word.endsWith("ied")) && word.length > 4) return `${word.slice(0, -3)}y`
  for (const suffix of ["ing", "ed", "es", "s", "e"]) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) return word.slice(0, -suffix.length)
  }
  return word
}

export const relationWords = (relation: string): ReadonlySet<string> =>
  new Set(words(normalizeName(relation.replace(/[_-]+/g, " "))).filter((w) => !STOP_WORDS.has(w)).map(stem))

export const relationMatches = (accepted: ReadonlyArray<string>, actual: string): boolean => {
  const a = relationWords(actual)
  return accepted.some((r) => {
    const e = relationWords(r)
    return subsetOf(e, a) || subsetOf(a, e)
  })
}

// ---------------------------------------------------------------------------------------------
// scoring

const ratio = (expected: number, actual: number, matched: number): Ratio => {
  const precision = actual === 0 ? 1 : matched / actual
  const recall = expected === 0 ? 1 : matched / expected
  return {
    expected,
    actual,
    matched,
    precision,
    recall,
    f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)
  }
}

const check = (checked: number, wrong: ReadonlyArray<string>): Check => ({
  checked,
  correct: checked - wrong.length,
  accuracy: checked === 0 ? 1 : (checked - wrong.length) / checked,
  wrong
})

const sameSet = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => {
  const x = new Set(a)
  const y = new Set(b)
  return x.size === y.size && [...x].every((v) => y.has(v))
}

const relations = (
  f: ExpectedFact
): ReadonlyArray<string> => (typeof f.relation === "string" ? [f.relation] : f.relation)

const describe = (
  f: { readonly source: string; readonly target: string; readonly relation: string | ReadonlyArray<string> }
) => `${f.source} -${typeof f.relation === "string" ? f.relation : f.relation.join("|")}-> ${f.target}`

/**
 * Pairs each expected item with at most one actual item: for each expected item in order, the
 * first free actual item that `fits` best (a lower rank is better; undefined: no match).
 */
const pair = <E, A>(
  expected: ReadonlyArray<E>,
  actual: ReadonlyArray<A>,
  rank: (e: E, a: A) => number | undefined
): Map<number, number> => {
  const taken = new Set<number>()
  const pairs = new Map<number, number>()
  // the best ranks first across all expected items, so an exact match is never stolen by a fuzzy one
  const options: Array<{ e: number; a: number; r: number }> = []
  expected.forEach((e, ei) =>
    actual.forEach((a, ai) => {
      const r = rank(e, a)
      if (r !== undefined) options.push({ e: ei, a: ai, r })
    })
  )
  options.sort((x, y) => x.r - y.r || x.e - y.e || x.a - y.a)
  for (const o of options) {
    if (pairs.has(o.e) || taken.has(o.a)) continue
    pairs.set(o.e, o.a)
    taken.add(o.a)
  }
  return pairs
}

export const scoreCase = (expected: Expected, actual: GraphSnapshot): CaseScore => {
  // names an expected fact's endpoint may go by: the name, and the aliases of the entity it names
  const aliasesOf = (name: string): ReadonlyArray<string> => {
    const entity = expected.entities.find((e) => normalizeName(e.name) === normalizeName(name))
    return [name, ...(entity?.aliases ?? [])]
  }

  const entityPairs = pair(expected.entities, actual.entities, (e, a) => {
    const names = [e.name, ...(e.aliases ?? [])]
    if (names.some((n) => normalizeName(n) === normalizeName(a.name))) return 0
    return nameMatches(names, a.name) ? 1 : undefined
  })

  const facts = [
    ...expected.live.map((f) => ({ fact: f, closed: false })),
    ...expected.closed.map((f) => ({ fact: f, closed: true }))
  ]
  const isClosed = (a: GraphSnapshot["edges"][number]) => a.invalid_at !== null || a.expired_at !== null
  const factPairs = pair(facts, actual.edges, ({ fact, closed }, a) => {
    const forward = nameMatches(aliasesOf(fact.source), a.source) && nameMatches(aliasesOf(fact.target), a.target)
    const backward = fact.symmetric === true && nameMatches(aliasesOf(fact.source), a.target) &&
      nameMatches(aliasesOf(fact.target), a.source)
    if (!(forward || backward) || !relationMatches(relations(fact), a.relation)) return undefined
    // among matches, the one in the expected state first
    return isClosed(a) === closed ? 0 : 1
  })

  const matchedActualEntities = new Set(entityPairs.values())
  const matchedActualEdges = new Set(factPairs.values())

  const invalidationWrong: Array<string> = []
  const datesWrong: Array<string> = []
  let datesChecked = 0
  const sessionsWrong: Array<string> = []
  let sessionsChecked = 0
  for (const [i, ai] of factPairs) {
    const { fact, closed } = facts[i]!
    const a = actual.edges[ai]!
    if (isClosed(a) !== closed) {
      invalidationWrong.push(
        `${describe(fact)}: expected ${closed ? "closed" : "live"}, stored ${closed ? "live" : "closed"}`
      )
    } else if (closed && fact.invalid_at !== undefined && !(a.invalid_at ?? "").startsWith(fact.invalid_at)) {
      invalidationWrong.push(
        `${describe(fact)}: expected closed at ${fact.invalid_at}, stored ${a.invalid_at ?? "without an end"}`
      )
    }
    if (fact.valid_at !== undefined) {
      datesChecked++
      if (!(a.valid_at ?? "null").startsWith(fact.valid_at)) {
        datesWrong.push(`${describe(fact)}: valid_at ${a.valid_at}, expected ${fact.valid_at}`)
      }
    }
    if (fact.sessions !== undefined) {
      sessionsChecked++
      if (!sameSet(fact.sessions, a.session_ids ?? [])) {
        sessionsWrong.push(`${describe(fact)}: sessions [${a.session_ids ?? []}], expected [${fact.sessions}]`)
      }
    }
  }
  const typesWrong: Array<string> = []
  let typesChecked = 0
  for (const [i, ai] of entityPairs) {
    const e = expected.entities[i]!
    if (e.type === undefined && e.attributes === undefined) continue
    typesChecked++
    const a = actual.entities[ai]!
    const stored = a.attributes ?? {}
    if (e.type !== undefined && e.type.toLowerCase() !== a.type) {
      typesWrong.push(`${e.name}: type ${a.type}, expected ${e.type.toLowerCase()}`)
    } else if (Object.entries(e.attributes ?? {}).some(([k, v]) => stored[k] !== v)) {
      typesWrong.push(`${e.name}: attributes ${JSON.stringify(stored)}, expected ${JSON.stringify(e.attributes)}`)
    }
  }
  for (const [i, ai] of entityPairs) {
    const e = expected.entities[i]!
    if (e.sessions === undefined) continue
    sessionsChecked++
    const stored = actual.entities[ai]!.session_ids ?? []
    if (!sameSet(e.sessions, stored)) sessionsWrong.push(`${e.name}: sessions [${stored}], expected [${e.sessions}]`)
  }

  return {
    entities: {
      ...ratio(expected.entities.length, actual.entities.length, entityPairs.size),
      missing: expected.entities.filter((_, i) => !entityPairs.has(i)).map((e) => e.name),
      unexpected: actual.entities.filter((_, i) => !matchedActualEntities.has(i)).map((e) => `${e.name} (${e.type})`)
    },
    facts: {
      ...ratio(facts.length, actual.edges.length, factPairs.size),
      missing: facts.filter((_, i) => !factPairs.has(i)).map(({ fact, closed }) =>
        `${describe(fact)}${closed ? " (closed)" : ""}`
      ),
      unexpected: actual.edges.filter((_, i) => !matchedActualEdges.has(i)).map((e) =>
        `${describe(e)}${isClosed(e) ? " (closed)" : ""}`
      )
    },
    invalidation: check(factPairs.size, invalidationWrong),
    dates: check(datesChecked, datesWrong),
    sessions: check(sessionsChecked, sessionsWrong),
    types: check(typesChecked, typesWrong)
  }
}

/** Micro-averages over cases: counts are summed, then divided. */
export const aggregateScores = (scores: ReadonlyArray<CaseScore>) => {
  const sum = (f: (s: CaseScore) => number) => scores.reduce((n, s) => n + f(s), 0)
  const total = (f: (s: CaseScore) => Check) => check(sum((s) => f(s).checked), scores.flatMap((s) => f(s).wrong))
  return {
    entities: ratio(sum((s) => s.entities.expected), sum((s) => s.entities.actual), sum((s) => s.entities.matched)),
    facts: ratio(sum((s) => s.facts.expected), sum((s) => s.facts.actual), sum((s) => s.facts.matched)),
    invalidation: total((s) => s.invalidation),
    dates: total((s) => s.dates),
    sessions: total((s) => s.sessions),
    types: total((s) => s.types)
  }
}
