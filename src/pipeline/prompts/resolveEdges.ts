/**
 * The resolve_edges stage: its prompt and the parsing of its answer
 * (spec/contracts.md section 2). The answer is untrusted input.
 */
import { Either, Schema } from "effect"
import { answerSchemaOf } from "../../kernel/answerSchema.js"
import { jsonArray, jsonObject, parseModelJson } from "../../kernel/json.js"

export const RESOLVE_EDGES_MAX_TOKENS = 2048

/**
 * The most tokens a resolve_edges prompt (system and user message) should have. Stored facts
 * are shown by relevance until it is reached, so that with extract_graph's prompt a remember
 * stays within the cost bar on prompt tokens beyond the text (BENCHMARKS.md, Scenarios and
 * bars). A constant, not a setting: the stage runs where only the candidates are at hand.
 */
export const RESOLVE_EDGES_PROMPT_BUDGET = 1_100

/**
 * The most relevant stored facts are shown even past the budget, so that a text with very
 * many facts is still checked against the facts closest to it.
 */
export const RESOLVE_EDGES_MIN_SHOWN = 4

export interface ResolveNewFact {
  readonly index: number
  readonly source: string
  readonly relation: string
  readonly target: string
  readonly description: string
  readonly valid_at: string | null
}

export interface ResolveExistingFact {
  readonly id: number
  readonly source: string
  readonly relation: string
  readonly target: string
  readonly description: string
  readonly valid_at: string | null
}

const SYSTEM = `You compare new facts from a text with facts already stored in a memory.
The user message is a JSON object: reference_time, new_facts (each with its index) and existing_facts (each with its stored id); a fact has a description only when it says more than source, relation and target.
For each new fact decide:
- duplicate: it states the same thing as a stored fact, possibly in other words ("works at Acme" / "is employed by Acme"). Give at most one stored id.
- contradiction: it cannot be true at the same time as some stored facts (a person lives in one city at a time, a company has one CEO at a time). Judge as if both held at the same moment; code handles the dates. Facts that can hold together or only add detail are not contradictions.
- neither: leave it out.
"new" is a new fact's index, "existing" a stored fact's id; use only numbers from the lists.
Answer with one JSON object only, no prose, empty arrays when there are none:
{"duplicates":[{"new":1,"existing":40}],"contradictions":[{"new":0,"existing":[12]}]}`

/** `2024-03-01` for a midnight UTC time, else the time without zero milliseconds. */
export const compactTime = (time: string): string =>
  time.replace(/^(\d{4}-\d{2}-\d{2})T00:00(?::00(?:\.0+)?)?(?:Z|\+00:00)$/, "$1").replace(/\.0+(?=Z|[+-]\d)/, "")

// Words that add nothing to "source relation target since date".
const FILLER = new Set(
  "a an the is are was were be been being has have had in at on of to from since for by with and as its his her their"
    .split(" ")
)
const words = (text: string): Array<string> => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w !== "")

/** Whether the description only restates "source relation target" and the date (then it is left out). */
export const restatesFact = (f: Omit<ResolveNewFact, "index">): boolean => {
  const known = new Set(words(`${f.source} ${f.relation} ${f.target} ${f.valid_at}`))
  return words(f.description).every((w) => known.has(w) || FILLER.has(w))
}

/**
 * A fact as the user message carries it: the contract's fields, the time compacted, and the
 * description only when it says more than the fact's other fields (most do not; it was about
 * a third of a fact's tokens).
 */
const factJson = (f: Omit<ResolveNewFact, "index">) => ({
  source: f.source,
  relation: f.relation,
  target: f.target,
  ...(restatesFact(f) ? {} : { description: f.description }),
  valid_at: f.valid_at === null ? null : compactTime(f.valid_at)
})
const newFactJson = (f: ResolveNewFact) => ({ index: f.index, ...factJson(f) })
const existingFactJson = (f: ResolveExistingFact) => ({ id: f.id, ...factJson(f) })

/**
 * The system prompt and user message: the data as one JSON object (contracts section 2), so
 * ids are unambiguous; written without whitespace, which the model does not need.
 */
export const buildResolveEdgesPrompt = (input: {
  readonly referenceTime: string
  readonly newFacts: ReadonlyArray<ResolveNewFact>
  readonly existingFacts: ReadonlyArray<ResolveExistingFact>
}): { readonly system: string; readonly user: string } => ({
  system: SYSTEM,
  user: JSON.stringify({
    reference_time: compactTime(input.referenceTime),
    new_facts: input.newFacts.map(newFactJson),
    existing_facts: input.existingFacts.map(existingFactJson)
  })
})

/**
 * The leading stored facts of `ranked` (most relevant first) that fit the prompt in `budget`
 * tokens with these new facts; at least the first `minShown`. `count` is the tokenizer.
 */
