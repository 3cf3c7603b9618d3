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
  /** null: the start is unknown, unbounded below (an end was stated without a start) */
  readonly valid_at: string | null
  readonly invalid_at: string | null
}

/** A fact's start as an instant: an unknown start is unbounded below. */
export const startOf = (validAt: string | null): number => (validAt === null ? -Infinity : instant(validAt))

/** A fact's end as an instant: an open end is unbounded above. */
export const endOf = (invalidAt: string | null): number => (invalidAt === null ? Infinity : instant(invalidAt))

/** Whether a fact holds at `time`: valid_at <= time < invalid_at, a null start counting as unbounded. */
export const holdsAt = (fact: FactTimes, time: string): boolean =>
  startOf(fact.valid_at) <= instant(time) && instant(time) < endOf(fact.invalid_at)

/**
 * The start two statements of one fact give it together: the earliest known start. A null start
 * is unknown, not earlier: "lived in Oslo until 2022" adds nothing to "lives in Oslo since
 * 2020". Commutative and associative, so the order the statements arrive in does not matter.
 */
export const earliestKnownStart = (a: string | null, b: string | null): string | null =>
  a === null ? b : b === null ? a : instant(b) < instant(a) ? b : a

/** A stored edge among the candidates, live or closed; the keys are entityKey(name_key, type) of its endpoints. */
export interface StoredFact extends FactTimes {
  readonly id: number
  readonly source_key: string
  readonly target_key: string
  readonly relation: string
  /** null while it is live */
  readonly expired_at: string | null
  /** the end its statements gave, before a decision cut it (absent: invalid_at) */
  readonly stated_invalid_at?: string | null | undefined
}

/**
 * The interval a repeat is matched against. A fact with a known start ends where the decisions
 * put it: "lives in Berlin" after a move to Lisbon closed the first Berlin is a new stay. A fact
 * whose start is unknown was cut only because its start counts as unbounded, which a later start
 * may undo, so its statements' end counts: "lives in Oslo since 2021" is the same stay as "lived
 * in Oslo until 2022", even after a home of 2019 cut that one short.
 */
const statedTimes = (fact: StoredFact): FactTimes => ({
  valid_at: fact.valid_at,
  invalid_at: fact.valid_at === null && fact.stated_invalid_at !== undefined ? fact.stated_invalid_at : fact.invalid_at
})

/** A fact of the text being remembered; `index` is its position in the extraction. */
export interface NewFact extends FactTimes {
  readonly index: number
  readonly source_key: string
  readonly target_key: string
  readonly relation: string
}

/**
 * Rule 1: the intervals [valid_at, invalid_at) overlap unless one ends at or before the
 * other starts. A null invalid_at is open-ended, a null valid_at unbounded below.
 */
export const intervalsOverlap = (a: FactTimes, b: FactTimes): boolean =>
  endOf(a.invalid_at) > startOf(b.valid_at) && endOf(b.invalid_at) > startOf(a.valid_at)

const sameTime = (a: string | null, b: string | null) => a === null || b === null ? a === b : instant(a) === instant(b)

/** Whether a statement can be of the same fact as another: the same times (an empty interval too), or overlapping ones. */
const sameOrOverlapping = (a: FactTimes, b: FactTimes): boolean =>
  (sameTime(a.valid_at, b.valid_at) && sameTime(a.invalid_at, b.invalid_at)) || intervalsOverlap(a, b)

/**
 * New facts with the same source, target and relation as a stored fact whose interval they
 * overlap, detected without the model: the same fact told again, live or already closed. A
 * stored fact of another period (no overlap) is not a repeat: "lives in Berlin again" is a new
 * fact. Among several, the one stating the same times (so remembering a text again changes
 * nothing), else a live one, else the newest (`stored` is newest first). Returns new fact
 * index -> stored edge id.
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
  const repeats = new Map<number, number>()
  for (const fact of newFacts) {
    const same = (byKey.get(JSON.stringify([fact.source_key, fact.target_key, fact.relation])) ?? [])
      .filter((s) => sameOrOverlapping(statedTimes(s), fact))
    const chosen = same.find((s) => {
      const stated = statedTimes(s)
      return sameTime(stated.valid_at, fact.valid_at) && sameTime(stated.invalid_at, fact.invalid_at)
    }) ??
      same.find((s) => s.expired_at === null) ?? same[0]
    if (chosen !== undefined) repeats.set(fact.index, chosen.id)
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
  /** null: the end was stated by a repeat, the fact is not superseded */
  readonly expired_at: string | null
}

