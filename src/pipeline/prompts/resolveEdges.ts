/**
 * The resolve_edges stage: its prompt and the parsing of its answer
 * (spec/contracts.md section 2). The answer is untrusted input.
 */
import { Either, Schema } from "effect"
import { jsonArray, jsonObject, parseModelJson } from "../json.js"

export const RESOLVE_EDGES_MAX_TOKENS = 2048

export interface ResolveNewFact {
  readonly index: number
  readonly source: string
  readonly relation: string
  readonly target: string
  readonly description: string
  readonly valid_at: string
}

export interface ResolveExistingFact {
  readonly id: number
  readonly source: string
  readonly relation: string
  readonly target: string
  readonly description: string
  readonly valid_at: string
}

const SYSTEM = `You compare new facts from a text with facts already stored in a memory.
The user message is JSON: reference_time, new_facts (each with an index) and existing_facts (each with an id).
For each new fact decide:
- duplicate: it states the same thing as an existing fact, possibly in other words ("works at Acme" / "is employed by Acme"). Give at most one existing id.
- contradiction: it cannot be true at the same time as some existing facts (a person lives in one city at a time, a company has one CEO at a time). Judge as if both held at the same moment; the dates are handled by code. Facts that can hold together (someone knows several people, works on several projects) or that only add detail are not contradictions.
- neither: leave it out.
Use only indexes from new_facts and ids from existing_facts.
Answer with one JSON object only, no prose:
{"duplicates":[{"new":1,"existing":40}],"contradictions":[{"new":0,"existing":[12]}]}
Use empty arrays when there are none.`

/** The system prompt and user message (the JSON object of contracts section 2). */
export const buildResolveEdgesPrompt = (input: {
  readonly referenceTime: string
  readonly newFacts: ReadonlyArray<ResolveNewFact>
  readonly existingFacts: ReadonlyArray<ResolveExistingFact>
}): { readonly system: string; readonly user: string } => ({
  system: SYSTEM,
  // Keys picked explicitly: the wire form is exactly these fields, in this order.
  user: JSON.stringify({
    reference_time: input.referenceTime,
    new_facts: input.newFacts.map((f) => ({
      index: f.index,
      source: f.source,
      relation: f.relation,
      target: f.target,
      description: f.description,
      valid_at: f.valid_at
    })),
    existing_facts: input.existingFacts.map((f) => ({
      id: f.id,
      source: f.source,
      relation: f.relation,
      target: f.target,
      description: f.description,
      valid_at: f.valid_at
    }))
  })
})

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