export const fitExistingFacts = <F extends ResolveExistingFact>(
  input: {
    readonly referenceTime: string
    readonly newFacts: ReadonlyArray<ResolveNewFact>
    readonly ranked: ReadonlyArray<F>
    readonly budget: number
    readonly minShown: number
  },
  count: (text: string) => number
): Array<F> => {
  const base = buildResolveEdgesPrompt({
    referenceTime: input.referenceTime,
    newFacts: input.newFacts,
    existingFacts: []
  })
  let total = count(base.system) + count(base.user)
  const shown: Array<F> = []
  for (const fact of input.ranked) {
    // +1: the comma; facts are counted apart, which is within a token or two of the whole
    total += count(JSON.stringify(existingFactJson(fact))) + 1
    if (total > input.budget && shown.length >= input.minShown) break
    shown.push(fact)
  }
  return shown
}

export interface ReadFact {
  readonly source: string
  readonly relation: string
  readonly target: string
  /** absent when it only restated the fact */
  readonly description?: string
  readonly valid_at: string | null
}

/**
 * Reads a user message of buildResolveEdgesPrompt back (for fake models in tests and the
 * bench, which answer from what they were sent).
 */
export const readResolveEdgesPrompt = (user: string): {
  readonly reference_time: string
  readonly new_facts: ReadonlyArray<ReadFact & { readonly index: number }>
  readonly existing_facts: ReadonlyArray<ReadFact & { readonly id: number }>
} => {
  const parsed = JSON.parse(user) as Partial<ReturnType<typeof readResolveEdgesPrompt>>
  if (!Array.isArray(parsed.new_facts) || !Array.isArray(parsed.existing_facts)) {
    throw new Error("not a resolve_edges prompt")
  }
  return {
    reference_time: String(parsed.reference_time ?? ""),
    new_facts: parsed.new_facts,
    existing_facts: parsed.existing_facts
  }
}

// Models sometimes quote numbers ("12"); accept that, nothing looser.
const Id = Schema.Union(Schema.Number, Schema.NumberFromString)

const Answer = Schema.Struct({
  duplicates: Schema.optional(Schema.NullOr(jsonArray(jsonObject({ new: Id, existing: Id })))),
  contradictions: Schema.optional(
    Schema.NullOr(
      jsonArray(
        jsonObject({ new: Id, existing: Schema.Union(Id, Schema.Array(Id)) })
      )
    )
  )
})

/** The answer's JSON Schema, derived from the schema the parser decodes with. */
export const RESOLVE_EDGES_ANSWER = answerSchemaOf("resolve_edges", Answer)

export interface ResolveEdgesAnswer {
  readonly duplicates: ReadonlyArray<{ readonly new: number; readonly existing: number }>
  readonly contradictions: ReadonlyArray<{ readonly new: number; readonly existing: ReadonlyArray<number> }>
  /** what was dropped from the answer and why, for the log */
  readonly ignored: ReadonlyArray<string>
}

/**
 * Parses a resolve_edges answer. Missing (or null) arrays are empty. An index or id that
 * was not in the input is dropped and described in `ignored`; so is a second duplicate for
 * the same new fact (the first is kept). Contradictions of one new fact given in several
 * entries are merged. A contradiction written with a single id instead of an array is
 * accepted. Left for an answer with no JSON object or of the wrong shape.
 */
export const parseResolveEdges = (
  answer: string,
  newIndexes: ReadonlySet<number>,
  existingIds: ReadonlySet<number>
): Either.Either<ResolveEdgesAnswer, string> =>
  Either.map(parseModelJson(Answer, answer, "resolve_edges"), (parsed) => {
    const ignored: Array<string> = []
    const knownNew = (kind: string, index: number) => {
      if (newIndexes.has(index)) return true
      ignored.push(`${kind}: new fact ${index} is not in the input`)
      return false
    }
    const knownExisting = (kind: string, index: number, id: number) => {
      if (existingIds.has(id)) return true
      ignored.push(`${kind}: existing fact ${id} (for new fact ${index}) is not in the input`)
      return false
    }

    const duplicates = new Map<number, number>()
    for (const d of parsed.duplicates ?? []) {
      if (!knownNew("duplicates", d.new) || !knownExisting("duplicates", d.new, d.existing)) continue
      const first = duplicates.get(d.new)
      if (first === undefined) duplicates.set(d.new, d.existing)
      else if (first !== d.existing) {
        ignored.push(`duplicates: new fact ${d.new} is already a duplicate of ${first}, not also of ${d.existing}`)
      }
    }

    const contradictions = new Map<number, Array<number>>()
    for (const c of parsed.contradictions ?? []) {
      if (!knownNew("contradictions", c.new)) continue
      const ids = contradictions.get(c.new) ?? []
      for (const id of typeof c.existing === "number" ? [c.existing] : c.existing) {
        if (knownExisting("contradictions", c.new, id) && !ids.includes(id)) ids.push(id)
      }
      if (ids.length > 0) contradictions.set(c.new, ids)
    }

    return {
      duplicates: [...duplicates].map(([index, id]) => ({ new: index, existing: id })),
      contradictions: [...contradictions].map(([index, ids]) => ({ new: index, existing: ids })),
      ignored
    }
  })