/** A stored fact whose start a repeat made known or earlier (see earliestKnownStart). */
export interface PlannedRestart {
  readonly id: number
  readonly valid_at: string
}

/**
 * One closing decision, kept so a forget can undo it (docs/FORGET.md): every pair that closes,
 * not only the earliest per fact, so the next one still holds when one closer is forgotten.
 * - close: a new fact closes a stored one (rules 2 and 4), live or already closed later;
 * - born_closed: a new fact is stored closed because of a stored one (rule 3);
 * - repeat_end: a repeat that states an end closes the stored fact it repeats;
 * - contradicts: the model said they contradict and their times end neither now (no overlap, or
 *   neither has a start); kept so that a start learned later decides it.
 */
export type PlannedDecision =
  | {
    readonly kind: "close" | "repeat_end"
    readonly stored_id: number
    readonly new_index: number
    readonly invalid_at: string
  }
  | {
    readonly kind: "contradicts"
    readonly stored_id: number
    readonly new_index: number
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
  /** stored edges whose end moves earlier, each once, in the order they were first closed */
  readonly closes: ReadonlyArray<PlannedClose>
  /** the ids of the live `closes`, same order (the response's invalidated_edges) */
  readonly invalidated: ReadonlyArray<number>
  /** stored edges whose start a repeat changed */
  readonly restarts: ReadonlyArray<PlannedRestart>
}

