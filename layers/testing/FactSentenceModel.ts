/**
 * The fake model of the tests and the bench: deterministic answers to gligabao's three LLM
 * stages, so that a run is reproducible and two servers given the same texts build the same graph.
 * `answer` takes a Messages request body (the fake Anthropic API's) or an `LlmRequest` (a
 * `ScriptedLlm` script's), which both carry `system` and `messages`.
 *
 * Texts are written in a tiny language the fake "understands": a sentence
 * `<Name> <relation> <Name>[ in <year>].` is a fact (names are capitalized words, like
 * `Alice Novak 12` or `P17`), and `<Name> lived in <Name> until <year>.` one that ended, its start
 * not said (so, as the prompt asks, valid_at null); everything else is prose it ignores.
 */
import { readResolveEdgesPrompt } from "../../src/pipeline/prompts/resolveEdges.js"

export const RELATIONS = {
  knows: "person",
  "works at": "organization",
  founded: "organization",
  "lives in": "place",
  visited: "place"
} as const
export type Relation = keyof typeof RELATIONS

const NAME = "[A-Z][A-Za-z0-9]*(?: [A-Z][A-Za-z0-9]*)*"
const FACT = new RegExp(
  `(${NAME}) (?:(${Object.keys(RELATIONS).join("|")}) (${NAME})(?: in (\\d{4}))?|lived in (${NAME}) until (\\d{4}))\\.`,
  "g"
)

export interface Fact {
  readonly source: string
  readonly relation: Relation
  readonly target: string
  readonly year: number | null
  /** the year it ended, when the sentence says so */
  readonly until: number | null
}

/** The facts a text states, in order. */
export const factsOf = (text: string): Array<Fact> =>
  [...text.matchAll(FACT)].map((m) =>
    m[5] === undefined
      ? {
        source: m[1]!,
        relation: m[2] as Relation,
        target: m[3]!,
        year: m[4] === undefined ? null : Number(m[4]),
        until: null
      }
      : { source: m[1]!, relation: "lives in", target: m[5], year: null, until: Number(m[6]) }
  )

/** The text inside `<text>` of an extract_graph or summarize_chunk user message. */
const enclosed = (user: string): string => {
  const start = user.indexOf("<text>\n")
  const end = user.lastIndexOf("\n</text>")
  return start === -1 || end === -1 ? user : user.slice(start + 7, end)
}

const extractAnswer = (text: string): string => {
  const facts = factsOf(text)
  const entities = new Map<string, string>()
  for (const f of facts) {
    if (!entities.has(f.source)) entities.set(f.source, "person")
    if (!entities.has(f.target)) entities.set(f.target, RELATIONS[f.relation])
  }
  return JSON.stringify({
    entities: [...entities].map(([name, type]) => ({ name, type, description: `a ${type}` })),
    edges: facts.map((f) => ({
      source: f.source,
      target: f.target,
      relation: f.relation,
      description: `${f.source} ${f.relation} ${f.target}${f.year === null ? "" : ` since ${f.year}`}${
        f.until === null ? "" : ` until ${f.until}`
      }`,
      valid_at: f.year === null ? null : `${f.year}-01-01T00:00:00Z`,
      invalid_at: f.until === null ? null : `${f.until}-01-01T00:00:00Z`
    }))
  })
}

/** Names that differ only in case name one thing, as a reader would take them. */
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

/** A person lives in one place at a time: a new `lives_in` contradicts the stored ones elsewhere. */
const resolveAnswer = (user: string): string => {
  const input = readResolveEdgesPrompt(user)
  const duplicates: Array<{ new: number; existing: number }> = []
  const contradictions: Array<{ new: number; existing: Array<number> }> = []
  for (const n of input.new_facts) {
    const repeated = input.existing_facts.find((e) =>
      same(e.source, n.source) && e.relation === n.relation && same(e.target, n.target)
    )
    if (repeated !== undefined) {
      duplicates.push({ new: n.index, existing: repeated.id })
      continue
    }
    if (n.relation !== "lives_in") continue
    const closed = input.existing_facts
      .filter((e) => same(e.source, n.source) && e.relation === "lives_in" && !same(e.target, n.target))
      .map((e) => e.id)
    if (closed.length > 0) contradictions.push({ new: n.index, existing: closed })
  }
  return JSON.stringify({ duplicates, contradictions })
}

const summaryAnswer = (text: string): string => {
  const names = [...new Set(factsOf(text).map((f) => f.source))]
  return names.length === 0
    ? "This part of the document states no facts about named people."
    : `This part of the document is about ${names.join(", ")} and where they live and work.`
}

export type Stage = "extract_graph" | "resolve_edges" | "summarize_chunk" | "other"

/** The stage of a Messages request, told by its system prompt (see src/pipeline/prompts). */
export const stageOf = (system: string): Stage =>
  system.startsWith("You extract a knowledge graph")
    ? "extract_graph"
    : system.startsWith("You compare new facts")
    ? "resolve_edges"
    : system.startsWith("You summarize one part")
    ? "summarize_chunk"
    : "other"

/** The answer text to a Messages request body. */
export const answer = (body: any): { stage: Stage; text: string } => {
  const system = typeof body?.system === "string" ? body.system : ""
  const content = body?.messages?.[0]?.content
  const user = typeof content === "string" ? content : ""
  const stage = stageOf(system)
  switch (stage) {
    case "extract_graph":
      return { stage, text: extractAnswer(enclosed(user)) }
    case "resolve_edges":
      return { stage, text: resolveAnswer(user) }
    case "summarize_chunk":
      return { stage, text: summaryAnswer(enclosed(user)) }
    default:
      return { stage, text: JSON.stringify({ entities: [], edges: [] }) }
  }
}
