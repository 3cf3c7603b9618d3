/**
 * The query stage's prompt and the parsing of its answer (pure). The model sees only the
 * retrieved facts (with their validity) and the matched entities' descriptions, and must cite
 * the facts it used by id; citations of anything else are dropped.
 */
import { Either } from "effect"
import { parseModelJson } from "../kernel/json.js"
import { QUERY_ANSWER, QueryAnswer } from "../pipeline/prompts/queryAnswer.js"
import type { LlmMessage } from "../services/Llm.js"
import type { FactOut, LinkedEntityOut } from "./views.js"

export { QUERY_ANSWER }

export const QUERY_STAGE = "query"
/** the answer's own output budget (a thinking budget is added on top) */
export const QUERY_MAX_TOKENS = 2048

export const NOTHING_KNOWN = "Nothing in this dataset answers the question: no facts matched it."

const SYSTEM = [
  "You answer questions from the facts of a knowledge graph, and from nothing else.",
  "Each fact has an id, a statement, when it became true (valid_at) and, if it has ended, when it ended (invalid_at).",
  "A valid_at of null means the start is unknown: the fact held at any time before its invalid_at.",
  "Answer as of the time given in as_of. Entities are background: their descriptions help read the facts but are not evidence.",
  "Cite every fact you rely on by its id. Do not use outside knowledge and do not guess: if the facts do not answer the question,",
  "say that it is not known from what is stored, and cite nothing.",
  "Answer in the language of the question.",
  "Return only JSON of the form {\"answer\": \"<your answer>\", \"citations\": [<fact ids>]}."
].join(" ")

export interface QueryPrompt {
  readonly system: string
  readonly messages: ReadonlyArray<LlmMessage>
}

/**
 * The data goes in one JSON object, so that ids and times are unambiguous. An unknown start stays
 * an explicit `valid_at: null` (the system prompt says what it means), not a missing field.
 */
export const buildQueryPrompt = (input: {
  readonly question: string
  readonly asOf: string
  readonly facts: ReadonlyArray<FactOut>
  readonly entities: ReadonlyArray<LinkedEntityOut>
}): QueryPrompt => ({
  system: SYSTEM,
  messages: [{
    role: "user",
    content: JSON.stringify({
      question: input.question,
      as_of: input.asOf,
      facts: input.facts.map((f) => ({
        id: f.id,
        statement: f.description,
        source: f.source,
        relation: f.relation,
        target: f.target,
        valid_at: f.valid_at,
        ...(f.invalid_at === undefined ? {} : { invalid_at: f.invalid_at })
      })),
      entities: input.entities.map((e) => ({ name: e.name, type: e.type, description: e.description }))
    })
  }]
})

export interface ParsedAnswer {
  readonly answer: string
  /** the cited ids that are among the facts given, each once, in citation order */
  readonly citations: ReadonlyArray<number>
  /** cited ids that were not given (dropped) */
  readonly dropped: ReadonlyArray<number>
}

/** Parses the model's answer; Left is one sentence saying what is wrong with it. */
export const parseQueryAnswer = (text: string, factIds: ReadonlyArray<number>): Either.Either<ParsedAnswer, string> =>
  Either.map(parseModelJson(QueryAnswer, text, QUERY_STAGE), (parsed) => {
    const given = new Set(factIds)
    const citations = [...new Set(parsed.citations)]
    return {
      answer: parsed.answer,
      citations: citations.filter((id) => given.has(id)),
      dropped: citations.filter((id) => !given.has(id))
    }
  })