export interface ReconciliationInput {
  readonly newFacts: ReadonlyArray<NewFact>
  /** the candidates (stored edges, live and closed) */
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
 * Decides, per new fact, insert or duplicate, which stored edges end earlier, and which get a
 * known or earlier start. Every stored candidate counts, closed ones included, so the result
 * does not depend on the order texts arrive in (contracts section 3):
 * - An exact repeat is a duplicate of that edge, whatever the model said; else a model
 *   duplicate whose interval overlaps is one (it wins over a contradiction for the same fact).
 *   A duplicate is never inserted and its contradictions are not applied; it gives the stored
 *   edge the earliest known start of the two, and a stated end closes it there (repeat_end)
 *   when that is earlier than the end it has.
 * - For each contradiction between an inserted N and a stored E whose current intervals
 *   overlap: t(E) <= t(N) -> E ends at N.valid_at (the earliest such N); t(N) < t(E) -> N is
 *   stored ending at E.valid_at (the earliest such E), E unchanged. A null start is unbounded
 *   below; two facts that both lack a start are left as they are (neither has a time to end
 *   the other at).
 * An edge that was already closed keeps its expired_at (when gligabao first learned it ended).
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
  // stored id -> the invalid_at it gets (the earliest); Map keeps first-close order
  const closeAt = new Map<number, string>()
  const startOfStored = new Map<number, string | null>()
  const endOfStored = (e: StoredFact) => closeAt.get(e.id) ?? e.invalid_at
  // the stored facts whose earliest end is one a repeat stated, not one a newer fact imposed
  const endStated = new Set<number>()
  const closeStored = (e: StoredFact, at: string, stated: boolean) => {
    const current = endOf(endOfStored(e))
    // a statement of the very end a newer fact imposed makes that end the fact's own, so it is
    // live: had the statement come first, the newer fact would have found it ended (no overlap).
    // Only when its statements said a later end (known since migration 0009): else nothing is new.
    if (
      stated && instant(at) === current && e.expired_at !== null && !closeAt.has(e.id) &&
      e.stated_invalid_at !== undefined && endOf(e.stated_invalid_at) > current
    ) {
      closeAt.set(e.id, e.invalid_at!)
      endStated.add(e.id)
      return
    }
    if (instant(at) >= current) return
    closeAt.set(e.id, at)
    if (stated) endStated.add(e.id)
    else endStated.delete(e.id)
  }
  const duplicateOf = new Map<number, number>()
  for (const fact of input.newFacts) {
    const modelDuplicate = modelDuplicates.get(fact.index)
    const modelStored = modelDuplicate === undefined ? undefined : storedById.get(modelDuplicate)
    const id = input.exact.get(fact.index) ??
      (modelDuplicate !== undefined &&
          sameOrOverlapping(modelStored === undefined ? fact : statedTimes(modelStored), fact)
        ? modelDuplicate
        : undefined)
    if (id !== undefined) duplicateOf.set(fact.index, id)
  }
  // Repeats first: the starts they give, then the ends they state, so that the contradictions
  // below compare with every stored fact as this text leaves it, whatever the facts' order.
  for (const fact of input.newFacts) {
    const stored = storedById.get(duplicateOf.get(fact.index) ?? -1)
    if (stored === undefined) continue
    startOfStored.set(stored.id, earliestKnownStart(startOfStored.get(stored.id) ?? stored.valid_at, fact.valid_at))
  }
  for (const fact of input.newFacts) {
    const stored = storedById.get(duplicateOf.get(fact.index) ?? -1)
    // a repeat that says the fact ended ("Alice moved from Berlin to Paris") ends it there
    if (stored === undefined || fact.invalid_at === null) continue
    if (instant(fact.invalid_at) <= startOf(startOfStored.get(stored.id)!)) continue
    decisions.push({ kind: "repeat_end", stored_id: stored.id, new_index: fact.index, invalid_at: fact.invalid_at })
    closeStored(stored, fact.invalid_at, true)
  }
  for (const fact of input.newFacts) {
    const duplicate = duplicateOf.get(fact.index)
    if (duplicate !== undefined) {
      facts.push({ index: fact.index, action: "duplicate", edge_id: duplicate })
      continue
    }
    let closedAt: string | null = null
    for (const id of new Set(contradicted.get(fact.index) ?? [])) {
      const existing = storedById.get(id)
      if (existing === undefined) continue
      const current = { valid_at: startOfStored.get(id) ?? existing.valid_at, invalid_at: endOfStored(existing) }
      const overlap = intervalsOverlap(current, fact)
      if (overlap && fact.valid_at !== null && startOf(current.valid_at) <= startOf(fact.valid_at)) {
        // rules 2 and 4: the stored fact ended when the new one began
        closeStored(existing, fact.valid_at, false)
        decisions.push({ kind: "close", stored_id: id, new_index: fact.index, invalid_at: fact.valid_at })
      } else if (overlap && current.valid_at !== null && startOf(fact.valid_at) < startOf(current.valid_at)) {
        // rule 3: the text reports an older state, which ended when the stored one began
        closedAt = earlier(closedAt, current.valid_at)
        decisions.push({ kind: "born_closed", new_index: fact.index, stored_id: id, invalid_at: current.valid_at })
      } else {
        // rule 1, or two unknown starts: nothing ends now, but a start learned later may decide it
        decisions.push({ kind: "contradicts", stored_id: id, new_index: fact.index })
      }
    }
    const end = closedAt === null || endOf(fact.invalid_at) <= instant(closedAt) ? fact.invalid_at : closedAt
    facts.push({
      index: fact.index,
      action: "insert",
      invalid_at: end,
      expired_at: end === fact.invalid_at ? null : input.now
    })
  }

  // an end a statement gave leaves the fact live, as a fact stored with its own end is; one that a
  // newer fact imposed expires it (or keeps when gligabao first learned it ended)
  const closes = [...closeAt].map(([id, invalid_at]) => ({
    id,
    invalid_at,
    expired_at: endStated.has(id) ? null : storedById.get(id)?.expired_at ?? input.now
  }))
  return {
    facts,
    decisions,
    closes,
    invalidated: closes.filter((c) => storedById.get(c.id)?.expired_at === null).map((c) => c.id),
    restarts: [...startOfStored].flatMap(([id, valid_at]) =>
      valid_at === null || sameTime(valid_at, storedById.get(id)!.valid_at) ? [] : [{ id, valid_at }]
    )
  }
}
