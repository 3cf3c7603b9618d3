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

const erased = Schema.Struct({
  datasets: count("dataset rows of the name, soft-deleted ones included"),
  artifacts: count("artifacts: texts, chunks, summaries, web results, observations"),
  entities: count("entities"),
  facts: count("facts, live and closed"),
  vectors: count("vector deletes queued in the outbox: embedded entities and facts, every chunk and summary"),
  images: count("image artifacts, and their files"),
  runs: count("remember runs, with their stages, queued requests and Idempotency-Keys")
})

const vectorsPending = Schema.optional(count(
  "vector deletes the vector store did not take yet: they stay in the outbox and converge with the next write"
))

/** `DELETE /v1/gb/users/{user_id}`: everything of the user that went. */
export const ForgetUserResponse = Schema.Struct({
  user_id: Schema.String,
  deleted: erased,
  vectors_pending: vectorsPending
}).annotations({
  identifier: "ForgetUserResponse",
  examples: [{
    user_id: "alice",
    deleted: { datasets: 2, artifacts: 14, entities: 9, facts: 11, vectors: 20, images: 1, runs: 12 }
  }]
})
export type ForgetUserResponse = Schema.Schema.Type<typeof ForgetUserResponse>

/** `DELETE /v1/gb/datasets/{name}?hard=true`: the dataset's rows (every one of that name) and what was in them. */
export const HardDeletedDataset = Schema.Struct({
  user_id: Schema.String,
  dataset: Schema.String,
  dataset_ids: Schema.Array(Schema.Number).annotations({
    description: "the ids the name had: the live dataset and the soft-deleted ones"
  }),
  deleted: erased,
  vectors_pending: vectorsPending
}).annotations({
  identifier: "HardDeletedDataset",
  examples: [{
    user_id: "alice",
    dataset: "main",
    dataset_ids: [1],
    deleted: { datasets: 1, artifacts: 3, entities: 4, facts: 2, vectors: 6, images: 0, runs: 3 }
  }]
})
export type HardDeletedDataset = Schema.Schema.Type<typeof HardDeletedDataset>
