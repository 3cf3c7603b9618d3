/**
 * The temporal rules of spec/contracts.md section 3 as pure functions: exact repeats,
 * interval overlap, and the reconciliation plan (what is inserted, merged or closed).
 * Times are RFC 3339 strings; they are compared as instants (epoch ms), never lexically,
 * because offsets and precision may differ.
 */

// ---------------------------------------------------------------------------------------
// Timestamps

// Date-only, year-month, or full date-time with optional seconds, fraction and offset.
const TIMESTAMP =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?)?)?$/i

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
const daysInMonth = (year: number, month: number): number =>
  month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!

/**
 * Parses an RFC 3339 timestamp to epoch ms. Also accepts what models commonly write for
 * coarse dates: `2024-03-01` (midnight UTC), `2024-03` and `2024` (start of the period,
 * UTC), and a date-time without offset (taken as UTC). Anything else is undefined;
 * `Date.parse` is not used because it accepts arbitrary prose in local time.
 */
export const parseTimestamp = (text: string): number | undefined => {
  const m = TIMESTAMP.exec(text.trim())
  if (m === null) return undefined
  const year = Number(m[1])
  const month = m[2] === undefined ? 1 : Number(m[2])
  const day = m[3] === undefined ? 1 : Number(m[3])
  const hour = m[4] === undefined ? 0 : Number(m[4])
  const minute = m[5] === undefined ? 0 : Number(m[5])
  const second = m[6] === undefined ? 0 : Number(m[6])
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, "0"))
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined
  if (hour > 23 || minute > 59 || second > 59) return undefined
  let offsetMinutes = 0
  const zone = m[8]
  if (zone !== undefined && zone.toUpperCase() !== "Z") {
    const digits = zone.slice(1).replace(":", "")
    const oh = Number(digits.slice(0, 2))
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0
    if (oh > 23 || om > 59) return undefined
    offsetMinutes = (zone[0] === "-" ? -1 : 1) * (oh * 60 + om)
  }
  const date = new Date(0)
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, ms)
  return date.getTime() - offsetMinutes * 60_000
}

/** Epoch ms -> `2024-03-01T00:00:00.000Z`; undefined outside years 0000-9999. */
export const formatTimestamp = (epochMs: number): string | undefined => {
  if (!Number.isFinite(epochMs)) return undefined
  const iso = new Date(epochMs).toISOString()
  return /^\d{4}-/.test(iso) ? iso : undefined
}

/** Any accepted timestamp (see parseTimestamp) as RFC 3339 UTC with milliseconds. */
export const normalizeTimestamp = (text: string): string | undefined => {
  const ms = parseTimestamp(text)
  return ms === undefined ? undefined : formatTimestamp(ms)
}

/** Epoch ms of a wire time (RFC 3339); Date.parse is only a fallback for other ISO forms. */
export const instant = (time: string): number => parseTimestamp(time) ?? Date.parse(time)

// ---------------------------------------------------------------------------------------
// Facts

export interface FactTimes {
  readonly valid_at: string
  readonly invalid_at: string | null
}

/** A live stored edge (a candidate); the keys are entityKey(name_key, type) of its endpoints. */
export interface StoredFact extends FactTimes {
  readonly id: number
  readonly source_key: string
  readonly target_key: string
  readonly relation: string
}

/** A fact of the text being remembered; `index` is its position in the extraction. */
export interface NewFact extends FactTimes {
  readonly index: number
  readonly source_key: string
  readonly target_key: string
  readonly relation: string
}

/**
 * Rule 1: the intervals [valid_at, invalid_at) overlap unless one ends at or before the
 * other starts. A null invalid_at is open-ended.
 */
export const intervalsOverlap = (a: FactTimes, b: FactTimes): boolean => {
  const endsBefore = (x: FactTimes, y: FactTimes) =>
    x.invalid_at !== null && instant(x.invalid_at) <= instant(y.valid_at)
  return !endsBefore(a, b) && !endsBefore(b, a)
}

/**
 * New facts with the same source, target and relation as a stored live fact, detected
 * without the model. Among several stored facts with those keys, the one stating the same
 * times is the repeat (so remembering a text again changes nothing); else the newest
 * (`stored` is newest first). Returns new fact index -> stored edge id.
 */
export const exactRepeats = (
  newFacts: ReadonlyArray<NewFact>,
  stored: ReadonlyArray<StoredFact>
): Map<number, number> => {
  const byKey = new Map<string, Array<StoredFact>>()
  for (const fact of stored) {
    const key = JSON.stringify([fact.source_key, fact.target_key, fact.relation])
    const list = byKey.get(key) ?? []
    list.push(fact)
    byKey.set(key, list)
  }
  const sameTime = (a: string | null, b: string | null) =>
    a === null || b === null ? a === b : instant(a) === instant(b)
  const repeats = new Map<number, number>()
  for (const fact of newFacts) {
    const same = byKey.get(JSON.stringify([fact.source_key, fact.target_key, fact.relation]))
    if (same === undefined) continue
    const identical = same.find((s) => sameTime(s.valid_at, fact.valid_at) && sameTime(s.invalid_at, fact.invalid_at))
    repeats.set(fact.index, (identical ?? same[0]!).id)
  }
  return repeats
}

// ---------------------------------------------------------------------------------------
// Reconciliation

export type PlannedFact =
  | {
    readonly index: number
    readonly action: "insert"
    readonly invalid_at: string | null
    readonly expired_at: string | null
  }
  | { readonly index: number; readonly action: "duplicate"; readonly edge_id: number }

export interface PlannedClose {
  readonly id: number
  readonly invalid_at: string
  readonly expired_at: string
}

