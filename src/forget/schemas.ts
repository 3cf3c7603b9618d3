/** The forget endpoints' request and response schemas (docs/FORGET.md). */
import { Schema } from "effect"

const count = (description: string) => Schema.Number.annotations({ description })

/** `DELETE /v1/gb/artifacts/{id}`: what the forget did. */
export const ForgetArtifactResponse = Schema.Struct({
  deleted: Schema.Struct({
    artifacts: count("the artifact and everything derived from it (chunks, summaries, web results, observations)"),
    entities: count("entities no remaining artifact or fact supports"),
    facts: count("facts no remaining artifact supports, and repeats merged once reopened"),
    vectors: count("vector deletes queued in the outbox (and the rewritten rows' old vectors)")
  }),
  reopened_facts: Schema.Array(Schema.Number).annotations({
    description: "facts the forgotten ones had closed, open again (or closed by the earliest remaining decision)"
  }),
  reanchored_facts: Schema.Array(Schema.Number).annotations({
    description: "facts still supported by another artifact, now anchored to the oldest remaining supporter"
  }),
  vectors_pending: Schema.optional(count(
    "vector deletes the vector store did not take yet: they stay in the outbox and converge with the next write"
  ))
}).annotations({
  identifier: "ForgetArtifactResponse",
  examples: [{
    deleted: { artifacts: 1, entities: 1, facts: 2, vectors: 3 },
    reopened_facts: [12],
    reanchored_facts: []
  }]
})
export type ForgetArtifactResponse = Schema.Schema.Type<typeof ForgetArtifactResponse>
