/**
 * The query stage's answer: the schema its parser decodes with (src/query/answer.ts) and the JSON
 * Schema the provider is constrained by, here beside the other stages' answers so that the
 * stage registry (stageAnswers.ts) needs nothing from the read side.
 */
import { Schema } from "effect"
import { answerSchemaOf } from "../../kernel/answerSchema.js"

/** Ids as numbers or as digit strings: models write either. */
const CitedId = Schema.Union(Schema.Int, Schema.NumberFromString.pipe(Schema.int()))

export const QueryAnswer = Schema.Struct({
  answer: Schema.String,
  // null is read as missing: strict structured output writes an optional field as null
  citations: Schema.optionalWith(Schema.Array(CitedId), { default: () => [], nullable: true })
})

/** The answer's JSON Schema, derived from the schema the parser decodes with. */
export const QUERY_ANSWER = answerSchemaOf("query", QueryAnswer)