/**
 * One closing decision, kept so a forget can undo it (docs/FORGET.md): every pair that closes,
 * not only the earliest per fact, so the next one still holds when one closer is forgotten.
 * - close: a new fact closes a stored one (rules 2 and 4);
 * - born_closed: a new fact is stored closed because of a stored one (rule 3);
 * - repeat_end: a repeat that states an end closes the stored fact it repeats.
 */
export type PlannedDecision =
  | {
    readonly kind: "close" | "repeat_end"
    readonly stored_id: number
    readonly new_index: number
    readonly invalid_at: string
  }
  | {
    readonly kind: "born_closed"
    readonly new_index: number
    readonly stored_id: number
    readonly invalid_at: string
  }

export interface ReconciliationPlan {
  /** one per new fact, in newFacts order */
  readonly facts: ReadonlyArray<PlannedFact>
  readonly decisions: ReadonlyArray<PlannedDecision>
  /** stored edges to close, each once, in the order they were first closed */
  readonly closes: ReadonlyArray<PlannedClose>
  /** the ids of `closes`, same order (the response's invalidated_edges) */
  readonly invalidated: ReadonlyArray<number>
}

export interface ReconciliationInput {
  readonly newFacts: ReadonlyArray<NewFact>
  /** the candidates (live stored edges) */
  readonly stored: ReadonlyArray<StoredFact>
  /** exactRepeats(newFacts, stored) */
  readonly exact: ReadonlyMap<number, number>
  /** the model's duplicates (new index -> stored id), already filtered to known ids */
  readonly duplicates: ReadonlyArray<{ readonly new: number; readonly existing: number }>
  /** the model's contradictions, already filtered to known ids */
  readonly contradictions: ReadonlyArray<{ readonly new: number; readonly existing: ReadonlyArray<number> }>
  /** ingestion time: the expired_at of whatever this call closes */
  readonly now: string
}

const earlier = (a: string | null, b: string): string => (a === null || instant(b) < instant(a) ? b : a)

/**
 * Decides, per new fact, insert or duplicate, and which stored edges are closed.
 * - An exact repeat is a duplicate of that edge, whatever the model said; else a model
 *   duplicate is a duplicate (it wins over a contradiction for the same fact). A
 *   duplicate is never inserted and its contradictions are not applied.
 * - For each contradiction between an inserted N and a stored E (section 3): no overlap ->
 *   nothing; t(E) <= t(N) -> E is closed at N.valid_at (the earliest such N if several);
 *   t(N) < t(E) -> N is inserted closed at E.valid_at (the earliest such E), E stays live.
 * The plan never changes a valid_at.
 */
export const planReconciliation = (input: ReconciliationInput): ReconciliationPlan => {
  const storedById = new Map(input.stored.map((fact) => [fact.id, fact] as const))
  const modelDuplicates = new Map<number, number>()
  for (const d of input.duplicates) if (!modelDuplicates.has(d.new)) modelDuplicates.set(d.new, d.existing)
  const contradicted = new Map<number, Array<number>>()
  for (const c of input.contradictions) {
    const ids = contradicted.get(c.new) ?? []
    ids.push(...c.existing)
    contradicted.set(c.new, ids)
  }

  const facts: Array<PlannedFact> = []
  const decisions: Array<PlannedDecision> = []
  // stored id -> the invalid_at it gets (the earliest closing valid_at); Map keeps first-close order
  const closeAt = new Map<number, string>()
  for (const fact of input.newFacts) {
    const duplicateOf = input.exact.get(fact.index) ?? modelDuplicates.get(fact.index)
    if (duplicateOf !== undefined) {
      facts.push({ index: fact.index, action: "duplicate", edge_id: duplicateOf })
      // Beyond the seed: a repeat that says the fact ended ("Alice left Acme in 2024") ends the
      // open stored edge at that time, instead of losing the end date.
      const stored = storedById.get(duplicateOf)
      if (
        stored !== undefined && stored.invalid_at === null && fact.invalid_at !== null &&
        instant(fact.invalid_at) > instant(stored.valid_at)
      ) {
        closeAt.set(duplicateOf, earlier(closeAt.get(duplicateOf) ?? null, fact.invalid_at))
        decisions.push({
          kind: "repeat_end",
          stored_id: duplicateOf,
          new_index: fact.index,
          invalid_at: fact.invalid_at
        })
      }
      continue
    }
    let closedAt: string | null = null
    for (const id of contradicted.get(fact.index) ?? []) {
      const existing = storedById.get(id)
      if (existing === undefined || !intervalsOverlap(existing, fact)) continue
      if (instant(existing.valid_at) <= instant(fact.valid_at)) {
        // rules 2 and 4: the stored fact ended when the new one began
        closeAt.set(id, earlier(closeAt.get(id) ?? null, fact.valid_at))
        decisions.push({ kind: "close", stored_id: id, new_index: fact.index, invalid_at: fact.valid_at })
      } else {
        // rule 3: the text reports an older state, which ended when the stored one began
        closedAt = earlier(closedAt, existing.valid_at)
        decisions.push({ kind: "born_closed", new_index: fact.index, stored_id: id, invalid_at: existing.valid_at })
      }
    }
    facts.push(
      closedAt === null
        ? { index: fact.index, action: "insert", invalid_at: fact.invalid_at, expired_at: null }
        : { index: fact.index, action: "insert", invalid_at: closedAt, expired_at: input.now }
    )
  }

  const closes = [...closeAt].map(([id, invalid_at]) => ({ id, invalid_at, expired_at: input.now }))
  return { facts, decisions, closes, invalidated: closes.map((close) => close.id) }
}
